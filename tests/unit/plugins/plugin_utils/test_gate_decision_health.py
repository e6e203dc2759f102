"""The disk gate with the drives' health: smartctl outputs captured from real drives
(fixtures/smartctl/README.md) judged by smart_health, then decided and reported."""

import json
import os
import xml.etree.ElementTree as ET

import yaml

from ansible_collections.cephops.osd_tuning.plugins.modules import controller_cache, disk_health
from ansible_collections.cephops.osd_tuning.plugins.filter import gate_report
from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import gate_decision

import ceph_spec
from gate_samples import SETTINGS, candidate, finished_ok, job, result

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "smartctl")


def health_of(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        doc = json.load(handle)
    return disk_health.judge(doc, doc["smartctl"]["exit_status"])


# What the disk_health and controller_cache modules return for one host.
HEALTH = {"health": {"/dev/sdb": health_of("ST3500418AS_12.json"),
                     "/dev/sdc": health_of("KXG60ZNV512G_TOSHIBA_2.json"),
                     "/dev/sdd": health_of("virtio-vda.json"),
                     "/dev/sde": health_of("nvme-null-SAMSUNG_MZWLL3T2HAJQ-00005-nvme0.json")}}
CONTROLLERS = {"tools": [], "summary": controller_cache.summary([])}


def host(health=None, **settings):
    """One host's record: sdb to sdd probed suitable, sde an HDD not probed (hdd_policy skip)."""
    candidates = [candidate("/dev/sdb"), candidate("/dev/sdc"), candidate("/dev/sdd"),
                  candidate("/dev/sde", rotational=True)]
    fast = [result(device, "suitable", 9000.0) for device in ("/dev/sdb", "/dev/sdc", "/dev/sdd")]
    started, finished = job(finished_ok(*fast))
    return gate_decision.host_record("osd1", candidates, started, finished,
                                     dict(SETTINGS, hdd_policy="skip", **settings),
                                     HEALTH if health is None else health, CONTROLLERS)


def by_device(record):
    return dict((disk["device"], disk) for disk in record["disks"])


def test_failing_health_blocks_a_fast_disk():
    disks = by_device(host())
    assert (disks["/dev/sdb"]["verdict"], disks["/dev/sdb"]["decision"]) == ("unhealthy", "blocked")
    assert disks["/dev/sdb"]["reasons"][0] == "health: 304 reallocated sectors > 10"
    assert (disks["/dev/sdc"]["verdict"], disks["/dev/sdc"]["decision"]) == ("suitable", "approved")
    assert disks["/dev/sdc"]["health"]["status"] == "passed"


def test_an_unprobed_hdd_is_still_judged_by_its_health():
    disk = by_device(host())["/dev/sde"]
    assert (disk["verdict"], disk["decision"]) == ("unhealthy", "blocked")
    assert "health: NVMe critical warning: volatile memory backup failed" in disk["reasons"]


def test_unknown_health_passes_unless_required():
    assert by_device(host())["/dev/sdd"]["decision"] == "approved"
    disk = by_device(host(health_required=True))["/dev/sdd"]
    assert (disk["verdict"], disk["decision"]) == ("unhealthy", "blocked")
    assert disk["reasons"][0].startswith("health unknown (disk_gate_health_required): no SMART data")


def test_without_a_health_read_the_probe_decides():
    disks = by_device(host(health={}))
    assert disks["/dev/sdb"]["verdict"] == "suitable" and disks["/dev/sdb"]["health"] is None


def test_lvs_and_absent_disks_carry_no_health():
    lv = candidate("/dev/vg/lv", probe=False, reasons=["an LV"])
    record = gate_decision.host_record("osd1", [lv], {"skipped": True}, {}, SETTINGS, {"health": {"/dev/vg/lv": {}}})
    assert record["disks"][0]["health"] is None and record["disks"][0]["verdict"] == "not_probed"


def test_every_report_shows_health_and_the_controllers():
    document = gate_decision.fleet_document(["osd1"], [host()], SETTINGS, "2026-01-01T00:00:00Z")
    assert document["summary"]["unhealthy"] == 2
    assert json.loads(gate_report.to_json(document))["hosts"][0]["disks"][0]["health"]["values"][
        "reallocated_sectors"] == 304
    no_tool = "no RAID controller tool found (storcli, perccli, ssacli)"
    table = gate_report.to_table(document).splitlines()
    assert table[2].split()[:4] == ["/dev/sdb", "flash", "ssd", "unhealthy"] and "failed" in table[2].split()
    assert "RAID controllers: " + no_tool in table
    markdown = gate_report.to_markdown(document)
    assert "| failed | blocked | [health](%s#drive-health) |" % gate_report.REFUSALS_URL in markdown
    assert "- Health of osd1 /dev/sdb: failed: 304 reallocated sectors > 10." in markdown.splitlines()
    assert "- RAID controllers of osd1: " + no_tool + "." in markdown.splitlines()
    html = gate_report.to_html(document)
    assert "<td>failed: 304 reallocated sectors &gt; 10</td>" in html
    assert "<p>RAID controllers: " + no_tool + "</p>" in html
    suite = ET.fromstring(gate_report.to_junit(document).split("\n", 1)[1]).find("testsuite")
    assert suite.find("properties/property").get("value") == no_tool
    failure = [case.find("failure") for case in suite.findall("testcase") if case.get("name").startswith("/dev/sdb")][0]
    assert failure.get("type") == "unhealthy" and "304 reallocated sectors > 10" in failure.get("message")
    passed = [case for case in suite.findall("testcase") if case.get("name").startswith("/dev/sdc")][0]
    assert passed.find("system-out").text.splitlines()[0].endswith("health passed")


def test_the_cephadm_spec_says_why_each_unhealthy_disk_is_left_out():
    document = gate_decision.fleet_document(["osd1"], [host()], dict(SETTINGS, policy="exclude"))
    text = gate_report.to_cephadm_spec(document)
    assert text.splitlines()[:2] == [
        "# osd1 /dev/sdb: health failed: 304 reallocated sectors > 10",
        "# osd1 /dev/sde: health failed: SMART overall assessment: FAILED; NVMe critical warning: volatile memory "
        "backup failed"]
    assert [spec["spec"] for spec in yaml.safe_load_all(text)] == [{"data_devices": {"paths": ["/dev/sdc", "/dev/sdd"]},
                                                                    "crush_device_class": "ssd"}]
    # Health required: the disk without SMART data is left out with the reason too.
    required = gate_decision.fleet_document(["osd1"], [host(health_required=True)], dict(SETTINGS, policy="exclude"))
    assert "# osd1 /dev/sdd: health unknown: no SMART data: " in gate_report.to_cephadm_spec(required)
    assert ceph_spec.validate(text) == [("DriveGroupSpec", "osd.gated-osd1")]
