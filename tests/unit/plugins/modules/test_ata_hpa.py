"""ata_hpa module entry point: arguments and refusals that need no ATA disk."""

from ansible_collections.cephops.osd_tuning.plugins.modules import ata_hpa


def test_percent_and_sectors_exclude_each_other(run_module):
    result = run_module(ata_hpa.main, {"disks": [{"device": "/dev/sdb", "reserve_percent": 20, "visible_sectors": 1000}]})
    assert result["failed"] is True
    assert "mutually exclusive: reserve_percent|visible_sectors found in disks" in result["msg"]


def test_an_entry_names_its_disk_once(run_module):
    result = run_module(ata_hpa.main, {"disks": [{"device": "/dev/sdb", "serial": "S4EW"}]})
    assert result["failed"] is True
    assert "mutually exclusive: serial|wwn|device found in disks" in result["msg"]
    result = run_module(ata_hpa.main, {"disks": [{"reserve_percent": 20}]})
    assert "one of the following is required: serial, wwn, device found in disks" in result["msg"]


def test_a_reserve_no_disk_could_take_is_refused_before_any_disk_is_read(run_module):
    result = run_module(ata_hpa.main, {"disks": [{"device": "/dev/cephops-missing"}], "reserve_percent": 1000})
    assert result["failed"] is True
    assert result["msg"] == ("{'device': '/dev/cephops-missing'}: reserve_percent 1000.0 is outside 0-90; "
                             "nothing was read or written")


def test_unknown_device_fails_naming_it(run_module):
    result = run_module(ata_hpa.main, {"disks": [{"device": "/dev/cephops-missing"}]})
    assert result["failed"] is True
    assert result["msg"] == "/dev/cephops-missing: no such device"
    assert result["changed"] is False and result["actions"] == []


def test_restore_needs_a_record(run_module):
    result = run_module(ata_hpa.main, {"restore": True})
    assert result["failed"] is True
    assert result["msg"] == "restore is True but all of the following are missing: record"


def test_nothing_listed_and_nothing_recorded_changes_nothing(run_module, tmp_path):
    assert run_module(ata_hpa.main, {})["changed"] is False
    result = run_module(ata_hpa.main, {"restore": True, "record": str(tmp_path / "none.json")})
    assert result["changed"] is False and result["missing"] == []
