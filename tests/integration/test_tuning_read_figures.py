"""Before/after read figures of the queue roles on loop disks, run with ansible-playbook: every
disk whose scheduler or max_sectors_kb changes gets the median of 5 reads with its spread before
and after, and those reads are reads of that disk (its read counter grows by what they report);
a disk that does not change gets no figure and no read."""

import json
import os

import pytest

from modulerun import json_env, run_playbook

PLAYBOOK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "playbooks", "tuning_read_figures.yml")
MIB = 1024 ** 2


def queue(disk, attribute):
    with open("/sys/block/%s/queue/%s" % (disk.name, attribute)) as handle:
        return handle.read().strip()


def set_queue(disk, attribute, value):
    with open("/sys/block/%s/queue/%s" % (disk.name, attribute), "w") as handle:
        handle.write(value)


def mib_read(disk):
    with open("/sys/block/%s/stat" % disk.name) as handle:
        return int(handle.read().split()[2]) * 512 / float(MIB)


@pytest.fixture
def queues_restored():
    """Loop devices keep their queue settings after detach: put back the values the test changed."""
    saved = []

    def save(disk):
        saved.append((disk, dict((attribute, queue(disk, attribute).split("[")[-1].split("]")[0])
                                 for attribute in ("scheduler", "max_sectors_kb"))))
    yield save
    for disk, values in saved:
        for attribute, value in values.items():
            set_queue(disk, attribute, value)


def test_changed_disks_get_figures_from_their_own_reads(loop_disks, queues_restored, tmp_path):
    first, second, settled = loop_disks(), loop_disks(), loop_disks()
    disks = (first, second, settled)
    for disk in disks:
        queues_restored(disk)
    for disk in (first, second):
        set_queue(disk, "scheduler", "none")
        set_queue(disk, "max_sectors_kb", "128")
    set_queue(settled, "scheduler", "mq-deadline")
    set_queue(settled, "max_sectors_kb", "64")
    extra = dict(devices=[d.path for d in disks], scheduler="mq-deadline", max_sectors=64, record_dir=str(tmp_path))
    argv = ["ansible-playbook", "--inventory", "localhost,", "--connection", "local", "--extra-vars", json.dumps(extra),
            PLAYBOOK]
    read_before = dict((d.name, mib_read(d)) for d in disks)
    rc, report = run_playbook(argv, json_env())
    assert rc == 0, json.dumps(report)[-3000:]
    read = dict((d.name, mib_read(d) - read_before[d.name]) for d in disks)
    results = report["plays"][0]["tasks"][-1]["hosts"]["localhost"]["msg"]

    reported = dict((d.name, 0.0) for d in disks)
    for role, value in (("scheduler", "mq-deadline"), ("max_sectors_kb", 64)):
        figures = results[role]["read_figures"]
        assert results[role]["changing"] == sorted([first.name, second.name]), results
        assert [figure["device"] for figure in figures] == sorted([first.name, second.name]), figures
        for figure in figures:
            assert figure["setting"] == value and figure["what"] == role
            for side in (figure["before"], figure["after"]):
                assert side["error"] is None and len(side["runs"]) == 5, figure
                assert side["read_mib_s"] == sorted(side["runs"])[2]
                assert (side["min_mib_s"], side["max_mib_s"]) == (min(side["runs"]), max(side["runs"]))
                assert side["min_mib_s"] > 0
                reported[figure["device"]] += sum(side["runs"])  # 1 s each
            assert figure["line"].startswith("%s: %s %s, sequential read " % (figure["device"], role, value))
    assert "[mq-deadline]" in queue(first, "scheduler") and queue(first, "max_sectors_kb") == "64"
    # fio's MiB/s of 1 s runs against the kernel's count of what was read from each disk: the
    # 20 runs read the changed disk, and little else did (disk_facts samples 64 MiB).
    for disk in (first, second):
        assert 0.8 * reported[disk.name] <= read[disk.name] <= 1.25 * reported[disk.name] + 128, (reported, read)
    # The settled disk was only inventoried (disk_facts samples its start), never measured.
    assert read[settled.name] < 0.05 * reported[first.name], (reported, read)
