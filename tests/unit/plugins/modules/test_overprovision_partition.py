"""overprovision_partition module entry point: arguments and refusals that need no disk."""

from ansible_collections.cephops.osd_tuning.plugins.modules import overprovision_partition


def test_a_record_is_required(run_module):
    result = run_module(overprovision_partition.main, {"disks": [{"device": "/dev/sdb"}]})
    assert result["failed"] is True
    assert result["msg"] == "missing required arguments: record"


def test_a_reserve_outside_1_to_50_is_refused_before_any_disk_is_read(run_module, tmp_path):
    result = run_module(overprovision_partition.main, {
        "disks": [{"device": "/dev/cephops-missing", "reserve_percent": 0}, {"serial": "S4EW"}],
        "reserve_percent": 60, "record": str(tmp_path / "r.json")})
    assert result["failed"] is True and result["changed"] is False
    assert result["msg"] == ("{'device': '/dev/cephops-missing'}: reserve_percent 0.0 is outside 1-50; "
                             "{'serial': 'S4EW'}: reserve_percent 60.0 is outside 1-50; nothing was read or written")


def test_an_unknown_device_fails_naming_it(run_module, tmp_path):
    result = run_module(overprovision_partition.main, {"disks": [{"device": "/dev/cephops-missing"}],
                                                       "record": str(tmp_path / "r.json")})
    assert result["msg"] == "/dev/cephops-missing: no such device"


def test_a_record_of_another_kind_is_refused(run_module, tmp_path):
    record = tmp_path / "r.json"
    record.write_text('{"disks": []}')
    result = run_module(overprovision_partition.main, {"restore": True, "record": str(record)})
    assert result["msg"] == "%s: not a record of this module (disks is not a mapping)" % record
