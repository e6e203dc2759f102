# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a new XFS filesystem may be made on a disk, for the mkfs_check module; pure functions.

The filesystem itself is made by community.general.filesystem, which only asks blkid whether
the disk holds a filesystem; these checks add everything the disk model knows (partition
entries, data without a signature, holders, mounts, the root disk) and the fstab.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev, fstab


def option_refusals(mkfs_options):
    """Reasons to refuse mkfs.xfs options: a 64 KiB directory block size (XFS FAQ: it can
    cause severe problems on systems under load), and blanks inside an option, which
    community.general.filesystem would split into two (it takes the options as one string)."""
    refusals = []
    args = list(mkfs_options)
    for index, arg in enumerate(args):
        if re.search(r"\s", arg):
            refusals.append("\"%s\": holds a blank, which would split it into two options" % arg)
            continue
        value = None
        if arg == "-n" and index + 1 < len(args):
            value = args[index + 1]
        elif arg.startswith("-n") and len(arg) > 2:
            value = arg[2:]
        if value is None:
            continue
        for sub in value.split(","):
            key, size = sub.partition("=")[::2]
            if key.strip() == "size" and _bytes(size) >= 64 * 1024:
                refusals.append(
                    "-n size=%s: a 64 KiB directory block size can cause severe problems on "
                    "systems under load (XFS FAQ); keep the default" % size)
    return refusals


def _bytes(size):
    match = re.match(r"^\s*(\d+)\s*([kmg]?)i?b?\s*$", size, re.I)
    if not match:
        return 0
    return int(match.group(1)) * {"": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}[match.group(2).lower()]


def xfs_uuid(disk):
    """UUID of the XFS filesystem on the whole disk (not in a partition), None without one."""
    for sig in disk["signatures"]:
        if sig.get("device") == disk["name"] and sig.get("type") == "xfs":
            return sig.get("uuid")
    return None


def plan(spec, disk, entries, live):
    """What to do for one requested filesystem, from the disk model of its disk and the fstab
    (``entries``) and live mounts (``live``) indexed by mount point.

    Returns ``{"create": bool, "refusal": text or None}``. A filesystem the fstab already
    mounts at the mount point by its UUID was made on an earlier run and is left alone;
    anything else must be blank, where ``overwrite_data`` lifts the content checks' reasons.
    """
    target = fstab.normalize_path(spec["mountpoint"])
    refusals = option_refusals(spec["mkfs_options"])
    if refusals:
        return {"create": False, "refusal": "%s: refused mkfs.xfs option %s" % (spec["device"], "; ".join(refusals))}
    uuid = xfs_uuid(disk)
    conflict = fstab.new_mount_refusal(target, "UUID=%s" % uuid if uuid else None, spec["device"], entries, live)
    if conflict:
        return {"create": False, "refusal": conflict}
    if target in entries:
        return {"create": False, "refusal": None}
    refusing = blockdev.blocking_reasons(disk, spec["overwrite_data"])
    if refusing:
        return {"create": False, "refusal": "%s: refused to create a filesystem, the disk is not blank: %s"
                % (spec["device"], ", ".join(refusing))}
    return {"create": True, "refusal": None}
