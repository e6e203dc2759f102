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
    C(bluestore_wal_devices), the C(data), C(db) and C(wal) of C(lvm_volumes) entries, and the
    disks C(osd_auto_discovery) picks, honouring C(osd_auto_discovery_exclude)) when any of
    them is defined (not missing or null in O(variables)). Else every disk the inventory calls
    C(available) (source V(available)).
  - Auto-discovery follows ceph-ansible, which takes every disk that is not removable, not
    empty, has no partitions and no holders, is not mounted, whose kernel name the exclude
    regular expression does not match from its start (Ansible's C(match) test), and that is
    not named as given in C(dedicated_devices), C(bluestore_wal_devices) or the C(data) of
    C(lvm_volumes).
  - Names (kernel names, paths, C(/dev/disk/by-*) links) are mapped to disks through the
    C(links) of the inventory, which M(cephops.osd_tuning.disk_facts) resolved on the host, as
    ceph-ansible resolves them with C(readlink -f). An C(lvm_volumes) part with its C(*_vg)
    names an LV (C(vg/lv)) and a partition is no whole disk; both are listed with C(probe)
    false and the reason. A name no disk of the inventory has is listed with C(presence)
    V(absent). A disk named twice is listed once with every name, source and slot.
author:
  - cephops maintainers (@cephops)
positional: variables, explicit, part_classes
extends_documentation_fragment:
  - cephops.osd_tuning.disk_inventory
  - cephops.osd_tuning.disk_inventory.candidates
"""

EXAMPLES = r"""
- name: Choose the disks to probe
  ansible.builtin.set_fact:
    candidates: "{{ inventory.disks | cephops.osd_tuning.gate_candidates(query('cephops.osd_tuning.ceph_ansible_vars') | first) }}"

- name: Probe two disks whatever ceph-ansible would deploy
  ansible.builtin.set_fact:
    candidates: >-
      {{ inventory.disks | cephops.osd_tuning.gate_candidates({}, ['/dev/disk/by-id/wwn-0x5002538e40a1b2c3', 'sdc']) }}
"""

RETURN = r"""
_value:
  description: One entry per disk, C(device) (its device node, or the name as given when it is
    no disk of the inventory), C(given) (names as given), C(sources) (variables naming it),
    C(slots) (each a list of the variable, the entry index and the part), C(roles) (V(data), V(db), V(wal)),
    C(probe) (false for an LV, a partition or an absent name), C(presence) (V(present) or
    V(absent)), C(reasons) (why it is not probed), C(rotational) and C(gate_class) (V(flash) or
    V(hdd); V(flash) when the inventory does not list it), C(links), C(wwn), and C(thresholds_class) (the
    thresholds it is probed with, its gate class or V(db)/V(wal) from O(part_classes)).
  type: list
  elements: dict
"""

from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import ceph_ansible


def gate_candidates(disks, variables, explicit=None, part_classes=None):
    return ceph_ansible.candidates(disks, variables, explicit, part_classes or ())


class FilterModule(object):
    def filters(self):
        return {"gate_candidates": gate_candidates}
