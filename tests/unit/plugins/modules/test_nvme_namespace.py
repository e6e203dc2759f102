"""nvme_namespace module entry point: arguments and refusals that need no NVMe drive."""

from ansible_collections.cephops.osd_tuning.plugins.modules import nvme_namespace


def test_a_record_is_required(run_module):
    result = run_module(nvme_namespace.main, {"disks": [{"serial": "S64FNE0R123456"}]})
    assert result["failed"] is True
    assert result["msg"] == "missing required arguments: record"


def test_a_reserve_outside_1_to_50_is_refused_before_any_disk_is_read(run_module, tmp_path):
    result = run_module(nvme_namespace.main, {"disks": [{"serial": "S64FNE0R123456", "reserve_percent": 55}],
                                              "record": str(tmp_path / "r.json")})
    assert result["msg"] == "{'serial': 'S64FNE0R123456'}: reserve_percent 55.0 is outside 1-50; nothing was read or written"


def test_a_serial_no_disk_has_is_named(run_module, tmp_path):
    result = run_module(nvme_namespace.main, {"disks": [{"serial": "CEPHOPS-NO-SUCH-DISK"}],
                                              "record": str(tmp_path / "r.json")})
    assert result["msg"] == "entry {'serial': 'CEPHOPS-NO-SUCH-DISK'}: no disk of this host matches"
    assert result["changed"] is False and result["disks"] == []
