# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a disk holds beyond the signatures libblkid finds at its start.

A disk without signatures is not necessarily empty: ``wipefs -a`` removes magic bytes and
leaves the data, a plain dm-crypt volume is random bytes, a zap clears only the first MiBs
of an old OSD, and a partition table without its magic still points at live filesystems.
This reads a spread sample of the disk (O_DIRECT, so neither the page cache nor read-ahead
hide or cost anything), finds partition entries left without a table signature, and asks
blkid for signatures where a partition or filesystem would start. A blank disk costs the
sample read and no process.

Every parser here is a pure function over bytes; ``read_contents`` does the I/O.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import re
import struct

from ansible_collections.cephops.osd_tuning.plugins.module_utils import direct_io

MIB = 1024 * 1024

# The inventory's sample, in whole MiB counted from the start of the disk (the last one may be
# shorter): the first HEAD_MIB (partition tables, boot sectors, first superblocks), the last
# TAIL_MIB (backup GPT, md v0.90/v1.0 superblocks) and MIDDLE_MIB spread evenly in between,
# 64 MiB in all on a disk larger than 64 MiB. A small disk is sampled whole, each MiB once.
HEAD_MIB = 4
TAIL_MIB = 4
MIDDLE_MIB = 56
# The whole-disk writers' check (mkfs, an HPA with erase, the partition method's discard,
# namespace deletion) reads more before it lets them destroy what a disk holds: the first and
# last WRITER_EDGE_MIB in full, where tables, boot sectors, superblocks and the labels of md,
# GPT, ZFS and LVM live, and one MiB in every STRIDE_MIB between, so no run of data longer than
# STRIDE_MIB - 1 MiB escapes it. Past WRITER_SAMPLES MiB between the edges (a disk of 256 GiB)
# the stride grows instead, so the check reads at most about 16 GiB and the largest run it can
# miss grows with the disk (writer_stride; docs/safety.md gives it per size).
WRITER_EDGE_MIB = 64
STRIDE_MIB = 16
WRITER_SAMPLES = 16384
# On a rotational disk each sample between the edges costs a seek: the full check of a large one
# would take minutes (docs/safety.md). Above this size it gets the inventory's sample between full
# edges, and a writer refuses it as not fully checked unless the user accepts that sample.
ROTATIONAL_FULL_CHECK_MAX_BYTES = 256 * 1024 ** 3
# How many offsets of non-zero MiB a result lists.
SHOWN_NONZERO = 8

# blkid looks for signatures in this much from an offset (btrfs and ReiserFS keep their
# superblock at 64 KiB); when all of it is zero, blkid is not run there.
SIGNATURE_WINDOW = 128 * 1024
# Where the first partition of a table usually starts: DOS tools' sector 63, and the 1 MiB
# and 2 MiB alignment of current tools.
FIRST_PARTITION_OFFSETS = (63 * 512, MIB, 2 * MIB)
# BlueStore (Ceph 19 onwards) keeps copies of its label here, which a zap of the first
# MiBs leaves behind (bdev_label_positions in BlueStore.cc).
BLUESTORE_LABEL_COPIES = (1 << 30, 10 << 30, 100 << 30, 1000 << 30)
# Disks sampled at the same time; each holds one MiB buffer.
READ_THREADS = 8

MBR_ENTRIES_OFFSET = 446
MBR_PROTECTIVE_TYPE = 0xEE
GPT_SIGNATURE = b"EFI PART"
# The standard entry array: 128 entries of 128 bytes (16 KiB).
GPT_ENTRIES = 128
GPT_ENTRY_SIZE = 128
GPT_MAX_ARRAY_BYTES = 1024 * 1024

SOURCE_MBR = "MBR"
SOURCE_GPT = "GPT"
SOURCE_BACKUP_GPT = "backup GPT"

BLKID_NOTHING_FOUND = 2


# --------------------------------------------------------------------------- the sample

