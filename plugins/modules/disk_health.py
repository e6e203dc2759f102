#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: disk_health
short_description: Read and judge the SMART or NVMe health of a host's disks
version_added: 0.1.0
description:
  - Runs C(smartctl -j -a) once per disk (read-only) and judges the result against
    thresholds; one call per host for all its disks.
  - V(failed) when the overall SMART assessment fails (smartctl's exit status bit 3), a
    prefail attribute is at or below its threshold (bit 4), the self-test log records errors
    (bit 7), an NVMe critical warning bit is set, or a value is above its threshold.
  - V(unknown), with the reason, when smartctl is missing, cannot open the disk (bits 0 and 1)
    or the disk reports no SMART data (a virtio disk, for example). The error log having
    records (bit 6), attributes below threshold in the past (bit 5) and a failed SMART command
    (bit 2) are notes, not failures.
  - The values come from ATA attributes 5 (reallocated), 197 (pending), 198 and 187
    (uncorrectable), the SCSI grown defect list and error counters, and the NVMe health log
    (media and data integrity errors, critical warning, percentage used); the percentage of
    rated endurance used also from ATA device statistics and SCSI.
author:
  - cephops maintainers (@cephops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - cephops.osd_tuning.attributes.no_diff
options:
  devices:
    description: The whole disks, as device paths.
    type: list
    elements: path
    required: true
  max_reallocated_sectors:
    description: Most reallocated sectors (ATA) or grown defects (SCSI) a healthy disk has.
    type: int
    default: 10
  max_pending_sectors:
    description: Most sectors pending reallocation (ATA).
    type: int
    default: 0
  max_uncorrectable_sectors:
    description: Most offline uncorrectable sectors or reported uncorrectable errors (ATA), or uncorrected errors (SCSI).
    type: int
    default: 0
  max_media_errors:
    description: Most media and data integrity errors (NVMe).
    type: int
    default: 0
  max_percentage_used:
    description: Most percent of the rated endurance used (NVMe, ATA device statistics, SCSI).
    type: int
    default: 80
  max_power_on_hours:
    description: Most power-on hours; not judged when unset.
    type: int
notes:
  - Must run as root (C(become=true)) for smartctl to open the disks.
attributes:
  check_mode:
    details: Reads only, in either mode.
seealso:
  - name: smartctl(8), RETURN VALUES
    description: The bits of smartctl's exit status.
    link: https://www.smartmontools.org/browser/trunk/smartmontools/smartctl.8.in
"""

EXAMPLES = r"""
- name: Read the disks' health
  cephops.osd_tuning.disk_health:
    devices: [/dev/sdb, /dev/nvme0n1]
    max_percentage_used: 90
  register: health
"""

RETURN = r"""
smartctl:
  description: The smartctl found, or null.
  returned: success
  type: str
  sample: /usr/sbin/smartctl
health:
  description: Per device path, its health.
  returned: success
  type: dict
  sample:
    /dev/sdb:
      status: failed
      reasons: ["304 reallocated sectors > 10"]
      notes: []
      exit_status: 0
      values: {smart_passed: true, reallocated_sectors: 304, pending_sectors: 0, uncorrectable_sectors: 0,
               media_errors: null, critical_warning: null, percentage_used: null, power_on_hours: 27052}
"""

import json

from ansible.module_utils.basic import AnsibleModule


# A drive's health from ``smartctl -j -a``: the values that predict failure, judged against thresholds.
#
# ``read_values`` takes the ATA, SCSI and NVMe forms of smartctl's JSON to one set of values;
# ``judge`` combines them with smartctl's exit status into ``passed``, ``failed`` or
# ``unknown`` (no SMART data: never a failure by itself).
# Defaults: any pending or uncorrectable sector, media error or critical warning fails; a few
# reallocated sectors are tolerated (drives remap some in their first hours); 80 % of the rated
# endurance used leaves too little life for a new OSD; power-on hours are reported, not judged.
DEFAULT_THRESHOLDS = {
    "max_reallocated_sectors": 10,
    "max_pending_sectors": 0,
    "max_uncorrectable_sectors": 0,
    "max_media_errors": 0,
    "max_percentage_used": 80,
    "max_power_on_hours": None,
}

# smartctl's exit status is a bit mask (man smartctl, RETURN VALUES).
EXIT_PARSE = 0x01          # the command line did not parse
EXIT_OPEN = 0x02           # open failed, no IDENTIFY data, or a low-power mode
EXIT_COMMAND = 0x04        # a SMART or ATA command failed, or a checksum error
EXIT_FAILING = 0x08        # SMART status "DISK FAILING"
EXIT_PREFAIL = 0x10        # prefail attributes at or below their threshold now
EXIT_PAST_PREFAIL = 0x20   # attributes at or below threshold in the past
EXIT_ERROR_LOG = 0x40      # the error log has records
EXIT_SELFTEST_LOG = 0x80   # the self-test log has errors

# ATA attributes by id: their names differ between vendors in smartctl's drive database.
ATA_REALLOCATED = 5
ATA_REPORTED_UNCORRECT = 187
ATA_PENDING = 197
ATA_OFFLINE_UNCORRECTABLE = 198

NVME_WARNINGS = (
    (0x01, "available spare below threshold"), (0x02, "temperature out of range"),
    (0x04, "reliability degraded"), (0x08, "media read-only"), (0x10, "volatile memory backup failed"),
    (0x20, "persistent memory region unreliable"))


def command(smartctl, device):
    return [smartctl, "-j", "-a", device]


def _ata_raw(doc, attribute_id):
    for attribute in (doc.get("ata_smart_attributes") or {}).get("table") or []:
        if attribute.get("id") == attribute_id:
            return (attribute.get("raw") or {}).get("value")
    return None


def _ata_endurance(doc):
    """ATA device statistics, page 7: "Percentage Used Endurance Indicator"."""
    for page in (doc.get("ata_device_statistics") or {}).get("pages") or []:
        for entry in page.get("table") or []:
            if entry.get("name") == "Percentage Used Endurance Indicator" and entry.get("flags", {}).get("valid", True):
                return entry.get("value")
    return None


def _first(*values):
    return next((value for value in values if value is not None), None)


def read_values(doc):
    """The judged values of one drive; None where its kind of drive does not report one."""
    nvme = doc.get("nvme_smart_health_information_log") or {}
    ata_uncorrectable = [value for value in (_ata_raw(doc, ATA_OFFLINE_UNCORRECTABLE),
                                             _ata_raw(doc, ATA_REPORTED_UNCORRECT)) if value is not None]
    scsi_errors = [counter.get("total_uncorrected_errors")
                   for counter in (doc.get("scsi_error_counter_log") or {}).values() if isinstance(counter, dict)]
    scsi_uncorrected = sum(value for value in scsi_errors if value is not None) if scsi_errors else None
    return {
        "smart_passed": (doc.get("smart_status") or {}).get("passed"),
        "reallocated_sectors": _first(_ata_raw(doc, ATA_REALLOCATED), doc.get("scsi_grown_defect_list")),
        "pending_sectors": _ata_raw(doc, ATA_PENDING),
        "uncorrectable_sectors": _first(max(ata_uncorrectable) if ata_uncorrectable else None, scsi_uncorrected),
        "media_errors": nvme.get("media_errors"),
        "critical_warning": nvme.get("critical_warning"),
        "percentage_used": _first(nvme.get("percentage_used"), _ata_endurance(doc),
                                  doc.get("scsi_percentage_used_endurance_indicator")),
        "power_on_hours": (doc.get("power_on_time") or {}).get("hours"),
    }


def _messages(doc):
    return [m.get("string", "") for m in (doc.get("smartctl") or {}).get("messages") or []]


LIMITS = (
    ("reallocated_sectors", "max_reallocated_sectors", "reallocated sectors"),
    ("pending_sectors", "max_pending_sectors", "pending sectors"),
    ("uncorrectable_sectors", "max_uncorrectable_sectors", "uncorrectable sectors or errors"),
    ("media_errors", "max_media_errors", "media and data integrity errors"),
    ("percentage_used", "max_percentage_used", "% of rated endurance used"),
    ("power_on_hours", "max_power_on_hours", "power-on hours"),
)


def judge(doc, exit_status, thresholds=None):
    """{"status": passed|failed|unknown, "reasons", "notes", "values", "exit_status"} of one drive."""
    limits = dict(DEFAULT_THRESHOLDS, **(thresholds or {}))
    doc = doc or {}
    values = read_values(doc)
    result = {"status": "passed", "reasons": [], "notes": [], "values": values, "exit_status": exit_status}
    if exit_status & (EXIT_PARSE | EXIT_OPEN) or not any(v is not None for v in values.values()):
        result["status"] = "unknown"
        result["reasons"] = ["no SMART data: %s" % ("; ".join(_messages(doc)) or "smartctl exit status %d" % exit_status)]
        return result
    failures = []
    if exit_status & EXIT_FAILING or values["smart_passed"] is False:
        failures.append("SMART overall assessment: FAILED")
    if exit_status & EXIT_PREFAIL:
        failures.append("a prefail attribute is at or below its threshold")
    if exit_status & EXIT_SELFTEST_LOG:
        failures.append("the self-test log records errors")
    for bit, text in NVME_WARNINGS:
        if (values["critical_warning"] or 0) & bit:
            failures.append("NVMe critical warning: %s" % text)
    for key, limit_key, text in LIMITS:
        limit = limits.get(limit_key)
        if limit is not None and values[key] is not None and values[key] > limit:
            failures.append("%s %s > %s" % (values[key], text, limit))
    if exit_status & EXIT_COMMAND:
        result["notes"].append("a SMART command failed; some values may be missing")
    if exit_status & EXIT_PAST_PREFAIL:
        result["notes"].append("an attribute was at or below its threshold in the past")
    if exit_status & EXIT_ERROR_LOG:
        result["notes"].append("the error log has records")
    if failures:
        result["status"], result["reasons"] = "failed", failures
    return result


def unknown(reason):
    return {"status": "unknown", "reasons": [reason], "notes": [], "values": {}, "exit_status": None}


THRESHOLDS = ("max_reallocated_sectors", "max_pending_sectors", "max_uncorrectable_sectors", "max_media_errors",
              "max_percentage_used", "max_power_on_hours")


def read(module, smartctl, device, thresholds):
    rc, out, err = module.run_command(command(smartctl, device))
    try:
        doc = json.loads(out)
    except ValueError:
        return unknown("smartctl printed no JSON (exit status %d): %s" % (rc, (err or out).strip()[-200:]))
    return judge(doc, rc, thresholds)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            devices=dict(type="list", elements="path", required=True),
            max_reallocated_sectors=dict(type="int", default=10),
            max_pending_sectors=dict(type="int", default=0),
            max_uncorrectable_sectors=dict(type="int", default=0),
            max_media_errors=dict(type="int", default=0),
            max_percentage_used=dict(type="int", default=80),
            max_power_on_hours=dict(type="int"),
        ),
        supports_check_mode=True,
    )
    module.run_command_environ_update = {"LC_ALL": "C"}  # output is parsed
    thresholds = dict((key, module.params[key]) for key in THRESHOLDS)
    smartctl = module.get_bin_path("smartctl")
    health = {}
    for device in module.params["devices"]:
        health[device] = (read(module, smartctl, device, thresholds) if smartctl
                          else unknown("smartctl not found (package smartmontools)"))
    module.exit_json(changed=False, smartctl=smartctl, health=health)


if __name__ == "__main__":
    main()
