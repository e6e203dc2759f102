"""Loop disks on the test host: sparse files attached as block devices.

Shared by the integration tests and the benchmarks in bench/.
"""

import ctypes
import hashlib
import mmap
import os
import subprocess
import time
import uuid

GIB = 1024 ** 3
BLKIO = "/sys/fs/cgroup/blkio"


class CommandFailed(subprocess.CalledProcessError):
    """A failed command whose message holds what it printed on stderr, which names the cause."""

    def __str__(self):
        return "%s stderr: %s" % (super().__str__(), (self.stderr or "").strip())


def run(argv, check=True):
    done = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"), check=False)
    if check and done.returncode:
        raise CommandFailed(done.returncode, argv, done.stdout, done.stderr)
    return done


def offers_scheduler(disk, name):
    """Whether the kernel can give ``disk`` the I/O scheduler ``name``: in its list already, or a
    module that modprobe finds (a kernel without loadable modules has no /proc/modules). A test
    host's kernel may lack one, as some built without modules lack bfq."""
    with open("/sys/block/%s/queue/scheduler" % disk.name) as handle:
        if name in handle.read().replace("[", " ").replace("]", " ").split():
            return True
    return os.path.exists("/proc/modules") and run(["modprobe", "--dry-run", "--", name], check=False).returncode == 0


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


def cached_pages(path, offset, length):
    """How many pages of the file ``path`` from ``offset`` (page-aligned) for ``length`` bytes are
    in the page cache: mincore(2) of a mapping, which reads nothing."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    pages = (length + mmap.PAGESIZE - 1) // mmap.PAGESIZE
    vector = ctypes.create_string_buffer(pages)
    fd = os.open(path, os.O_RDONLY)
    try:
        address = libc.mmap(None, length, mmap.PROT_READ, mmap.MAP_SHARED, fd, offset)
        if address in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "mmap of %s failed" % path)
        try:
            if libc.mincore(address, length, vector) != 0:
                raise OSError(ctypes.get_errno(), "mincore of %s failed" % path)
        finally:
            libc.munmap(address, length)
    finally:
        os.close(fd)
    return sum(byte & 1 for byte in vector.raw)


def attach(backing, size_gib=8, sector_size=512):
    """A new blank loop disk backed by the sparse file ``backing``, with logical sectors of
    ``sector_size`` bytes (4096 for a 4Kn disk)."""
    with open(backing, "wb") as handle:
        handle.truncate(int(size_gib * GIB))
    argv = ["losetup", "--find", "--show", "--sector-size", str(sector_size), str(backing)]
    disk = LoopDisk(run(argv).stdout.strip(), str(backing))
    # Partition nodes a detach could not drop (a process held one for all of delete_partitions'
    # retries) stay with the loop device and would show on this new disk: drop them first.
    delete_partitions(disk)
    return disk


def delete_partitions(disk, seconds=30, check=True):
    """Drop the kernel's partition nodes of ``disk``. The kernel refuses (EBUSY) while any process
    holds a partition open, and programs that probe every block device (lsblk, blkid, modules
    under test beside) do so for a moment: so retry until ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    while disk.partitions():
        failed = run(["partx", "--delete", disk.path], check=False)
        if failed.returncode and time.monotonic() > deadline:
            if check:
                raise CommandFailed(failed.returncode, failed.args, failed.stdout, failed.stderr)
            return
        time.sleep(0.2)


def detach(disk):
    """Undo everything a test may have left on the disk, then detach it."""
    run(["swapoff", disk.path], check=False)
    for part in disk.partitions():
        run(["swapoff", "/dev/" + part], check=False)
    delete_partitions(disk, check=False)
    run(["losetup", "-d", disk.path], check=False)


class Throttle:
    """A blkio cgroup whose limits, ``(knob, disk, value)`` such as ``("read_iops_device", disk,
    100)``, hold for the processes started in it: a disk as slow as a real one, on its own."""

    def __init__(self, limits):
        self.path = os.path.join(BLKIO, "cephops-test-" + uuid.uuid4().hex[:12])
        os.mkdir(self.path)
        for knob, disk, value in limits:
            self.limit(knob, disk, value)

    def limit(self, knob, disk, value):
        """Sets (or changes, for the processes in it now too) one limit of the cgroup."""
        rdev = os.stat(disk.path).st_rdev
        with open(os.path.join(self.path, "blkio.throttle." + knob), "w") as handle:
            handle.write("%d:%d %d\n" % (os.major(rdev), os.minor(rdev), value))

    def prefix(self):
        """argv that runs the command after it in the cgroup: for a module run directly."""
        return ["sh", "-c", 'echo $$ >"$0/cgroup.procs" && exec "$@"', self.path]

    def enter(self):
        """preexec_fn: the child and everything it starts (fio included) join the cgroup."""
        with open(os.path.join(self.path, "cgroup.procs"), "w") as handle:
            handle.write(str(os.getpid()))

    def remove(self, timeout=30):
        """Removes the cgroup once its processes are gone: async_wrapper's watcher can still be
        exiting when ansible-playbook has read the job's result. A process still there after
        ``timeout`` is a leak the play left behind, and fails the test by name."""
        procs = os.path.join(self.path, "cgroup.procs")
        deadline = time.monotonic() + timeout
        while True:
            with open(procs) as handle:
                pids = handle.read().split()
            if not pids or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        leftovers = []
        for pid in pids:
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as handle:
                    leftovers.append("%s: %s" % (pid, handle.read().replace(b"\0", b" ").decode(errors="replace")))
                os.kill(int(pid), 9)
            except (FileNotFoundError, ProcessLookupError):
                continue
        if leftovers:
            time.sleep(1)
        os.rmdir(self.path)
        assert not leftovers, "processes outlived the play in the throttled cgroup:\n" + "\n".join(leftovers)


def only_these_disks(mount_ns, disks, tmp_path):
    """/sys/block and /sys/dev/block in ``mount_ns`` list ``disks`` and their partitions only."""
    block, dev_block = tmp_path / "sys-block", tmp_path / "sys-dev-block"
    block.mkdir()
    dev_block.mkdir()
    for disk in disks:
        real = os.path.realpath("/sys/block/" + disk.name)
        os.symlink(real, str(block / disk.name))
        for node in [real] + [os.path.join(real, part) for part in disk.partitions()]:
            with open(os.path.join(node, "dev")) as handle:
                os.symlink(node, str(dev_block / handle.read().strip()))
    run(mount_ns + ["mount", "--bind", str(block), "/sys/block"])
    run(mount_ns + ["mount", "--bind", str(dev_block), "/sys/dev/block"])
