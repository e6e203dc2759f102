# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The disk gate's reports: renderers of the fleet document of gate_decision.py.

The builders render that document as JSON, JUnit XML, Markdown, HTML with an SVG chart, a
cephadm OSD service spec, or the text table a failing host prints. Device names and models
come from hardware, so every builder escapes what it emits.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math
import re
import xml.etree.ElementTree as ET
from html import escape


# --------------------------------------------------------------------------- shared formatting

def _approval(disk):
    return {True: "approved", False: "blocked", None: "pending"}[disk["approved"]]


def _iops(value):
    return "-" if value is None else "{0:,.0f}".format(value).replace(",", " ")


def _ms(value):
    return "-" if value is None else ("%.3f" % value).rstrip("0").rstrip(".")


def _cached(disk):
    if not disk["cached"]:
        return "no"
    return "yes (%s h old)" % _ms(round(disk["cache_age_seconds"] / 3600.0, 1))


# XML 1.0 cannot carry most control characters even escaped; hardware strings may hold them.
_XML_INVALID = re.compile(u"[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value):
    return _XML_INVALID.sub(u"\ufffd", u"" if value is None else u"%s" % value)


def host_table(record):
    """Plain-text table of one host's disks, the message of a blocked host."""
    header = ("DEVICE", "CLASS", "VERDICT", "SYNC IOPS", "P99 MS", "CACHED", "DECISION", "REASONS")
    rows = [header] + [(d["device"], d["class"], d["verdict"] or "-", _iops(d["write_iops"]),
                        _ms(d["p99_sync_latency_ms"]), _cached(d), _approval(d), "; ".join(d["reasons"]))
                       for d in record["disks"]]
    widths = [max(len(_text(row[i])) for row in rows) for i in range(len(header) - 1)]
    lines = ["  ".join(_text(cell).ljust(width) for cell, width in zip(row, widths)) + "  " + _text(row[-1])
             for row in rows]
    lines += ["error: " + _text(error) for error in record["errors"]]
    lines.append("disks chosen by: %s" % _chosen_by(record))
    return "\n".join(line.rstrip() for line in lines)


CHOSEN_BY = {"disk_gate_devices": "the explicit list (disk_gate_devices)",
             "available": "every disk disk_facts calls available (no explicit list, no ceph-ansible variable set)"}


def _chosen_by(record):
    """Which rule and variables named the disks (see gate_candidates), in words."""
    words = [CHOSEN_BY.get(source, "ceph-ansible's " + source) for source in record.get("chosen_by") or []]
    return ", ".join(words) or "none"


# --------------------------------------------------------------------------- JSON and JUnit

def to_json(document):
    return json.dumps(document, indent=2, sort_keys=True)


def to_junit(document):
    """One test suite per host, one test case per disk; a blocked disk is a failure, a disk
    not gated (HDD skip) or still pending (check mode) is skipped, a host without a record
    is one failing test case."""
    root = ET.Element("testsuites", name="disk_gate")
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for entry in document["hosts"]:
        suite = ET.SubElement(root, "testsuite", name=_text(entry["host"]))
        counts = {"tests": 0, "failures": 0, "skipped": 0}
        cases = [(d["device"] + (" (%s)" % d["model"] if d["model"] else ""), d) for d in entry["disks"]]
        if not entry["disks"] and entry["errors"]:
            cases = [("host", None)]
        for name, disk in cases:
            counts["tests"] += 1
            seconds = (disk or {}).get("runtime_ms") if disk and not disk["cached"] else None
            case = ET.SubElement(suite, "testcase", classname=_text("disk_gate." + entry["host"]), name=_text(name),
                                 time="%.3f" % ((seconds or 0) / 1000.0))
            if disk is None:
                counts["failures"] += 1
                failure = ET.SubElement(case, "failure", type="no_result", message=_text(entry["errors"][0]))
                failure.text = _text("\n".join(entry["errors"]))
            elif disk["approved"] is False:
                counts["failures"] += 1
                failure = ET.SubElement(case, "failure", type=_text(disk["verdict"]),
                                        message=_text("%s: %s" % (disk["verdict"], "; ".join(disk["reasons"]))))
                failure.text = _text("\n".join(disk["reasons"]))
            elif disk["approved"] is None or not disk["gated"]:
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=_text("; ".join(disk["reasons"])))
            else:
                out = ET.SubElement(case, "system-out")
                out.text = _text("%s, %s sync IOPS, p99 %s ms%s" % (
                    disk["verdict"], _iops(disk["write_iops"]), _ms(disk["p99_sync_latency_ms"]),
                    ", cached" if disk["cached"] else ""))
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
        suite.set("errors", "0")
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("errors", "0")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# --------------------------------------------------------------------------- Markdown

