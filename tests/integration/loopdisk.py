"""Loop disks on the test host: sparse files attached as block devices.

Shared by the integration tests and the benchmarks in bench/.
"""

import hashlib
import os
import subprocess

GIB = 1024 ** 3


def run(argv, check=True):
    return subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"), check=check)


class LoopDisk:
    def __init__(self, path, backing):
        self.path = path
        self.name = os.path.basename(path)
        self.backing = backing

    @property
    def size(self):
        with open("/sys/block/%s/size" % self.name) as handle:
            return int(handle.read()) * 512

    def partitions(self):
        return sorted(p for p in os.listdir("/sys/block/" + self.name) if p.startswith(self.name + "p"))

    def write(self, offset, data):
        fd = os.open(self.path, os.O_WRONLY)
        try:
            os.pwrite(fd, data, offset)
            os.fsync(fd)
        finally:
            os.close(fd)

    def checksum(self):
        """sha256 of the disk's content: the proof that a refusal changed nothing.

        The digest covers every non-zero 1 MiB chunk with its offset; zero chunks (holes of
        the sparse backing file, or zeros written) add nothing. So it depends on the bytes
        alone, not on how the file system happens to store them, and only data extents are
        read, which keeps an 8 GiB disk quick.
        """
        chunk_size = 1024 * 1024
        digest = hashlib.sha256()
        fd = os.open(self.backing, os.O_RDONLY)
        try:
            end, pos = os.fstat(fd).st_size, 0
            while pos < end:
                try:
                    start = os.lseek(fd, pos, os.SEEK_DATA)
                except OSError:  # ENXIO: only a hole is left
                    break
                stop = os.lseek(fd, start, os.SEEK_HOLE)
                for offset in range(start - start % chunk_size, stop, chunk_size):
                    chunk = os.pread(fd, chunk_size, offset)
                    if chunk.rstrip(b"\0"):
                        digest.update(b"@%d:" % offset + chunk)
                pos = max(stop, offset + chunk_size)
        finally:
            os.close(fd)
        return digest.hexdigest()


def attach(backing, size_gib=8, sector_size=512):
    """A new blank loop disk backed by the sparse file ``backing``, with logical sectors of
    ``sector_size`` bytes (4096 for a 4Kn disk)."""
    with open(backing, "wb") as handle:
        handle.truncate(int(size_gib * GIB))
    argv = ["losetup", "--find", "--show", "--sector-size", str(sector_size), str(backing)]
    return LoopDisk(run(argv).stdout.strip(), str(backing))


def detach(disk):
    """Undo everything a test may have left on the disk, then detach it."""
    run(["swapoff", disk.path], check=False)
    for part in disk.partitions():
        run(["swapoff", "/dev/" + part], check=False)
    run(["partx", "-d", disk.path], check=False)
    run(["losetup", "-d", disk.path], check=False)
