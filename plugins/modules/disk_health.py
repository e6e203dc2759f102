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
from ansible_collections.cephops.osd_tuning.plugins.module_utils import smart_health

THRESHOLDS = ("max_reallocated_sectors", "max_pending_sectors", "max_uncorrectable_sectors", "max_media_errors",
              "max_percentage_used", "max_power_on_hours")


def read(module, smartctl, device, thresholds):
    rc, out, err = module.run_command(smart_health.command(smartctl, device))
    try:
        doc = json.loads(out)
    except ValueError:
        return smart_health.unknown("smartctl printed no JSON (exit status %d): %s" % (rc, (err or out).strip()[-200:]))
    return smart_health.judge(doc, rc, thresholds)


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
                          else smart_health.unknown("smartctl not found (package smartmontools)"))
    module.exit_json(changed=False, smartctl=smartctl, health=health)


if __name__ == "__main__":
    main()
