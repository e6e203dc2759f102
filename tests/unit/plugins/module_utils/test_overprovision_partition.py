"""The partition method: layout arithmetic, its checks and its commands."""

import pytest

from ansible_collections.cephops.osd_tuning.plugins.modules import overprovision_partition as layouts

MIB = 1024 * 1024
SIZE = 960197124096  # a 960 GB SSD
END_20 = 732572 * MIB  # 80 % of it, rounded down to a whole MiB
DATA = "Has data without a signature (3 of 64 sampled MiB not zero)"


def disk(**changes):
    found = dict(name="sdb", path="/dev/sdb", size_bytes=SIZE, discard=True, reject_reasons=[], data_reasons=[],
                 signatures=[])
    found.update(changes)
    return found


def recorded(end=END_20, reserve=20.0):
    return dict(method="partition", start_bytes=MIB, end_bytes=end, reserve_percent=reserve)


def test_the_layout_starts_at_one_mib_and_ends_on_a_whole_mib():
    assert layouts.wanted_layout(SIZE, 20) == [(MIB, END_20)]
    assert END_20 <= SIZE * 0.8 < END_20 + MIB


def test_the_kernel_layout_is_in_bytes_from_512_byte_units():
    block = dict(partitions={"sdb2": dict(attrs=dict(start="4096", size="2048")),
                             "sdb1": dict(attrs=dict(start="2048", size="2048"))})
    assert layouts.kernel_layout(block) == [(MIB, 2 * MIB), (2 * MIB, 3 * MIB)]


def test_a_blank_disk_is_discarded_and_partitioned():
    plan = layouts.plan(disk(), [], 20, True, True, False, None)
    assert plan == dict(wanted=[(MIB, END_20)], change=True, checks=[])


def test_every_failed_check_is_named():
    plan = layouts.plan(disk(reject_reasons=["Has GPT headers", "Has partitions"], discard=False), [(MIB, 2 * MIB)],
                        20, True, False, False, None)
    assert plan["checks"] == [
        "the disk is not blank: Has GPT headers, Has partitions",
        "erase=true is required: the whole disk is discarded and partitioned",
        "the disk cannot discard, so the unallocated reserve could still hold old data; set discard false for this "
        "disk only if it is new or was secure-erased",
    ]


def test_discard_false_accepts_a_disk_that_cannot_discard():
    assert layouts.plan(disk(discard=False), [], 20, False, True, False, None)["checks"] == []


def test_overwrite_data_lifts_the_content_reasons_alone():
    assert layouts.plan(disk(reject_reasons=[DATA], data_reasons=[DATA]), [], 20, True, True, True, None)["checks"] == []
    refused = layouts.plan(disk(reject_reasons=["Has a FileSystem", DATA], data_reasons=[DATA]), [], 20, True, True,
                           True, None)
    assert refused["checks"] == ["the disk is not blank: Has a FileSystem"]


def test_the_recorded_layout_is_done_even_in_use_and_without_consent():
    in_use = disk(reject_reasons=["Has GPT headers", "Has partitions", "mounted"])
    assert layouts.plan(in_use, [(MIB, END_20)], 20, True, False, False, recorded()) == \
        dict(wanted=[(MIB, END_20)], change=False, checks=[])


def test_a_done_disk_asked_for_another_reserve_is_refused():
    plan = layouts.plan(disk(), [(MIB, END_20)], 30, True, True, False, recorded())
    assert plan["change"] is False
    assert plan["checks"] == ["the partition was made for a reserve of 20.0 %, not 30 %; restore it first, while the "
                              "partition is empty"]


def test_a_layout_the_record_does_not_hold_is_not_done():
    plan = layouts.plan(disk(reject_reasons=["Has GPT headers", "Has partitions"]), [(MIB, END_20 - MIB)], 20, True,
                        True, False, recorded())
    assert plan["change"] is True and plan["checks"] == ["the disk is not blank: Has GPT headers, Has partitions"]


def test_restore_removes_an_empty_recorded_partition():
    done = disk(reject_reasons=["Has GPT headers", "Has partitions"])
    assert layouts.plan_restore(done, [(MIB, END_20)], recorded()) == dict(change=True, checks=[])


def test_restore_of_a_blank_disk_has_nothing_to_do():
    assert layouts.plan_restore(disk(), [], recorded()) == dict(change=False, checks=[])


def test_restore_refuses_another_layout_and_a_partition_in_use():
    used = disk(reject_reasons=["Has GPT headers", "Has partitions", "mounted", "has holders"],
                signatures=[dict(device="sdb", type="gpt"), dict(device="sdb1", type="xfs")])
    plan = layouts.plan_restore(used, [(MIB, 2 * MIB)], recorded())
    assert plan["checks"] == [
        "it differs from the one recorded (partition from 1048576 to 2097152, recorded partition from 1048576 to "
        "%d)" % END_20,
        "the partition is in use: mounted, has holders, partition signature xfs",
    ]


@pytest.mark.parametrize("sector,expected", [
    (512, ["/usr/sbin/sgdisk", "--set-alignment=2048", "--new=1:2048:%d" % (END_20 // 512 - 1), "/dev/sdb"]),
    (4096, ["/usr/sbin/sgdisk", "--set-alignment=256", "--new=1:256:%d" % (END_20 // 4096 - 1), "/dev/sdb"]),
])
def test_sgdisk_gets_exact_sectors(sector, expected):
    assert layouts.create_argv("/usr/sbin/sgdisk", "/dev/sdb", [(MIB, END_20)], sector) == expected


def test_restore_zeroes_both_ends():
    assert layouts.zero_argvs("/usr/sbin/blkdiscard", "/dev/sdb", SIZE) == [
        ["/usr/sbin/blkdiscard", "--zeroout", "--offset", "0", "--length", str(MIB), "/dev/sdb"],
        ["/usr/sbin/blkdiscard", "--zeroout", "--offset", str(SIZE - MIB), "--length", str(MIB), "/dev/sdb"],
    ]
