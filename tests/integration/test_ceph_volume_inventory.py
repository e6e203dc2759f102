"""disk_facts' availability against Ceph's own ``ceph-volume inventory``, on every disk kind of
the safety suite and a few more: both verdicts side by side, and no disagreement but a
documented, stricter refusal of ours.

ceph-volume scans every block device of the host even when asked about one, and other loop
devices coming and going make it fail (``FileNotFoundError`` on a partition that vanished), so
it runs in a private mount namespace whose /sys/block and /sys/dev/block list only the disks
under test: a host with those disks alone. ``CEPH_VOLUME_ALLOW_LOOP_DEVICES`` is its own switch
to take loop devices as disks; without it every loop device is "not acceptable".
"""

import json
import os
import re
import shutil

from conftest import REPO_ROOT, TABLES
from loopdisk import attach, detach, only_these_disks, run
from test_disk_facts import HIDDEN, NON_BLANK, facts, luks_format

DOC = os.path.join(REPO_ROOT, "docs", "disk_inventory.md")
TABLE_START, TABLE_END = "<!-- ceph-volume table: begin -->\n", "<!-- ceph-volume table: end -->\n"


def make_mbr_partitions(disk):
    run(["parted", "--script", disk.path, "mklabel", "msdos", "mkpart", "primary", "1MiB", "513MiB"])
    run(["partx", "--update", disk.path])


# (kind, preparation, size in GiB): the safety suite's kinds, then kinds it does not carry.
KINDS = [("blank", None, 8)] + [(kind, prepare, 8) for kind, prepare, _reasons in NON_BLANK + HIDDEN] + [
    ("mbr_with_partitions", make_mbr_partitions, 8),
    ("mbr_empty", lambda disk: run(["parted", "--script", disk.path, "mklabel", "msdos"]), 8),
    ("luks", lambda disk: luks_format(disk.path), 8),
    ("small_disk_1_gib", None, 1),
]

# Refusals of ours that ceph-volume does not make, each with why: the only disagreement allowed.
STRICTER = [
    (r"Has data without a signature", "content sample (ceph-volume reads signatures only)"),
    (r"Has partition entries without a table signature", "partition entries (ceph-volume reads signatures only)"),
    (r".* at offset \d+", "signature away from the start (ceph-volume probes offset 0 only)"),
    (r"Has GPT headers$", "lone backup GPT header at the end (ceph-volume's `blkid -p` misses it)"),
    (r"Has a partition table$", "MBR (ceph-volume knows GPT only)"),
]
# ceph-volume 16.2 words every libblkid TYPE as "Has a FileSystem", where ours names what it is.
SIGNATURE_WORDS = ("Has a FileSystem", "LVM detected", "md RAID member", "swap", "Has BlueStore device label",
                   "Has a LUKS header")


def stricter_why(reason):
    return next((why for pattern, why in STRICTER if re.match(pattern, reason)), None)


def judge(ours, theirs):
    """(agrees, note) for one disk: ``ours`` and ``theirs`` are (available, reasons)."""
    if ours[0] and not theirs[0]:
        return False, "ceph-volume refuses, disk_facts accepts"
    if not ours[0] and theirs[0]:
        undocumented = [r for r in ours[1] if not stricter_why(r)]
        if undocumented:
            return False, "refused by disk_facts alone, not documented: %s" % "; ".join(undocumented)
        return True, "stricter: " + "; ".join(sorted(set(stricter_why(r) for r in ours[1])))
    # Both refuse or both accept: every reason of ceph-volume must be one of ours.
    signature = set(SIGNATURE_WORDS) & set(ours[1])
    missing = [r for r in theirs[1] if r not in ours[1] and not (r == "Has a FileSystem" and signature)]
    if missing:
        return False, "reasons of ceph-volume disk_facts does not give: %s" % "; ".join(missing)
    notes = []
    if "Has a FileSystem" in theirs[1] and "Has a FileSystem" not in ours[1]:
        notes.append("ceph-volume calls the signature `Has a FileSystem`")
    extra = [r for r in ours[1] if r not in theirs[1] and r not in signature]
    if extra:
        notes.append("disk_facts also: " + ", ".join("`%s`" % r for r in extra))
    return True, "same verdict; " + "; ".join(notes) if notes else "same"


def ceph_volume_verdicts(mount_ns, log_dir):
    """{device path: (available, reasons)} of the whole inventory: the disks under test and their
    partitions."""
    proc = run(mount_ns + ["env", "CEPH_VOLUME_ALLOW_LOOP_DEVICES=1", "ceph-volume", "--log-path", log_dir,
                           "inventory", "--format", "json"], check=False)
    assert proc.returncode == 0, "ceph-volume inventory failed: %s" % proc.stderr
    return dict((found["path"], (found["available"], sorted(found["rejected_reasons"])))
                for found in json.loads(proc.stdout))


def verdict_text(available, reasons):
    return "available" if available else "refused: " + ", ".join("`%s`" % r for r in reasons)


def test_disk_facts_agrees_with_ceph_volume_inventory(mount_ns, tmp_path):
    assert shutil.which("ceph-volume"), "ceph-volume is missing: scripts/env.sh installs Debian's ceph-osd"
    disks = []
    try:
        for number, (kind, prepare, size_gib) in enumerate(KINDS):
            disks.append(attach(tmp_path / ("disk%d.img" % number), size_gib))
            if prepare:
                prepare(disks[-1])
        ours = facts(disks)
        only_these_disks(mount_ns, disks, tmp_path)
        theirs = ceph_volume_verdicts(mount_ns, str(tmp_path))
        assert set(disk.path for disk in disks) <= set(theirs), theirs
        rows = []
        for (kind, _prepare, _size), disk in zip(KINDS, disks):
            mine = (ours[disk.name]["available"], ours[disk.name]["reject_reasons"])
            rows.append((kind, mine, theirs[disk.path]) + judge(mine, theirs[disk.path]))
    finally:
        for disk in reversed(disks):
            detach(disk)
    table = ["| Disk kind | disk_facts | ceph-volume inventory | Agreement |\n", "| --- | --- | --- | --- |\n"]
    table += ["| %s | %s | %s | %s |\n" % (kind, verdict_text(*mine), verdict_text(*found), note)
              for kind, mine, found, _agrees, note in rows]
    TABLES.append(("disk_facts against ceph-volume inventory", table))
    assert [(kind, note) for kind, _m, _t, agrees, note in rows if not agrees] == []
    with open(DOC) as handle:
        doc = handle.read()
    shown = doc[doc.index(TABLE_START) + len(TABLE_START):doc.index(TABLE_END)]
    assert shown == "".join(table), "%s shows another table than this run gives:\n%s" % (DOC, "".join(table))
