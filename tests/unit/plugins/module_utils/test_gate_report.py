"""gate_report: decisions from probe jobs, and every report parsed back by its own reader."""

import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
import yaml

from ansible_collections.cephops.osd_tuning.plugins.module_utils import gate_report

FLASH = {"min_iops": 5000, "marginal_min_iops": 1000, "max_p99_sync_latency_ms": 1.0,
         "marginal_max_p99_sync_latency_ms": 5.0}
HDD = {"min_iops": 50, "marginal_min_iops": 20, "max_p99_sync_latency_ms": 100.0,
       "marginal_max_p99_sync_latency_ms": 250.0}
SETTINGS = {"policy": "block", "allow_marginal": False, "hdd_policy": "probe", "thresholds": {"flash": FLASH, "hdd": HDD},
            "cephadm_service_id": "gated"}
HOSTILE = '<script>alert("x")</script> & "Evo" \x01|pipe'


def candidate(device, rotational=False, sources=("devices",), roles=("data",)):
    return {"device": device, "given": [device], "sources": list(sources), "roles": list(roles),
            "rotational": rotational}


def result(device, verdict, iops=None, model="INTEL SSDSC2BB016T4", **extra):
    found = {"device": device, "name": device.rsplit("/", 1)[-1], "model": model, "serial": "S" + device[-1],
             "verdict": verdict, "reasons": ["because %s" % verdict], "write_iops": iops,
             "p99_sync_latency_ms": 0.265 if iops else None, "runtime_ms": 15000 if iops else None,
             "cached": False, "cache_age_seconds": None, "plp": {"hint": "fsync costs little"}}
    found.update(extra)
    return found


def jobs(groups):
    """Registered results of the async start task and of async_status, as Ansible returns them."""
    started, finished = [], []
    for number, (group, status) in enumerate(sorted(groups.items())):
        start = {"group": {"class": group}, "ansible_job_id": "j%d" % number, "started": 1, "finished": 0}
        started.append(start)
        finished.append(dict(status, job=start, ansible_job_id="j%d" % number))
    return started, finished


def record(candidates, groups, host="osd1", **settings):
    started, finished = jobs(groups)
    return gate_report.host_record(host, candidates, started, finished, dict(SETTINGS, **settings))


def finished_ok(*results):
    return {"finished": 1, "changed": True, "results": list(results)}


def test_only_suitable_passes_and_marginal_when_allowed():
    candidates = [candidate("/dev/sdb"), candidate("/dev/sdc"), candidate("/dev/sdd"), candidate("/dev/sde")]
    probe = finished_ok(result("/dev/sdb", "suitable", 8713.0), result("/dev/sdc", "marginal", 1500.0),
                        result("/dev/sdd", "unsuitable", 574.0), result("/dev/sde", "refused", reasons=["Has GPT headers"]))
    strict = record(candidates, {"flash": probe})
    assert (strict["approved"], strict["blocked"], strict["passed"]) == (
        ["/dev/sdb"], ["/dev/sdc", "/dev/sdd", "/dev/sde"], False)
    lenient = record(candidates, {"flash": probe}, allow_marginal=True)
    assert lenient["approved"] == ["/dev/sdb", "/dev/sdc"]
    assert lenient["devices"] == ["/dev/sdb", "/dev/sdc"]


def test_errors_fail_closed():
    candidates = [candidate("/dev/sdb"), candidate("/dev/sdc"), candidate("/dev/sdd", rotational=True)]
    probe = finished_ok(result("/dev/sdb", "error", reasons=["fio did not finish within 75 s; killed"]))
    lost = {"unreachable": True, "msg": "ssh: connection reset"}
    found = record(candidates, {"flash": probe, "hdd": lost})
    by_device = {d["device"]: d for d in found["disks"]}
    assert by_device["/dev/sdb"]["approved"] is False
    assert by_device["/dev/sdc"]["reasons"] == ["the probe returned no result for this disk"]
    assert by_device["/dev/sdd"]["reasons"] == ["host unreachable during the probe: ssh: connection reset"]
    assert found["status"] == "error" and found["approved"] == [] and not found["passed"]


@pytest.mark.parametrize("status,error", [
    ({"finished": 1, "failed": True, "msg": "Failed to find required executable \"fio\""},
     'the probe failed: Failed to find required executable "fio"'),
    ({"finished": 1, "failed": 1, "msg": "Timeout exceeded"}, "the probe failed: Timeout exceeded"),
    ({"finished": 0, "started": 1}, "the probe failed: unfinished"),
    # What the role's poll really returns for a module failure: finished, failed cleared by failed_when.
    ({"finished": 1, "failed": False, "changed": False, "msg": "marginal_min_iops must not exceed min_iops"},
     "the probe failed: marginal_min_iops must not exceed min_iops"),
])
def test_failed_or_timed_out_jobs_block_every_disk_of_their_class(status, error):
    found = record([candidate("/dev/sdb")], {"flash": status})
    assert (found["disks"][0]["verdict"], found["disks"][0]["reasons"], found["blocked"]) == ("error", [error], ["/dev/sdb"])