def _head_and_tail(size_bytes):
    """(range of the head's MiB, range of the tail's MiB) of a disk; they overlap on a small disk."""
    total = -(-size_bytes // MIB)
    return range(min(HEAD_MIB, total)), range(max(0, total - TAIL_MIB), total)


def sample_chunks(size_bytes, edge_mib=HEAD_MIB, stride_mib=None):
    """Indexes of the MiB a content check reads (MiB ``i`` is bytes ``i * MIB`` up to the next
    MiB or the end of the disk), sorted and each once: the first and last ``edge_mib`` in full
    and, between them, one MiB in every ``stride_mib`` (the writers' check) or MIDDLE_MIB spread
    evenly (the inventory's sample, without a stride)."""
    total = -(-size_bytes // MIB)
    chunks = set(range(min(edge_mib, total))) | set(range(max(0, total - edge_mib), total))
    inner = total - 2 * edge_mib
    if inner > 0 and stride_mib:
        chunks.update(range(edge_mib + stride_mib - 1, total - edge_mib, stride_mib))
    elif inner > 0:
        chunks.update(edge_mib + inner * i // (MIDDLE_MIB + 1) for i in range(1, MIDDLE_MIB + 1))
    return sorted(chunks)


def writer_stride(size_bytes):
    """MiB from one sample of the writers' full check to the next on a disk of ``size_bytes``:
    STRIDE_MIB, or more where WRITER_SAMPLES would not reach across the disk."""
    inner = -(-size_bytes // MIB) - 2 * WRITER_EDGE_MIB
    return max(STRIDE_MIB, -(-inner // WRITER_SAMPLES))


def writer_check(size_bytes, rotational):
    """(stride in MiB or None, fully checked) of the writers' check of a disk: the full check,
    or on a large rotational disk the inventory's sample between full edges."""
    if rotational and size_bytes > ROTATIONAL_FULL_CHECK_MAX_BYTES:
        return None, False
    return writer_stride(size_bytes), True


def largest_missable_mib(size_bytes, edge_mib=HEAD_MIB, stride_mib=None):
    """The longest run of whole MiB that a check of this layout does not read: data that fits
    in it can escape the check; anything longer cannot."""
    return _largest_gap(sample_chunks(size_bytes, edge_mib, stride_mib))


def _largest_gap(chunks):
    return max([b - a - 1 for a, b in zip(chunks, chunks[1:])] + [0])


# --------------------------------------------------------------------------- partition entries

def mbr_partitions(sector0, disk_sectors, sector_size=512):
    """(offset, size, source) of each partition in the four MBR entries of ``sector0``,
    whether or not the 0x55AA magic is still there.

    A protective entry (type 0xEE) is not a partition. The entries count as a table only when
    every one is empty or valid (status 0x00 or 0x80, a type, start >= 1, size > 0, inside a
    disk of ``disk_sectors`` logical sectors), so random data does not look like one.
    """
    if len(sector0) < MBR_ENTRIES_OFFSET + 64:
        return []
    found = []
    for number in range(4):
        offset = MBR_ENTRIES_OFFSET + 16 * number
        if sector0[offset:offset + 16] == b"\0" * 16:
            continue
        status, ptype, start, count = struct.unpack_from("<B3xB3xII", sector0, offset)
        if status not in (0x00, 0x80) or ptype == 0 or start < 1:
            return []
        if ptype == MBR_PROTECTIVE_TYPE:
            continue
        if count == 0 or start + count > disk_sectors:
            return []
        found.append((start * sector_size, count * sector_size, SOURCE_MBR))
    return found


def gpt_entries(array, entry_size, disk_lbas, sector_size, source):
    """(offset, size, source) of each partition in a GPT entry array, or [] when a non-empty
    entry is not valid (a type GUID, 2 <= first LBA <= last LBA < ``disk_lbas``): random
    data or other data is not a table."""
    found = []
    for offset in range(0, len(array) - entry_size + 1, entry_size):
        if array[offset:offset + 16] == b"\0" * 16:
            continue
        first, last = struct.unpack_from("<QQ", array, offset + 32)
        if not 2 <= first <= last < disk_lbas:
            return []
        found.append((first * sector_size, (last - first + 1) * sector_size, source))
    return found


def _gpt_array_layout(header, default_lba, disk_lbas, sector_size):
    """(entry LBA, count, entry size) from a GPT header that still has its signature and
    sane fields, else the standard array at ``default_lba``."""
    if header[:8] == GPT_SIGNATURE and len(header) >= 92:
        lba, count, size = struct.unpack_from("<QII", header, 72)
        if (size >= GPT_ENTRY_SIZE and size % GPT_ENTRY_SIZE == 0 and 0 < count * size <= GPT_MAX_ARRAY_BYTES
                and 2 <= lba < disk_lbas):
            return lba, count, size
    return default_lba, GPT_ENTRIES, GPT_ENTRY_SIZE


def gpt_partitions(head, tail, size_bytes, sector_size):
    """(offset, size, source) of each partition in the primary GPT entry array (LBA 2) and in
    the backup array (before the last LBA), whether or not their headers are still there.

    ``head`` holds the first bytes of the disk, ``tail`` its last bytes. A header that still
    has its signature says where its array is and how large; otherwise the standard 128
    entries of 128 bytes are assumed: LBA 2 for the primary, the 16 KiB before the last LBA
    for the backup (LBA -33 with 512-byte sectors, LBA -5 with 4096-byte sectors).
    """
    disk_lbas = size_bytes // sector_size
    if disk_lbas < 3:
        return []
    found = []
    tail_start = size_bytes - len(tail)
    areas = (
        (SOURCE_GPT, head, 0, head[sector_size:2 * sector_size], 2),
        (SOURCE_BACKUP_GPT, tail, tail_start, tail[len(tail) - sector_size:],
         disk_lbas - 1 - GPT_ENTRIES * GPT_ENTRY_SIZE // sector_size),
    )
    for source, data, data_start, header, default_lba in areas:
        lba, count, entry_size = _gpt_array_layout(header, default_lba, disk_lbas, sector_size)
        start = lba * sector_size - data_start
        if start < 0 or start + count * entry_size > len(data):
            continue  # an array outside what was read
        found.extend(gpt_entries(data[start:start + count * entry_size], entry_size, disk_lbas, sector_size, source))
    return found


# --------------------------------------------------------------------------- blkid

def blkid_argv(device, offset, size=None):
    """blkid probing for signatures from ``offset`` (over ``size`` bytes when given)."""
    argv = ["blkid", "--probe", "--offset", str(offset)]
    if size is not None:
        argv += ["--size", str(size)]
    return argv + ["--output", "export", device]


def parse_blkid_export(text):
    """``blkid --output export`` -> {KEY: value}, backslash escapes undone."""
    found = {}
    for line in (text or "").splitlines():
        if "=" in line:
            key, value = line.split("=", 1)
            found[key.strip()] = re.sub(r"\\(.)", r"\1", value)
    return found


def signature_from_export(offset, tags):
    """A signature record from the tags blkid printed at ``offset``, or None without a type."""
    sig_type = tags.get("TYPE") or tags.get("PTTYPE")
    if not sig_type:
        return None
    return {
        "offset": offset,
        "type": sig_type,
        "usage": tags.get("USAGE") or ("partition table" if "PTTYPE" in tags and "TYPE" not in tags else None),
        "uuid": tags.get("UUID") or tags.get("PTUUID"),
        "label": tags.get("LABEL"),
    }


# --------------------------------------------------------------------------- reading

def _read(reader, size_bytes, offset, length):
    """(buffer, bytes that belong): the bytes from ``offset`` up to ``length`` or the end of
    the disk, in a buffer of ``length`` bytes."""
    buf, got = reader.read(offset, length)
    want = min(length, size_bytes - offset)
    if got < want:
        raise IOError(errno.EIO, "short read at offset %d: %s of %d bytes" % (offset, got, want))
    return buf, want


def _candidate_offsets(size_bytes, sector_size, partitions):
    """{offset: size or None} where blkid may look: partition starts (over the partition),
    the usual first-partition offsets and BlueStore's label copies."""
    offsets = dict((o, None) for o in FIRST_PARTITION_OFFSETS + BLUESTORE_LABEL_COPIES)
    for offset, size, _source in partitions:
        offsets[offset] = max(size, offsets.get(offset) or 0)
    return dict((o, s) for o, s in offsets.items() if o % sector_size == 0 and o + sector_size <= size_bytes)


def sample_disk(path, size_bytes, sector_size, edge_mib=HEAD_MIB, stride_mib=None):
    """Read one disk: the sample (see sample_chunks), partition entries left without a table
    signature, and the offsets whose first SIGNATURE_WINDOW bytes are not zero (blkid looks there).

    Returns a dict of plain values; ``error`` says why reading stopped, if it did.
    """
    chunks = sample_chunks(size_bytes, edge_mib, stride_mib)
    table_chunks = set().union(*_head_and_tail(size_bytes))
    result = dict(sampled_mib=len(chunks), nonzero_mib=0, nonzero_offsets=[], partition_entries=[],
                  windows=[], error=None, largest_missable_mib=_largest_gap(chunks))
    kept, zero = {}, set()
    try:
        reader = direct_io.Reader(path)
    except (IOError, OSError) as exc:
        result["error"] = "cannot open %s: %s" % (path, exc)
        return result
    try:
        for chunk in chunks:
            buf, length = _read(reader, size_bytes, chunk * MIB, MIB)
            if direct_io.is_zero(buf[:length]):
                zero.add(chunk)
                continue
            result["nonzero_mib"] += 1
            if len(result["nonzero_offsets"]) < SHOWN_NONZERO:
                result["nonzero_offsets"].append(chunk * MIB)
            if chunk in table_chunks:
                kept[chunk] = buf[:length]
        partitions = _leftover_partitions(kept, size_bytes, sector_size)
        result["partition_entries"] = [dict(offset=o, size=s, source=src) for o, s, src in partitions]
        for offset, size in sorted(_candidate_offsets(size_bytes, sector_size, partitions).items()):
            if not _window_is_zero(reader, size_bytes, offset, kept, zero):
                result["windows"].append(dict(offset=offset, size=size))
    except (IOError, OSError) as exc:
        result["error"] = "reading %s: %s" % (path, exc)
    finally:
        reader.close()
    return result


def _leftover_partitions(kept, size_bytes, sector_size):
    """Partitions in the tables at the head and tail, from the non-zero MiB kept there."""
    if not kept:
        return []  # every table area is zero
    head, tail = (b"".join(kept.get(c, direct_io.zeros(min(MIB, size_bytes - c * MIB))) for c in chunks)
                  for chunks in _head_and_tail(size_bytes))
    disk_sectors = size_bytes // sector_size
    return mbr_partitions(head[:sector_size], disk_sectors, sector_size) + gpt_partitions(
        head, tail, size_bytes, sector_size)


def _window_is_zero(reader, size_bytes, offset, kept, zero):
    """Whether the SIGNATURE_WINDOW bytes from ``offset`` are zero, from the sample when it
    covers them, else read."""
    end = min(offset + SIGNATURE_WINDOW, size_bytes)
    chunks = range(offset // MIB, (end - 1) // MIB + 1)
    if all(c in zero for c in chunks):
        return True
    if all(c in zero or c in kept for c in chunks):
        data = b"".join(kept.get(c, direct_io.zeros(MIB)) for c in chunks)
        start = offset - chunks[0] * MIB
        return direct_io.is_zero(data[start:start + end - offset])
    buf, length = _read(reader, size_bytes, offset, SIGNATURE_WINDOW)
    return direct_io.is_zero(buf[:length])


def read_contents(run_command, disks, whole_disk_write=False):
    """{path: content} for ``disks``, a list of (device path, size in bytes, logical sector
    size, rotational): the inventory's sample of each disk, or with ``whole_disk_write`` the
    writers' check (disks read in parallel), then blkid where a window is not zero.
    ``run_command(argv)`` returns (rc, stdout, stderr), with LC_ALL=C."""
    def check(disk):
        path, size_bytes, sector_size, rotational = disk
        if not whole_disk_write:
            return dict(sample_disk(path, size_bytes, sector_size), fully_checked=None)
        stride, full = writer_check(size_bytes, rotational)
        return dict(sample_disk(path, size_bytes, sector_size, WRITER_EDGE_MIB, stride), fully_checked=full)

    samples = [found for found, _error in direct_io.in_parallel(check, disks, most=READ_THREADS, errors=())]
    contents = {}
    for (path, _size, _sector_size, _rotational), found in zip(disks, samples):
        content = dict(found, signatures=[], probed_offsets=[], errors=[])
        error, windows = content.pop("error"), content.pop("windows")
        if error:
            content["errors"].append(dict(offset=None, error=error))
        for window in windows:
            offset = window["offset"]
            content["probed_offsets"].append(offset)
            rc, out, err = run_command(blkid_argv(path, offset, window["size"]))
            if rc == 0:
                signature = signature_from_export(offset, parse_blkid_export(out))
                if signature:
                    content["signatures"].append(signature)
            elif rc != BLKID_NOTHING_FOUND:
                content["errors"].append(dict(offset=offset, error=(err or out).strip() or "blkid rc=%s" % rc))
        contents[path] = content
    return contents
