"""gate_report: every report of the fleet document parsed back by its own reader."""

import html
import json
import pathlib
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import markdown_it
import pytest
import yaml

from ansible_collections.cephops.osd_tuning.plugins.filter import gate_report
from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev, probe_verdict
from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import ceph_ansible, gate_decision
import ceph_spec
from gate_samples import (HOSTILE, MODEL, OTHER, SETTINGS, candidate, finished_ok, fleet, fleet_of, record, result,
                          same_model)


def hostile_fleet():
    """A fleet where every string that comes from hardware, the inventory or the settings is
    hostile to some format, and looks like markup of another (Jinja2 included)."""
    text = HOSTILE + " {{ 7 * 7 }} {% raw %} yes: no\n- [x]"
    candidates = [candidate("/dev/sdb"),
                  candidate("/dev/disk/by-id/" + text, sources=("dedicated_devices",), roles=("db",))]
    probed = record(candidates, finished_ok(
        result("/dev/sdb", "suitable", 9000.0, model=text, serial=text, reasons=[text, text]),
        result("/dev/disk/by-id/" + text, "unsuitable", 500.0, model=text)), host=text, cephadm_host=text)
    broken = record(candidates, {"finished": 1, "failed": True, "msg": text}, host="osd2")
    return text, gate_decision.fleet_document([text, "osd2", "lost<" + text], [probed, broken],
                                              dict(SETTINGS, policy=text, cephadm_service_id=text), text)


def shown(text):
    """What a report can show of a hostile string: XML has no place for its control character."""
    return text.replace("\x01", "\ufffd")


def test_json_is_the_whole_document():
    assert json.loads(gate_report.to_json(fleet()))["summary"]["blocked"] == 1
    document = hostile_fleet()[1]
    assert json.loads(gate_report.to_json(document)) == json.loads(json.dumps(document))


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


def test_html_of_a_hostile_fleet_has_only_the_report_s_own_tags():
    text, document = hostile_fleet()
    page = gate_report.to_html(document)

    class Collect(HTMLParser):
        def __init__(self):
            HTMLParser.__init__(self)
            self.tags, self.texts, self.attributes = set(), [], []

        def handle_starttag(self, tag, attrs):
            self.tags.add(tag)
            self.attributes += [value for name, value in attrs]

        def handle_data(self, data):
            self.texts.append(data)

    parser = Collect()
    parser.feed(page)
    assert parser.tags == {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "ul", "li", "span", "a",
                           "svg", "line", "text", "g", "rect", "table", "tr", "th", "td"}
    assert shown(text) in parser.texts and "49" not in parser.texts
    assert shown(text) in parser.attributes  # the heading's id
    # Every host's chart is well-formed XML, with one bar per measured disk.
    ns = "{http://www.w3.org/2000/svg}"
    charts = [ET.fromstring(page[start:page.index("</svg>", start) + 6])
              for start in (i for i in range(len(page)) if page.startswith("<svg", i))]
    assert [len(chart.findall(".//%srect" % ns)) for chart in charts] == [2, 0, 0]
    # XML reads a newline in an attribute as a space.
    assert charts[0].get("aria-label") == "sync write IOPS of " + shown(text).replace("\n", " ")


def test_svg_of_a_host_without_disks_shows_its_errors():
    entry = gate_decision.missing_record("osd<9>")
    chart = ET.fromstring(gate_report.host_svg(entry, SETTINGS, gate_decision.REFERENCE_DRIVES))
    texts = [t.text for t in chart.iter("{http://www.w3.org/2000/svg}text")]
    assert gate_decision.NO_RESULT in texts and "R6" in texts
    assert chart.get("height") == str(gate_report.CHART["top"] + gate_report.CHART["row"] + gate_report.CHART["bottom"])


def test_svg_places_bars_on_a_log_scale():
    assert gate_report._x(10) == gate_report.CHART["label_width"]
    assert gate_report._x(100000) == gate_report.CHART["label_width"] + gate_report.CHART["plot_width"]
    assert gate_report._x(1000) == pytest.approx(gate_report.CHART["label_width"] + gate_report.CHART["plot_width"] / 2)
    assert gate_report._x(10 ** 9) == gate_report._x(100000)


def md_escaped(text):
    """A hostile string as a Markdown cell holds it: on one line, tags and references escaped."""
    return " ".join(shown(text).replace("<s", "&lt;s").replace("</", "&lt;/").split())


