"""ata_hpa on loop devices: refused before any command touches the disk, every byte unchanged.

A loop device is not an ATA disk, so hdparm must never run against it: hdparm itself exits 0
there and claims to set the size (see tests/unit/fixtures/hdparm/loop_set_silently_ignored.txt).
"""

import json
import os

import pytest

from modulerun import ansible_module
from test_disk_facts import NON_BLANK, make_data_mid_disk

MARKER_DIR = "/run/cephops/ata_hpa"


def hpa(disk, check=False, device=None, **entry):
    entry = dict(dict(device=device or disk.path, reserve_percent=20), **entry)
    return ansible_module("ata_hpa", dict(disks=[entry], erase=True), check=check)


@pytest.mark.pythons
@pytest.mark.parametrize("check", [False, True], ids=["apply", "check_mode"])
def test_blank_loop_disk_is_refused_as_not_ata(loop_disks, check):
    disk = loop_disks()
    before = disk.checksum()
    result = hpa(disk, check=check)
    assert result["failed"] is True
    assert result["msg"] == "%s: not a direct-attached ATA disk (transport loop); refused, hdparm was not run" % disk.path
    assert result["changed"] is False and result["disks"][0]["erased"] is False and result["actions"] == []
    assert disk.checksum() == before
    assert not os.path.exists(MARKER_DIR) or not os.listdir(MARKER_DIR)


@pytest.mark.parametrize("kind,prepare,reasons", NON_BLANK, ids=[case[0] for case in NON_BLANK])
def test_non_blank_disk_is_refused_naming_every_check(loop_disks, kind, prepare, reasons):
    disk = loop_disks()
    prepare(disk)
    before = disk.checksum()
    result = hpa(disk)
    assert result["failed"] is True
    assert result["disks"][0]["checks"] == ["not a direct-attached ATA disk (transport loop)",
                                            "not blank: " + ", ".join(reasons)]
    assert disk.checksum() == before


def test_overwrite_data_lifts_only_the_content_reasons(loop_disks):
    disk = loop_disks()
    make_data_mid_disk(disk)
    before = disk.checksum()
    refused = hpa(disk)
    assert refused["disks"][0]["checks"][1].startswith("not blank: Has data without a signature (")
    lifted = hpa(disk, overwrite_data=True)
    # Still refused, and hdparm never ran: a loop device is no ATA disk.
    assert lifted["disks"][0]["checks"] == ["not a direct-attached ATA disk (transport loop)"]
    assert disk.checksum() == before


def test_restoring_is_refused_the_same_way(loop_disks, tmp_path):
    disk = loop_disks()
    # A record that holds the loop disk, as if the module had changed it.
    record = tmp_path / "ata_hpa.json"
    record.write_text(json.dumps({"disks": {"name:" + disk.name: {
        "method": "hpa", "device": disk.path, "native_sectors": disk.size // 512,
        "visible_sectors_before": disk.size // 512, "visible_sectors": disk.size // 1024}}}))
    before = disk.checksum()
    result = ansible_module("ata_hpa", dict(restore=True, record=str(record)))
    assert result["failed"] is True
    assert result["disks"][0]["checks"] == ["not a direct-attached ATA disk (transport loop)"]
    assert disk.checksum() == before
    assert "name:" + disk.name in json.loads(record.read_text())["disks"]


def test_a_partition_is_refused_by_name(loop_disks):
    disk = loop_disks()
    NON_BLANK[0][1](disk)
    before = disk.checksum()
    result = hpa(disk, device="/dev/%sp1" % disk.name)
    assert result["failed"] is True
    assert result["msg"] == "/dev/%sp1: is a partition (%sp1 of /dev/%s), not a whole disk" % (disk.name, disk.name, disk.name)
    assert disk.checksum() == before
