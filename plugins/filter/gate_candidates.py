# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: gate_candidates
short_description: The disks ceph-ansible will deploy OSDs on, for the disk gate to probe
version_added: 0.1.0
description:
  - One rule, in this order. An explicit list (O(explicit)) when not empty. Else
    ceph-ansible's own variables (C(devices), C(dedicated_devices),
    C(bluestore_wal_devices), the raw-device C(data) of C(lvm_volumes) entries without
    C(data_vg), and the disks C(osd_auto_discovery) picks, honouring
    C(osd_auto_discovery_exclude)) when any of them is defined (not null in O(ceph_vars)).
    Else every disk the inventory calls C(available) (source V(available)).
  - Auto-discovery follows ceph-ansible, which takes every disk that is not removable, not
    empty, has no partitions and no holders, is not mounted and whose kernel name the exclude
    regular expression does not match from its start (Ansible's C(match) test).
  - Links are replaced by their targets from O(links) (what C(readlink) printed on the host,
    as ceph-ansible resolves them); a disk named twice is listed once with every name and source.
author:
  - cephops maintainers (@cephops)
positional: ceph_vars, explicit, links
options:
  _input:
    description: The C(disks) list of M(cephops.osd_tuning.disk_facts) (auto-discovery and rotational).
    type: list
    elements: dict
    required: true
  ceph_vars:
    description: C(devices), C(dedicated_devices), C(bluestore_wal_devices), C(lvm_volumes),
      C(osd_auto_discovery) and C(osd_auto_discovery_exclude) as ceph-ansible has them; null
      (or missing) for a variable that is not defined.
    type: dict
    required: true
  explicit:
    description: Disks to use instead of the ceph-ansible variables, when not empty.
    type: list
    elements: str
    default: []
  links:
    description: Path to resolved path, for every path given.
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Choose the disks to probe
  ansible.builtin.set_fact:
    candidates: >-
      {{ inventory.disks | cephops.osd_tuning.gate_candidates({'devices': devices,
         'osd_auto_discovery': false}, [], {'/dev/disk/by-id/wwn-0x5002538e40a1b2c3': '/dev/sdb'}) }}
"""

RETURN = r"""
_value:
  description: One entry per disk, C(device) (resolved path), C(given) (names as given),
    C(sources) (variables naming it), C(roles) (V(data), V(db), V(wal)) and C(rotational)
    (null when the inventory does not list the disk).
  type: list
  elements: dict
"""

from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import gate_candidates as candidates_util


def gate_candidates(disks, ceph_vars, explicit=None, links=None):
    return candidates_util.candidates(disks, ceph_vars, explicit, links)


class FilterModule(object):
    def filters(self):
        return {"gate_candidates": gate_candidates}
