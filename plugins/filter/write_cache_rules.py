# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: write_cache_rules
short_description: udev rules that keep each compared disk's faster write cache setting at every boot
version_added: 0.1.0
description:
  - From the gate's disk entries (C(disk_gate_result.disks)), for each disk whose write cache
    comparison ended cleanly, a rule for P(cephops.osd_tuning.udev_queue_rules#module) that
    matches the disk by serial (or WWN) when it appears and runs its drive's tool with the faster setting,
    C(hdparm -W), C(sdparm --set/--clear WCE) followed by a rescan so the kernel sees the
    change, or C(nvme set-feature) for the volatile write cache feature. None saves to the drive.
  - A disk is skipped, with its reason, when the drive has no volatile write cache (NVMe vwc 0,
    nothing to switch), when its comparison failed or did not restore the drive, when only the
    kernel's view of its cache exists (loop, virtio), or when it has neither serial nor WWN.
author:
  - cephops maintainers (@cephops)
options:
  _input:
    description: The gate's disk entries.
    type: list
    elements: dict
    required: true
"""

EXAMPLES = r"""
- name: Keep the faster setting at every boot
  cephops.osd_tuning.udev_queue_rules:
    path: /etc/udev/rules.d/62-cephops-write-cache.rules
    rules: "{{ (disk_gate_result.disks | cephops.osd_tuning.write_cache_rules).rules }}"
"""

RETURN = r"""
_value:
  description:
    - C(rules) (for udev_queue_rules), C(trigger) (the kernel names of their disks),
      C(persisted) (per disk C(device), C(write_cache), C(tool), C(on_iops), C(off_iops)) and
      C(skipped) (per disk C(device) and C(reason)) and C(lines) (one per disk, for the play's output).
  type: dict
"""

from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import write_cache_rules as rules


def write_cache_rules(disks):
    return rules.plan(disks)


class FilterModule(object):
    def filters(self):
        return {"write_cache_rules": write_cache_rules}