def test_markdown_escapes_cells():
    text = gate_report.to_markdown(fleet())
    row = [line for line in text.splitlines() if "/dev/sdc" in line][0]
    assert "&lt;script>" in row and "&lt;/script>" in row and "\\|pipe" in row and row.count(" | ") == 13
    # No tag starts with a digit: shown as written.
    assert "| osd<2> | - |" in text


def test_markdown_keeps_comparisons_as_written():
    """The gate's reasons read the same in the file and rendered: no &gt; or &lt; for >= and <."""
    reasons = ["write IOPS 50.8 < 80 (below the marginal floor 62)", "write IOPS 213.6 >= 80; p99 sync latency "
               "13.697 ms <= 100 ms", "fsync costs 0.266 ms, between a protected cache (<0.25 ms) and a flush"]
    probed = record([candidate("/dev/sdb")], finished_ok(
        result("/dev/sdb", "unsuitable", 50.8, reasons=reasons)))
    text = gate_report.to_markdown(gate_decision.fleet_document(["osd1"], [probed], SETTINGS, "now"))
    assert "&gt;" not in text and "&lt;" not in text
    assert markdown_rows(text)[0][13] == "[iops](%s#sync-write-iops-below-the-threshold)" % gate_report.REFUSALS_URL
    assert "- Reasons of osd1 /dev/sdb: %s." % "; ".join(reasons) in text.splitlines()


def test_markdown_rendered_shows_hostile_strings_as_text_and_makes_no_element():
    """A CommonMark renderer (markdown-it-py, tables on) turns the hostile fleet's report into
    table cells whose text is each string as given, and into no element outside the table's."""
    text, document = hostile_fleet()
    page = markdown_it.MarkdownIt("commonmark").enable("table").render(gate_report.to_markdown(document))
    tags = set(re.findall(r"<([a-z0-9]+)", page))
    assert tags <= {"h1", "h2", "h3", "p", "table", "thead", "tbody", "tr", "th", "td", "ul", "li", "code", "em",
                    "strong", "a"}, tags
    assert {link.split("#")[0] for link in re.findall(r'<a href="([^"]*)"', page)} == {gate_report.REFUSALS_URL}
    cells = [html.unescape(re.sub(r"<[^>]+>", "", cell)) for cell in re.findall(r"<td>(.*?)</td>", page)]
    assert " ".join(shown(text).split()) in cells


def markdown_rows(text, header="| Host "):
    """The rows of the Markdown report's table with this header, cells split at the pipes that
    are not escaped."""
    rows = []
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    for line in lines[start + 2:]:
        if not line.startswith("| "):
            break
        cells = [cell.strip().replace("\\|", "|") for cell in line.replace("\\|", "\0").split("|")[1:-1]]
        rows.append([cell.replace("\0", "|") for cell in cells])
    return rows


def test_markdown_rows_parse_back_to_fourteen_cells():
    text, document = hostile_fleet()
    rows = markdown_rows(gate_report.to_markdown(document))
    assert [len(row) for row in rows] == [14] * 5
    escaped = md_escaped(text)
    assert rows[0][:6] == [escaped, "/dev/sdb", escaped, "flash", "ssd", "suitable"]
    assert rows[0][13] == "-"  # no refusal among its reasons: they are listed below the table
    line = "- Reasons of %s /dev/sdb: %s; %s." % ((escaped.replace("|", "\\|"),) * 3)
    assert line in gate_report.to_markdown(document).splitlines()
    assert rows[4][:6] == ["lost<" + escaped, "-", "-", "-", "-", "no_result"]
    # A host without a result: its error is a linked word in the table, and in full below it.
    assert rows[4][13] == "[error](%s#the-probe-failed)" % gate_report.REFUSALS_URL
    assert "- Errors of lost<%s: %s." % (escaped.replace("|", "\\|"), gate_decision.NO_RESULT) in gate_report.to_markdown(document)


WWN = "/dev/disk/by-id/wwn-0x5002538e40a1b2c3"
BY_ID = "/dev/disk/by-id/ata-INTEL_SSDSC2BB016T4_BTWL0001"


def gated_host(host, verdicts, **settings):
    """A host with devices sdb (WWN link) and sdc (given by its by-id link), dedicated_devices
    nvme0n1 and nvme1n1 (no link), and an lvm_volumes entry of a raw data disk sdd (by-id
    link) with a raw WAL nvme2n1 and an entry with an LV."""
    candidates = [candidate("/dev/sdb", links=[WWN, BY_ID]), candidate("/dev/sdc", index=1, given=[BY_ID + "2"],
                                                                       links=[BY_ID + "2"]),
                  candidate("/dev/nvme0n1", sources=["dedicated_devices"], roles=["db"]),
                  candidate("/dev/nvme1n1", sources=["dedicated_devices"], roles=["db"], index=1),
                  candidate("/dev/sdd", sources=["lvm_volumes"], links=[BY_ID + "3"]),
                  candidate("/dev/nvme2n1", sources=["lvm_volumes"], roles=["wal"]),
                  candidate("vg/lv", sources=["lvm_volumes"], index=1, probe=False, reasons=["an LV"])]
    probed = [c["device"] for c in candidates if c["probe"]]
    return record(candidates, finished_ok(*[result(d, verdicts.get(d, "suitable"), 9000.0) for d in probed]),
                  host=host, **settings)


