# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading disks with O_DIRECT, telling zeros from data fast, and doing that on many disks
at once.

O_DIRECT bypasses the page cache and read-ahead, so a read sees the disk itself and neither
hides nor costs anything else; only a loop device without direct I/O of its own still reads its
backing file through the page cache (sync_write_probe drops those pages before it probes). It
needs memory aligned to the logical sector: anonymous mmap memory is page-aligned (and
zero-filled, which a writer of zeros can use).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import mmap
import os
import threading

# Zero bytes objects kept for the lengths compared most; any other length is made each time.
_ZEROS = {}
_ZEROS_KEPT = 16


def open_direct(path, write=False):
    """A file descriptor of ``path`` opened with O_DIRECT (read-only unless ``write``)."""
    flags = (os.O_RDWR if write else os.O_RDONLY) | getattr(os, "O_DIRECT", 0) | getattr(os, "O_CLOEXEC", 0)
    return os.open(path, flags)


class Reader:
    """O_DIRECT reads of one disk into page-aligned buffers, one per read length, reused from
    one read to the next; raises IOError/OSError as the system calls do."""

    def __init__(self, path):
        fd = open_direct(path)
        try:
            self._file = os.fdopen(fd, "rb", buffering=0)
        except BaseException:
            os.close(fd)
            raise
        self._buffers = {}

    def __enter__(self):
        return self

    def __exit__(self, *_exc):
        self.close()

    def close(self):
        self._file.close()
        for buf in self._buffers.values():
            buf.close()

    def read(self, offset, length):
        """(buffer, bytes read): up to ``length`` bytes from ``offset`` (aligned to the logical
        sector) in a buffer of ``length`` bytes; fewer bytes only where the disk ends. The next
        read of that length reuses the buffer: slice it to keep or compare data."""
        buf = self._buffers.get(length)
        if buf is None:
            buf = self._buffers[length] = mmap.mmap(-1, length)
        self._file.seek(offset)
        return buf, self._file.readinto(buf) or 0


def zeros(length):
    """A bytes object of ``length`` zeros."""
    found = _ZEROS.get(length)
    if found is None:
        found = bytes(length)
        if len(_ZEROS) < _ZEROS_KEPT:
            _ZEROS[length] = found
    return found


def is_zero(data):
    """Whether ``data`` (bytes, such as a slice of a Reader's buffer) holds only zeros. Two
    bytes objects compare at memory speed; a memoryview compares some twenty times slower."""
    return data == zeros(len(data))


def in_parallel(function, items, most=None, errors=(IOError, OSError)):
    """[(result, None) or (None, error text)] of ``function(item)`` for each item, in order,
    on at most ``most`` threads (by default one per item), so that the reads and writes of
    different disks overlap. An exception of a class in ``errors`` becomes the item's error
    text; any other is raised again here once every thread has ended."""
    outcomes, pending, lock = [None] * len(items), list(enumerate(items)), threading.Lock()
    unexpected = []

    def work():
        while True:
            with lock:
                if not pending:
                    return
                index, item = pending.pop(0)
            try:
                outcomes[index] = (function(item), None)
            except errors as exc:
                outcomes[index] = (None, str(exc))
            except Exception as exc:
                unexpected.append(exc)

    threads = [threading.Thread(target=work) for _i in range(min(most or len(items), len(items)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if unexpected:
        raise unexpected[0]
    return outcomes
