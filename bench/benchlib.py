"""What the benchmarks share: the machine line, medians, tables, loop disks, module runs.

The benchmarks measure; they are not tests. Each prints a table with medians over repeated
runs and the machine it ran on. Run them through bench/run.sh, which prepares the same
environment as the test suite.
"""

import contextlib
import io
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO_ROOT, "tests", "integration"))

import loopdisk  # noqa: E402  (shared with the integration tests)
import modulerun  # noqa: E402  (shared with the integration tests)

module = modulerun.ansible_module


def machine():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    fio = subprocess.run(["fio", "--version"], capture_output=True, text=True, check=False).stdout.strip()
    return "%s, %d CPUs, Linux %s, Python %s, %s" % (cpu, os.cpu_count(), platform.release(),
                                                     platform.python_version(), fio or "no fio")


def median(values):
    return statistics.median(values) if values else float("nan")


def table(title, header, rows, notes=()):
    """Print a Markdown table, so the output can go into docs/benchmarks.md as it is."""
    print("### " + title)
    print()
    print("machine: " + machine())
    print()
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for row in rows:
        print("| " + " | ".join(str(cell) for cell in row) + " |")
    for note in notes:
        print()
        print(note)
    print()


@contextlib.contextmanager
def loop_disks(count, size_gib=8, allocated=False, flush_ms=()):
    """``count`` blank loop disks, always detached afterwards. Sparse backing files by default;
    ``allocated`` writes every block of them first, as a real disk has no blocks to allocate, and
    leaves none of them cached. With ``flush_ms``, cycled over the disks, each disk's backing file
    is served by a flushfs server of its own whose fsync costs that many milliseconds: a disk slow
    at the flush and nowhere else, as a drive without power-loss protection is."""
    work = tempfile.mkdtemp(prefix="cephops-bench.")
    disks, servers = [], []
    try:
        for index in range(count):
            backing = os.path.join(work, "disk%d.img" % index)
            if flush_ms:
                backing = flush_served(backing, size_gib, flush_ms[index % len(flush_ms)], servers)
            disks.append(loopdisk.attach(backing, size_gib))
            if allocated:
                loopdisk.run(["dd", "if=/dev/zero", "of=" + disks[-1].backing, "bs=16M", "count=%d" % (size_gib * 64),
                              "conv=notrunc,fsync", "status=none"])
                # Nothing of a real disk is cached on the host, and cached pages change a loop disk's pace.
                loopdisk.run(["dd", "if=" + disks[-1].backing, "iflag=nocache", "count=0", "status=none"])
        yield disks
    finally:
        for disk in disks:
            loopdisk.detach(disk)
        for mountpoint, server in servers:
            loopdisk.run(["umount", mountpoint], check=False)
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
        shutil.rmtree(work)


FLUSHFS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "flushfs.py")


def flush_served(backing, size_gib, flush_ms, servers):
    """The path of a file that flushfs serves from ``backing``, each fsync costing ``flush_ms``;
    its (mountpoint, server) appended to ``servers`` for loop_disks to unmount."""
    with open(backing, "wb") as handle:
        handle.truncate(int(size_gib * loopdisk.GIB))
    mountpoint = backing + ".mnt"
    os.mkdir(mountpoint)
    server = subprocess.Popen([sys.executable, FLUSHFS, mountpoint, backing, str(flush_ms)],
                              stdout=subprocess.PIPE, text=True)
    servers.append((mountpoint, server))
    if server.stdout.readline().strip() != "ready":
        raise RuntimeError("flushfs did not mount %s (exit %s)" % (mountpoint, server.wait()))
    return os.path.join(mountpoint, "disk")


# Thresholds far from any figure a benchmark's disks give, so every probe passes and every play
# runs to its end: the benchmarks time the gate, not its verdicts. The marginal limits lie past
# the others, as the role's argument checks want them.
EASY = dict(min_iops=2, marginal_min_iops=1, max_p99_sync_latency_ms=10000, marginal_max_p99_sync_latency_ms=20000)