def specs_of(records, policy="block"):
    document = gate_decision.fleet_document([r["host"] for r in records], records,
                                            dict(SETTINGS, policy=policy), "2026-01-01T00:00:00Z")
    text = gate_report.to_cephadm_spec(document)
    return text, [doc for doc in yaml.safe_load_all(text) if doc]


def test_cephadm_spec_lists_only_hosts_that_passed_with_the_gated_layout_and_stable_paths():
    text, specs = specs_of([gated_host("osd-07", {}), gated_host("osd-08", {"/dev/nvme2n1": "unsuitable"})])
    assert specs == [
        {"service_type": "osd", "service_id": "gated-osd-07", "placement": {"hosts": ["osd-07"]},
         "spec": {"data_devices": {"paths": [WWN, BY_ID + "2"]}, "db_devices": {"paths": ["/dev/nvme0n1", "/dev/nvme1n1"]},
                  "crush_device_class": "ssd"}},
        {"service_type": "osd", "service_id": "gated-osd-07-lvm-0", "placement": {"hosts": ["osd-07"]},
         "spec": {"data_devices": {"paths": [BY_ID + "3"]}, "wal_devices": {"paths": ["/dev/nvme2n1"]},
                  "crush_device_class": "ssd"}},
    ]
    assert text.startswith("# osd-07: lvm_volumes entry 1 left out: it names an LV or a partition\n")
    assert [name for _kind, name in ceph_spec.validate(text)] == ["osd.gated-osd-07", "osd.gated-osd-07-lvm-0"]


def test_cephadm_spec_under_exclude_lists_the_disks_handed_over():
    text, specs = specs_of([gated_host("osd-07", {"/dev/nvme1n1": "unsuitable", "/dev/nvme2n1": "unsuitable"})],
                           policy="exclude")
    assert [(s["service_id"], s["spec"]) for s in specs] == [
        ("gated-osd-07", {"data_devices": {"paths": [WWN]}, "db_devices": {"paths": ["/dev/nvme0n1"]},
                          "crush_device_class": "ssd"})]
    ceph_spec.validate(text)


def test_cephadm_service_ids_are_valid_for_ceph():
    record = gated_host("osd-07.example.com", {})
    document = gate_decision.fleet_document(["osd-07.example.com"], [record], dict(SETTINGS, cephadm_service_id="gated osd/"))
    text = gate_report.to_cephadm_spec(document)
    assert [s["service_id"] for s in yaml.safe_load_all(text)] == ["gated-osd--osd-07.example.com",
                                                                   "gated-osd--osd-07.example.com-lvm-0"]
    ceph_spec.validate(text)


def test_cephadm_spec_keeps_every_string_a_string():
    text = hostile_fleet()[0]
    approved = gated_host("osd1", {})
    for host in ("yes", "1e3", "null", "- x", "a: b", "#1", text):
        document = gate_decision.fleet_document([host], [dict(approved, host=host, cephadm_host=host)], SETTINGS)
        specs = list(yaml.safe_load_all(gate_report.to_cephadm_spec(document)))
        assert [spec["placement"]["hosts"] for spec in specs] == [[shown(host)]] * 2


def test_cephadm_spec_without_approved_disks_is_empty():
    assert list(yaml.safe_load_all(gate_report.to_cephadm_spec(fleet([None], ["osd1"])))) == []


def test_text_table_names_every_disk_and_reason():
    lines = gate_report.to_table(fleet()).splitlines()
    assert lines[0] == "osd1: not passed"
    assert lines[1].split() == ["DEVICE", "CLASS", "CRUSH", "VERDICT", "SYNC", "IOPS", "P99", "MS", "DEEP-QUEUE", "IOPS",
                                "CACHED", "PLP", "HEALTH", "DECISION", "REASONS"]
    assert lines[3].split()[:6] == ["/dev/sdc", "flash", "ssd", "unsuitable", "574", "0.265"]
    assert lines[3].endswith("because unsuitable")
    assert "yes (2 h old)" in lines[4]
    assert lines[3].split()[8] == "likely" and "power-loss protection of /dev/sdc: likely: fsync costs 0.02 ms" in lines


