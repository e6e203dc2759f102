# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    # The input of a filter that takes a disk_facts inventory.
    DOCUMENTATION = r"""
options:
  _input:
    description: The C(disks) list of M(cephops.osd_tuning.disk_facts).
    type: list
    elements: dict
    required: true
"""

    # The options of the filters that take ceph-ansible's variables to choose the gate's
    # candidates (plugin_utils/ceph_ansible.py): gate_candidates and gate_plan.
    CANDIDATES = r"""
options:
  variables:
    description:
      - ceph-ansible's variables as the host has them, as the
        P(cephops.osd_tuning.ceph_ansible_vars#lookup) lookup gives them (C(devices),
        C(dedicated_devices), C(bluestore_wal_devices), C(lvm_volumes), C(osd_auto_discovery)
        and C(osd_auto_discovery_exclude)); a missing or null one is not defined.
    type: dict
    required: true
  explicit:
    description: Disks to use instead of the ceph-ansible variables, when not empty.
    type: list
    elements: str
    default: []
  part_classes:
    description: The parts (V(db), V(wal)) with thresholds of their own; their disks get that C(thresholds_class).
    type: list
    elements: str
    default: []
"""

    # The queue plan's choice, which the filters that judge or remember a queue change take.
    CHOSEN = r"""
options:
  chosen:
    description: The C(chosen) of M(cephops.osd_tuning.queue_plan) (disk to value, source and keep_worse).
    type: dict
    required: true
"""
