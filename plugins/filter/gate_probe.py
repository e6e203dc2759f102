# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: gate_probe
short_description: The disk gate's probe job of one host, planned from its candidates
version_added: 0.1.0
description:
  - Plans the one M(cephops.osd_tuning.sync_write_probe) job of a host from the candidates of
    P(cephops.osd_tuning.gate_candidates#filter) - every whole disk present (C(probe) true),
    rotational ones only under O(hdd_policy=probe), each with the thresholds class of its
    candidate - and the disks whose health M(cephops.osd_tuning.disk_health) reads (every whole
    disk present, rotational ones under V(skip) included).
  - Keeps consent to overwrite to the disks the job writes, and lists the names given for
    overwriting that are no whole disk present among the candidates, which the role refuses.
author:
  - cephops maintainers (@cephops)
positional: hdd_policy, overwrite
options:
  _input:
    description: The candidates of P(cephops.osd_tuning.gate_candidates#filter).
    type: list
    elements: dict
    required: true
  hdd_policy:
    description: V(probe) probes rotational disks, V(skip) passes them ungated.
    type: str
    choices: [probe, skip]
    default: probe
  overwrite:
    description:
      - Device nodes the user named for overwriting, as P(cephops.osd_tuning.disk_paths#filter) maps
        the names of C(disk_gate_overwrite_data).
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: Plan the host's probe job
  ansible.builtin.set_fact:
    probe: "{{ candidates | cephops.osd_tuning.gate_probe('skip', ['/dev/sdc']) }}"
"""

RETURN = r"""
_value:
  description: C(devices) (the disks the job writes, in candidate order), C(device_classes) (each
    one's thresholds class), C(overwrite_data) (the named disks among C(devices)),
    C(health_devices) (every whole disk present) and C(not_candidates) (names given for
    overwriting that are no whole disk present among the candidates).
  type: dict
"""


def gate_probe(candidates, hdd_policy="probe", overwrite=None):
    present = [candidate for candidate in candidates if candidate["probe"]]
    written = [candidate for candidate in present if hdd_policy == "probe" or candidate["thresholds_class"] != "hdd"]
    devices = [candidate["device"] for candidate in written]
    health_devices = [candidate["device"] for candidate in present]
    overwrite = overwrite or []
    return {
        "devices": devices,
        "device_classes": dict((candidate["device"], candidate["thresholds_class"]) for candidate in written),
        "overwrite_data": [device for device in overwrite if device in devices],
        "health_devices": health_devices,
        "not_candidates": [device for device in overwrite if device not in health_devices],
    }


class FilterModule(object):
    def filters(self):
        return {"gate_probe": gate_probe}