def test_text_table_columns_line_up_and_nothing_is_evaluated():
    text, document = hostile_fleet()
    table = gate_report.host_table(document["hosts"][0])
    lines = table.split("\n")
    decision = lines[0].index("DECISION")
    assert lines[1].startswith("/dev/sdb ") and lines[1][decision:].split()[0] == "approved"
    assert "{{ 7 * 7 }}" in table and "49" not in table
    assert gate_report.to_table(document).split("\n\n")[1].startswith("osd2: not passed\n")


def test_every_report_says_which_rule_chose_the_disks():
    chosen = record([candidate("/dev/sdb", sources=("devices",)), candidate("/dev/sdc", sources=("devices",)),
                     candidate("/dev/nvme0n1", sources=("dedicated_devices",), roles=("db",))],
                    finished_ok(result("/dev/sdb", "suitable", 9000)))
    document = gate_decision.fleet_document(["osd1"], [chosen], SETTINGS)
    assert gate_report.to_table(document).split("\n\n", maxsplit=1)[0].splitlines()[-1] == (
        "disks chosen by: ceph-ansible's devices, ceph-ansible's dedicated_devices")
    assert "- Disks of osd1 chosen by ceph-ansible's devices, ceph-ansible's dedicated_devices." in (
        gate_report.to_markdown(document).splitlines())
    assert json.loads(gate_report.to_json(document))["hosts"][0]["chosen_by"] == ["devices", "dedicated_devices"]
    available = record([candidate("/dev/sdb", sources=("available",))], None)
    assert gate_report.host_table(available).splitlines()[-1] == (
        "disks chosen by: every disk disk_facts calls available (no explicit list, no ceph-ansible variable set)")
    assert gate_report.host_table(gate_decision.missing_record("osd2")).splitlines()[-1] == "disks chosen by: none"


def outlier_fleet():
    """Eight disks of one model and firmware, the last 2/3 as fast as the others (approved all
    the same), two of the model on another firmware, and one disk of another model."""
    disks = same_model([9100, 8900, 9050, 8800, 9200, 9000, 8950, 6000])
    disks += [("osd-07", MODEL, "XCV10120", 9000, 0.3), ("osd-08", MODEL, "XCV10120", 9000, 0.3),
              ("osd-08", OTHER, "HXT7404Q", 20000, 0.2)]
    return fleet_of(disks)


def test_every_report_shows_the_fleet_per_model_its_outlier_and_mixed_firmware():
    document = outlier_fleet()
    groups = json.loads(gate_report.to_json(document))["models"]["groups"]
    assert [(g["model"], g["firmware"], g["disks"], len(g["outliers"])) for g in groups] == [
        (MODEL, "XCV10120", 2, 0), (MODEL, "XCV10132", 8, 1), (OTHER, "HXT7404Q", 1, 0)]
    said = "sync IOPS 6 000, below the median 8 975 of its model and firmware by more than 2 244"
    mix = "XCV10120 on 2 disks (osd-07, osd-08); XCV10132 on 8 disks (osd-00, osd-01, osd-02, osd-03, osd-04 and 3 more hosts)"

    table = gate_report.to_table(document).rsplit("\n\n", maxsplit=1)[-1].splitlines()
    assert table[1].split()[:3] == ["MODEL", "FIRMWARE", "DISKS"]
    assert table[3].split()[:4] + table[3].split()[-2:] == [MODEL.split()[0], MODEL.split()[1], "XCV10132", "8",
                                                            "yes", "1"]
    assert "outlier: osd-07 /dev/sdb (%s, XCV10132): %s" % (MODEL, said) in table
    assert "mixed firmware: %s: %s" % (MODEL, mix) in table

    markdown = gate_report.to_markdown(document)
    rows = markdown_rows(markdown, "| Model ")
    assert [row[:3] + row[-2:] for row in rows] == [[MODEL, "XCV10120", "2", "no: 2 of 5 measured disks", "0"],
                                                    [MODEL, "XCV10132", "8", "yes", "1"],
                                                    [OTHER, "HXT7404Q", "1", "no: 1 of 5 measured disks", "0"]]
    assert "- Outlier: osd-07 /dev/sdb (%s, XCV10132): %s." % (MODEL, said) in markdown.splitlines()
    assert "- Mixed firmware: %s: %s." % (MODEL, mix) in markdown.splitlines()

    page = gate_report.to_html(document)
    assert '<li class="blocked">Outlier: osd-07 /dev/sdb (%s, XCV10132): %s</li>' % (MODEL, said) in page
    assert "<li>Mixed firmware: %s: %s</li>" % (MODEL, mix) in page

    root = ET.fromstring(gate_report.to_junit(document).encode("utf-8"))
    outs = dict(((s.get("name"), c.get("name").split()[0]), c.find("system-out").text)
                for s in root.findall("testsuite") for c in s.findall("testcase"))
    assert outs[("osd-07", "/dev/sdb")].splitlines()[2] == "fleet outlier: " + said
    assert outs[("osd-07", "/dev/sdc")].splitlines()[2] == "firmware XCV10120; the fleet runs this model with " + mix
    assert outs[("osd-08", "/dev/sdc")].splitlines()[0] == "suitable, 20 000 sync IOPS, p99 0.2 ms, health -"
    assert not root.findall(".//failure")

    spec = gate_report.to_cephadm_spec(document)
    assert spec.startswith("# osd-07 /dev/sdb: fleet outlier: %s\n# mixed firmware: %s: %s\n---\n" % (said, MODEL, mix))
    assert len(list(yaml.safe_load_all(spec))) == 9


