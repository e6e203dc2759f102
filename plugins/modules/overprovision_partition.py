#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: overprovision_partition
short_description: Over-provision blank disks with one partition that leaves a reserve unallocated
version_added: 0.1.0
description:
  - Discards each listed blank disk (C(blkdiscard)) and makes one GPT partition from 1 MiB to
    (100 - O(disks[].reserve_percent)) % of the disk, rounded down to a whole MiB. The rest of
    the disk stays unallocated and, discarded, holds no data, which gives the SSD's controller
    more spare area. Works on any disk, also behind RAID controllers and SAS HBAs, where
    M(cephops.osd_tuning.ata_hpa) cannot reach the drive.
  - Takes every disk of the host for this method in one call. Refuses, naming every check
    that failed, unless each disk is blank by the checks of M(cephops.osd_tuning.disk_facts)
    (no partitions, signatures, holders, mounts, LVM, md, BlueStore label, and no data,
    partition entries or signatures its content checks find, unless
    O(disks[].overwrite_data=true)), O(erase=true) is set, and the disk can discard (or
    O(disks[].discard=false)). One refused disk changes nothing on any disk.
  - A disk whose partitions are exactly the layout O(record) holds for it is done and left
    alone, also once an OSD uses the partition; a run with another reserve for it is
    refused, since only an empty partition can be removed.
  - Partitions with C(sgdisk) at exact sector numbers, tells the kernel with C(partx --update)
    (which works also where the kernel refuses to re-read a table, as on loop devices), waits
    for udev and reads the layout back from the kernel.
  - With O(restore=true), removes the recorded layout of each disk whose partition holds
    nothing (no signature, mount or holder). The kernel forgets the partition
    (C(partx --delete)) and the first and last MiB, where the GPT and its backup are, are
    zeroed, so the disk is blank again.
  - community.general.parted is not used because it changes one device per call, so a
    module built on it could not refuse every disk before it changes any, and because it
    cannot run the collection's safety checks (blank by the inventory, the content checks and
    O(disks[].overwrite_data)) or keep the record a rollback needs.
