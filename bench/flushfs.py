"""One file whose flush costs a fixed time, for a loop disk that is slow where real drives are.

A drive without power-loss protection is slow at the flush an fsync sends, not at the plain
write: the write lands in its cache, the flush waits for the medium. Neither device-mapper nor
null_blk is there on every test machine, so this FUSE server makes such a disk from what is:
it serves one file, ``MOUNTPOINT/disk``, whose reads and writes go straight to ``BACKING`` and
whose fsync sleeps FLUSH_MS and does nothing else. A loop device on that file is a disk of its
own pace (its server, its backing file's holes), flushes included, since the loop driver turns
a flush into an fsync of its file. The file is opened for direct I/O, so nothing of it is kept
in the page cache, as nothing of a real disk is.

It speaks the kernel's FUSE protocol (linux/fuse.h, version 7.31) itself, so it needs nothing
but Python and /dev/fuse, and mounts as root. It prints "ready" once mounted and ends when the
mountpoint is unmounted.

usage: python3 flushfs.py MOUNTPOINT BACKING FLUSH_MS
"""

import ctypes
import errno
import os
import stat
import struct
import sys
import time

ROOT, FILE = 1, 2
NAME = b"disk"

LOOKUP, FORGET, GETATTR, SETATTR = 1, 2, 3, 4
OPEN, READ, WRITE, STATFS, RELEASE, FSYNC, FLUSH, INIT = 14, 15, 16, 17, 18, 20, 25, 26
OPENDIR, READDIR, RELEASEDIR, ACCESS, INTERRUPT, DESTROY, BATCH_FORGET, FALLOCATE = 27, 28, 29, 34, 36, 38, 42, 43
NO_REPLY = (FORGET, INTERRUPT, BATCH_FORGET)

ASYNC_READ, ATOMIC_O_TRUNC, BIG_WRITES, MAX_PAGES = 1 << 0, 1 << 3, 1 << 5, 1 << 22
FOPEN_DIRECT_IO = 1 << 0
FATTR_SIZE = 1 << 3
MAX_WRITE = 1024 * 1024
MS_NOSUID, MS_NODEV = 2, 4
FOREVER = 365 * 24 * 3600  # attributes never change behind the kernel's back: one file, one writer

IN_HEADER = struct.Struct("<IIQQIIII")
OUT_HEADER = struct.Struct("<IiQ")
ATTR = struct.Struct("<QQQQQQIIIIIIIIII")
IO_IN = struct.Struct("<QQIIQII")  # fuse_read_in and fuse_write_in: fh, offset, size, ...

libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long)


ZEROS = memoryview(bytes(MAX_WRITE))


def unwritten(backing, offset, size):
    """Whether the range is a hole of the backing file: read as zeros straight away, as a drive
    reads blocks it never wrote (reading a hole through the host's page cache would first fill
    a zeroed page for each of its 4 KiB, some 1.4 s a 512 MiB region here, on the host's CPUs)."""
    try:
        return os.lseek(backing, offset, os.SEEK_DATA) >= offset + size
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # no data after offset
            return True
        raise