def test_a_p99_outlier_reads_with_its_unit_in_every_report():
    # Six disks alike in sync IOPS, the last one's p99 latency eight times its siblings'.
    document = fleet_of(same_model([9000] * 6, p99=[0.3, 0.31, 0.29, 0.3, 0.3, 2.4]))
    [group] = document["models"]["groups"]
    assert [(o["host"], o["figure"]) for o in group["outliers"]] == [("osd-05", "p99_sync_latency_ms")]
    said = "p99 latency 2.4 ms, above the median 0.3 ms of its model and firmware by more than 0.075 ms"
    line = "osd-05 /dev/sdb (%s, XCV10132): %s" % (MODEL, said)
    assert "outlier: " + line in gate_report.to_table(document).splitlines()
    assert "- Outlier: %s." % line in gate_report.to_markdown(document).splitlines()
    assert '<li class="blocked">Outlier: %s</li>' % line in gate_report.to_html(document)
    root = ET.fromstring(gate_report.to_junit(document).encode("utf-8"))
    [case] = [c for s in root.findall("testsuite") if s.get("name") == "osd-05" for c in s.findall("testcase")]
    assert case.find("system-out").text.splitlines()[-1] == "fleet outlier: " + said
    assert gate_report.to_cephadm_spec(document).startswith("# osd-05 /dev/sdb: fleet outlier: %s\n---\n" % said)


def test_the_per_model_view_of_a_hostile_fleet_stays_in_its_cells():
    text, document = hostile_fleet()
    rows = markdown_rows(gate_report.to_markdown(document), "| Model ")
    assert [(len(row), row[0]) for row in rows] == [(9, md_escaped(text))]
    table = gate_report.models_table(document["models"])
    assert "{{ 7 * 7 }}" in table and "49" not in table


def test_every_report_shows_the_power_loss_protection_verdict_with_its_reasons():
    unlikely = {"verdict": "unlikely", "reasons": ["fsync costs 1.735 ms", "a flush of 0.5 ms or more empties a "
                                                   "volatile cache to flash"]}
    probed = record([candidate("/dev/sdb"), candidate("/dev/sdc"), candidate("/dev/sdd")], finished_ok(
        result("/dev/sdb", "suitable", 9000.0), result("/dev/sdc", "unsuitable", 574.0, plp=unlikely),
        result("/dev/sdd", "refused", plp=None)))
    document = gate_decision.fleet_document(["osd1"], [probed], SETTINGS)
    said = "unlikely: fsync costs 1.735 ms; a flush of 0.5 ms or more empties a volatile cache to flash"
    assert [d["plp"] for d in json.loads(gate_report.to_json(document))["hosts"][0]["disks"]] == [
        {"verdict": "likely", "reasons": ["fsync costs 0.02 ms"]}, unlikely, None]
    table = gate_report.to_table(document).splitlines()
    column = table[1].index("PLP")
    assert [line[column:].split()[0] for line in table[2:5]] == ["likely", "unlikely", "-"]
    assert "power-loss protection of /dev/sdc: " + said in table
    markdown = gate_report.to_markdown(document)
    # One word in the table's cell, the reasons below it.
    assert [row[10] for row in markdown_rows(markdown)] == ["likely", "unlikely", "-"]
    assert "- Power-loss protection of osd1 /dev/sdc: %s." % said in markdown.splitlines()
    assert "<td>%s</td>" % said in gate_report.to_html(document)
    root = ET.fromstring(gate_report.to_junit(document).encode("utf-8"))
    outs = [(c.find("system-out").text if c.find("system-out") is not None else None) for c in root.iter("testcase")]
    assert [out and out.splitlines()[-1] for out in outs] == [
        "power-loss protection likely: fsync costs 0.02 ms", "power-loss protection " + said, None]
    assert gate_report.to_cephadm_spec(document).startswith("# osd1 /dev/sdc: power-loss protection %s\n" % said)