def _md(value):
    """A Markdown table cell: pipes and newlines would break the table, and renderers pass
    HTML through, so it is escaped too."""
    text = escape(_text(value), quote=False)
    return re.sub(r"\s+", " ", text).replace("|", "\\|").strip() or "-"


def to_markdown(document):
    summary = document["summary"]
    lines = [
        "# Disk gate report",
        "",
        "Generated %s. %d of %d hosts passed; %d of %d disks approved, %d blocked, %d pending, %d from cache."
        % (_md(document.get("generated_at")), summary["hosts_passed"], summary["hosts"], summary["approved"],
           summary["disks"], summary["blocked"], summary["pending"], summary["cached"]),
        "",
    ]
    lines += ["- Disks of %s chosen by %s." % (_md(e["host"]), _md(_chosen_by(e))) for e in document["hosts"]]
    lines += [
        "",
        "| Host | Device | Model | Class | Verdict | Sync IOPS | p99 ms | Cached | Decision | Reasons |",
        "| --- | --- | --- | --- | --- | ---: | ---: | --- | --- | --- |",
    ]
    for entry in document["hosts"]:
        if not entry["disks"]:
            lines.append("| %s | - | - | - | %s | - | - | - | blocked | %s |" % (
                _md(entry["host"]), _md(entry["status"]), _md("; ".join(entry["errors"]))))
        for disk in entry["disks"]:
            lines.append("| %s |" % " | ".join(_md(cell) for cell in (
                entry["host"], disk["device"], disk["model"], disk["class"], disk["verdict"],
                _iops(disk["write_iops"]), _ms(disk["p99_sync_latency_ms"]), _cached(disk), _approval(disk),
                "; ".join(disk["reasons"]))))
    lines += ["", "Reference drives (sync IOPS): " + ", ".join(
        "%s %s (%s)" % (_md(r["label"]), _iops(r["iops"]), _md(r["source"])) for r in document["reference_drives"]),
        ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------- HTML and SVG

VERDICT_COLOURS = {"suitable": "#2e7d32", "marginal": "#f9a825", "unsuitable": "#c62828"}
CHART = {"label_width": 190, "plot_width": 520, "row": 22, "top": 34, "bottom": 34, "low": 10, "high": 100000}


def _x(iops):
    """Horizontal position of an IOPS figure on the chart's log scale."""
    low, high = math.log10(CHART["low"]), math.log10(CHART["high"])
    value = math.log10(min(max(iops, CHART["low"]), CHART["high"]))
    return CHART["label_width"] + (value - low) / (high - low) * CHART["plot_width"]


def _thresholds_in_use(entry, settings):
    classes = sorted(set(d["class"] for d in entry["disks"] if d["gated"]))
    lines = []
    for group in classes:
        limits = (settings.get("thresholds") or {}).get(group) or {}
        dash = "" if group == "flash" else ' stroke-dasharray="2 3"'
        for key, colour, text in (("min_iops", "#2e7d32", "suitable"), ("marginal_min_iops", "#f9a825", "marginal")):
            if limits.get(key):
                lines.append((limits[key], colour, dash, "%s %s from %s IOPS" % (group, text, _iops(limits[key]))))
    return lines


def host_svg(entry, settings, references):
    """Inline SVG: one bar per disk (sync IOPS, log scale), the thresholds of the disk classes
    shown (flash solid, HDD dotted) and the reference drives (grey, numbered R1...)."""
    rows = entry["disks"] or [None]
    height = CHART["top"] + len(rows) * CHART["row"] + CHART["bottom"]
    width = CHART["label_width"] + CHART["plot_width"] + 20
    bottom = CHART["top"] + len(rows) * CHART["row"]
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" '
             'aria-label="%s">' % (width, height, width, height, escape("sync write IOPS of " + _text(entry["host"])))]
    parts.append('<title>%s</title>' % escape("Sync write IOPS on %s (log scale)" % _text(entry["host"])))
    exponent = int(math.log10(CHART["low"]))
    while 10 ** exponent <= CHART["high"]:
        x = _x(10 ** exponent)
        parts.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (x, CHART["top"] - 6, x, bottom))
        parts.append('<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%s</text>'
                     % (x, bottom + 14, _iops(10 ** exponent)))
        exponent += 1
    parts.append('<text x="%.1f" y="%d" font-size="10" text-anchor="middle">sync write IOPS (log scale)</text>'
                 % (CHART["label_width"] + CHART["plot_width"] / 2.0, bottom + 28))
    for number, reference in enumerate(references, 1):
        x = _x(reference["iops"])
        label = "R%d %s: %s IOPS (%s)" % (number, reference["label"], _iops(reference["iops"]), reference["source"])
        parts.append('<g><title>%s</title><line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#999" '
                     'stroke-dasharray="4 3"/><text x="%.1f" y="%d" font-size="9" fill="#666" '
                     'text-anchor="middle">R%d</text></g>'
                     % (escape(label), x, CHART["top"] - 4, x, bottom, x, CHART["top"] - 8 - 9 * (number % 2), number))
    for limit, colour, dash, text in _thresholds_in_use(entry, settings):
        x = _x(limit)
        parts.append('<g><title>%s</title><line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="2"%s/>'
                     '</g>' % (escape(text), x, CHART["top"] - 6, x, bottom, colour, dash))
    for index, disk in enumerate(rows):
        y = CHART["top"] + index * CHART["row"]
        if disk is None:
            parts.append('<text x="4" y="%d" font-size="11">%s</text>' % (y + 14, escape(_text("; ".join(entry["errors"])))))
            continue
        label = disk["device"] + (" " + disk["model"] if disk["model"] else "")
        parts.append('<text x="4" y="%d" font-size="11">%s</text>' % (y + 14, escape(_text(label[:32]))))
        tooltip = "%s: %s, %s IOPS, p99 %s ms, %s" % (
            disk["device"], disk["verdict"], _iops(disk["write_iops"]), _ms(disk["p99_sync_latency_ms"]),
            _approval(disk))
        if disk["write_iops"] is None:
            parts.append('<text x="%d" y="%d" font-size="11" fill="#c62828">%s</text>'
                         % (CHART["label_width"] + 4, y + 14, escape(_text(disk["verdict"] or "pending"))))
            continue
        x = _x(disk["write_iops"])
        parts.append('<g><title>%s</title><rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>'
                     '<text x="%.1f" y="%d" font-size="10">%s</text></g>'
                     % (escape(_text(tooltip)), CHART["label_width"], y + 3, max(x - CHART["label_width"], 1),
                        CHART["row"] - 8, VERDICT_COLOURS.get(disk["verdict"], "#777"), x + 4, y + 14,
                        escape(_iops(disk["write_iops"]) + ("" if disk["approved"] else " blocked"))))
    parts.append("</svg>")
    return "".join(parts)