def attributes(node, backing):
    if node == ROOT:
        return ATTR.pack(ROOT, 0, 0, 0, 0, 0, 0, 0, 0, stat.S_IFDIR | 0o755, 2, 0, 0, 0, 4096, 0)
    size = os.fstat(backing).st_size
    return ATTR.pack(FILE, size, (size + 511) // 512, 0, 0, 0, 0, 0, 0, stat.S_IFREG | 0o600, 1, 0, 0, 0, 4096, 0)


def attr_out(node, backing):
    return struct.pack("<QII", FOREVER, 0, 0) + attributes(node, backing)


def handle(opcode, node, body, backing, flush_seconds, read_buffer):
    """The reply's payload, or an errno (negative) for the kernel."""
    if opcode == INIT:
        _major, minor, readahead, flags = struct.unpack_from("<IIII", body)
        wanted = flags & (ASYNC_READ | ATOMIC_O_TRUNC | BIG_WRITES | MAX_PAGES)
        return struct.pack("<IIIIHHIIHHI7I", 7, min(minor, 31), readahead, wanted, 16, 12, MAX_WRITE, 1,
                           MAX_WRITE // 4096, 0, 0, *([0] * 7))
    if opcode == LOOKUP:
        if bytes(body).rstrip(b"\0") != NAME or node != ROOT:
            return -errno.ENOENT
        return struct.pack("<QQQQII", FILE, 0, FOREVER, FOREVER, 0, 0) + attributes(FILE, backing)
    if opcode == GETATTR:
        return attr_out(node, backing)
    if opcode == SETATTR:
        valid, _pad, _fh, size = struct.unpack_from("<IIQQ", body)
        if valid & FATTR_SIZE and node == FILE:
            os.ftruncate(backing, size)
        return attr_out(node, backing)
    if opcode == OPEN:
        if struct.unpack_from("<I", body)[0] & os.O_TRUNC:
            os.ftruncate(backing, 0)
        return struct.pack("<QII", 0, FOPEN_DIRECT_IO, 0)
    if opcode == READ:
        _fh, offset, size = IO_IN.unpack_from(body)[:3]
        if unwritten(backing, offset, size):
            return ZEROS[:min(size, max(os.fstat(backing).st_size - offset, 0))]
        return read_buffer[:os.preadv(backing, [read_buffer[:size]], offset)]
    if opcode == WRITE:
        _fh, offset, size = IO_IN.unpack_from(body)[:3]
        return struct.pack("<II", os.pwrite(backing, body[IO_IN.size:IO_IN.size + size], offset), 0)
    if opcode == FSYNC:
        time.sleep(flush_seconds)
        return b""
    if opcode == FALLOCATE:  # a discard or write-zeroes of the loop disk: punch or zero the backing file
        _fh, offset, length, mode = struct.unpack_from("<QQQI", body)
        if libc.fallocate(backing, mode, offset, length):
            return -ctypes.get_errno()
        return b""
    if opcode == STATFS:
        return struct.pack("<QQQQQIIII6I", 0, 0, 0, 0, 0, 4096, 255, 4096, 0, *([0] * 6))
    if opcode == OPENDIR:
        return struct.pack("<QII", 0, 0, 0)
    if opcode in (READDIR, FLUSH, RELEASE, RELEASEDIR, ACCESS, DESTROY):
        return b""
    return -errno.ENOSYS


def mount(mountpoint):
    fuse = os.open("/dev/fuse", os.O_RDWR)
    options = "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other" % fuse
    if libc.mount(b"flushfs", mountpoint.encode(), b"fuse.flushfs", MS_NOSUID | MS_NODEV, options.encode()):
        raise OSError(ctypes.get_errno(), "mount %s" % mountpoint)
    return fuse


def serve(fuse, backing, flush_seconds):
    # Buffers made once: a fresh megabyte for every request costs more than the copy itself.
    request_buffer, read_buffer = bytearray(MAX_WRITE + 64 * 1024), memoryview(bytearray(MAX_WRITE))
    while True:
        try:
            request = memoryview(request_buffer)[:os.readv(fuse, [request_buffer])]
        except OSError as exc:
            if exc.errno == errno.ENODEV:  # unmounted
                return
            if exc.errno in (errno.EINTR, errno.ENOENT):  # a request the kernel took back
                continue
            raise
        _length, opcode, unique, node = IN_HEADER.unpack_from(request)[:4]
        if opcode in NO_REPLY:
            continue
        try:
            payload = handle(opcode, node, request[IN_HEADER.size:], backing, flush_seconds, read_buffer)
        except OSError as exc:
            payload = -exc.errno
        if isinstance(payload, int):
            reply = [OUT_HEADER.pack(OUT_HEADER.size, payload, unique)]
        else:
            reply = [OUT_HEADER.pack(OUT_HEADER.size + len(payload), 0, unique), payload]
        try:
            os.writev(fuse, reply)
        except OSError as exc:
            if exc.errno != errno.ENOENT:  # the request was interrupted meanwhile
                raise
        if opcode == DESTROY:
            return


def main():
    mountpoint, backing_path, flush_ms = sys.argv[1], sys.argv[2], float(sys.argv[3])
    backing = os.open(backing_path, os.O_RDWR)
    fuse = mount(mountpoint)
    print("ready", flush=True)
    serve(fuse, backing, flush_ms / 1000.0)


if __name__ == "__main__":
    main()
