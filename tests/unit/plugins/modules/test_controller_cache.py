"""controller_cache on storcli, perccli and ssacli outputs from public repositories
(fixtures/controller_cache/README.md)."""

import json
import os

from ansible_collections.cephops.osd_tuning.plugins.modules import controller_cache

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "controller_cache")


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def storcli():
    return controller_cache.parse_storcli(json.loads(fixture("storcli_vall_show_all.json")))


def test_storcli_every_virtual_drive_with_its_write_policy():
    found = storcli()
    assert [(d["name"], d["cache"], d["write_policy"], d["os_drive"]) for d in found] == [
        ("c0/v0", "RWBD", "write back", "/dev/sda"), ("c0/v1", "RWBD", "write back", "/dev/sdb"),
        ("c0/v2", "NRWTD", "write through", "/dev/sdc"), ("c0/v3", "NRWTD", "write through", "/dev/sdd"),
        ("c0/v4", "NRWTD", "write through", "/dev/sde"), ("c0/v5", "NRWTD", "write through", "/dev/sdf"),
        ("c0/v6", "NRWTD", "write through", "/dev/sdg")]
    assert (found[0]["initial_write_cache"], found[0]["raid"], found[0]["disk_cache_policy"]) == (
        "WriteBack", "RAID1", "Disk's Default")


def test_perccli_of_a_dell_perc_reads_as_storcli():
    # perccli is Dell's build of storcli: the same command, the same JSON.
    found = controller_cache.parse_storcli(json.loads(fixture("perccli_vall_show_all.json")))
    assert [(d["name"], d["raid"], d["state"], d["cache"], d["write_policy"], d["os_drive"]) for d in found] == [
        ("c0/v0", "RAID1", "Optl", "RWBD", "write back", "/dev/sda"),
        ("c0/v1", "RAID0", "Optl", "RWBD", "write back", "/dev/sdb"),
        ("c0/v2", "RAID0", "Optl", "RWBD", "write back", "/dev/sdc"),
        ("c0/v3", "RAID0", "Optl", "RWBD", "write back", "/dev/sdd"),
        ("c0/v4", "RAID0", "Optl", "RWBD", "write back", "/dev/sde"),
        ("c0/v5", "RAID5", "Optl", "RWBD", "write back", "/dev/sdf")]
    assert {(d["initial_write_cache"], d["disk_cache_policy"]) for d in found} == {("WriteBack", "Disk's Default")}


def test_storcli_always_write_back_is_told_apart():
    assert controller_cache.write_policy("RAWBD") == "always write back"
    assert controller_cache.write_policy("-") is None


def test_storcli_failed_command_is_an_error():
    doc = {"Controllers": [{"Command Status": {"Status": "Failure", "Description": "Controller 0 not found"}}]}
    try:
        controller_cache.parse_storcli(doc)
    except ValueError as exc:
        assert str(exc) == "Failure: Controller 0 not found"
    else:
        raise AssertionError("no error")


def test_ssacli_logical_drives_using_the_controller_cache_are_write_back():
    found = controller_cache.parse_ssacli(fixture("ssacli_two_logical_drives.txt"))
    assert [(d["name"], d["raid"], d["state"], d["cache"], d["write_policy"], d["os_drive"]) for d in found] == [
        ("Smart Array P822 in Slot 2, logical drive 1", "5", "OK", "Enabled", "write back", "/dev/sda"),
        ("Smart Array P822 in Slot 2, logical drive 2", "1", "OK", "Enabled", "write back", "/dev/sdb")]
    assert found[0]["disk_cache_policy"] == "Disabled"


def test_ssacli_write_through_when_the_cache_gives_writes_nothing_or_is_disabled():
    text = fixture("ssacli_two_logical_drives.txt")
    no_writes = controller_cache.parse_ssacli(text.replace("10% Read / 90% Write", "100% Read / 0% Write"))
    assert {d["write_policy"] for d in no_writes} == {"write through"}
    disabled = controller_cache.parse_ssacli(text.replace("Cache Status: OK", "Cache Status: Temporarily Disabled"))
    assert {d["write_policy"] for d in disabled} == {"write through"}


def test_ssacli_hba_mode_has_no_logical_drives():
    assert controller_cache.parse_ssacli(fixture("ssacli_hba_mode.txt")) == []


def test_summary_lines():
    assert controller_cache.summary([]) == "no RAID controller tool found (storcli, perccli, ssacli)"
    tool = {"name": "storcli", "error": None, "virtual_drives": storcli()[:3]}
    assert controller_cache.summary([tool]) == (
        "storcli: c0/v0 write back (/dev/sda), c0/v1 write back (/dev/sdb), c0/v2 write through (/dev/sdc)")
    hba = {"name": "ssacli", "error": None, "virtual_drives": []}
    failed = {"name": "perccli", "error": "exit status 1: no controller", "virtual_drives": []}
    assert controller_cache.summary([failed, hba]) == "perccli: exit status 1: no controller; ssacli: no virtual drives"