def test_every_report_shows_how_the_write_cache_was_measured_and_whether_it_is_back():
    disabled = {"original": "on", "during": "off", "after": "on", "restored": True, "restore_error": None,
                "error": None}
    compared = {"on_iops": 574.0, "off_iops": 1830.0, "faster": "off", "original": "on",
                "observed": {"on": "on", "off": "off"}, "after": "off", "restored": False,
                "restore_error": "the drive reports its write cache off after switching it back on", "error": None}
    probed = record([candidate("/dev/sdb"), candidate("/dev/sdc"), candidate("/dev/sdd")], finished_ok(
        result("/dev/sdb", "suitable", 9000.0, write_cache_disabled=disabled),
        result("/dev/sdc", "unsuitable", 574.0, write_cache_comparison=compared),
        result("/dev/sdd", "suitable", 9000.0)))
    document = gate_decision.fleet_document(["osd1"], [probed], SETTINGS)
    off = "measured disabled (the drive reported on before, off during the probe, on after)"
    both = ("on 574, off 1 830 sync IOPS: off is faster (the drive reported on in the half measured on, off in the "
            "half measured off, off after); NOT restored: the drive reports its write cache off after switching "
            "it back on")
    disks = json.loads(gate_report.to_json(document))["hosts"][0]["disks"]
    assert [(d["write_cache_disabled"], d["write_cache_comparison"]) for d in disks] == [
        (disabled, None), (None, compared), (None, None)]
    table = gate_report.to_table(document).splitlines()
    assert "write cache of /dev/sdb: " + off in table and "write cache of /dev/sdc: " + both in table
    assert not [line for line in table if line.startswith("write cache of /dev/sdd")]
    markdown = gate_report.to_markdown(document)
    assert "- Write cache of osd1 /dev/sdb: %s.\n- Write cache of osd1 /dev/sdc: %s." % (off, both) in markdown
    html = gate_report.to_html(document)
    assert "<li>Write cache of /dev/sdb: %s</li>" % off in html and "<li>Write cache of /dev/sdc: %s</li>" % both in html
    root = ET.fromstring(gate_report.to_junit(document).encode("utf-8"))
    outs = [c.find("system-out").text.splitlines()[-1] for c in root.iter("testcase")]
    assert outs[:2] == ["write cache " + off, "write cache " + both]
    assert not outs[2].startswith("write cache")


def test_every_report_says_a_drive_without_a_volatile_cache_had_nothing_to_switch():
    # The records sync_write_probe gives an NVMe drive with vwc 0 in each write cache mode.
    compared = {"original": "absent", "error": None,
                "note": "the drive reports no volatile write cache (NVMe vwc 0): nothing to switch"}
    disabled = {"original": "absent", "during": "absent", "after": "absent", "restored": True,
                "restore_error": None, "error": None}
    probed = record([candidate("/dev/nvme0n1"), candidate("/dev/nvme1n1")], finished_ok(
        result("/dev/nvme0n1", "suitable", 36600.0, write_cache_comparison=compared),
        result("/dev/nvme1n1", "suitable", 36600.0, write_cache_disabled=disabled)))
    document = gate_decision.fleet_document(["osd1"], [probed], SETTINGS)
    said = "measured as it is, nothing to switch: the drive reports no volatile write cache (NVMe vwc 0)"
    disks = json.loads(gate_report.to_json(document))["hosts"][0]["disks"]
    assert [(d["write_cache_comparison"], d["write_cache_disabled"]) for d in disks] == [
        (compared, None), (None, disabled)]
    table = gate_report.to_table(document).splitlines()
    assert "write cache of /dev/nvme0n1: " + said in table and "write cache of /dev/nvme1n1: " + said in table
    assert "- Write cache of osd1 /dev/nvme0n1: %s.\n- Write cache of osd1 /dev/nvme1n1: %s." % (said, said) in (
        gate_report.to_markdown(document))
    html = gate_report.to_html(document)
    assert "<li>Write cache of /dev/nvme0n1: %s</li>" % said in html
    assert "<li>Write cache of /dev/nvme1n1: %s</li>" % said in html
    root = ET.fromstring(gate_report.to_junit(document).encode("utf-8"))
    assert [c.find("system-out").text.splitlines()[-1] for c in root.iter("testcase")] == ["write cache " + said] * 2
    # Neither drive failed for its cache.
    assert [c.find("failure") for c in root.iter("testcase")] == [None, None]