# Write requests a second per independent loop disk, cycled over the disks: a fast, a slow and a
# very slow disk. An fsync'd write costs the write and its flush, so the probe measured 300, 30.1
# and 5.1 IOPS under them (2026-11-29): suitable, marginal and unsuitable against gating_scale's
# thresholds, each far from a threshold. Their sum for 12 disks stays far below what the shared
# backing disk sustains, so no disk waits on another (gating_scale --independent shows it).
INDEPENDENT_WRITE_REQUESTS = (600, 60, 16)


# Milliseconds a flush costs per flush-paced loop disk (loop_disks' flush_ms), cycled over the
# disks as INDEPENDENT_WRITE_REQUESTS are, for the same three kinds of disk: the probe measures
# about 290, 32 and 5 IOPS on them, where plain writes and reads run at the host's pace.
INDEPENDENT_FLUSH_MS = (3, 30, 200)


@contextlib.contextmanager
def throttled(limits):
    """This process and its children in a blkio cgroup with ``limits`` (loopdisk.Throttle's),
    and back in the root cgroup afterwards: yields the Throttle, whose limits may change."""
    throttle = loopdisk.Throttle(limits)
    throttle.enter()
    try:
        yield throttle
    finally:
        with open(os.path.join(loopdisk.BLKIO, "cgroup.procs"), "w") as handle:
            handle.write(str(os.getpid()))
        throttle.remove()


@contextlib.contextmanager
def independent(disks, limits=INDEPENDENT_WRITE_REQUESTS):
    """Each disk under its own write limit (a blkio cgroup this process and its children join),
    so each is as fast as its limit, not as the shared backing disk: yields {disk path: limit}."""
    given = dict((disk.path, limits[index % len(limits)]) for index, disk in enumerate(disks))
    with throttled([("write_iops_device", disk, given[disk.path]) for disk in disks]):
        yield given


# Each pace of paced_loop_disks, with what a table's title says of its disks.
PACE_TITLES = {"requests": ", disks limited in write requests", "flush": ", disks slow at the flush"}
PACES = tuple(PACE_TITLES)


@contextlib.contextmanager
def paced_loop_disks(count, pace=None, kinds=None, allocated=False):
    """``count`` loop disks, each of its own pace when ``pace`` names one of PACES: "requests",
    each under its own blkio write-request limit (so it is slow at writes and flushes alike), or
    "flush", each slow at the flush alone (loop_disks' flush_ms). ``kinds`` picks the limits (or
    milliseconds) cycled over the disks, by default the three kinds of disk above. Yields
    (disks, {disk path: its pace as text}), the second empty when the disks share the host's pace."""
    stack = contextlib.ExitStack()
    try:
        if pace == "flush":
            kinds = kinds or INDEPENDENT_FLUSH_MS
            disks = stack.enter_context(loop_disks(count, flush_ms=kinds, allocated=allocated))
            paces = dict((disk.path, "%g ms a flush" % kinds[index % len(kinds)]) for index, disk in enumerate(disks))
        else:
            disks = stack.enter_context(loop_disks(count, allocated=allocated))
            paces = {}
            if pace == "requests":
                given = stack.enter_context(independent(disks, kinds or INDEPENDENT_WRITE_REQUESTS))
                paces = dict((path, "%g write requests/s" % limit) for path, limit in given.items())
        yield disks, paces
    finally:
        stack.close()


def add_pace_option(parser):
    """--independent [requests|flush]: the disks each of its own pace (paced_loop_disks)."""
    parser.add_argument("--independent", nargs="?", const="requests", choices=PACES, metavar="{requests,flush}",
                        help="loop disks each of its own pace: under a write-request limit (requests, the default) "
                             "or slow at the flush alone (flush)")


def fio_write_iops(argv, on=None):
    """The write IOPS of one fio command with JSON output, run by hand on the host or on a lab VM."""
    out = on.run(argv) if on else subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return json.loads(out[out.index("{"):])["jobs"][0]["write"]["iops"]


