#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: ata_hpa
short_description: Over-provision a blank direct-attached SATA SSD with a Host Protected Area
version_added: 0.1.0
description:
  - Reads the visible and native maximum sector counts of an ATA disk with C(hdparm -N) and
    parses every form hdparm prints (C(HPA is enabled/disabled), C(ACCESSIBLE MAX ADDRESS
    enabled/disabled), C(HPA setting seems invalid)).
  - With O(state=present), hides a share of the disk from the host permanently (ATA SET MAX
    ADDRESS, C(hdparm -N pCOUNT --yes-i-know-what-i-am-doing)), so the SSD has more spare
    area; with O(state=absent), restores the native maximum.
  - Refuses, naming every check that failed, unless the disk is a direct-attached ATA disk
    (transport C(sata) or C(ata), not behind USB, SAS or RAID) and blank by the checks of
    M(cephops.osd_tuning.disk_facts) (no partitions, signatures, holders, mounts, LVM, md,
    BlueStore label, and no data, partition entries or signatures its content checks find,
    unless O(overwrite_data=true)). A disk already at the target is left alone without these
    checks, because nothing is written.
  - Before hiding sectors it discards the whole disk (C(blkdiscard)), which needs
    O(erase=true), because the spare area only helps when it holds no data. A disk that
    cannot discard is refused.
  - Waits for udev to settle before hdparm sends READ NATIVE MAX and SET MAX back to back
    (an open by udev in between makes the pair fail), then reads the state back. When the
    drive rejects the command the module fails and says that the HPA is unchanged.
  - Drives accept one permanent change per power cycle. The module records each change in
    C(/run/cephops/ata_hpa) and refuses a second one on the same drive until the next boot.
    The kernel keeps the old size until the drive is power-cycled, hence
    RV(power_cycle_required).
