"""queue_utils.plan_disk on queue states read from real disks (tests/unit/fixtures/queue)."""

import json

import pytest

from ansible_collections.cephops.osd_tuning.plugins.module_utils import block_queue as queue_utils


@pytest.fixture
def queue(fixture_text):
    return lambda name: json.loads(fixture_text("queue/%s.json" % name))


# The SSD optimisation article shows this scheduler file of a pre-5.0 single-queue kernel, as
# does the kernel's own Documentation/block/switching-sched.txt up to 4.20.
LEGACY = {"scheduler": "noop deadline [cfq]", "max_sectors_kb": "512", "max_hw_sectors_kb": "32767",
          "iosched": {"slice_idle": "8", "quantum": "8"}}


def test_nothing_to_do_when_values_hold(queue):
    changes, warnings, errors = queue_utils.plan_disk(
        "sdb", queue("loop_mq_deadline"), {"scheduler": "mq-deadline", "max_sectors_kb": 1280})
    assert (changes, warnings, errors) == ([], [], [])


def test_scheduler_switch_comes_before_its_tunables(queue):
    changes, warnings, errors = queue_utils.plan_disk(
        "sdb", queue("loop_none"), {"iosched/fifo_batch": 1, "scheduler": "mq-deadline", "max_sectors_kb": 64})
    assert errors == []
    assert changes == [("scheduler", "none", "mq-deadline"), ("iosched/fifo_batch", None, "1"),
                       ("max_sectors_kb", "1280", "64")]


def test_tunable_of_inactive_scheduler_is_refused(queue):
    changes, warnings, errors = queue_utils.plan_disk("sdb", queue("loop_none"), {"iosched/fifo_batch": 1})
    assert errors == ["sdb: iosched/fifo_batch is not a tunable of scheduler 'none' (it has: none)"]


def test_tunable_checked_against_active_scheduler(queue):
    changes, warnings, errors = queue_utils.plan_disk("sdb", queue("loop_mq_deadline"), {"iosched/slice_idle": 0})
    assert errors == ["sdb: iosched/slice_idle is not a tunable of scheduler 'mq-deadline' (it has: "
                      "async_depth, fifo_batch, front_merges, prio_aging_expire, read_expire, write_expire, "
                      "writes_starved)"]


def test_unknown_scheduler_lists_the_choices(queue):
    changes, warnings, errors = queue_utils.plan_disk("sdb", queue("loop_none"), {"scheduler": "cfq"})
    assert errors == ["sdb: scheduler 'cfq' is not available; choices: none, mq-deadline, kyber, bfq"]


def test_unloaded_bfq_gets_a_hint():
    state = {"scheduler": "[mq-deadline] none"}
    changes, warnings, errors = queue_utils.plan_disk("sdb", state, {"scheduler": "bfq"})
    assert errors == ["sdb: scheduler 'bfq' is not available; choices: mq-deadline, none "
                      "(bfq appears once its kernel module is loaded)"]


def test_bare_none_cannot_change():
    changes, warnings, errors = queue_utils.plan_disk("dm-0", {"scheduler": "none"}, {"scheduler": "mq-deadline"})
    assert errors == ["dm-0: scheduler cannot be changed (the queue offers only 'none')"]


def test_bare_none_asked_for_none_is_fine():
    assert queue_utils.plan_disk("dm-0", {"scheduler": "none"}, {"scheduler": "none"}) == ([], [], [])


def test_legacy_kernel_names():
    changes, warnings, errors = queue_utils.plan_disk("sda", LEGACY, {"scheduler": "noop"})
    assert errors == [] and changes == [("scheduler", "cfq", "noop")]
    changes, warnings, errors = queue_utils.plan_disk("sda", LEGACY, {"scheduler": "none"})
    assert errors == ["sda: scheduler 'none' is not available; choices: noop, deadline, cfq"]


def test_deadline_tunable_on_legacy_switch():
    changes, warnings, errors = queue_utils.plan_disk("sda", LEGACY, {"scheduler": "deadline", "iosched/fifo_batch": 1})
    assert errors == []
    assert changes == [("scheduler", "cfq", "deadline"), ("iosched/fifo_batch", None, "1")]


@pytest.mark.parametrize("value,clamp,expected", [
    (99999, False, ([], [], ["sdb: max_sectors_kb 99999 is above max_hw_sectors_kb 1280"])),
    (99999, True, ([], ["sdb: max_sectors_kb 99999 clamped to max_hw_sectors_kb 1280"], [])),
    (2, False, ([], [], ["sdb: max_sectors_kb 2 is below the page size, 4 KiB"])),
    (2, True, ([("max_sectors_kb", "1280", "4")], ["sdb: max_sectors_kb 2 raised to the page size, 4 KiB"], [])),
    (0, False, ([], [], ["sdb: max_sectors_kb 0 is below the page size, 4 KiB"])),
    (-64, False, ([], [], ["sdb: max_sectors_kb -64 is below the page size, 4 KiB"])),
])
def test_max_sectors_bounds(queue, value, clamp, expected):
    assert queue_utils.plan_disk("sdb", queue("loop_none"), {"max_sectors_kb": value}, clamp=clamp) == expected


@pytest.mark.parametrize("value", ["abc", "6.5", True, None, "", "64k"])
def test_non_integer_values_are_refused(queue, value):
    changes, warnings, errors = queue_utils.plan_disk("sdb", queue("loop_none"), {"nr_requests": value})
    assert errors == ["sdb: nr_requests: %r is not an integer" % (value,)]


def test_negative_integer_is_refused(queue):
    changes, warnings, errors = queue_utils.plan_disk("sdb", queue("loop_none"), {"read_ahead_kb": -1})
    assert errors == ["sdb: read_ahead_kb: -1 is negative"]


def test_unknown_attribute_is_refused(queue):
    changes, warnings, errors = queue_utils.plan_disk("sdb", queue("loop_none"), {"rotational": 0})
    assert errors == ["sdb: rotational is not a queue attribute this collection sets (it sets: scheduler, "
                      "max_sectors_kb, read_ahead_kb, nr_requests, rq_affinity, nomerges, add_random, "
                      "wbt_lat_usec, iosched/*)"]


def test_every_error_of_a_disk_is_reported_together(queue):
    changes, warnings, errors = queue_utils.plan_disk(
        "sdb", queue("loop_none"), {"scheduler": "cfq", "max_sectors_kb": 99999, "nr_requests": "x"})
    assert len(errors) == 3
