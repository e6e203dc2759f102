# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The region a sync-write probe writes to: proof that it held nothing, its restore to zeros,
and a journal that outlives a probe killed before it could restore.

The probe may only write where the disk holds zeros (or where the user named the disk for
overwriting), because then writing zeros back restores every byte exactly. Everything is read
and written with O_DIRECT, so the checks see the disk itself, not the page cache.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import hashlib
import json
import mmap
import os
import tempfile
import time

from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev, direct_io, processes

MIB = 1024 ** 2
BLOCK = 4096

# The probe writes only inside this region: 1 GiB from the start keeps it clear of every
# signature libblkid reads (partition tables, LVM, BlueStore and filesystem labels at the
# start, md v1.0 and backup GPT at the end), and 512 MiB spreads random writes over enough
# flash pages that no drive serves them from a small buffer.
REGION_OFFSET_MIB = 1024
REGION_SIZE_MIB = 512

READ_CHUNK = 4 * MIB
# A restore writes zeros over every non-zero 4 KiB block. Gaps shorter than MERGE_GAP between
# them are written too (they hold zeros already), so a densely written region takes few large
# writes and a sparsely written one few small writes; no write exceeds MAX_WRITE.
MERGE_GAP = 64 * 1024
MAX_WRITE = MIB

JOURNAL_FORMAT = 1


class RegionError(Exception):
    """A region could not be read or written; the message says which disk and why."""


# What the region operations raise, for direct_io.in_parallel to turn into error text.
ERRORS = (RegionError, IOError, OSError)


class JournalError(Exception):
    """The journal could not record a disk, so nothing was written to it."""


def _cannot_open(path, exc):
    return RegionError("%s: cannot open (%s)" % (path, exc.strerror))


def _read_region(path, region, chunk=READ_CHUNK):
    """Yield (absolute offset, bytes) of ``region`` in chunks read with O_DIRECT."""
    offset, length = region
    try:
        reader = direct_io.Reader(path)
    except OSError as exc:
        raise _cannot_open(path, exc)
    with reader:
        position, end = offset, offset + length
        while position < end:
            try:
                buffer, got = reader.read(position, min(chunk, end - position))
            except (IOError, OSError) as exc:
                raise RegionError("%s: read at byte %d failed (%s)" % (path, position, exc.strerror))
            if not got:
                raise RegionError("%s: the disk ended at byte %d, inside the region" % (path, position))
            yield position, buffer[:got]
            position += got


def nonzero_mib(path, region):
    """Offsets in bytes of the MiB of ``region`` that hold anything but zeros."""
    found = []
    for position, data in _read_region(path, region):
        for start in range(0, len(data), MIB):
            if not direct_io.is_zero(data[start:start + MIB]):
                found.append(position + start)
    return found


def written_runs(path, region):
    """(offset, length) runs that cover every non-zero 4 KiB block of ``region``."""
    runs = []
    for position, data in _read_region(path, region):
        if direct_io.is_zero(data):
            continue
        for mib in range(0, len(data), MIB):
            if direct_io.is_zero(data[mib:mib + MIB]):
                continue
            for start in range(mib, min(mib + MIB, len(data)), BLOCK):
                if not direct_io.is_zero(data[start:start + BLOCK]):
                    _add_block(runs, position + start)
    return runs


def _add_block(runs, offset):
    if runs:
        last_offset, last_length = runs[-1]
        gap = offset - (last_offset + last_length)
        if gap < MERGE_GAP and offset + BLOCK - last_offset <= MAX_WRITE:
            runs[-1] = (last_offset, offset + BLOCK - last_offset)
            return
    runs.append((offset, BLOCK))


