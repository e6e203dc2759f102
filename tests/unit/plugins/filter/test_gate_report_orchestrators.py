"""gate_report's outputs for the orchestrators, with each disk's CRUSH device class: the cephadm
spec, judged by Ceph's own spec code, and the Rook storage section, judged by Rook's CRD."""

import jsonschema
import pytest
import yaml

from ansible_collections.cephops.osd_tuning.plugins.filter import gate_report
from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import gate_decision
import ceph_spec
import rook_crd
from gate_samples import SETTINGS, candidate, finished_ok, record, result

WWN = "/dev/disk/by-id/wwn-0x5002538e40a1b2c3"
FLASH_US = {"completion": {"mean": 40.0, "p50": 40.0}, "sync": {"mean": 300.0, "p50": 300.0}}
SPINNING_US = {"completion": {"mean": 60.0, "p50": 60.0}, "sync": {"mean": 8000.0, "p50": 8000.0}}


def host_of(name, disks, db=False, **settings):
    """A host whose data disks are (device, rotational, latency) and, with DB, one shared DB disk."""
    candidates = [candidate(device, rotational=rotational, index=i, links=[WWN + str(i)])
                  for i, (device, rotational, _latency) in enumerate(disks)]
    results = [result(device, "suitable", 9000.0, rotational=rotational, latency_us=latency, serial="S%d" % i)
               for i, (device, rotational, latency) in enumerate(disks)]
    if db:
        candidates.append(candidate("/dev/nvme0n1", sources=["dedicated_devices"], roles=["db"]))
        results.append(result("/dev/nvme0n1", "suitable", 36000.0, transport="nvme", latency_us=FLASH_US))
    return record(candidates, finished_ok(*results), host=name, hdd_policy="probe", **settings)


def document_of(*records, **settings):
    return gate_decision.fleet_document([r["host"] for r in records], list(records), dict(SETTINGS, **settings),
                                        "2026-01-01T00:00:00Z")


def test_the_cephadm_spec_carries_each_class_and_splits_a_batch_of_two_classes():
    lying = host_of("osd1", [("/dev/sdb", True, FLASH_US), ("/dev/sdc", True, SPINNING_US)])
    text = gate_report.to_cephadm_spec(document_of(lying))
    specs = [doc for doc in yaml.safe_load_all(text) if doc]
    assert [(s["service_id"], s["spec"]["data_devices"]["paths"], s["spec"]["crush_device_class"]) for s in specs] == [
        ("gated-osd1-hdd", [WWN + "1"], "hdd"), ("gated-osd1-ssd", [WWN + "0"], "ssd")]
    assert "# osd1 /dev/sdb: device class ssd (the kernel calls it rotational, but a durable write took 0.34 ms" in text
    assert [kind for kind, _name in ceph_spec.validate(text)] == ["DriveGroupSpec"] * 2


def test_a_shared_db_disk_keeps_a_mixed_batch_in_one_spec_without_a_class():
    text = gate_report.to_cephadm_spec(document_of(host_of(
        "osd1", [("/dev/sdb", True, FLASH_US), ("/dev/sdc", True, SPINNING_US)], db=True)))
    specs = [doc for doc in yaml.safe_load_all(text) if doc]
    assert len(specs) == 1 and "crush_device_class" not in specs[0]["spec"]
    assert "# osd1: data disks of classes hdd, ssd share DB/WAL disks" in text
    ceph_spec.validate(text)


def test_the_rook_storage_section_names_only_the_gated_disks_by_stable_path_with_their_class():
    passed = host_of("osd1", [("/dev/sdb", True, FLASH_US), ("/dev/sdc", False, FLASH_US)], db=True,
                     cephadm_host="node-1.example.com")
    blocked = record([candidate("/dev/sdb")], finished_ok(result("/dev/sdb", "unsuitable", 500.0)), host="osd2")
    text = gate_report.to_rook_storage(document_of(passed, blocked))
    storage = rook_crd.validate(text)
    assert storage == {"useAllNodes": False, "useAllDevices": False, "nodes": [{"name": "node-1.example.com", "devices": [
        {"name": WWN + "0", "config": {"deviceClass": "ssd"}}, {"name": WWN + "1", "config": {"deviceClass": "ssd"}}]}]}
    assert "# osd1: DB/WAL disks /dev/nvme0n1 are not in this section" in text
    assert "# osd1 /dev/sdb: device class ssd (the kernel calls it rotational" in text
    # Under the exclude policy the blocked host's approved disks would be named; it has none.
    assert rook_crd.validate(gate_report.to_rook_storage(document_of(passed, blocked, policy="exclude")))["nodes"] == \
        storage["nodes"]


def test_a_fleet_without_gated_disks_names_no_node_and_uses_none():
    blocked = record([candidate("/dev/sdb")], finished_ok(result("/dev/sdb", "unsuitable", 500.0)), host="osd2")
    text = gate_report.to_rook_storage(document_of(blocked))
    assert rook_crd.validate(text) == {"useAllNodes": False, "useAllDevices": False, "nodes": []}
    assert "# no host has disks the gate lets through" in text


def test_rooks_schema_refuses_what_it_does_not_name():
    with pytest.raises(jsonschema.ValidationError):
        rook_crd.validate("storage: {useAllDevices: false, nodes: [{name: n, devices: [{name: x, deviceClass: ssd}]}]}")
    with pytest.raises(jsonschema.ValidationError):
        rook_crd.validate("storage: {useAllDevices: false, nodes: [{name: n, devices: [{name: x, config: "
                          "{deviceClass: 1}}]}]}")


def test_every_report_flags_a_class_its_measurement_decided():
    document = document_of(host_of("osd1", [("/dev/sdb", True, FLASH_US)]))
    said = "ssd, measured: the kernel calls it rotational, but a durable write took 0.34 ms (median)"
    assert "device class of /dev/sdb: " + said in gate_report.to_table(document)
    assert "- Device class of osd1 /dev/sdb: " + said in gate_report.to_markdown(document)
    assert "Device class of /dev/sdb: " + said in gate_report.to_html(document)
    assert "device class " + said in gate_report.to_junit(document)
    assert gate_report.to_json(document).count('"flagged": true') == 1
