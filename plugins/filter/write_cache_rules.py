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

# The faster write cache setting of each compared disk, kept at every boot by a udev rule that
# runs the drive's own tool (the commands of the comparison, which never save to the drive).
#
# A disk is left out, with the reason, when it has no volatile write cache (nothing to switch),
# when its comparison did not end cleanly, when only the kernel's view of its cache exists
# (loop, virtio: turning that view off stops the flushes a volatile cache behind it needs), or
# when it has neither serial nor WWN to match at boot.

from ansible_collections.cephops.osd_tuning.plugins.module_utils import write_cache
from ansible_collections.cephops.osd_tuning.plugins.plugin_utils.queue_plan import identity_match

# After sdparm, sd sees the new mode page only once the disk is revalidated (write_cache.py);
# udev's ATTR{} assignments happen before any RUN, so the rescan is a program of its own.
RESCAN = ["/bin/sh", "-c", "echo 1 > /sys$devpath/device/rescan"]


def _skip_reason(disk, comparison, tool):
    if comparison.get("original") == write_cache.ABSENT:
        return comparison["note"]
    if comparison.get("error") or not comparison.get("restored") or comparison.get("faster") not in ("on", "off"):
        return "its write cache comparison did not end cleanly: %s" % (
            comparison.get("error") or comparison.get("restore_error") or "no faster setting")
    if tool == "sysfs":
        return ("only the kernel's view of its write cache exists (transport %s): no drive tool "
                "switches it" % disk.get("transport"))
    if identity_match(disk) is None:
        return "no serial or WWN for a udev rule to match at boot"
    return None


def plan(disks):
    """{"rules": rules for udev_queue_rules, "trigger": kernel names, "persisted": [...],
    "skipped": [{"device", "reason"}], "lines": one per disk for the play's output} from the
    gate's disk entries (disk_gate_result.disks)."""
    rules, trigger, persisted, skipped, lines = [], [], [], [], []
    for disk in disks:
        comparison = disk.get("write_cache_comparison")
        if not comparison:
            continue
        tool = write_cache.tool_for(disk.get("transport"))
        reason = _skip_reason(disk, comparison, tool)
        if reason:
            skipped.append({"device": disk["device"], "reason": reason})
            lines.append("%s: write cache not kept: %s" % (disk["device"], reason))
            continue
        setting = comparison["faster"]
        match = identity_match(disk)
        run = [write_cache.set_command(tool, "$devnode", setting == "on")]
        if tool == "sdparm":
            run.append(RESCAN)
        # The comment names neither the kernel name nor the figures, which change from run to
        # run: the file changes only when a setting does.
        # When the disk appears only: the rescan after sdparm can cause a change event, and an
        # operator's own switch later should hold until the next boot.
        rules.append({"comment": "write cache %s: the faster setting in the gate's comparison" % setting,
                      "action": "add", "match": match, "run": run})
        lines.append("%s: write cache %s (%d sync IOPS on, %d off), now and at every boot (%s)" % (
            disk["device"], setting, comparison["on_iops"], comparison["off_iops"], tool))
        trigger.append(disk["name"])
        persisted.append({"device": disk["device"], "write_cache": setting, "tool": tool,
                          "on_iops": comparison["on_iops"], "off_iops": comparison["off_iops"]})
    return {"rules": rules, "trigger": trigger, "persisted": persisted, "skipped": skipped, "lines": lines}


class FilterModule(object):
    def filters(self):
        return {"write_cache_rules": plan}