def write_zeros(path, runs):
    """Write zeros over ``runs`` and flush them to the medium."""
    if not runs:
        return
    zeros = mmap.mmap(-1, MAX_WRITE)  # anonymous memory is zero-filled and page-aligned
    try:
        fd = direct_io.open_direct(path, write=True)
    except OSError as exc:
        raise _cannot_open(path, exc)
    try:
        for offset, length in runs:
            try:
                written = os.pwrite(fd, memoryview(zeros)[:length], offset)
            except OSError as exc:
                raise RegionError("%s: writing zeros at byte %d failed (%s)" % (path, offset, exc.strerror))
            if written != length:
                raise RegionError("%s: short write of zeros at byte %d" % (path, offset))
        try:
            os.fsync(fd)
        except OSError as exc:
            raise RegionError("%s: flushing the zeros failed (%s)" % (path, exc.strerror))
    finally:
        os.close(fd)


def restore_zeros(path, region):
    """Zero every non-zero block of ``region`` and read the written runs back.

    Returns the bytes written; raises RegionError when a run does not read back as zeros.
    """
    runs = written_runs(path, region)
    write_zeros(path, runs)
    for offset, length in runs:
        left = nonzero_mib(path, (offset, length))
        if left:
            raise RegionError("%s: %d bytes at byte %d still hold data after zeroing" % (path, length, offset))
    return sum(length for _offset, length in runs)


def region_bytes(offset_mib, size_mib):
    """(offset, length) in bytes of a region given in MiB."""
    return offset_mib * MIB, size_mib * MIB


def zero_command(path, region):
    """The command an operator runs to zero ``region`` by hand, as text for a message."""
    offset, length = region
    return "dd if=/dev/zero of=%s bs=1M seek=%d count=%d oflag=direct conv=notrunc,nocreat,fsync" % (
        path, offset // MIB, length // MIB)


# --------------------------------------------------------------------------- journal

def _boot_id():
    try:
        with open("/proc/sys/kernel/random/boot_id") as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return None


def _process_start(pid):
    """Start time of a running process in clock ticks since boot (field 22 of /proc/PID/stat),
    which tells it from a later one that got the same id; None once it ended, zombie included:
    a killed probe stays a zombie until its parent reaps it, and where no init reaps orphans
    (some containers) that is never."""
    found = processes.read_stat(pid)
    if not found or found[1][0] in ("Z", "X"):
        return None
    return int(found[1][19])


class Journal:
    """One record per disk whose probe region holds probe data: written and flushed before
    the first write, removed once the region reads back as zeros. A record left behind (the
    module was killed, the disk vanished) lets the next run finish the restore."""

    def __init__(self, directory):
        self.directory = directory

    @staticmethod
    def key(identity):
        return hashlib.sha256(json.dumps(identity, sort_keys=True).encode("utf-8")).hexdigest()[:32]

    def path(self, identity):
        return os.path.join(self.directory, self.key(identity) + ".json")

    def find(self, identity):
        """The record for a disk identity, or None."""
        try:
            with open(self.path(identity)) as handle:
                record = json.load(handle)
        except (IOError, OSError, ValueError):
            return None
        return record if isinstance(record, dict) and record.get("identity") == identity else None

    def records(self):
        """Every record in the journal (for reporting those of disks not probed now)."""
        found = []
        try:
            names = sorted(os.listdir(self.directory))
        except OSError:
            return found
        for name in names:
            if name.endswith(".json"):
                try:
                    with open(os.path.join(self.directory, name)) as handle:
                        found.append(dict(json.load(handle), file=os.path.join(self.directory, name)))
                except (IOError, OSError, ValueError):
                    continue
        return found

    def begin(self, identity, disk, region, stable, overwritten):
        """Record, durably, that this process is about to write ``region`` of ``disk``."""
        record = {
            "format": JOURNAL_FORMAT, "identity": identity, "stable_identity": stable,
            "device": disk["path"], "name": disk["name"], "model": disk.get("model"), "serial": disk.get("serial"),
            "region": {"offset": region[0], "length": region[1]}, "region_held_data": overwritten,
            "started_at": time.time(), "boot_id": _boot_id(), "pid": os.getpid(),
            "pid_start": _process_start(os.getpid()),
        }
        try:
            if not os.path.isdir(self.directory):
                os.makedirs(self.directory, 0o700)
            handle, temporary = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            try:
                with os.fdopen(handle, "w") as out:
                    json.dump(record, out, sort_keys=True)
                    out.flush()
                    os.fsync(out.fileno())
                os.rename(temporary, self.path(identity))
            except BaseException:
                _unlink(temporary)
                raise
            _fsync_dir(self.directory)
        except (IOError, OSError) as exc:
            raise JournalError("cannot record %s in the probe journal %s (%s), so nothing was written to it"
                               % (disk["path"], self.directory, exc))
        return record

    def finish(self, identity):
        """Drop a disk's record once its region reads back as zeros. A record that cannot be
        removed only costs the next run a read of a region that is already zero."""
        try:
            _unlink(self.path(identity))
            _fsync_dir(self.directory)
        except (IOError, OSError):
            pass


def journal_identity(disk, backing_file=None):
    """(identity, stable) by which the journal knows a disk: its WWN, serial or (loop device)
    backing file with its size; else its kernel name and size, which a later run cannot trust
    to name the same disk."""
    if disk.get("wwn") or disk.get("serial") or backing_file:
        return dict(blockdev.copy_identity(disk, blockdev.LASTING_IDENTITY_KEYS), backing_file=backing_file), True
    return {"name": disk["name"], "size_bytes": disk.get("size_bytes")}, False


def when(seconds):
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))