def article_fio(path, runtime):
    """The SSD selection article's probe exactly as its article runs it by hand; its write IOPS."""
    return fio_write_iops(["fio", "--ioengine=libaio", "--name=test", "--filename=" + path, "--fsync=1", "--direct=1",
                           "--bs=4k", "--iodepth=1", "--rw=randwrite", "--runtime=%d" % runtime, "--output-format=json"])


# --------------------------------------------------------------------------- lab VMs

LAB_GROUP_VARS = os.path.join(REPO_ROOT, "molecule", "shared", "group_vars")


def lab_gate_variables():
    """The disk_gate role's variables in the lab: its defaults under the lab's group variables."""
    import yaml  # the benchmarks that run inside a lab VM do not need it there

    values = {}
    for path in (os.path.join(REPO_ROOT, "roles", "disk_gate", "defaults", "main.yml"),
                 os.path.join(LAB_GROUP_VARS, "osds", "lab.yml")):
        with open(path) as handle:
            values.update(yaml.safe_load(handle))
    return values


def labctl(state, *args, check=True, **kwargs):
    """stdout of lab/labctl.py with this state directory."""
    argv = [sys.executable, os.path.join(REPO_ROOT, "lab", "labctl.py"), "--state-dir", state] + list(args)
    done = subprocess.run(argv, capture_output=True, check=False, **kwargs)
    if check and done.returncode:
        stderr = done.stderr if isinstance(done.stderr, str) else done.stderr.decode(errors="replace")
        raise SystemExit("labctl %s failed (exit %d):\n%s" % (" ".join(args), done.returncode, stderr[-3000:]))
    return done.stdout


class LabVM:
    """One running lab VM: modules through its inventory, commands over SSH."""

    def __init__(self, state, name):
        self.state, self.name = state, name
        self.inventory = os.path.join(state, "inventory.yml")
        with open(os.path.join(state, "vms", name, "vm.json")) as handle:
            self.accel = json.load(handle)["accel"].upper()

    def run(self, argv, stdin=None):
        """stdout of a command on the VM (quoted for its remote shell), or of a command fed ``stdin``."""
        if stdin is None:
            return labctl(self.state, "ssh", self.name, "--", shlex.join(argv), text=True)
        return labctl(self.state, "ssh", self.name, "--", shlex.join(argv), input=stdin)

    def put(self, paths, folder):
        """Copy local files into a folder on the VM."""
        stream = io.BytesIO()
        with tarfile.open(fileobj=stream, mode="w") as archive:
            for path in paths:
                archive.add(path, arcname=os.path.basename(path))
        self.run(["mkdir", "-p", folder])
        self.run(["tar", "-C", folder, "-xf", "-"], stdin=stream.getvalue())

    def module(self, name, args):
        return module(name, args, inventory=self.inventory, host=self.name)

    def path_of(self, serial):
        """The /dev node the VM gave the disk with this serial."""
        links = [link for link in self.run(["ls", "/dev/disk/by-id"]).split()
                 if link.endswith(("_" + serial, "-" + serial))]
        return self.run(["readlink", "-f", "/dev/disk/by-id/" + links[0]]).strip()


@contextlib.contextmanager
def lab_vm(blank_disks=0):
    """A freshly booted lab VM (the drive zoo, or only ``blank_disks`` blank virtio disks), with
    the lab's group variables next to its inventory; always torn down afterwards."""
    state = tempfile.mkdtemp(prefix="cephops-bench-lab.")
    name = "bench%d" % blank_disks if blank_disks else "bench"
    up = ["up", "--name", name] + (["--blank-disks", str(blank_disks)] if blank_disks else [])
    try:
        labctl(state, *up)
        os.symlink(LAB_GROUP_VARS, os.path.join(state, "group_vars"))
        yield LabVM(state, name)
    finally:
        labctl(state, "down", check=False)
        shutil.rmtree(state, ignore_errors=True)
