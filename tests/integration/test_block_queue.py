"""block_queue on real loop devices: values land in sysfs, bad input writes nothing."""

import json
import os

import pytest

from modulerun import ansible_module
from test_disk_facts import make_gpt_partitions

MANAGED = ("scheduler", "max_sectors_kb", "read_ahead_kb", "nr_requests", "iosched")


def sysfs(disk, attr):
    with open("/sys/block/%s/queue/%s" % (disk.name, attr)) as handle:
        return handle.read().strip()


def queue_state(disk):
    """Every managed value, including the active scheduler's tunables."""
    state = dict((attr, sysfs(disk, attr)) for attr in MANAGED if attr != "iosched")
    iosched = "/sys/block/%s/queue/iosched" % disk.name
    for tunable in sorted(os.listdir(iosched)) if os.path.isdir(iosched) else []:
        state["iosched/" + tunable] = sysfs(disk, "iosched/" + tunable)
    return state


def active(disk):
    return sysfs(disk, "scheduler").split("[")[1].split("]")[0]


def fresh(disk):
    """Loop devices keep their queue settings across attach/detach (a test run before, the same
    test with another Python, may have left them): start from 'none' and the loop default 1280."""
    for attr, value in (("scheduler", "none"), ("max_sectors_kb", "1280")):
        with open("/sys/block/%s/queue/%s" % (disk.name, attr), "w") as handle:
            handle.write(value)
    return disk


@pytest.fixture
def disk(loop_disks):
    return fresh(loop_disks())


@pytest.mark.pythons
def test_sets_values_and_second_run_changes_nothing(disk):
    args = dict(devices=[disk.path], attributes={"scheduler": "mq-deadline", "iosched/fifo_batch": 1,
                                                 "max_sectors_kb": 64, "read_ahead_kb": 512})
    first = ansible_module("block_queue", args)
    assert first["changed"] is True, first
    assert active(disk) == "mq-deadline"
    assert sysfs(disk, "iosched/fifo_batch") == "1"
    assert sysfs(disk, "max_sectors_kb") == "64"
    assert sysfs(disk, "read_ahead_kb") == "512"
    assert first["disks"][disk.name]["max_sectors_kb"] == {"before": "1280", "after": "64"}
    second = ansible_module("block_queue", args)
    assert second["changed"] is False
    assert second["actions"] == []


def test_queues_give_each_disk_its_own_values_in_one_call(loop_disks):
    ssd, hdd = fresh(loop_disks()), fresh(loop_disks())
    result = ansible_module("block_queue", dict(queues=[
        dict(devices=[ssd.name], attributes={"scheduler": "none"}),
        dict(devices=[hdd.name], attributes={"scheduler": "mq-deadline", "iosched/fifo_batch": 1}),
    ]))
    assert not result.get("failed"), result
    assert (active(ssd), active(hdd)) == ("none", "mq-deadline")
    assert sysfs(hdd, "iosched/fifo_batch") == "1"


def test_check_mode_writes_nothing(disk):
    before = queue_state(disk)
    result = ansible_module("block_queue", dict(devices=[disk.name], attributes={
        "scheduler": "mq-deadline", "max_sectors_kb": 64, "nr_requests": 64}), check=True)
    assert result["changed"] is True
    assert "%s: scheduler none -> mq-deadline" % disk.name in result["actions"]
    assert queue_state(disk) == before


BAD_INPUT = [
    ("unknown_scheduler", {"scheduler": "cfq"}, "scheduler 'cfq' is not available; choices: none, mq-deadline"),
    ("above_hw_max", {"max_sectors_kb": 99999}, "max_sectors_kb 99999 is above max_hw_sectors_kb"),
    ("below_page_size", {"max_sectors_kb": 1}, "max_sectors_kb 1 is below the page size"),
    ("inactive_tunable", {"iosched/fifo_batch": 1}, "iosched/fifo_batch is not a tunable of scheduler 'none'"),
    ("non_integer", {"nr_requests": "lots"}, "nr_requests: 'lots' is not an integer"),
    ("unknown_attribute", {"rotational": 0}, "rotational is not a queue attribute this collection sets"),
]