HTML_STYLE = (
    "body{font-family:sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse;margin:.5em 0 1.5em}"
    "td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px;text-align:left}"
    ".approved{color:#2e7d32}.blocked{color:#c62828;font-weight:bold}.pending{color:#777}"
)


def _cell(value, css=None):
    return '<td%s>%s</td>' % (' class="%s"' % css if css else "", escape(_text(value)))


def to_html(document):
    summary, settings = document["summary"], document.get("settings") or {}
    out = ['<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Disk gate report</title>',
           '<style>%s</style></head><body>' % HTML_STYLE,
           '<h1>Disk gate report</h1>',
           '<p>Generated %s. Policy %s. %d of %d hosts passed; %d of %d disks approved, %d blocked, '
           '%d pending, %d from cache.</p>' % (
               escape(_text(document.get("generated_at"))), escape(_text(settings.get("policy"))),
               summary["hosts_passed"], summary["hosts"], summary["approved"], summary["disks"], summary["blocked"],
               summary["pending"], summary["cached"]),
           '<p>Bars: sync write IOPS of each disk on a log scale, green suitable, yellow marginal, red '
           'unsuitable. Vertical lines: the thresholds (flash solid, HDD dotted; green suitable, yellow '
           'marginal) and the reference drives (grey, numbered):</p><ul>']
    for number, reference in enumerate(document["reference_drives"], 1):
        out.append("<li>R%d %s (%s): %s IOPS, %s</li>" % (
            number, escape(reference["label"]), escape(reference["kind"]), _iops(reference["iops"]),
            escape(reference["source"])))
    out.append("</ul>")
    for entry in document["hosts"]:
        state = "passed" if entry["passed"] else "not passed"
        out.append('<h2 id="%s">%s <span class="%s">%s</span></h2>' % (
            escape(_text(entry["host"])), escape(_text(entry["host"])), "approved" if entry["passed"] else "blocked",
            state))
        for error in entry["errors"]:
            out.append('<p class="blocked">%s</p>' % escape(_text(error)))
        out.append(host_svg(entry, settings, document["reference_drives"]))
        if not entry["disks"]:
            continue
        out.append("<table><tr><th>Device</th><th>Model</th><th>Serial</th><th>Class</th><th>Verdict</th>"
                   "<th>Sync IOPS</th><th>p99 ms</th><th>Cached</th><th>Decision</th><th>Reasons</th></tr>")
        for disk in entry["disks"]:
            out.append("<tr>%s</tr>" % "".join((
                _cell(disk["device"]), _cell(disk["model"] or "-"), _cell(disk["serial"] or "-"), _cell(disk["class"]),
                _cell(disk["verdict"] or "-"), _cell(_iops(disk["write_iops"])),
                _cell(_ms(disk["p99_sync_latency_ms"])), _cell(_cached(disk)),
                _cell(_approval(disk), _approval(disk)), _cell("; ".join(disk["reasons"])))))
        out.append("</table>")
    out.append("</body></html>\n")
    return "\n".join(out)


