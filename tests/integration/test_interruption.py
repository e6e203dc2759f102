"""site.yml stopped at a task boundary, by a failing task or by SIGINT to the controller (an
operator's Ctrl-C), then run again and rolled back, as an operator runs them: the installed
tarball, by FQCN, on loop disks, every role of site.yml in play (the gate probes two disks,
over-provisioning partitions a third) and every place the roles keep state moved under the
test's directory. After each stop, a second run leaves the state a run never stopped leaves,
and rollback.yml puts every file and every disk's bytes back as they were before.

faults/fault.py makes the stop. `make test` stops once in each role, the two kinds in turn;
scripts/interruption_sweep.py stops at every boundary, and docs/safety.md keeps its last result.
"""

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from test_collection_build import user_environment
from test_operator_playbooks import Site, moved_state

FAULTS = Path(__file__).resolve().parent / "faults"
# Each role of site.yml and how make test stops in it, the two kinds in turn.
SAMPLE = [("disk_gate", "sigint"), ("io_scheduler", "fail"), ("max_sectors_kb", "sigint"), ("mount_options", "fail"),
          ("overprovision", "sigint")]
KINDS = ("fail", "sigint")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    return user_environment(tmp_path_factory)


class Host:
    """Three blank loop disks and a site.yml of the operator's kind for them; ``state`` holds
    every file the roles keep."""

    def __init__(self, tmp_path, installed, loop_disks):
        self.disks = [loop_disks(6), loop_disks(6), loop_disks(6)]
        self.state, moved = moved_state(tmp_path)
        self.async_dir = tmp_path / "async"
        self.site = Site(tmp_path, installed, disk_gate_devices=[d.path for d in self.disks[:2]],
                         disk_gate_include_loop=True, disk_gate_deep_queue_seconds=1, disk_gate_region_size_mib=64,
                         disk_gate_cache_max_age=3600, io_scheduler_grub_enabled=False,
                         cephops_state_dir=str(self.state), overprovision_allow_erase=True,
                         overprovision_disks=[{"device": self.disks[2].path, "method": "partition", "reserve_percent": 10}],
                         **moved)

    def run(self, playbook="site", fault=None, log=None):
        """The return code of one run, stopped where ``fault`` ("fail:N", "sigint:N") says. A
        controller that has not ended 30 s after the SIGINT gets a second one, as an operator
        presses Ctrl-C again (ansible-playbook can hang on the first), then SIGKILL."""
        log = log or self.async_dir.parent / "fault.log"
        if log.exists():
            log.unlink()
        env = dict(self.site.env, ANSIBLE_STRATEGY_PLUGINS=str(FAULTS), ANSIBLE_STRATEGY="fault",
                   CEPHOPS_FAULT=fault or "", CEPHOPS_FAULT_LOG=str(log))
        argv = ["ansible-playbook", "--inventory", str(self.site.path), "cephops.osd_tuning." + playbook,
                "--extra-vars", json.dumps(self.site.command_line)]
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        number = int(fault.split(":")[1]) if fault and fault.startswith("sigint:") else None
        signalled = None
        while proc.poll() is None:
            time.sleep(1)
            if number is not None and signalled is None and log.exists() and len(log.read_text().splitlines()) >= number:
                signalled = time.monotonic()
            if signalled is not None and time.monotonic() - signalled > 30:
                proc.send_signal(signal.SIGINT if time.monotonic() - signalled < 60 else signal.SIGKILL)
        return proc.returncode

    def settle(self, timeout=120):
        """Wait for what a stopped controller leaves running: the gate's probe job, until no
        process holds a disk open."""
        deadline = time.monotonic() + timeout
        while any(subprocess.run(["fuser", "-s", d.path], check=False).returncode == 0 for d in self.disks):
            assert time.monotonic() < deadline, "a process still holds a disk %d s after the stop" % timeout
            time.sleep(1)

    def snapshot(self):
        """What a run leaves: every file the roles keep (JSON without its dates), and each disk's
        content as its non-zero MiB by offset. Disk names are replaced by their place in the list."""
        names = dict((os.path.basename(d.path), "disk%d" % i) for i, d in enumerate(self.disks))

        def neutral(text):
            return re.sub(r"\bloop\d+\b", lambda m: names.get(m.group(0), "loop"), text)

        files = {}
        for path in sorted(p for p in self.state.rglob("*") if p.is_file()):
            text = path.read_text(errors="replace")
            if path.suffix == ".json":
                text = json.dumps(undated(json.loads(text)), sort_keys=True)
            files[neutral(str(path.relative_to(self.state)))] = neutral(text)
        return {"files": files, "disks": [layout(d) or d.checksum() for d in self.disks]}


def layout(disk):
    """A disk's partitions as the kernel sees them, each its start and size; None without any.
    Two runs that partition a disk alike write different bytes: a new table draws its GUIDs."""
    found = {}
    for part in disk.partitions():
        with open("/sys/block/%s/%s/start" % (disk.name, part)) as start, \
                open("/sys/block/%s/%s/size" % (disk.name, part)) as size:
            found[part[len(disk.name):]] = (int(start.read()), int(size.read()))
    return found or None


def undated(value):
    """A record without what differs from run to run: times, dates and process ids."""
    if isinstance(value, dict):
        return dict((k, undated(v)) for k, v in value.items()
                    if not re.search(r"(^|_)(at|time|date|started|written|pid|when|today)$", k))
    if isinstance(value, list):
        return [undated(v) for v in value]
    return value


@pytest.fixture
def host(tmp_path, installed, loop_disks):
    return Host(tmp_path, installed, loop_disks)


def boundaries(log):
    """[(task number, role)] of a run's fault log."""
    return [(entry["task"], entry["role"]) for entry in map(json.loads, log.read_text().splitlines())]


def stops(tasks):
    """[(task number, role, kind)]: make test's sample, the middle task of each role; with
    CEPHOPS_INTERRUPTION_EVERY=N (scripts/interruption_sweep.sh), every Nth task both ways."""
    every = int(os.environ.get("CEPHOPS_INTERRUPTION_EVERY") or 0)
    if every:
        return [(number, role, kind) for number, role in tasks[::every] for kind in KINDS]
    found = []
    for role, kind in SAMPLE:
        own = [number for number, name in tasks if (name or "").split(".")[-1] == role]
        assert own, "site.yml ran no task of %s" % role
        found.append((own[len(own) // 2], role, kind))
    return found


def test_a_run_stopped_in_each_role_runs_again_to_the_same_state_and_rolls_back_to_the_bytes_before(host, tmp_path):
    """One run never stopped gives the state to reach and the tasks to stop at; then, for each
    stop, a run stopped there, a run to the end and the rollback. The gate's verdict cache
    serves the run after a stop past the gate, as it would an operator's."""
    before = host.snapshot()
    log = tmp_path / "tasks.log"
    assert host.run(log=log) == 0
    whole = host.snapshot()
    assert whole["files"] != before["files"] and whole["disks"][2] != before["disks"][2], "no trace to compare"
    assert host.run("rollback") == 0
    assert host.snapshot() == before
    for number, role, kind in stops(boundaries(log)):
        where = "the %s at task %d (%s)" % (kind, number, role or "site.yml")
        assert host.run(fault="%s:%d" % (kind, number)) != 0, "%s did not stop the run" % where
        host.settle()
        assert host.run() == 0, "site.yml after " + where
        assert host.snapshot() == whole, "after " + where
        assert host.run("rollback") == 0, "rollback.yml after " + where
        assert host.snapshot() == before, "rolled back after " + where
        print("stopped, ran again and rolled back: " + where)  # the sweep's record (pytest -s)
