"""Integration fixtures: real loop devices on the test host, always detached afterwards.

Tests here run the collection's modules through ``ansible`` against localhost, as a user
would, and need root. Disks are sparse files, so an 8 GiB disk costs nothing.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

import pytest

from loopdisk import attach, detach, run

# The test helpers both suites import (tests/helpers).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "helpers"))

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Cases of the safety suite (test_safety.py), summarised at the end of the run.
SAFETY_LOG = []
# (title, lines) of tables a test made for the reader, printed at the end of the run.
TABLES = []


class WorkerLogs:
    """Under pytest-xdist each worker keeps its own SAFETY_LOG and TABLES: they travel to the
    controller when a worker ends, and the controller's summary shows all of them."""

    @staticmethod
    def pytest_testnodedown(node, error):  # pylint: disable=unused-argument
        logs = json.loads(node.workeroutput.get("cephops_logs", '{"safety": [], "tables": []}'))
        SAFETY_LOG.extend(logs["safety"])
        TABLES.extend(tuple(table) for table in logs["tables"])


def pytest_configure(config):
    config.addinivalue_line("markers", "cores: a playbook test that scripts/test.sh cores also runs on every older "
                                       "ansible-core the collection supports")
    config.addinivalue_line("markers", "pythons: a test that runs a module, which scripts/test.sh cores runs again with "
                                       "the oldest and newest managed-host Python the collection claims")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(WorkerLogs())


def pytest_sessionfinish(session):
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["cephops_logs"] = json.dumps(dict(safety=SAFETY_LOG, tables=TABLES))


def pytest_terminal_summary(terminalreporter):
    write = terminalreporter.write_line
    for title, lines in TABLES:
        write("")
        write(title + ":")
        for line in lines:
            write(line.rstrip("\n"))
    if not SAFETY_LOG:
        return
    write("")
    write("safety suite: %d cases, %d with the expected outcome (refusal reason, fallback or cleanup), "
          "data changed on %d disks (must be 0; every byte of every disk a case can reach checksummed "
          "before and after the case, or the playbook of its module's cases; the root disk's cases traced)"
          % (len(SAFETY_LOG), sum(1 for c in SAFETY_LOG if c["expected"]),
             len(set(d for c in SAFETY_LOG for d in c["changed"]))))
    for case in SAFETY_LOG:
        write("  %-23s %-30s %-4s %s" % (case["module"], case["case"][:30], "ok" if case["expected"] else "MISS",
                                         case["shown"][:110].replace("\n", " ")))


@pytest.fixture
def loop_disks(tmp_path):
    """Factory: ``loop_disks(size_gib=8, sector_size=512)`` attaches a blank sparse loop disk."""
    created = []

    def new_disk(size_gib=8, sector_size=512):
        disk = attach(tmp_path / ("disk%d.img" % len(created)), size_gib, sector_size)
        created.append(disk)
        return disk

    yield new_disk
    for disk in reversed(created):
        detach(disk)


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


def hide_binaries(mount_ns, names):
    """Make the programs ``names`` missing for whatever runs with the ``mount_ns`` prefix.

    /dev/null, which has no execute bit, is bind-mounted over every copy on the search path
    of AnsibleModule.get_bin_path (PATH and the sbin directories), so a module finds no such
    program: the tool is really gone, nothing is mocked, and the test host keeps it.
    """
    for name in names:
        replace_binary(mount_ns, name, "/dev/null")


def replace_binary(mount_ns, name, replacement):
    """Bind-mount ``replacement`` over every copy of the program ``name`` on the search path of
    AnsibleModule.get_bin_path, for whatever runs with the ``mount_ns`` prefix; returns the
    real program's path, which stays reachable outside the namespace."""
    search = os.environ["PATH"].split(os.pathsep) + ["/sbin", "/usr/sbin", "/usr/local/sbin"]
    found = set(os.path.realpath(os.path.join(d, name)) for d in search
                if d and os.access(os.path.join(d, name), os.X_OK))
    # A program that is not installed would make the case prove nothing.
    assert found, "%s is not installed on the test host" % name
    for path in sorted(found):
        run(mount_ns + ["mount", "--bind", str(replacement), path])
    return sorted(found)[0]


def fio_pids(path):
    """Process ids of the fio runs writing to the device ``path``."""
    pids = []
    for pid in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as handle:
                argv = handle.read().split(b"\0")
        except (IOError, OSError):
            continue
        if pid.isdigit() and argv and argv[0].endswith(b"fio") and ("--filename=" + path).encode() in argv:
            pids.append(int(pid))
    return pids


def fio_started(path, starter_alive, seconds=120):
    """Process ids of the fio run on ``path`` once it runs; [] when whatever starts it ended
    first or ``seconds`` passed."""
    deadline = time.monotonic() + seconds
    while starter_alive() and time.monotonic() < deadline:
        pids = fio_pids(path)
        if pids:
            return pids
        time.sleep(0.2)
    return []


