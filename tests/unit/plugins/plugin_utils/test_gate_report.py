"""gate_report: every report of the fleet document parsed back by its own reader."""

import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
import yaml

from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import gate_decision, gate_report
from gate_samples import HOSTILE, SETTINGS, candidate, finished_ok, fleet, record, result


def test_json_is_the_whole_document():
    assert json.loads(gate_report.to_json(fleet()))["summary"]["blocked"] == 1


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
    document = gate_decision.fleet_document(["osd1"], [chosen], SETTINGS)
    assert gate_report.to_table(document).splitlines()[-1] == (
        "disks chosen by: ceph-ansible's devices, ceph-ansible's dedicated_devices")
    assert "- Disks of osd1 chosen by ceph-ansible's devices, ceph-ansible's dedicated_devices." in (
        gate_report.to_markdown(document).splitlines())
    assert json.loads(gate_report.to_json(document))["hosts"][0]["chosen_by"] == ["devices", "dedicated_devices"]
    available = record([candidate("/dev/sdb", sources=("available",))], {})
    assert gate_report.host_table(available).splitlines()[-1] == (
        "disks chosen by: every disk disk_facts calls available (no explicit list, no ceph-ansible variable set)")
    assert gate_report.host_table(gate_decision.missing_record("osd2")).splitlines()[-1] == "disks chosen by: none"
