"""gate_decision.device_class: the CRUSH class each disk gets, from its kernel flag, what it
measured or the operator's pin, and what ceph-ansible's handover carries of it."""

import pytest

from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import gate_decision
from gate_samples import candidate, finished_ok, record, result


def latency(write_us, sync_us):
    return {"completion": {"mean": write_us, "p50": write_us, "p99": write_us * 2, "p99_9": write_us * 3},
            "sync": {"mean": sync_us, "p50": sync_us, "p99": sync_us * 2, "p99_9": sync_us * 3}}


def disk_of(rotational, write_us, sync_us, transport="sata", **settings):
    found = record([candidate("/dev/sdb", rotational=rotational)], finished_ok(result(
        "/dev/sdb", "suitable", 1000.0, transport=transport, rotational=rotational, serial="S1", wwn="0x5000c500a1b2c3d4",
        latency_us=latency(write_us, sync_us))), **settings)
    return found["disks"][0]


@pytest.mark.parametrize("rotational, write_us, sync_us, transport, expected", [
    # Flash behind a flag that says it spins: measured, flagged.
    (True, 40.0, 300.0, "sata", ("ssd", "measured", "hdd", "flash", True)),
    (True, 20.0, 60.0, "nvme", ("nvme", "measured", "hdd", "flash", True)),
    # A spinning disk that says so, and flash that says so: the kernel's class, nothing flagged.
    (True, 60.0, 8000.0, "sas", ("hdd", "kernel", "hdd", "spinning", False)),
    (False, 40.0, 300.0, "sata", ("ssd", "kernel", "ssd", "flash", False)),
    # Flash as slow as a spinning disk: flagged, and it keeps its class.
    (False, 100.0, 5000.0, "sata", ("ssd", "kernel", "ssd", "spinning", True)),
    # Between the bounds a figure decides nothing.
    (True, 100.0, 2000.0, "sata", ("hdd", "kernel", "hdd", None, False)),
])
def test_the_class_follows_the_measurement_where_the_flag_says_it_spins(rotational, write_us, sync_us, transport,
                                                                        expected):
    found = disk_of(rotational, write_us, sync_us, transport)["device_class"]
    assert (found["class"], found["source"], found["kernel"], found["measured"], found["flagged"]) == expected
    assert found["durable_write_ms"] == round((write_us + sync_us) / 1000.0, 3)
    if found["flagged"]:
        assert "%s ms (median)" % found["durable_write_ms"] in found["why"]


def test_the_bounds_are_those_of_a_spinning_disk():
    assert disk_of(True, 500.0, 500.0)["device_class"]["measured"] == "flash"  # 1 ms: 60 000 rpm would be needed
    assert disk_of(True, 500.0, 501.0)["device_class"]["measured"] is None
    assert disk_of(False, 2000.0, 2000.0)["device_class"]["measured"] == "spinning"


def test_behind_a_write_back_controller_cache_the_figure_decides_nothing():
    controllers = {"tools": [{"name": "storcli", "virtual_drives": [
        {"os_drive": "/dev/sdb", "write_policy": "write back"}]}]}
    found = gate_decision.host_record("osd1", [candidate("/dev/sdb", rotational=True)], *record_job(), settings={},
                                      controllers=controllers)["disks"][0]["device_class"]
    assert (found["class"], found["measured"], found["flagged"]) == ("hdd", None, False)
    assert "write-back controller cache" in found["why"]


def record_job():
    return ({"ansible_job_id": "j1"}, {"ansible_job_id": "j1", "finished": 1, "results": [result(
        "/dev/sdb", "suitable", 9000.0, rotational=True, latency_us=latency(30.0, 60.0))]})


def test_a_pin_wins_by_disk_then_by_model():
    models = [{"model": "INTEL SSD*", "class": "nvme"}]
    assert disk_of(True, 40.0, 300.0, device_class_models=models)["device_class"]["class"] == "nvme"
    pinned = disk_of(True, 40.0, 300.0, device_class_models=models,
                     device_class_overrides=[{"wwn": "0x5000c500a1b2c3d4", "class": "hdd"}])["device_class"]
    assert (pinned["class"], pinned["source"]) == ("hdd", "pinned")
    assert "disk_gate_device_class_overrides" in pinned["why"] and pinned["flagged"], "the flag still shows"
    assert disk_of(True, 40.0, 300.0, device_class_models=[{"model": "SAMSUNG*", "class": "hdd"}])[
        "device_class"]["class"] == "ssd", "a pattern that does not match pins nothing"


def test_dd_gives_a_mean_and_no_fsync_of_its_own():
    assert gate_decision.durable_write_ms({"completion": {"mean": 800.0, "p50": None}, "sync": None}) == 0.8
    assert gate_decision.durable_write_ms(None) is None


def test_ceph_ansible_gets_the_batch_class_where_its_data_disks_share_one_and_each_lvm_entry_its_own():
    flash = dict(rotational=True, latency_us=latency(40.0, 300.0))
    slow = dict(rotational=True, latency_us=latency(60.0, 8000.0))
    same = record([candidate("/dev/sdb", rotational=True), candidate("/dev/sdc", rotational=True, index=1)],
                  finished_ok(result("/dev/sdb", "suitable", 9000.0, **flash), result("/dev/sdc", "suitable", 9000.0, **flash)),
                  hdd_policy="probe")
    assert same["handover"]["crush_device_class"] == "ssd"
    mixed = record([candidate("/dev/sdb", rotational=True), candidate("/dev/sdc", rotational=True, index=1)],
                   finished_ok(result("/dev/sdb", "suitable", 9000.0, **flash), result("/dev/sdc", "suitable", 90.0, **slow)))
    assert "crush_device_class" not in mixed["handover"], "ceph-volume's batch takes one class"
    lvm = record([candidate("/dev/sdb", rotational=True, sources=["lvm_volumes"]),
                  candidate("/dev/sdc", rotational=True, sources=["lvm_volumes"], index=1)],
                 finished_ok(result("/dev/sdb", "suitable", 9000.0, **flash), result("/dev/sdc", "suitable", 90.0, **slow)))
    assert lvm["handover"]["lvm_volumes"] == [0, 1]
    assert lvm["lvm_volumes_classes"] == [{"crush_device_class": "ssd"}, {"crush_device_class": "hdd"}]