def deep(iops, bounded_by="bytes", seconds=0.2, error=None):
    return {"write_iops": iops, "iodepth": 32, "bytes": 12288000, "seconds": seconds, "bounded_by": bounded_by,
            "error": error, "command": ["fio"]}


def test_every_report_shows_the_deep_queue_figure_beside_the_sync_one_and_the_model_s_median():
    probed = record([candidate("/dev/sdb"), candidate("/dev/sdc"), candidate("/dev/sdd"), candidate("/dev/sde")],
                    finished_ok(result("/dev/sdb", "suitable", 9000.0, deep_queue=deep(41000.0)),
                                result("/dev/sdc", "suitable", 9100.0, deep_queue=deep(43000.0)),
                                result("/dev/sdd", "suitable", 310.0, deep_queue=deep(420.0, "time", 3.1)),
                                result("/dev/sde", "suitable", 9050.0, deep_queue={"error": "fio job failed"})))
    document = gate_decision.fleet_document(["osd1"], [probed], SETTINGS)
    shown = ["41 000", "43 000", "420 (3.1s)", "error"]
    [group] = json.loads(gate_report.to_json(document))["models"]["groups"]
    # Fewer disks than the outlier rule judges: the median of every measured one all the same.
    assert (group["judged"], group["deep_queue_iops"]) == (False, {"median": 41000.0, "disks": 3})
    table = gate_report.to_table(document).splitlines()
    column = table[1].index("DEEP-QUEUE IOPS")
    assert [line[column:column + 12].strip() for line in table[2:6]] == shown
    assert "41 000 (3 disks)" in gate_report.models_table(document["models"])
    assert [row[8] for row in markdown_rows(gate_report.to_markdown(document))] == shown
    assert [row[6] for row in markdown_rows(gate_report.to_markdown(document), "| Model ")] == ["41 000 (3 disks)"]
    page = gate_report.to_html(document)
    assert all("<td>%s</td>" % cell in page for cell in shown) and "<td>41 000 (3 disks)</td>" in page
    root = ET.fromstring(gate_report.to_junit(document).encode("utf-8"))
    assert [c.find("system-out").text.splitlines()[0] for c in root.iter("testcase")][:3] == [
        "suitable, 9 000 sync IOPS, p99 0.265 ms, 41 000 deep-queue IOPS, health -",
        "suitable, 9 100 sync IOPS, p99 0.265 ms, 43 000 deep-queue IOPS, health -",
        "suitable, 310 sync IOPS, p99 0.265 ms, 420 (3.1s) deep-queue IOPS, health -"]


def test_a_disk_judged_unlikely_to_have_power_loss_protection_says_why_it_passed_or_is_blocked_when_asked():
    unlikely = {"verdict": "unlikely", "reasons": ["fsync costs 1.735 ms"]}
    candidates = [candidate("/dev/sdb")]
    results = finished_ok(result("/dev/sdb", "suitable", 9000.0, plp=unlikely))
    passed = gate_decision.fleet_document(["osd1"], [record(candidates, results)], SETTINGS)
    said = "unlikely: fsync costs 1.735 ms; " + gate_report.PLP_PASSED
    assert "disk_gate_plp_required is off (true blocks such a disk)" in said
    assert "power-loss protection of /dev/sdb: " + said in gate_report.to_table(passed).splitlines()
    assert "- Power-loss protection of osd1 /dev/sdb: %s." % said in gate_report.to_markdown(passed).splitlines()
    assert "<td>%s</td>" % said in gate_report.to_html(passed)
    root = ET.fromstring(gate_report.to_junit(passed).encode("utf-8"))
    assert "power-loss protection " + said in [c.find("system-out").text for c in root.iter("testcase")][0]

    blocked = gate_decision.fleet_document(["osd1"], [record(candidates, results, plp_required=True)], SETTINGS)
    [disk] = blocked["hosts"][0]["disks"]
    assert (disk["decision"], disk["reasons"][0]) == ("blocked", "power-loss protection unlikely (disk_gate_plp_required)")
    assert gate_report.PLP_PASSED not in gate_report.to_table(blocked)


