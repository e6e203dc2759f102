"""Integration fixtures: real loop devices on the test host, always detached afterwards.

Tests here run the collection's modules through ``ansible`` against localhost, as a user
would, and need root. Disks are sparse files, so an 8 GiB disk costs nothing.
"""

import hashlib
import json
import os
import subprocess
import tempfile
import time

import pytest

GIB = 1024 ** 3
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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
        zeros = bytes(chunk_size)
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


@pytest.fixture
def loop_disks(tmp_path):
    """Factory: ``loop_disks(size_gib=8)`` attaches a blank sparse loop disk."""
    created = []

    def attach(size_gib=8):
        backing = tmp_path / ("disk%d.img" % len(created))
        with open(backing, "wb") as handle:
            handle.truncate(int(size_gib * GIB))
        path = run(["losetup", "--find", "--show", str(backing)]).stdout.strip()
        disk = LoopDisk(path, str(backing))
        created.append(disk)
        return disk

    yield attach
    for disk in reversed(created):
        run(["swapoff", disk.path], check=False)
        for part in disk.partitions():
            run(["swapoff", "/dev/" + part], check=False)
        run(["partx", "-d", disk.path], check=False)
        run(["losetup", "-d", disk.path], check=False)


@pytest.fixture
def mount_ns():
    """A private mount namespace: mounts made in it vanish with it and never reach the host."""
    holder = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sleep", "infinity"])
    try:
        deadline = time.monotonic() + 5
        while os.readlink("/proc/%d/ns/mnt" % holder.pid) == os.readlink("/proc/self/ns/mnt"):
            assert time.monotonic() < deadline, "unshare did not enter a new mount namespace"
            time.sleep(0.05)
        yield ["nsenter", "--target", str(holder.pid), "--mount", "--"]
    finally:
        holder.kill()
        holder.wait()


def ansible_module(module, args=None, check=False, prefix=()):
    """Run one collection module on localhost through ``ansible``; return its result dict."""
    env = dict(
        os.environ,
        ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json",
        ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
        ANSIBLE_PYTHON_INTERPRETER=os.environ.get("CEPHOPS_TEST_PYTHON", "/usr/bin/python3"),
        LC_ALL="C.UTF-8",  # the ansible controller insists on UTF-8; modules set LC_ALL=C themselves
    )
    argv = list(prefix) + [
        "ansible", "localhost", "--connection", "local", "--inventory", "localhost,",
        "--module-name", "cephops.osd_tuning." + module,
    ]
    if args:
        argv += ["--args", json.dumps(args)]
    if check:
        argv.append("--check")
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir(), check=False)
    try:
        report = json.loads(proc.stdout)
        return report["plays"][0]["tasks"][0]["hosts"]["localhost"]
    except (ValueError, KeyError, IndexError):
        raise AssertionError("ansible gave no result (rc=%s)\nstdout: %s\nstderr: %s"
                             % (proc.returncode, proc.stdout, proc.stderr))