@pytest.mark.parametrize("case,attributes,message", BAD_INPUT, ids=[case[0] for case in BAD_INPUT])
def test_bad_input_fails_and_writes_nothing(loop_disks, case, attributes, message):
    good, bad = fresh(loop_disks()), fresh(loop_disks())
    before = (queue_state(good), queue_state(bad))
    # The good disk's valid change must not be made either: every disk is planned first.
    result = ansible_module("block_queue", dict(queues=[
        dict(devices=[good.name], attributes={"max_sectors_kb": 64}),
        dict(devices=[bad.name], attributes=attributes),
    ]))
    assert result["failed"] is True, case
    assert result["msg"].startswith("nothing written: ")
    assert message in result["msg"]
    assert (queue_state(good), queue_state(bad)) == before


def test_clamp_uses_the_bound_and_warns(disk):
    result = ansible_module("block_queue", dict(devices=[disk.name], attributes={"max_sectors_kb": 99999},
                                                clamp=True))
    assert not result.get("failed"), result
    assert sysfs(disk, "max_sectors_kb") == sysfs(disk, "max_hw_sectors_kb")
    assert any("clamped to max_hw_sectors_kb" in w for w in result["warnings"])


def test_kernel_refusal_reports_applied_and_not_applied(disk):
    # The kernel refuses nr_requests above the tag depth with EINVAL, after the scheduler switched.
    result = ansible_module("block_queue", dict(devices=[disk.name], attributes={
        "scheduler": "mq-deadline", "nr_requests": 100000, "read_ahead_kb": 512}))
    assert result["failed"] is True
    assert "writing nr_requests=100000 failed: Invalid argument" in result["msg"]
    assert result["applied"] == ["%s: scheduler none -> mq-deadline" % disk.name]
    assert result["not_applied"][0].startswith("%s: nr_requests " % disk.name)
    assert result["not_applied"][1] == "%s: read_ahead_kb 2560 -> 512" % disk.name
    assert active(disk) == "mq-deadline" and sysfs(disk, "read_ahead_kb") == "2560"


def test_kernel_rounding_is_reported(disk):
    result = ansible_module("block_queue", dict(devices=[disk.name], attributes={"read_ahead_kb": 5}))
    assert sysfs(disk, "read_ahead_kb") == "4"
    assert "%s: wrote read_ahead_kb=5 but the kernel holds 4" % disk.name in result["warnings"]


def test_partition_is_refused(loop_disks):
    disk = loop_disks()
    make_gpt_partitions(disk)
    result = ansible_module("block_queue", dict(devices=["/dev/%sp1" % disk.name], attributes={"scheduler": "none"}))
    assert result["failed"] is True
    assert "is a partition" in result["msg"]


def test_record_keeps_first_originals_and_restore_puts_them_back(loop_disks, tmp_path):
    disk = fresh(loop_disks())
    record = tmp_path / "record.json"
    original = queue_state(disk)
    ansible_module("block_queue", dict(devices=[disk.name], attributes={"scheduler": "mq-deadline", "max_sectors_kb": 64},
                                       record=str(record)))
    ansible_module("block_queue", dict(devices=[disk.name], attributes={"max_sectors_kb": 128}, record=str(record)))
    kept = json.loads(record.read_text())["disks"]["name:" + disk.name]["attributes"]
    assert kept == {"scheduler": "none", "max_sectors_kb": original["max_sectors_kb"]}
    check = ansible_module("block_queue", dict(restore=True, record=str(record)), check=True)
    assert check["changed"] is True and record.exists() and sysfs(disk, "max_sectors_kb") == "128"
    result = ansible_module("block_queue", dict(restore=True, record=str(record)))
    assert result["changed"] is True, result
    assert queue_state(disk) == original
    assert not record.exists()
    assert ansible_module("block_queue", dict(restore=True, record=str(record)))["changed"] is False


def test_restore_keeps_disks_that_are_not_present(tmp_path):
    record = tmp_path / "record.json"
    record.write_text(json.dumps({"disks": {"serial:GONE-0001": {"name": "sdx", "attributes": {"scheduler": "none"}}}}))
    result = ansible_module("block_queue", dict(restore=True, record=str(record)))
    assert result["changed"] is False and result["missing"] == ["sdx (serial:GONE-0001)"]
    assert "GONE-0001" in record.read_text()