def test_unreachable_at_start_blocks_too():
    start = {"group": {"class": "flash"}, "unreachable": True, "msg": "Failed to connect"}
    found = gate_report.host_record("osd1", [candidate("/dev/sdb")], [start], [], SETTINGS)
    assert found["disks"][0]["reasons"] == ["host unreachable when the probe started: Failed to connect"]


def test_hdd_skip_passes_ungated_and_hdd_probe_uses_its_own_job():
    candidates = [candidate("/dev/sdb"), candidate("/dev/sdd", rotational=True)]
    skipped = record(candidates, {"flash": finished_ok(result("/dev/sdb", "suitable", 9000.0))}, hdd_policy="skip")
    hdd = skipped["disks"][1]
    assert (hdd["class"], hdd["verdict"], hdd["approved"], hdd["gated"]) == ("hdd", "skipped", True, False)
    probed = record(candidates, {"flash": finished_ok(result("/dev/sdb", "suitable", 9000.0)),
                                 "hdd": finished_ok(result("/dev/sdd", "suitable", 120.0))})
    assert probed["approved"] == ["/dev/sdb", "/dev/sdd"] and probed["disks"][1]["gated"] is True


def test_check_mode_plan_is_pending_not_approved():
    found = record([candidate("/dev/sdb")], {"flash": finished_ok(result("/dev/sdb", None))})
    assert (found["pending"], found["approved"], found["blocked"], found["passed"]) == (["/dev/sdb"], [], [], False)


def test_exclude_may_drop_only_data_devices():
    candidates = [candidate("/dev/sdb"), candidate("/dev/sdc"), candidate("/dev/nvme0n1", sources=["dedicated_devices"],
                                                                          roles=["db"]),
                  candidate("/dev/sdd", sources=["lvm_volumes"])]
    found = record(candidates, {"flash": finished_ok(
        result("/dev/sdb", "suitable", 9000.0), result("/dev/sdc", "unsuitable", 500.0),
        result("/dev/nvme0n1", "unsuitable", 600.0), result("/dev/sdd", "suitable", 9000.0))})
    assert found["devices"] == ["/dev/sdb"]
    assert found["blocked_not_droppable"] == ["/dev/nvme0n1"]


def fleet(records=None, hosts=None):
    if records is None:
        candidates = [candidate("/dev/sdb"), candidate("/dev/sdc"), candidate("/dev/nvme0n1", sources=["dedicated_devices"],
                                                                              roles=["db"])]
        good = record(candidates, {"flash": finished_ok(
            result("/dev/sdb", "suitable", 8713.0), result("/dev/sdc", "unsuitable", 574.0, model=HOSTILE),
            result("/dev/nvme0n1", "suitable", 36600.0, cached=True, cache_age_seconds=7200))}, host="osd1")
        records = [good, None]
    hosts = hosts or ["osd1", "osd<2>"]
    return gate_report.fleet_document(hosts, records, SETTINGS, "2026-01-01T00:00:00Z")


def test_host_without_record_is_listed_as_not_passed():
    document = fleet()
    lost = document["hosts"][1]
    assert (lost["host"], lost["status"], lost["passed"]) == ("osd<2>", "no_result", False)
    assert lost["errors"] == [gate_report.NO_RESULT]
    assert document["summary"] == {"hosts": 2, "hosts_passed": 0, "hosts_without_result": 1, "disks": 3,
                                   "approved": 2, "blocked": 1, "pending": 0, "cached": 1}
    assert json.loads(gate_report.to_json(document))["summary"]["blocked"] == 1


def test_junit_parses_back_with_a_failure_per_blocked_disk():
    root = ET.fromstring(gate_report.to_junit(fleet()).encode("utf-8"))
    assert (root.tag, root.get("tests"), root.get("failures")) == ("testsuites", "4", "2")
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["osd1", "osd<2>"]
    cases = suites[0].findall("testcase")
    assert [c.find("failure") is not None for c in cases] == [False, True, False]
    failing = cases[1]
    # The control character is replaced, everything else comes back exactly.
    assert failing.get("name") == "/dev/sdc (%s)" % HOSTILE.replace("\x01", "\ufffd")
    assert failing.find("failure").get("type") == "unsuitable"
    assert suites[1].find("testcase/failure").get("type") == "no_result"


