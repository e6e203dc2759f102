# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: ceph_ansible_vars
short_description: ceph-ansible's disk variables as the host has them, for the disk gate
version_added: 0.1.0
description:
  - Returns one dictionary of the ceph-ansible variables that name OSD disks (C(devices),
    C(dedicated_devices), C(bluestore_wal_devices), C(lvm_volumes), C(osd_auto_discovery),
    C(osd_auto_discovery_exclude)), each the host's templated value wherever it is set
    (inventory, group_vars, play, role defaults, extra vars); one that is not set is left out.
  - The values are read with the C(ansible.builtin.vars) lookup. The internal C(vars)
    dictionary, which held them all, is deprecated (removed in ansible-core 2.24), and the
    names live in one place, the collection's ceph-ansible code, not in every playbook.
  - Its input for P(cephops.osd_tuning.gate_candidates#filter).
author:
  - cephops maintainers (@cephops)
options: {}
"""

EXAMPLES = r"""
- name: Choose the disks to probe as ceph-ansible would deploy them
  ansible.builtin.set_fact:
    candidates: "{{ inventory.disks | cephops.osd_tuning.gate_candidates(query('cephops.osd_tuning.ceph_ansible_vars') | first) }}"
"""

RETURN = r"""
_raw:
  description: One dictionary, variable name to its value, of the variables the host has.
  type: list
  elements: dict
"""

from ansible.plugins.loader import lookup_loader
from ansible.plugins.lookup import LookupBase

from ansible_collections.cephops.osd_tuning.plugins.plugin_utils.ceph_ansible import READ_VARS


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        variables = variables or {}
        names = [name for name in READ_VARS if name in variables]
        values = lookup_loader.get("ansible.builtin.vars", loader=self._loader, templar=self._templar).run(names, variables)
        return [dict(zip(names, values))]
