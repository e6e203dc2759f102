"""seq_read_probe on real loop devices: measures, never writes, always sets values back."""

import os
import signal
import time

import pytest

from conftest import fio_pids, parent_of, stopped_mid_fio
from modulerun import ansible_module
from loopdisk import run
from test_disk_facts import make_gpt_partitions

MIB = 1024 ** 2


REGION_MIB = 64


def max_sectors(disk):
    with open("/sys/block/%s/queue/max_sectors_kb" % disk.name) as handle:
        return int(handle.read())


@pytest.fixture
def settled():
    """Loop devices keep max_sectors_kb after detach (another test may leave 64): start from 512
    and put back what was there."""
    saved = []

    def settle(disk):
        saved.append((disk.name, max_sectors(disk)))
        with open("/sys/block/%s/queue/max_sectors_kb" % disk.name, "w") as handle:
            handle.write("512")
    yield settle
    for name, value in saved:
        with open("/sys/block/%s/queue/max_sectors_kb" % name, "w") as handle:
            handle.write(str(value))


def sectors_read(disk):
    with open("/sys/block/%s/stat" % disk.name) as handle:
        return int(handle.read().split()[2])


def fill_backing(disk, mib):
    """Real data in the first ``mib`` MiB of the backing file, so the reads are not of holes;
    dropped from the page cache (of this file only) so the first pass reads the file."""
    with open(str(disk.backing), "r+b") as handle:
        for _chunk in range(mib):
            handle.write(os.urandom(MIB))
        handle.flush()
        os.fsync(handle.fileno())
        os.posix_fadvise(handle.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)


@pytest.mark.pythons
def test_measures_each_value_repeatedly_reads_only_and_restores(loop_disks, settled):
    blank, data = loop_disks(), loop_disks()
    settled(blank)
    settled(data)
    fill_backing(blank, REGION_MIB)
    fill_backing(data, REGION_MIB)
    make_gpt_partitions(data)
    run(["mkfs.xfs", "-q", "-K", "/dev/%sp1" % data.name])  # -K: no discard, which would punch the data out
    before = (max_sectors(blank), max_sectors(data), data.checksum(), blank.checksum())
    read_before = sectors_read(blank)
    result = ansible_module("seq_read_probe", dict(devices=[blank.path, data.path], max_sectors_kb=["current", 64, 256],
                                                   runtime=1, repeats=3, min_gain_percent=5,
                                                   region_size_mib=REGION_MIB))
    assert result["changed"] is False, result
    baseline = before[0]
    assert baseline not in (64, 256), "the test needs a value before that differs from the others"
    for disk in result["results"]:
        assert disk["irq_source"] == "host" and disk["irqs"] == []  # a loop device has no IRQs of its own
        assert [row["max_sectors_kb"] for row in disk["table"]] == [baseline, 64, 256]
        for row in disk["table"]:
            assert row["error"] is None and len(row["runs"]) == 3 and all(run_ > 0 for run_ in row["runs"]), row
            assert row["read_mib_s"] == sorted(row["runs"])[1]
            assert (row["min_mib_s"], row["max_mib_s"]) == (min(row["runs"]), max(row["runs"]))
            assert row["interrupts_per_s"] > 0
    # 3 values, 3 repeats, at least one pass over the region each.
    assert sectors_read(blank) - read_before >= 9 * REGION_MIB * MIB // 512
    model = result["models"]["(unknown)"]
    speeds = dict((row["max_sectors_kb"], row["read_mib_s"]) for row in model["table"])
    assert model["baseline"] == baseline and model["table"][0]["disks"] == 2
    assert model["best"] == max(sorted(speeds), key=lambda kb: speeds[kb])
    gain = 100.0 * (speeds[model["best"]] - speeds[baseline]) / speeds[baseline]
    assert model["chosen"] == (model["best"] if gain >= 5 and speeds[model["best"]] > speeds[baseline] else baseline), model
    assert result["choices"] == []  # loop devices have no model: nothing to make a rule of
    assert (max_sectors(blank), max_sectors(data), data.checksum(), blank.checksum()) == before


def test_fio_failure_is_reported_and_values_restored(loop_disks):
    disk = loop_disks()
    before = max_sectors(disk)
    result = ansible_module("seq_read_probe", dict(devices=[disk.name], max_sectors_kb=[64], runtime=1, repeats=1,
                                                   block_size="not-a-size"))
    row, = result["results"][0]["table"]
    assert row["read_mib_s"] is None and "fio printed no JSON" in row["error"]
    assert result["results"][0]["best"] is None
    assert max_sectors(disk) == before


def test_the_module_terminated_mid_measurement_stops_fio_and_sets_values_back(loop_disks, settled):
    disk = loop_disks()
    settled(disk)

    def terminate_module(pids):
        assert max_sectors(disk) == 64  # the value being measured
        # One process, its job a thread that dies with it: a forked job process (fio without
        # --thread) outlives a killed fio, and waits forever if killed as it starts. The
        # wait gives fio time to start its job.
        time.sleep(2)
        assert fio_pids(disk.path) == pids and len(pids) == 1, (pids, fio_pids(disk.path))
        os.kill(parent_of(pids[0]), signal.SIGTERM)

    outcome = stopped_mid_fio(lambda: ansible_module("seq_read_probe", dict(
        devices=[disk.path], max_sectors_kb=[64], runtime=60, repeats=1)), disk.path, terminate_module, 120)
    assert outcome["failed"] and outcome["msg"] == "measurement stopped: interrupted by signal 15", outcome
    assert max_sectors(disk) == 512


def test_check_mode_plans_and_touches_nothing(loop_disks, settled):
    disk = loop_disks()
    settled(disk)
    before = (max_sectors(disk), disk.checksum())
    result = ansible_module("seq_read_probe", dict(devices=[disk.name], max_sectors_kb=[64, "current"]), check=True)
    assert [row["max_sectors_kb"] for row in result["results"][0]["table"]] == [64, before[0]]
    assert "--readonly" in result["commands"][0]
    assert (max_sectors(disk), disk.checksum()) == before


def test_bad_value_is_refused():
    result = ansible_module("seq_read_probe", dict(devices=["/dev/null"], max_sectors_kb=["lots"]))
    assert result["failed"] is True and "'lots' is neither a positive number" in result["msg"]
