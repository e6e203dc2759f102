# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: named_disks
short_description: The disks of an inventory that a list of names names, or all of them
version_added: 0.1.0
description:
  - Keeps the disks of M(cephops.osd_tuning.disk_facts) whose C(links) hold one of the names
    (kernel name, path or /dev/disk/by-* link), in inventory order, as ceph-ansible resolves
    devices with C(readlink -f).
  - An empty list of names keeps every disk, as a role's empty C(*_devices) option means.
author:
  - cephops maintainers (@cephops)
positional: names
options:
  names:
    description: Names of disks; empty for all.
    type: list
    elements: str
    required: true
extends_documentation_fragment:
  - cephops.osd_tuning.disk_inventory
"""

EXAMPLES = r"""
- name: The disks io_scheduler_devices names, or every disk when it names none
  ansible.builtin.set_fact:
    scope: "{{ inventory.disks | cephops.osd_tuning.named_disks(io_scheduler_devices) }}"
"""

RETURN = r"""
_value:
  description: The disks named, in inventory order; a name no disk has is left out.
  type: list
  elements: dict
"""

from ansible_collections.cephops.osd_tuning.plugins.module_utils.blockdev import resolve_in_inventory


def named_disks(disks, names):
    """The disks the names name, in inventory order; every disk when no name is given."""
    if not names:
        return list(disks)
    wanted = set(resolve_in_inventory(disks, names))
    return [disk for disk in disks if disk["path"] in wanted]


class FilterModule(object):
    def filters(self):
        return {"named_disks": named_disks}