# --------------------------------------------------------------------------- cephadm

def _service_id(prefix, host):
    return re.sub(r"[^A-Za-z0-9_-]", "_", "%s_%s" % (prefix, host))


def to_cephadm_spec(document):
    """One OSD service spec per host with approved disks (paths differ per host): approved
    data disks under data_devices, approved DB and WAL disks under db_devices and
    wal_devices; the service id is the settings' ``cephadm_service_id`` and the host's name.
    Strings are written as JSON strings, which YAML reads unchanged."""
    service_id = (document.get("settings") or {}).get("cephadm_service_id") or "gated"
    specs = []
    for entry in document["hosts"]:
        paths = {}
        for disk in entry["disks"]:
            if disk["approved"]:
                for role in disk["roles"]:
                    paths.setdefault(role, []).append(disk["device"])
        if not paths.get("data"):
            continue
        lines = ["service_type: osd",
                 "service_id: %s" % json.dumps(_service_id(service_id, entry["host"])),
                 "placement:", "  hosts:", "    - %s" % json.dumps(_text(entry["cephadm_host"])),
                 "spec:"]
        for role in ("data", "db", "wal"):
            if paths.get(role):
                lines += ["  %s_devices:" % role, "    paths:"]
                lines += ["      - %s" % json.dumps(_text(path)) for path in paths[role]]
        specs.append("\n".join(lines) + "\n")
    return "---\n" + "---\n".join(specs) if specs else "# no host has an approved data disk\n"


def to_table(document):
    """Every host's text table under a line naming it and its state."""
    tables = []
    for entry in document["hosts"]:
        state = "passed" if entry["passed"] else "not passed"
        tables.append("%s: %s\n%s" % (_text(entry["host"]), state, host_table(entry)))
    return "\n\n".join(tables)


BUILDERS = {
    "table": to_table,
    "json": to_json,
    "junit": to_junit,
    "markdown": to_markdown,
    "html": to_html,
    "cephadm_spec": to_cephadm_spec,
}