def refusal_sections():
    """The anchors GitHub gives the sections of docs/refusals.md."""
    page = pathlib.Path(__file__).resolve().parents[4] / "docs" / "refusals.md"
    return {re.sub(r"[^a-z0-9 -]", "", heading.lower()).replace(" ", "-")
            for heading in re.findall(r"^## (.+)$", page.read_text(encoding="utf-8"), re.M)}


def test_every_section_the_reports_link_is_in_the_explanations_page_and_every_section_is_linked():
    linked = {refusal[2] for refusal in gate_report.REFUSALS} | {gate_report.PROBE_FAILED[1]}
    assert linked == refusal_sections()


def filled(reason):
    """A reason format of the code with its fields filled in, as a disk would get it."""
    return re.sub(r"%[sd]", "1", reason)


REFUSING = (
    [filled(value) for name, value in vars(blockdev).items()
     if name.startswith("REASON_") and name != "REASON_AT_OFFSET" and isinstance(value, str)]
    + [blockdev.REASON_AT_OFFSET % (blockdev.REASON_LVM, 1048576)]
    + [filled(ceph_ansible.LV_REASON), filled(ceph_ansible.PARTITION_REASON), ceph_ansible.ABSENT_REASON]
    + probe_verdict.verdict({"write_iops": 50.0, "latency_us": {"sync": {"p99": 9000.0}}},
                            dict(probe_verdict.DEFAULT_THRESHOLDS, max_p99_sync_latency_ms=5))[1]
    + [gate_decision.health_verdict("suitable", {"status": "failed", "reasons": ["reallocated sectors 12 > 10"]}, False)[1][0],
       gate_decision.health_verdict("suitable", {"status": "unknown", "reasons": ["no SMART"]}, True)[1][0],
       "power-loss protection unlikely (disk_gate_plp_required)", "region check: 3 of 512 MiB of the probe region",
       "open check: fio (pid 7) since the inventory", "journal: a probe started at now (pid 1) is still writing",
       "smaller than the end of the probe region (1610612736 bytes)", "write_cache disabled: the drive's own",
       "rotational disk: not gated (disk_gate_hdd_policy skip)"])


@pytest.mark.parametrize("reason", REFUSING)
def test_every_refusal_reason_the_code_writes_links_to_its_explanation(reason):
    word, link = gate_report._refusal(reason, "refused")
    assert link.startswith(gate_report.REFUSALS_URL + "#") and link.split("#")[1] in refusal_sections()
    assert " " not in word


def test_a_reason_that_refuses_nothing_has_no_link_and_any_reason_of_a_failed_probe_is_that_failure():
    for reason in ("write IOPS 9 000 >= 5 000", "p99 sync latency 0.4 ms <= 5 ms", "check mode: would probe the region"):
        assert gate_report._refusal(reason, "suitable") is None
    assert gate_report._refusal("fio: io_u error on file /dev/sdb", "error")[1].endswith("#the-probe-failed")


def test_every_report_links_a_blocked_disk_s_reasons_to_their_explanation():
    reasons = ["write IOPS 574 < 5 000 (below the marginal floor 1 000)", "p99 sync latency 9 ms > 5 ms (above)",
               "write IOPS 574 < 5 000 (again)"]
    probed = record([candidate("/dev/sdb"), candidate("/dev/sdc")], finished_ok(
        result("/dev/sdb", "unsuitable", 574.0, reasons=reasons), result("/dev/sdc", "suitable", 9000.0)))
    document = gate_decision.fleet_document(["osd1"], [probed], SETTINGS, "now")
    iops, latency = ("%s#%s" % (gate_report.REFUSALS_URL, anchor) for anchor in (
        "sync-write-iops-below-the-threshold", "p99-sync-latency-above-the-limit"))
    # Markdown: one linked word per explanation, once each; a passing disk's cell is empty.
    assert [row[13] for row in markdown_rows(gate_report.to_markdown(document))] == [
        "[iops](%s), [latency](%s)" % (iops, latency), "-"]
    # HTML: each reason is the link to its explanation.
    page = gate_report.to_html(document)
    assert '<a href="%s">%s</a>' % (iops, html.escape(reasons[0])) in page
    assert '<a href="%s">%s</a>' % (latency, html.escape(reasons[1])) in page
    assert "because suitable" in page and '">because suitable' not in page
    # The text table and JUnit name the explanations below the reasons.
    assert "why /dev/sdb: iops %s, latency %s" % (iops, latency) in gate_report.to_table(document).splitlines()
    failure = ET.fromstring(gate_report.to_junit(document).encode("utf-8")).find("testsuite/testcase/failure")
    assert failure.text.splitlines()[-2:] == ["explained at " + iops, "explained at " + latency]