def test_html_escapes_hostile_model_names_and_carries_an_svg_chart():
    page = gate_report.to_html(fleet())
    assert "<script>" not in page and "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "osd&lt;2&gt;" in page and "<osd<2>" not in page

    class Collect(HTMLParser):
        def __init__(self):
            HTMLParser.__init__(self)
            self.tags, self.texts = [], []

        def handle_starttag(self, tag, attrs):
            self.tags.append(tag)

        def handle_data(self, data):
            self.texts.append(data)

    parser = Collect()
    parser.feed(page)
    assert "script" not in parser.tags
    assert parser.tags.count("svg") == 2 and "rect" in parser.tags
    assert any(HOSTILE.replace("\x01", "\ufffd") in text for text in parser.texts)
    # One bar per measured disk, threshold lines and all six reference drives.
    svg = page[page.index("<svg"):page.index("</svg>") + 6]
    chart = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert len(chart.findall(".//%srect" % ns)) == 3
    titles = [t.text for t in chart.iter(ns + "title")]
    assert "flash suitable from 5 000 IOPS" in titles and any(t.startswith("R6 Kioxia CD6: 36 600 IOPS") for t in titles)


def test_svg_places_bars_on_a_log_scale():
    assert gate_report._x(10) == gate_report.CHART["label_width"]
    assert gate_report._x(100000) == gate_report.CHART["label_width"] + gate_report.CHART["plot_width"]
    assert gate_report._x(1000) == pytest.approx(gate_report.CHART["label_width"] + gate_report.CHART["plot_width"] / 2)
    assert gate_report._x(10 ** 9) == gate_report._x(100000)


def test_markdown_escapes_cells():
    text = gate_report.to_markdown(fleet())
    row = [line for line in text.splitlines() if "/dev/sdc" in line][0]
    assert "&lt;script&gt;" in row and "\\|pipe" in row and row.count(" | ") == 9
    assert "| osd&lt;2&gt; | - |" in text


def test_cephadm_spec_lists_approved_disks_per_host():
    documents = list(yaml.safe_load_all(gate_report.to_cephadm_spec(fleet())))
    assert documents == [{
        "service_type": "osd", "service_id": "gated_osd1", "placement": {"hosts": ["osd1"]},
        "spec": {"data_devices": {"paths": ["/dev/sdb"]}, "db_devices": {"paths": ["/dev/nvme0n1"]}},
    }]


def test_cephadm_spec_without_approved_disks_is_empty():
    assert list(yaml.safe_load_all(gate_report.to_cephadm_spec(fleet([None], ["osd1"])))) == []


def test_text_table_names_every_disk_and_reason():
    lines = gate_report.to_table(fleet()).splitlines()
    assert lines[0] == "osd1: not passed"
    assert lines[1].split() == ["DEVICE", "CLASS", "VERDICT", "SYNC", "IOPS", "P99", "MS", "CACHED", "DECISION", "REASONS"]
    assert lines[3].split()[:5] == ["/dev/sdc", "flash", "unsuitable", "574", "0.265"]
    assert lines[3].endswith("because unsuitable")
    assert "yes (2 h old)" in lines[4]


def test_every_report_says_which_rule_chose_the_disks():
    chosen = record([candidate("/dev/sdb", sources=("devices",)), candidate("/dev/sdc", sources=("devices",)),
                     candidate("/dev/nvme0n1", sources=("dedicated_devices",), roles=("db",))],
                    {"flash": finished_ok(result("/dev/sdb", "suitable", 9000))})
    assert chosen["chosen_by"] == ["devices", "dedicated_devices"]
    document = gate_report.fleet_document(["osd1"], [chosen], SETTINGS)
    assert gate_report.to_table(document).splitlines()[-1] == (
        "disks chosen by: ceph-ansible's devices, ceph-ansible's dedicated_devices")
    assert "- Disks of osd1 chosen by ceph-ansible's devices, ceph-ansible's dedicated_devices." in (
        gate_report.to_markdown(document).splitlines())
    assert json.loads(gate_report.to_json(document))["hosts"][0]["chosen_by"] == ["devices", "dedicated_devices"]
    available = record([candidate("/dev/sdb", sources=("available",))], {})
    assert gate_report.host_table(available).splitlines()[-1] == (
        "disks chosen by: every disk disk_facts calls available (no explicit list, no ceph-ansible variable set)")
    assert gate_report.host_table(gate_report.missing_record("osd2")).splitlines()[-1] == "disks chosen by: none"
