# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Over-provisioning by partition: the layout, its checks and its commands.

Pure functions only; the overprovision_partition module runs the commands. The layout is
one GPT partition from 1 MiB to (100 - reserve) % of the disk, rounded down to a whole MiB;
the rest stays unallocated and, discarded first, holds no data. Sizes are in bytes; the
kernel reports partitions in 512-byte units whatever the disk's logical sector size.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.cephops.osd_tuning.plugins.module_utils.blockdev import (
    REASON_GPT, REASON_PARTITIONS, blocking_reasons)
from ansible_collections.cephops.osd_tuning.plugins.module_utils.overprovision import MIB, reserved_size

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
