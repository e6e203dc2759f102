"""overprovision_partition on loop devices: discard, one aligned partition, the record, idempotence
and the restore that makes the disk blank again; refusals leave every byte unchanged.

The record goes to tmp_path, never to the host's /var/lib/cephops-osd-tuning.
"""

import json

import pytest

from loopdisk import delete_partitions, run
from modulerun import ansible_module
from test_disk_facts import make_data_mid_disk, make_xfs
from test_overprovision import GPT_BACKUP_BYTES, MIB, facts, layout, read_range


@pytest.fixture
def record(tmp_path):
    return tmp_path / "overprovision_partition.json"


def partition(record, disks, check=False, **args):
    args = dict(dict(disks=disks, erase=True, record=str(record)), **args)
    return ansible_module("overprovision_partition", args, check=check)


def restore(record, disks=None):
    return ansible_module("overprovision_partition", dict(restore=True, record=str(record), disks=disks or []))


def recorded(record):
    return dict((entry["device"], entry) for entry in json.loads(record.read_text())["disks"].values())


def test_partition_then_restore_end_to_end(loop_disks, record):
    disk = loop_disks()
    # Data the content checks find, and some in what becomes the reserve: the entry allows destroying it.
    make_data_mid_disk(disk)
    disk.write(disk.size - 64 * MIB, b"old data" * 1024)
    result = partition(record, [{"device": disk.path, "reserve_percent": 20, "overwrite_data": True}])
    assert not result.get("failed"), result.get("msg")
    end = int(disk.size * 0.8) // MIB * MIB
    found = result["disks"][0]
    assert (found["start_bytes"], found["end_bytes"], found["discarded"]) == (MIB, end, True)
    assert found["partition"] == disk.path + "p1"
    assert any("overwrite_data is set, the discard destroys what the content checks found: Has data without a "
               "signature" in w for w in result["warnings"])
    assert layout(disk) == [(MIB, end)]
    assert read_range(disk, end, disk.size - GPT_BACKUP_BYTES).count(0) == disk.size - GPT_BACKUP_BYTES - end
    entry = recorded(record)[disk.path]
    assert (entry["method"], entry["start_bytes"], entry["end_bytes"], entry["reserve_percent"]) == \
        ("partition", MIB, end, 20.0)

    # Done: nothing to do and no consent needed.
    before = disk.checksum()
    again = partition(record, [{"device": disk.path}], erase=False)
    assert not again.get("failed"), again.get("msg")
    assert again["changed"] is False and again["actions"] == []
    assert disk.checksum() == before

    undone = restore(record)
    assert not undone.get("failed"), undone.get("msg")
    assert undone["changed"] is True and undone["missing"] == []
    assert layout(disk) == [] and disk.partitions() == []
    assert facts(disk)["available"] is True
    assert not record.exists()


@pytest.mark.pythons
def test_a_4kn_disk_gets_the_same_mib_bounds(loop_disks, record):
    disk = loop_disks(sector_size=4096)
    result = partition(record, [{"device": disk.path, "reserve_percent": 10}])
    assert not result.get("failed"), result.get("msg")
    end = int(disk.size * 0.9) // MIB * MIB
    assert result["disks"][0]["actions"][1] == "sgdisk --set-alignment=256 --new=1:256:%d %s" % (end // 4096 - 1, disk.path)
    assert (result["disks"][0]["start_bytes"], result["disks"][0]["end_bytes"]) == (MIB, end)
    assert restore(record)["changed"] is True and disk.partitions() == []


def test_check_mode_plans_and_writes_nothing(loop_disks, record):
    disk = loop_disks()
    before = disk.checksum()
    result = partition(record, [{"device": disk.path}], check=True)
    assert result["changed"] is True and result["actions"][0] == "blkdiscard " + disk.path
    assert result["diff"]["before"] == "%s: no partition\n" % disk.path
    assert disk.checksum() == before and disk.partitions() == [] and not record.exists()


def test_one_refused_disk_changes_nothing_on_any_disk(loop_disks, record):
    blank, used = loop_disks(), loop_disks()
    make_xfs(used)
    before = (blank.checksum(), used.checksum())
    result = partition(record, [{"device": blank.path}, {"device": used.path}])
    assert result["failed"] is True and result["changed"] is False
    assert result["msg"] == "%s: refused, the disk is not blank: Has a FileSystem" % used.path
    assert [d["checks"] for d in result["disks"]] == [[], ["the disk is not blank: Has a FileSystem"]]
    assert (blank.checksum(), used.checksum()) == before and blank.partitions() == []
    assert not record.exists()


def test_without_consent_nothing_is_written(loop_disks, record):
    disk = loop_disks()
    before = disk.checksum()
    result = partition(record, [{"device": disk.path}], erase=False)
    assert result["msg"] == "%s: refused, erase=true is required: the whole disk is discarded and partitioned" % disk.path
    assert disk.checksum() == before


def test_another_reserve_for_a_done_disk_is_refused(loop_disks, record):
    disk = loop_disks()
    assert not partition(record, [{"device": disk.path}]).get("failed")
    before = disk.checksum()
    result = partition(record, [{"device": disk.path, "reserve_percent": 30}])
    assert result["msg"] == ("%s: refused, the partition was made for a reserve of 20.0 %%, not 30.0 %%; restore it "
                             "first, while the partition is empty" % disk.path)
    assert disk.checksum() == before
    assert restore(record, [{"device": disk.path}])["changed"] is True


def test_a_partition_in_use_is_done_and_not_restored(loop_disks, record):
    disk = loop_disks()
    assert not partition(record, [{"device": disk.path}]).get("failed")
    run(["mkfs.xfs", "-q", disk.path + "p1"])  # an OSD, say
    before = disk.checksum()
    again = partition(record, [{"device": disk.path}], erase=False)
    assert again["changed"] is False and not again.get("failed"), again.get("msg")
    result = restore(record)
    assert result["msg"] == ("%s: refused to remove the partition layout: the partition is in use: partition "
                             "signature xfs" % disk.path)
    assert disk.checksum() == before and disk.path in recorded(record)


def test_restore_of_a_disk_blank_again_only_drops_it_from_the_record(loop_disks, record):
    disk = loop_disks()
    assert not partition(record, [{"device": disk.path}]).get("failed")
    run(["sgdisk", "--zap-all", disk.path])
    delete_partitions(disk)
    before = disk.checksum()
    result = restore(record, [{"device": disk.path}])
    assert not result.get("failed"), result.get("msg")
    assert result["changed"] is False and disk.checksum() == before
    assert not record.exists()


def test_restore_leaves_disks_it_did_not_record(loop_disks, record):
    disk = loop_disks()
    result = restore(record, [{"device": disk.path}])
    assert result["changed"] is False and result["not_recorded"] == [disk.path]
