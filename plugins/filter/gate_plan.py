# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: gate_plan
short_description: The disk gate's plan of one host, its candidates and its one probe job
version_added: 0.1.0
description:
  - The candidates, by the rule of P(cephops.osd_tuning.gate_candidates#filter), and the one
    M(cephops.osd_tuning.sync_write_probe) job of the host planned from them - every whole disk
    present (C(probe) true), rotational ones only under O(hdd_policy=probe), each with the
    thresholds class of its candidate - and the disks whose health
    M(cephops.osd_tuning.disk_health) reads (every whole disk present, rotational ones under
    V(skip) included).
  - Keeps consent to overwrite to the disks the job writes, each name given for overwriting
    (kernel name, device node or any /dev/disk/by-* link) mapped to its disk through the
    inventory's C(links), and lists the names that are no whole disk present among the
    candidates, which the role refuses.
author:
  - cephops maintainers (@cephops)
positional: variables, explicit
options:
  hdd_policy:
    description: V(probe) probes rotational disks, V(skip) passes them ungated.
    type: str
    choices: [probe, skip]
    default: probe
  overwrite:
    description: The disks the user named for overwriting (C(disk_gate_overwrite_data)), by any of their names.
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - cephops.osd_tuning.disk_inventory
  - cephops.osd_tuning.disk_inventory.candidates
"""

EXAMPLES = r"""
- name: Plan the host's gate
  ansible.builtin.set_fact:
    plan: >-
      {{ inventory.disks | cephops.osd_tuning.gate_plan(query('cephops.osd_tuning.ceph_ansible_vars') | first, [],
                                                       hdd_policy='skip', overwrite=['/dev/sdc']) }}
"""

RETURN = r"""
_value:
  description: C(candidates) (as P(cephops.osd_tuning.gate_candidates#filter) gives them),
    C(devices) (the disks the job writes, in candidate order), C(device_classes) (each one's
    thresholds class), C(overwrite_data) (the named disks among C(devices)), C(health_devices)
    (every whole disk present) and C(not_candidates) (names given for overwriting that are no
    whole disk present among the candidates, as device nodes where the inventory knows them).
  type: dict
"""

from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import ceph_ansible
from ansible_collections.cephops.osd_tuning.plugins.module_utils.blockdev import resolve_in_inventory


def gate_plan(disks, variables, explicit=None, part_classes=None, hdd_policy="probe", overwrite=None):
    candidates = ceph_ansible.candidates(disks, variables, explicit, part_classes or ())
    present = [candidate for candidate in candidates if candidate["probe"]]
    written = [candidate for candidate in present if hdd_policy == "probe" or candidate["thresholds_class"] != "hdd"]
    devices = [candidate["device"] for candidate in written]
    health_devices = [candidate["device"] for candidate in present]
    overwrite = resolve_in_inventory(disks, overwrite or [])
    return {
        "candidates": candidates,
        "devices": devices,
        "device_classes": dict((candidate["device"], candidate["thresholds_class"]) for candidate in written),
        "overwrite_data": [device for device in overwrite if device in devices],
        "health_devices": health_devices,
        "not_candidates": [device for device in overwrite if device not in health_devices],
    }


class FilterModule(object):
    def filters(self):
        return {"gate_plan": gate_plan}