author:
  - cephops maintainers (@cephops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - cephops.osd_tuning.attributes
  - cephops.osd_tuning.overprovision
  - cephops.osd_tuning.content_check
  - cephops.osd_tuning.overprovision.partition
options:
  erase:
    description:
      - Consent to change the listed blank disks, each discarded as a whole and partitioned.
        Without it the module refuses every disk it would change. Removing a recorded layout
        needs no consent.
    type: bool
    default: false
  record:
    description:
      - JSON file that keeps, per disk (by WWN, else serial, else kernel name), the layout the
        module made, by which it recognises its own partition and which O(restore) removes.
    type: path
    required: true
notes:
  - Must run as root. Needs C(sgdisk) (gdisk), C(partx) and C(blkdiscard) (util-linux) and,
    when present, C(udevadm).
  - O(disks[].reserve_percent) may be 1-50.
  - Give ceph-volume the partition (for example C(/dev/disk/by-id/...-part1)) instead of the
    disk. The backup GPT occupies the last 33 sectors of the disk (the last 5 on a 4Kn disk);
    everything between the end of the partition and that header is unallocated.
seealso:
  - module: cephops.osd_tuning.disk_facts
  - module: cephops.osd_tuning.ata_hpa
  - module: cephops.osd_tuning.nvme_namespace
  - name: sgdisk(8)
    description: The C(--new) and C(--set-alignment) options.
    link: https://man7.org/linux/man-pages/man8/sgdisk.8.html
"""

EXAMPLES = r"""
- name: Leave 20 % of two blank SSDs unallocated, 28 % of a third
  cephops.osd_tuning.overprovision_partition:
    disks:
      - serial: S4EWNX0R123456
      - device: /dev/disk/by-id/scsi-35002538e40a1b2c3
      - wwn: "0x5002538e40a1b2c4"
        reserve_percent: 28
    erase: true
    record: /var/lib/cephops-osd-tuning/overprovision_partition.json

- name: Remove the partitions again (each must be empty)
  cephops.osd_tuning.overprovision_partition:
    restore: true
    record: /var/lib/cephops-osd-tuning/overprovision_partition.json
"""

RETURN = r"""
actions:
  description: Commands run, or planned in check mode, for every disk.
  returned: always
  type: list
  elements: str
  sample: ["blkdiscard /dev/sdb", "sgdisk --set-alignment=2048 --new=1:2048:13418495 /dev/sdb",
           "partx --update /dev/sdb", "udevadm settle --timeout=60"]
disks:
  description: One result per disk, in the order of O(disks) (of the record with O(restore)).
  returned: always
  type: list
  elements: dict
  contains:
    device:
      description: The disk's device node.
      type: str
      sample: /dev/sdb
    serial:
      description: Serial number of the disk.
      type: str
    wwn:
      description: World wide name of the disk, or null.
      type: str
    changed:
      description: The disk was changed, or would be in check mode.
      type: bool
    checks:
      description: Every safety check that refused the disk; empty when none did.
      type: list
      elements: str
      sample: ["the disk is not blank: Has GPT headers, Has partitions"]
    actions:
      description: Commands run on this disk, or planned in check mode.
      type: list
      elements: str
    size_bytes:
      description: Size of the disk.
      type: int
      sample: 960197124096
    start_bytes:
      description: Where the partition starts (O(restore=false)).
      type: int
      sample: 1048576
    end_bytes:
      description: Where the partition ends, exclusive; the reserve follows (O(restore=false)).
      type: int
      sample: 768156876800
    partition:
      description: The partition's device node, once it was made.
      type: str
      sample: /dev/sdb1
    discarded:
      description: The whole disk was discarded by this run.
      returned: always
      type: bool
not_recorded:
  description: Disks of O(disks) the record does not hold, so O(restore) left them alone.
  returned: when restore=true and disks were listed
  type: list
  elements: str
missing:
  description: Disks in the record that are not present on the host (O(restore) only); they stay in the record.
  returned: when restore=true and no disks were listed
  type: list
  elements: str
"""


from ansible.module_utils.basic import AnsibleModule
from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev, overprovision
from ansible_collections.cephops.osd_tuning.plugins.module_utils.overprovision import Failed, MIB, Plan, reserved_size
from ansible_collections.cephops.osd_tuning.plugins.module_utils.blockdev import (
    REASON_GPT, REASON_PARTITIONS, blocking_reasons)


# Over-provisioning by partition: the layout, its checks and its commands.
#
# Pure functions only; the overprovision_partition module runs the commands. The layout is
# one GPT partition from 1 MiB to (100 - reserve) % of the disk, rounded down to a whole MiB;
# the rest stays unallocated and, discarded first, holds no data. Sizes are in bytes; the
# kernel reports partitions in 512-byte units whatever the disk's logical sector size.
# The partition starts here: 1 MiB keeps it aligned for every physical sector and erase
# block size in use, and leaves room for the protective MBR and the primary GPT.
START_BYTES = MIB
KERNEL_SECTOR = 512
# Reserves the role and the module accept, in percent.
RESERVE_RANGE = (1, 50)
# What the layout itself makes disk_facts report; anything else on the disk is data.
OWN_REASONS = (REASON_GPT, REASON_PARTITIONS)


def wanted_layout(size_bytes, reserve_percent):
    """[(start, end)] of the one partition for this reserve (end exclusive, whole MiB)."""
    return [(START_BYTES, reserved_size(size_bytes, reserve_percent, MIB))]


def kernel_layout(block):
    """[(start, end)] in bytes of the partitions the kernel knows on a disk, from the block
    of a blockdev snapshot (sysfs ``start`` and ``size``, 512-byte units)."""
    found = []
    for part in block["partitions"].values():
        start, size = int(part["attrs"].get("start", 0)), int(part["attrs"].get("size", 0))
        found.append((start * KERNEL_SECTOR, (start + size) * KERNEL_SECTOR))
    return sorted(found)


def describe(layout):
    if not layout:
        return "no partition"
    return ", ".join("partition from %d to %d" % (start, end) for start, end in layout)


def is_recorded(layout, recorded):
    """The disk has exactly the layout the record describes."""
    return bool(recorded) and layout == [(recorded["start_bytes"], recorded["end_bytes"])]


def plan(disk, layout, reserve_percent, discard, erase, overwrite_data, recorded):
    """What to do with ``disk`` (a disk_facts record) whose partitions are ``layout``.

    Returns a dict with ``wanted`` (the layout for this reserve), ``change`` and ``checks``:
    every check that refuses the change, in words an operator can act on. A disk with the
    recorded layout is done and left alone without the blank checks; if it was made for
    another reserve it is refused, because only an empty partition can be removed.
    """
    wanted = wanted_layout(disk["size_bytes"], reserve_percent)
    if is_recorded(layout, recorded):
        checks = []
        if layout != wanted:
            checks.append("the partition was made for a reserve of %s %%, not %s %%; restore it first, while "
                          "the partition is empty" % (recorded["reserve_percent"], reserve_percent))
        return dict(wanted=wanted, change=False, checks=checks)
    checks = []
    refusing = blocking_reasons(disk, overwrite_data)
    if refusing:
        checks.append("the disk is not blank: " + ", ".join(refusing))
    if not erase:
        checks.append("erase=true is required: the whole disk is discarded and partitioned")
    if discard and not disk["discard"]:
        checks.append("the disk cannot discard, so the unallocated reserve could still hold old data; set "
                      "discard false for this disk only if it is new or was secure-erased")
    return dict(wanted=wanted, change=True, checks=checks)


def plan_restore(disk, layout, recorded):
    """Whether the recorded layout can be removed: a disk with no partition and nothing else
    on it is blank already; a layout other than the recorded one, or a partition that holds
    anything (a signature, a mount, a holder), refuses."""
    if not layout and not blocking_reasons(disk):
        return dict(change=False, checks=[])
    checks = []
    if not is_recorded(layout, recorded):
        checks.append("it differs from the one recorded (%s, recorded %s)"
                      % (describe(layout), describe([(recorded["start_bytes"], recorded["end_bytes"])])))
    in_use = [r for r in disk["reject_reasons"] if r not in OWN_REASONS]
    in_use += ["partition signature " + sig["type"] for sig in disk["signatures"] if sig["device"] != disk["name"]]
    if in_use:
        checks.append("the partition is in use: " + ", ".join(in_use))
    return dict(change=True, checks=checks)


def create_argv(sgdisk, device, layout, sector_size):
    """sgdisk makes the GPT and the partition at exactly these sectors: the alignment is set to
    one MiB, so its default of 2048 sectors (8 MiB on a 4Kn disk) cannot move the start."""
    (start, end), = layout
    return [sgdisk, "--set-alignment=%d" % max(1, MIB // sector_size),
            "--new=1:%d:%d" % (start // sector_size, end // sector_size - 1), device]


def zero_argvs(blkdiscard, device, size_bytes):
    """Zero the first MiB (protective MBR, primary GPT) and the last (backup GPT), which
    wipefs --all would leave as headers and entry arrays without their magic."""
    return [[blkdiscard, "--zeroout", "--offset", str(offset), "--length", str(MIB), device]
            for offset in (0, size_bytes - MIB)]


class Partition:
    """The partition method of module_utils/overprovision.py."""

    name = "partition"
    defaults = dict(discarded=False)

    def __init__(self, module):
        self.module = module
        self.tools = {}

    def run(self, argv):
        return self.module.run_command(argv)

    def check_entries(self, entries):
        return overprovision.check_reserve(entries, *RESERVE_RANGE)

    def prepare(self):
        for tool in ("sgdisk", "partx", "blkdiscard"):
            self.tools[tool] = self.module.get_bin_path(tool, required=True)
        udevadm = self.module.get_bin_path("udevadm")
        self.tools["settle"] = [udevadm, "settle", "--timeout=60"] if udevadm else None

    def inspect(self, disk, block, entry):
        return kernel_layout(block)

    def plan(self, disk, layout, entry, recorded):
        planned = plan(disk, layout, entry["reserve_percent"], entry["discard"], self.module.params["erase"],
                       entry["overwrite_data"], recorded)
        wanted = planned["wanted"]
        path = disk["path"]
        discard = [self.tools["blkdiscard"], path] if entry["discard"] else None
        steps = [discard, create_argv(self.tools["sgdisk"], path, wanted, disk["logical_sector_size"] or 512),
                 [self.tools["partx"], "--update", path], self.tools["settle"]]
        (start, end), = wanted
        return Plan(change=planned["change"], checks=planned["checks"],
                    actions=[s for s in steps if s] if planned["change"] else [],
                    before="%s: %s" % (path, describe(layout)),
                    after="%s: %s, %s %% unallocated" % (path, describe(wanted), entry["reserve_percent"]),
                    work=dict(restore=False, discard=discard, overwrite_data=entry["overwrite_data"], wanted=wanted),
                    size_bytes=disk["size_bytes"], reserve_percent=entry["reserve_percent"], start_bytes=start,
                    end_bytes=end, discarded=False)

    def plan_restore(self, disk, layout, recorded):
        planned = plan_restore(disk, layout, recorded)
        path = disk["path"]
        steps = ([[self.tools["partx"], "--delete", path]] if layout else []) \
            + zero_argvs(self.tools["blkdiscard"], path, disk["size_bytes"]) + [self.tools["settle"]]
        return Plan(change=planned["change"], checks=planned["checks"],
                    actions=[s for s in steps if s] if planned["change"] else [],
                    before="%s: %s" % (path, describe(layout)), after="%s: blank" % path,
                    work=dict(restore=True, discard=None), size_bytes=disk["size_bytes"])

    def refusal(self, disk, checks, restoring):
        return "%s: refused%s %s" % (disk["path"], " to remove the partition layout:" if restoring else ",",
                                     "; ".join(checks))

    def read_back(self, disk):
        snapshot = blockdev.take_snapshot(self.run, [disk["name"]], include_loop=True)
        return snapshot["blocks"][disk["name"]], blockdev.build_disks(snapshot, min_size_bytes=0)[0]

    def apply(self, disk, layout, plan):
        work, path = plan["work"], disk["path"]
        if work["discard"] and disk["data_reasons"] and work["overwrite_data"]:
            self.module.warn("%s: overwrite_data is set, the discard destroys what the content checks found: %s"
                             % (path, ", ".join(disk["data_reasons"])))
        for count, argv in enumerate(plan["actions"]):
            rc, out, err = self.run(argv)
            # udevadm settle is last and not fatal: the read-back tells whether the layout took.
            if rc != 0 and argv != self.tools["settle"]:
                discarded = bool(work["discard"]) and count > 0
                raise Failed("%s: %s failed (%s)%s" % (
                    path, " ".join(argv[:2]), (err or out).strip() or "exit status %d" % rc,
                    ", nothing was changed" if count == 0 else "; the blank disk was discarded" if discarded else ""),
                    changed=count > 0, fields=dict(discarded=discarded))
        block, after = self.read_back(disk)
        found = kernel_layout(block)
        if work["restore"]:
            if found or after["signatures"]:
                raise Failed("%s: the layout was removed, yet the disk reads back with %s and signatures: %s"
                             % (path, describe(found), ", ".join(s["type"] for s in after["signatures"]) or "none"),
                             changed=True)
            return {}
        discarded = bool(work["discard"])
        if found != work["wanted"]:
            raise Failed("%s: the partition table reads back as %s, not %s" % (
                path, describe(found), describe(work["wanted"])), changed=True,
                fields=dict(discarded=discarded))
        return dict(discarded=discarded, partition="/dev/" + sorted(block["partitions"])[0])

    def record_entry(self, disk, plan, applied, recorded):
        fields = plan["fields"]
        return overprovision.record_entry(
            self.name, disk, size_bytes=fields["size_bytes"], reserve_percent=fields["reserve_percent"],
            start_bytes=fields["start_bytes"], end_bytes=fields["end_bytes"], discarded=applied["discarded"])


def main():
    module = AnsibleModule(
        argument_spec=overprovision.argument_spec(dict(discard=dict(type="bool", default=True)),
                                                  record_required=True),
        supports_check_mode=True,
    )
    overprovision.run(module, Partition(module))


if __name__ == "__main__":
    main()