def stopped_mid_fio(start, path, stop, seconds):
    """What ``start()`` returns when ``stop(fio's pids)`` runs once fio runs on ``path``;
    ``start()`` gets ``seconds`` to end after it, and no fio may be left."""
    assert fio_pids(path) == [], "a fio run from elsewhere already uses %s" % path
    outcome = {}
    worker = threading.Thread(target=lambda: outcome.update(start()))
    worker.start()
    pids = fio_started(path, worker.is_alive)
    assert pids, "fio never started"
    try:
        stop(pids)
    except BaseException:
        # A failed stop must not leave the module (and its fio) running into later tests.
        os.kill(parent_of(pids[0]), signal.SIGKILL)
        raise
    finally:
        worker.join(seconds)
    # The probes run fio with --thread, so its jobs end with it; a job process of a fio without
    # it ended a moment later, or never (a job killed while starting waited on a futex): a fio
    # still there 5 s after its module ended has outlived it.
    deadline = time.monotonic() + 5
    while fio_pids(path) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert fio_pids(path) == []
    return outcome


def parent_of(pid):
    """The parent process id of ``pid``: for a probe's fio, the module that started it."""
    with open("/proc/%d/stat" % pid) as handle:
        return int(handle.read().rsplit(")", 1)[1].split()[1])


class FioWatch:
    """``with FioWatch(path, ...) as watch:`` collects in ``watch.pids`` every fio run that writes to
    one of the devices ``paths`` while the block runs, and sets ``watch.together`` once a poll
    finds every one of them written at the same time. A probe runs for seconds; polled every
    20 ms, none can slip through."""

    def __init__(self, *paths):
        self.paths = paths
        self.pids = set()
        self.together = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll)

    def _look(self):
        found = [fio_pids(path) for path in self.paths]
        self.together = self.together or all(found)
        for pids in found:
            self.pids.update(pids)

    def _poll(self):
        while not self._stop.is_set():
            self._look()
            self._stop.wait(0.02)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc_info):
        self._stop.set()
        self._thread.join()
        self._look()


@pytest.fixture
def ceph_mon(tmp_path):
    """A monitor of a cluster of its own on a free local port; gives the ceph command that
    reaches it, as the module's ``ceph`` option takes it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    fsid = str(uuid.uuid4())
    conf = tmp_path / "ceph.conf"
    conf.write_text("[global]\nfsid = %s\nmon host = v1:127.0.0.1:%d\nrun dir = %s\nlog file = %s/$name.log\n"
                    "admin socket = %s/$name.asok\nmon data = %s/mon-$id\n" % (fsid, port, *[tmp_path] * 4))
    keyrings = tmp_path / "mon.keyring", tmp_path / "admin.keyring"
    run(["ceph-authtool", "--create-keyring", str(keyrings[0]), "--gen-key", "-n", "mon.", "--cap", "mon", "allow *"])
    run(["ceph-authtool", "--create-keyring", str(keyrings[1]), "--gen-key", "-n", "client.admin",
         "--cap", "mon", "allow *", "--cap", "osd", "allow *", "--cap", "mgr", "allow *"])
    run(["ceph-authtool", str(keyrings[0]), "--import-keyring", str(keyrings[1])])
    run(["monmaptool", "--create", "--addv", "a", "[v1:127.0.0.1:%d]" % port, "--fsid", fsid, str(tmp_path / "monmap")])
    run(["ceph-mon", "--mkfs", "-i", "a", "--monmap", str(tmp_path / "monmap"), "--keyring", str(keyrings[0]),
         "-c", str(conf)])
    mon = subprocess.Popen(["ceph-mon", "-f", "-i", "a", "-c", str(conf)])
    ceph = ["ceph", "-c", str(conf), "--keyring", str(keyrings[1])]
    try:
        deadline = time.monotonic() + 60
        while run(ceph + ["--connect-timeout", "5", "config", "dump"], check=False).returncode:
            assert time.monotonic() < deadline and mon.poll() is None, "the monitor did not answer"
            time.sleep(0.5)
        yield ceph
    finally:
        mon.terminate()
        mon.wait()


@pytest.fixture
def osd_on(loop_disks):
    """Factory: ``osd_on(osd_id, disk=None)`` makes an OSD's block LV on the disk (a new loop
    disk by default) as ceph-volume lvm create tags it, and gives the disk; the volume group
    goes afterwards."""
    groups = []

    def make(osd_id, disk=None):
        disk = disk or loop_disks()
        group = "ceph-test-" + uuid.uuid4().hex[:12]
        run(["pvcreate", "--quiet", disk.path])
        run(["vgcreate", "--quiet", group, disk.path])
        groups.append((group, disk))
        tags = {"ceph.osd_id": str(osd_id), "ceph.type": "block", "ceph.osd_fsid": str(uuid.uuid4()),
                "ceph.cluster_name": "ceph", "ceph.block_device": "/dev/%s/osd-block" % group}
        # Inactive, without device-mapper (the test kernel may lack it): ceph-volume reads the
        # LV's metadata and tags, not the LV.
        run(["lvcreate", "--driverloaded", "n", "--quiet", "--yes", "--activate", "n", "--zero", "n", "-l", "100%FREE", "-n", "osd-block", group]
            + [arg for key, value in tags.items() for arg in ("--addtag", "%s=%s" % (key, value))])
        return disk

    yield make
    for group, disk in groups:
        run(["vgremove", "--quiet", "--force", group], check=False)
        run(["pvremove", "--quiet", disk.path], check=False)
