"""seq_read_probe on real loop devices: measures, never writes, always sets values back."""

import pytest

from modulerun import ansible_module
from loopdisk import run
from test_disk_facts import make_gpt_partitions


def max_sectors(disk):
    with open("/sys/block/%s/queue/max_sectors_kb" % disk.name) as handle:
        return int(handle.read())


@pytest.mark.pythons
def test_measures_each_value_reads_only_and_restores(loop_disks):
    blank, data = loop_disks(), loop_disks()
    make_gpt_partitions(data)
    run(["mkfs.xfs", "-q", "/dev/%sp1" % data.name])
    before = (max_sectors(blank), max_sectors(data), data.checksum(), blank.checksum())
    result = ansible_module("seq_read_probe", dict(devices=[blank.path, data.path], max_sectors_kb=[64, 256, "hw"],
                                                   runtime=1, region_size_mib=256))
    assert result["changed"] is False, result
    for disk in result["results"]:
        assert [row["max_sectors_kb"] for row in disk["table"]] == [64, 256, 1280]
        assert all(row["read_mib_s"] > 0 and row["error"] is None for row in disk["table"])
        assert disk["best"] in (64, 256, 1280)
    assert result["models"]["(unknown)"]["table"][0]["disks"] == 2
    assert (max_sectors(blank), max_sectors(data), data.checksum(), blank.checksum()) == before


def test_fio_failure_is_reported_and_values_restored(loop_disks):
    disk = loop_disks()
    before = max_sectors(disk)
    result = ansible_module("seq_read_probe", dict(devices=[disk.name], max_sectors_kb=[64], runtime=1,
                                                   block_size="not-a-size"))
    row, = result["results"][0]["table"]
    assert row["read_mib_s"] is None and "fio printed no JSON" in row["error"]
    assert result["results"][0]["best"] is None
    assert max_sectors(disk) == before


def test_check_mode_plans_and_touches_nothing(loop_disks):
    disk = loop_disks()
    before = (max_sectors(disk), disk.checksum())
    result = ansible_module("seq_read_probe", dict(devices=[disk.name], max_sectors_kb=[64, "current"]), check=True)
    assert [row["max_sectors_kb"] for row in result["results"][0]["table"]] == [64, before[0]]
    assert "--readonly" in result["commands"][0]
    assert (max_sectors(disk), disk.checksum()) == before


def test_bad_value_is_refused():
    result = ansible_module("seq_read_probe", dict(devices=["/dev/null"], max_sectors_kb=["lots"]))
    assert result["failed"] is True and "'lots' is neither a positive number" in result["msg"]
