"""The gate filters as a playbook calls them: positional arguments, formats, errors."""

import json

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.cephops.osd_tuning.plugins.filter import gate_plan, gate_report, queue_plan


def test_filters_are_registered_under_their_names():
    assert set(gate_plan.FilterModule().filters()) == {"gate_candidates", "gate_plan", "gate_host"}
    assert set(gate_report.FilterModule().filters()) == {"gate_report"}
    assert set(queue_plan.FilterModule().filters()) == {"named_disks", "queue_plan", "write_cache_rules"}


def test_candidates_to_record_to_every_format():
    disks = [{"name": "sdb", "path": "/dev/sdb", "links": ["/dev/sdb"], "removable": False, "size_bytes": 10 ** 12,
              "partitions": [], "holders": [], "mountpoints": [], "rotational": False, "gate_class": "flash"}]
    candidates = gate_plan.gate_candidates(disks, {"osd_auto_discovery": True})
    start = {"ansible_job_id": "1.2"}
    probed = {"device": "/dev/sdb", "verdict": "suitable", "reasons": [], "write_iops": 9000.0}
    done = {"ansible_job_id": "1.2", "finished": 1, "results": [probed]}
    record = gate_plan.gate_host({"candidates": candidates, "started": start, "finished": done}, "osd1",
                                 {"allow_marginal": False, "hdd_policy": "probe"})
    assert record["approved"] == ["/dev/sdb"]
    settings = {"policy": "block", "thresholds": {"flash": {"min_iops": 5000, "marginal_min_iops": 1000}}}
    outputs = dict((fmt, gate_report.gate_report([record], fmt, ["osd1"], settings, "now"))
                   for fmt in ("json", "junit", "markdown", "html", "cephadm_spec", "table"))
    assert json.loads(outputs["json"])["hosts"][0]["approved"] == ["/dev/sdb"]
    assert outputs["junit"].startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites')
    assert "/dev/sdb" in outputs["cephadm_spec"] and outputs["table"].startswith("osd1: passed")


def test_unknown_format_names_the_known_ones():
    with pytest.raises(AnsibleFilterError, match="unknown format pdf .one of cephadm_spec, html, json, junit, markdown, rook_storage, table."):
        gate_report.gate_report([], "pdf", [])


def test_gate_plan_gives_the_candidates_and_one_job_of_the_whole_disks_present_with_their_classes():
    def disk(name, rotational=False):
        return {"name": name, "path": "/dev/" + name, "links": ["/dev/" + name, "/dev/disk/by-id/wwn-" + name],
                "removable": False, "size_bytes": 10 ** 12, "partitions": [], "holders": [], "mountpoints": [],
                "rotational": rotational, "gate_class": "hdd" if rotational else "flash"}
    disks = [disk("sdb"), disk("sdc", rotational=True), disk("sdd"), disk("sde")]
    variables = {"devices": ["/dev/sdb", "/dev/sdc", "/dev/sdz"], "dedicated_devices": ["/dev/disk/by-id/wwn-sdd"]}
    # Names for overwriting by any name of the disk: its by-id link, its kernel name; sde is no candidate.
    plan = gate_plan.gate_plan(disks, variables, [], part_classes=["db"], hdd_policy="skip",
                               overwrite=["sdc", "/dev/disk/by-id/wwn-sdd", "/dev/disk/by-id/wwn-sde", "/dev/gone"])
    assert [c["device"] for c in plan["candidates"]] == ["/dev/sdb", "/dev/sdc", "/dev/sdz", "/dev/sdd"]
    assert plan["candidates"] == gate_plan.gate_candidates(disks, variables, [], ["db"])
    assert {k: v for k, v in plan.items() if k != "candidates"} == {
        "devices": ["/dev/sdb", "/dev/sdd"], "device_classes": {"/dev/sdb": "flash", "/dev/sdd": "db"},
        "overwrite_data": ["/dev/sdd"], "health_devices": ["/dev/sdb", "/dev/sdc", "/dev/sdd"],
        "not_candidates": ["/dev/sde", "/dev/gone"]}
    probed = gate_plan.gate_plan(disks, variables)
    assert probed["devices"] == ["/dev/sdb", "/dev/sdc", "/dev/sdd"] and probed["overwrite_data"] == []
    assert probed["device_classes"]["/dev/sdd"] == "flash"