def recovery(journal, disk, identity, stable, blocking, overwrite, check_mode):
    """What to do about the record an interrupted probe left for ``disk``, before anything
    else happens to it: None (no record), or (action, text, details) with action ``refused``,
    ``planned`` (check mode) or ``restored`` (the region was zeroed now and the record dropped).

    ``blocking`` are the disk's refusal reasons that no overwrite consent lifts: a disk that was
    partitioned, mounted or otherwise taken into use since is never zeroed automatically.
    """
    record = journal.find(identity)
    if record is None:
        return None
    region, path = record_region(record), journal.path(identity)
    details = {"started_at": when(record["started_at"]), "region": dict(record["region"]), "file": path}
    by_hand = "zero it with `%s` and remove %s" % (zero_command(disk["path"], region), path)
    if owner_alive(record):
        return ("refused", "journal: a probe started at %s (pid %d) is still writing to this disk"
                % (details["started_at"], record["pid"]), details)
    others = processes.holding([disk["devnum"]])[disk["devnum"]]
    if others:
        # Zeros written under another writer could be overwritten, and a reader may be a tool of
        # the operator's looking at what the probe left; fio itself dies with its module.
        return ("refused", "journal: a probe interrupted at %s left data in the region from %d MiB, and %s still "
                "have the disk open, so it was not zeroed; the next run zeroes it once they ended"
                % (details["started_at"], region[0] // MIB, processes.describe_holders(others)),
                details)
    if blocking:
        return ("refused", "journal: a probe interrupted at %s left data in the region from %d MiB, but the disk "
                "is in use now (%s), so it was not zeroed; if that data is still the probe's, %s"
                % (details["started_at"], region[0] // MIB, ", ".join(blocking), by_hand), details)
    if not (stable or overwrite):
        return ("refused", "journal: a probe interrupted at %s left data in the region from %d MiB, but this disk "
                "has no WWN, serial or backing file, so this run cannot prove it is the same disk; if it is, "
                "name it in overwrite_data or %s" % (details["started_at"], region[0] // MIB, by_hand), details)
    if check_mode:
        return ("planned", "journal: would zero the region a probe interrupted at %s left behind"
                % details["started_at"], details)
    details["zeroed_bytes"] = restore_zeros(disk["path"], region)
    journal.finish(identity)
    return ("restored", "journal: zeroed the region a probe interrupted at %s left behind (%d bytes)"
            % (details["started_at"], details["zeroed_bytes"]), details)


def owner_alive(record):
    """True while the process that wrote the record still runs (same boot, same process)."""
    return (record.get("boot_id") == _boot_id() and record.get("pid") is not None
            and _process_start(record["pid"]) == record.get("pid_start"))


def record_region(record):
    return record["region"]["offset"], record["region"]["length"]


def _unlink(path):
    try:
        os.unlink(path)
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            raise


def _fsync_dir(directory):
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
