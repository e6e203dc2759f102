"""ata_hpa module entry point: arguments and refusals that need no ATA disk."""

from ansible_collections.cephops.osd_tuning.plugins.modules import ata_hpa


def test_a_size_is_required_to_reserve(run_module):
    result = run_module(ata_hpa.main, {"device": "/dev/sdb"})
    assert result["failed"] is True
    assert result["msg"] == "state is present but any of the following are missing: reserve_percent, visible_sectors"


def test_percent_and_sectors_exclude_each_other(run_module):
    result = run_module(ata_hpa.main, {"device": "/dev/sdb", "reserve_percent": 20, "visible_sectors": 1000})
    assert result["failed"] is True
    assert "mutually exclusive: reserve_percent|visible_sectors" in result["msg"]


def test_unknown_device_fails_naming_it(run_module):
    result = run_module(ata_hpa.main, {"device": "/dev/cephops-missing", "state": "absent"})
    assert result["failed"] is True
    assert result["msg"] == "/dev/cephops-missing: no such device"
    assert result["changed"] is False and result["actions"] == []
