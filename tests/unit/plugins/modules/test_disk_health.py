"""smart_health on smartctl JSON captured from real drives (fixtures/smartctl/README.md)."""

import copy
import json
import os

import pytest

from ansible_collections.cephops.osd_tuning.plugins.modules import disk_health

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "smartctl")


def load(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return json.load(handle)


def judge(name, **thresholds):
    doc = load(name)
    return disk_health.judge(doc, doc["smartctl"]["exit_status"], thresholds)


def test_reallocated_sectors_above_the_default_fail():
    result = judge("ST3500418AS_12.json")
    assert result["status"] == "failed"
    assert result["reasons"] == ["304 reallocated sectors > 10"]
    assert result["values"]["smart_passed"] is True
    assert result["values"]["pending_sectors"] == 0


def test_reallocated_threshold_is_honoured():
    assert judge("ST3500418AS_12.json", max_reallocated_sectors=304)["status"] == "passed"


def test_reported_uncorrectable_error_fails():
    result = judge("MB0500EBNCR_13.json")
    assert result["status"] == "failed"
    assert result["reasons"] == ["1 uncorrectable sectors or errors > 0"]


def test_nvme_critical_warning_and_failed_assessment():
    result = judge("nvme-null-SAMSUNG_MZWLL3T2HAJQ-00005-nvme0.json")
    assert result["status"] == "failed"
    assert result["exit_status"] == 8
    assert result["reasons"] == ["SMART overall assessment: FAILED",
                                 "NVMe critical warning: volatile memory backup failed"]
    assert result["values"]["media_errors"] == 0


def test_scsi_grown_defects_count_as_reallocated():
    result = judge("SEAGATE_ST373453LC_26.json")
    assert result["values"]["reallocated_sectors"] == 260
    assert result["values"]["power_on_hours"] == 102880
    assert result["status"] == "failed"
    assert "260 reallocated sectors > 10" in result["reasons"]


def test_power_on_hours_judged_only_when_set():
    assert "102880 power-on hours > 50000" in judge("SEAGATE_ST373453LC_26.json", max_power_on_hours=50000)["reasons"]


def test_endurance_used():
    assert judge("nvme-null-INTEL_SSDPE2KX020T7-nvme6.json")["status"] == "passed"
    result = judge("nvme-null-INTEL_SSDPE2KX020T7-nvme6.json", max_percentage_used=70)
    assert result["reasons"] == ["75 % of rated endurance used > 70"]


def test_error_log_records_are_a_note_not_a_failure():
    result = judge("HGST_HUS724020ALE640_28.json")
    assert result["exit_status"] == 64
    assert result["status"] == "passed"
    assert result["notes"] == ["the error log has records"]


def test_healthy_nvme_passes_with_values():
    result = judge("KXG60ZNV512G_TOSHIBA_2.json")
    assert result["status"] == "passed", result
    assert result["values"]["critical_warning"] == 0
    assert result["values"]["percentage_used"] is not None


def test_pending_sectors_fail():
    doc = copy.deepcopy(load("ST3500418AS_12.json"))
    for attribute in doc["ata_smart_attributes"]["table"]:
        if attribute["id"] == 197:
            attribute["raw"]["value"] = 8
    result = disk_health.judge(doc, 0, {"max_reallocated_sectors": 1000})
    assert result["reasons"] == ["8 pending sectors > 0"]


def test_virtio_disk_is_unknown_with_smartctls_reason():
    result = judge("virtio-vda.json")
    assert result["status"] == "unknown"
    assert result["reasons"] == ["no SMART data: /dev/vda: Unable to detect device type"]


@pytest.mark.parametrize("bit, status", [(0x01, "unknown"), (0x02, "unknown"), (0x08, "failed"), (0x10, "failed"),
                                         (0x80, "failed"), (0x04, "passed"), (0x20, "passed"), (0x40, "passed")])
def test_exit_status_bits(bit, status):
    assert disk_health.judge(load("KXG60ZNV512G_TOSHIBA_2.json"), bit)["status"] == status


def test_command_is_an_argv_list():
    assert disk_health.command("/usr/sbin/smartctl", "/dev/sdb") == ["/usr/sbin/smartctl", "-j", "-a", "/dev/sdb"]