author:
  - cephops maintainers (@cephops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
options:
  device:
    description:
      - The disk, as C(/dev) path, kernel name or C(/dev/disk/by-id) link.
    type: str
    required: true
  state:
    description:
      - V(present) sets the visible size from O(reserve_percent) or O(visible_sectors);
        V(absent) restores the native maximum.
    type: str
    choices: [present, absent]
    default: present
  reserve_percent:
    description:
      - Share of the native maximum to hide, 0-90. The visible size is rounded down to a
        whole MiB.
      - Mutually exclusive with O(visible_sectors); one of them is required for
        O(state=present).
    type: float
  visible_sectors:
    description:
      - Visible size in logical sectors, at most the native maximum.
    type: int
  erase:
    description:
      - Discard the whole disk before hiding sectors. Required to shrink the visible size;
        the module never discards without it.
    type: bool
    default: false
  overwrite_data:
    description:
      - The disk may hold data that no tool recognises; it is destroyed.
      - Lifts only the reasons of the content checks of M(cephops.osd_tuning.disk_facts)
        (its C(data_reasons) - data without a signature, partition entries without a table
        signature, signatures away from the start of the disk). Signatures at the start,
        partitions, mounts, holders and the root disk always refuse.
    type: bool
    default: false
notes:
  - Must run as root. Needs C(hdparm), C(blkdiscard) and (when present) C(udevadm).
  - The kernel parameter C(libata.ignore_hpa=1) unlocks every HPA at boot; the module
    refuses O(state=present) while it is set.
  - SAS disks (C(sg_format --resize)), NVMe (namespace management) and disks behind RAID
    controllers need other methods; see the role cephops.osd_tuning.overprovision.
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: posix
seealso:
  - module: cephops.osd_tuning.disk_facts
  - name: hdparm(8)
    description: The C(-N) option and its C(p) prefix.
    link: https://man7.org/linux/man-pages/man8/hdparm.8.html
"""

EXAMPLES = r"""
- name: Hide 20 % of a blank SATA SSD from the host
  cephops.osd_tuning.ata_hpa:
    device: /dev/disk/by-id/ata-CEPHOPS_FAST_SSD_CEPHOPS-SSD-0001
    reserve_percent: 20
    erase: true
  register: hpa

- name: Tell the operator to power-cycle the host
  ansible.builtin.debug:
    msg: "{{ hpa.device }} shows {{ hpa.visible_sectors }} sectors after a power cycle"
  when: hpa.power_cycle_required

- name: Restore the native size
  cephops.osd_tuning.ata_hpa:
    device: /dev/disk/by-id/ata-CEPHOPS_FAST_SSD_CEPHOPS-SSD-0001
    state: absent
"""

RETURN = r"""
device:
  description: The disk's device node.
  returned: always
  type: str
  sample: /dev/sdb
serial:
  description: Serial number of the disk.
  returned: when the disk was found
  type: str
  sample: CEPHOPS-SSD-0001
wwn:
  description: World wide name of the disk, or null.
  returned: when the disk was found
  type: str
  sample: "0x5002538e40a1b2c3"
checks:
  description: Every safety check that refused the disk; empty when none did.
  returned: always
  type: list
  elements: str
  sample: ["not a direct-attached ATA disk (transport loop)", "not blank: Has GPT headers"]
native_sectors:
  description: Native maximum (the whole disk), in logical sectors.
  returned: when the drive answered
  type: int
  sample: 1953525168
visible_sectors_before:
  description: Visible sectors before the module ran.
  returned: when the drive answered
  type: int
  sample: 1953525168
visible_sectors:
  description: Visible sectors after the module ran (read back from the drive), or planned in check mode.
  returned: when the drive answered
  type: int
  sample: 1562820608
target_sectors:
  description: The visible sector count asked for.
  returned: when the drive answered
  type: int
  sample: 1562820608
reserved_percent:
  description: Share of the native maximum hidden at the target, rounded to 0.01.
  returned: when the drive answered
  type: float
  sample: 20.0
hpa:
  description: State as hdparm reports it at the end, V(enabled), V(disabled) or V(invalid).
  returned: when the drive answered
  type: str
  sample: enabled
accessible_max_address:
  description: The drive uses the ACS-3 ACCESSIBLE MAX ADDRESS feature.
  returned: when the drive answered
  type: bool
erased:
  description: The whole disk was discarded by this run.
  returned: always
  type: bool
power_cycle_required:
  description:
    - A permanent change was made since boot; the kernel and the next change wait for a
      power cycle of the drive (a full power-off, not a warm reboot).
  returned: always
  type: bool
actions:
  description: Commands run, or planned in check mode.
  returned: always
  type: list
  elements: str
  sample: ["blkdiscard /dev/sdb", "udevadm settle", "hdparm --yes-i-know-what-i-am-doing -N p1562820608 /dev/sdb"]
"""

import os
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev
from ansible_collections.cephops.osd_tuning.plugins.module_utils import ata_hpa as hpa

ATA_TRANSPORTS = ("sata", "ata")
IGNORE_HPA_PARAM = "/sys/module/libata/parameters/ignore_hpa"
# tmpfs: the record of a permanent change lives exactly as long as this boot.
MARKER_DIR = "/run/cephops/ata_hpa"


class Refused(Exception):
    """A check refused the change; result["checks"] names it."""


def _read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return None


class AtaHpa:
    def __init__(self, module):
        self.module = module
        self.params = module.params
        self.result = dict(changed=False, checks=[], erased=False, power_cycle_required=False, actions=[])

    def run(self, argv):
        return self.module.run_command(argv, environ_update={"LC_ALL": "C"})

    def inspect(self):
        name = blockdev.resolve_disks([self.params["device"]])[0]
        snapshot = blockdev.take_snapshot(self.run, [name], include_loop=True, include_virtual=True)
        # Size is no safety check: only what makes a disk non-blank refuses it here.
        disk = blockdev.build_disks(snapshot, min_size_bytes=0)[0]
        self.result.update(device=disk["path"], serial=disk["serial"], wwn=disk["wwn"])
        return disk

    def marker_path(self, disk):
        key = disk["serial"] or disk["wwn"] or disk["name"]
        return os.path.join(MARKER_DIR, "".join(c if c.isalnum() or c in "-_." else "_" for c in key))

    def read_state(self, hdparm, disk):
        rc, out, err = self.run(hpa.read_argv(hdparm, disk["path"]))
        return hpa.parse_state(out, err)

    def execute(self):
        hdparm = self.module.get_bin_path("hdparm", required=True)
        disk = self.inspect()
        if disk["transport"] not in ATA_TRANSPORTS:
            self.result["checks"].append("not a direct-attached ATA disk (transport %s)" % disk["transport"])
            refusing = blockdev.blocking_reasons(disk, self.params["overwrite_data"])
            if refusing:
                self.result["checks"].append("not blank: " + ", ".join(refusing))
            raise Refused("refused, hdparm was not run")

        before = self.read_state(hdparm, disk)
        marker = self.marker_path(disk)
        plan = hpa.plan(disk, before, self.params["state"], self.params["reserve_percent"],
                        self.params["visible_sectors"], self.params["erase"],
                        ignore_hpa=_read(IGNORE_HPA_PARAM) in ("1", "Y"), changed_since_boot=_read(marker),
                        overwrite_data=self.params["overwrite_data"])
        native, target = before["native_sectors"], plan["target"]
        self.result.update(
            native_sectors=native, visible_sectors_before=before["visible_sectors"],
            visible_sectors=before["visible_sectors"], target_sectors=target,
            reserved_percent=round(100.0 * (native - target) / native, 2),
            hpa=before["hpa"], accessible_max_address=before["accessible_max_address"],
            power_cycle_required=os.path.exists(marker),
            diff=dict(before=dict(visible_sectors=before["visible_sectors"]), after=dict(visible_sectors=target)),
        )
        self.result["checks"] = plan["checks"]
        if plan["checks"]:
            raise Refused("refused, nothing was changed")
        if not plan["change"]:
            return
        if plan["discard"] and disk["data_reasons"]:
            self.module.warn("%s: overwrite_data is set, the discard destroys what the content checks found: %s"
                             % (disk["path"], ", ".join(disk["data_reasons"])))

        discard = [self.module.get_bin_path("blkdiscard", required=True), disk["path"]]
        udevadm = self.module.get_bin_path("udevadm")
        settle = [udevadm, "settle", "--timeout=60"] if udevadm else None
        setter = hpa.set_argv(hdparm, disk["path"], target)
        steps = ([discard] if plan["discard"] else []) + ([settle] if settle else []) + [setter]
        self.result["actions"] = [" ".join([os.path.basename(s[0])] + s[1:]) for s in steps]
        self.result["changed"] = True
        if self.module.check_mode:
            self.result["visible_sectors"] = target
            return

        if plan["discard"]:
            rc, out, err = self.run(discard)
            if rc != 0:
                self.result["changed"] = False
                raise Refused("blkdiscard failed (%s), the HPA was not touched" % (err or out).strip())
            self.result["erased"] = True
        if settle:
            # A failed settle is not fatal: the read-back below tells whether SET MAX took.
            self.run(settle)
        # Recorded before the command: even a half-finished run blocks a second attempt.
        if not os.path.isdir(MARKER_DIR):
            os.makedirs(MARKER_DIR)
        with open(marker, "w") as handle:
            handle.write("%s set to %d sectors at %s\n" % (disk["path"], target, time.strftime("%Y-%m-%dT%H:%M:%S%z")))
        rc, out, err = self.run(setter)
        after = self.read_state(hdparm, disk)
        self.result.update(visible_sectors=after["visible_sectors"], hpa=after["hpa"])
        if after["visible_sectors"] != target:
            os.unlink(marker)
            self.result["changed"] = self.result["erased"]
            failures = "; ".join(hpa.command_failures(err)) or "hdparm exit status %d, no error printed" % rc
            raise Refused("the drive rejected SET MAX ADDRESS (%s): the HPA is unchanged, %d of %d sectors "
                          "visible%s" % (failures, after["visible_sectors"], native,
                                         "; the blank disk was discarded" if self.result["erased"] else ""))
        self.result["power_cycle_required"] = True


def main():
    module = AnsibleModule(
        argument_spec=dict(
            device=dict(type="str", required=True),
            state=dict(type="str", choices=["present", "absent"], default="present"),
            reserve_percent=dict(type="float"),
            visible_sectors=dict(type="int"),
            erase=dict(type="bool", default=False),
            overwrite_data=dict(type="bool", default=False),
        ),
        mutually_exclusive=[("reserve_percent", "visible_sectors")],
        required_if=[("state", "present", ("reserve_percent", "visible_sectors"), True)],
        supports_check_mode=True,
    )
    try:
        hpa.check_request(module.params["reserve_percent"], module.params["visible_sectors"])
    except hpa.HpaError as exc:
        module.fail_json(msg="%s: %s; nothing was read or written" % (module.params["device"], exc))
    job = AtaHpa(module)
    try:
        job.execute()
    except Refused as exc:
        module.fail_json(msg="%s: %s" % (module.params["device"], "; ".join(job.result["checks"] + [str(exc)])),
                         **job.result)
    except blockdev.DeviceError as exc:
        module.fail_json(msg=str(exc), **job.result)
    except hpa.HpaError as exc:
        module.fail_json(msg="%s: %s" % (module.params["device"], exc), **job.result)
    module.exit_json(**job.result)


if __name__ == "__main__":
    main()
