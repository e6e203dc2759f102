# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The disk gate's decisions and reports, pure functions of the probe results.

``host_record`` turns one host's candidates and probe jobs into approved and blocked disks;
``fleet_document`` gathers every host's record (hosts without one count as not approved);
the builders render that document as JSON, JUnit XML, Markdown, HTML with an SVG chart, a
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

MEASURED = ("suitable", "marginal", "unsuitable")
# Sources whose disks the exclude policy may drop from ``devices``; dropping a DB/WAL device or
# an lvm_volumes entry would change the OSD layout, so a blocked one of those fails the host.
DROPPABLE_SOURCES = ("disk_gate_devices", "available", "devices", "osd_auto_discovery")
NO_RESULT = "no gate result: the host was unreachable or failed before the gate finished"

# Reference drives for the chart. Seed 001: the seed probe (4k random writes, fsync after each).
# Seed 003: the journal test (sequential 4k O_DSYNC writes, one job), published in MB/s and
# converted here at 256 IOPS per MB/s (fio's old MB = 1024 KiB, 4 KiB per write).
REFERENCE_DRIVES = (
    {"label": "Samsung 850 Pro 256GB", "iops": 384, "kind": "consumer SATA", "source": "seed 003, 1.5 MB/s"},
    {"label": "Samsung 980", "iops": 574, "kind": "consumer NVMe", "source": "seed 001"},
    {"label": "Crucial MX200", "iops": 947, "kind": "consumer SATA", "source": "seed 003, 3.7 MB/s"},
    {"label": "Intel DC S3500", "iops": 8713, "kind": "enterprise SATA", "source": "seed 001"},
    {"label": "Samsung SM863 240GB", "iops": 16563, "kind": "enterprise SATA", "source": "seed 003, 64.7 MB/s"},
    {"label": "Kioxia CD6", "iops": 36600, "kind": "enterprise NVMe", "source": "seed 001"},
)


# --------------------------------------------------------------------------- decisions

def passes(verdict, allow_marginal):
    """True, False, or None while undecided (check mode plans a probe without a verdict)."""
    if verdict is None:
        return None
    return verdict in ("suitable", "skipped") or (verdict == "marginal" and bool(allow_marginal))


def job_outcomes(started, finished):
    """{class: {"results": [...]} or {"error": why}} from the registered results of the
    async start task (loop variable ``group``) and of async_status (loop variable ``job``).
    Anything but a finished, successful job is an error: the gate fails closed."""
    statuses = {}
    for status in finished or []:
        job_id = (status.get("job") or {}).get("ansible_job_id")
        if job_id:
            statuses[job_id] = status
    outcomes = {}
    for start in started or []:
        if start.get("skipped"):
            continue
        group = start["group"]["class"]
        status = statuses.get(start.get("ansible_job_id"))
        if start.get("unreachable"):
            outcomes[group] = {"error": "host unreachable when the probe started: %s" % start.get("msg", "")}
        elif start.get("failed") or not start.get("ansible_job_id"):
            outcomes[group] = {"error": "the probe did not start: %s" % start.get("msg", "")}
        elif status is None:
            outcomes[group] = {"error": "no status of the probe job"}
        elif status.get("unreachable"):
            outcomes[group] = {"error": "host unreachable during the probe: %s" % status.get("msg", "")}
        elif status.get("failed") or not status.get("finished") or "results" not in status:
            # A module failure arrives as a finished job with a msg and no results, its failed
            # flag cleared by the poll's failed_when.
            outcomes[group] = {"error": "the probe failed: %s" % (status.get("msg") or "unfinished")}
        else:
            outcomes[group] = {"results": status.get("results") or []}
    return outcomes


def disk_class(candidate):
    """hdd for disks the kernel calls rotational; flash otherwise (unknown counts as flash,
    the stricter thresholds)."""
    return "hdd" if candidate.get("rotational") else "flash"


def _disk_entry(candidate, group, result, allow_marginal):
    entry = {
        "device": candidate["device"], "given": list(candidate["given"]), "sources": list(candidate["sources"]),
        "roles": list(candidate["roles"]), "class": group,
        "name": None, "model": None, "serial": None, "wwn": None, "firmware": None, "size_bytes": None,
        "transport": None, "rotational": candidate.get("rotational"), "verdict": None, "reasons": [],
        "write_iops": None, "p99_sync_latency_ms": None, "runtime_ms": None, "cached": False,
        "cache_age_seconds": None, "plp_hint": None,
    }
    for key in ("name", "model", "serial", "wwn", "firmware", "size_bytes", "transport", "verdict", "reasons",
                "write_iops", "p99_sync_latency_ms", "runtime_ms", "cached", "cache_age_seconds"):
        if key in result:
            entry[key] = result[key]
    if result.get("rotational") is not None:
        entry["rotational"] = result["rotational"]
    entry["plp_hint"] = (result.get("plp") or {}).get("hint")
    entry["approved"] = passes(entry["verdict"], allow_marginal)
    entry["gated"] = entry["verdict"] != "skipped"
    return entry


def host_record(host, candidates, started, finished, settings):
    """One host's decision: every candidate with its verdict and whether it is approved.

    ``settings``: ``policy``, ``allow_marginal``, ``hdd_policy`` (probe or skip) and
    ``cephadm_host`` (the host's name in the orchestrator). A disk whose probe errored or
    gave no result is never approved.
    """
    outcomes = job_outcomes(started, finished)
    by_device = {}
    for outcome in outcomes.values():
        for result in outcome.get("results", []):
            by_device.setdefault(result.get("device"), result)
    disks, errors = [], sorted(set(o["error"] for o in outcomes.values() if "error" in o))
    for candidate in candidates:
        group = disk_class(candidate)
        if group == "hdd" and settings.get("hdd_policy") == "skip":
            result = {"verdict": "skipped", "reasons": ["rotational disk: not gated (disk_gate_hdd_policy skip)"]}
        elif "error" in outcomes.get(group, {}):
            result = {"verdict": "error", "reasons": [outcomes[group]["error"]]}
        else:
            result = by_device.get(candidate["device"]) or {
                "verdict": "error", "reasons": ["the probe returned no result for this disk"]}
        disks.append(_disk_entry(candidate, group, result, settings.get("allow_marginal")))
    chosen_by = []
    for candidate in candidates:
        chosen_by += [source for source in candidate["sources"] if source not in chosen_by]
    return _summarise({"host": host, "cephadm_host": settings.get("cephadm_host") or host,
                       "status": "error" if errors else "ok", "errors": errors, "chosen_by": chosen_by,
                       "disks": disks})


def _summarise(record):
    disks = record["disks"]
    record["approved"] = [d["device"] for d in disks if d["approved"]]
    record["blocked"] = [d["device"] for d in disks if d["approved"] is False]
    record["pending"] = [d["device"] for d in disks if d["approved"] is None]
    # What `devices` becomes under the exclude policy: the approved data disks, in order.
    record["devices"] = [d["device"] for d in disks if d["approved"] and "data" in d["roles"]
                         and set(d["sources"]) <= set(DROPPABLE_SOURCES)]
    record["blocked_not_droppable"] = [d["device"] for d in disks if d["approved"] is False
                                       and not set(d["sources"]) <= set(DROPPABLE_SOURCES)]
    record["passed"] = record["status"] == "ok" and not record["blocked"] and not record["pending"]
    return record


def missing_record(host):
    return _summarise({"host": host, "cephadm_host": host, "status": "no_result", "errors": [NO_RESULT],
                       "chosen_by": [], "disks": []})


def fleet_document(hosts, records, settings, generated_at=None):
    """The report every builder renders: one entry per host of the play, in order; a host
    without a record (unreachable, failed before the gate) is listed as not passed."""
    records = list(records or [])
    records += [None] * (len(hosts) - len(records))
    entries = [record if record else missing_record(host) for host, record in zip(hosts, records)]
    disks = [d for entry in entries for d in entry["disks"]]
    return {
        "generated_at": generated_at,
        "settings": settings,
        "summary": {
            "hosts": len(entries),
            "hosts_passed": sum(1 for e in entries if e["passed"]),
            "hosts_without_result": sum(1 for e in entries if e["status"] == "no_result"),
            "disks": len(disks),
            "approved": sum(1 for d in disks if d["approved"]),
            "blocked": sum(1 for d in disks if d["approved"] is False),
            "pending": sum(1 for d in disks if d["approved"] is None),
            "cached": sum(1 for d in disks if d["cached"]),
        },
        "hosts": entries,
        "reference_drives": list(REFERENCE_DRIVES),
    }


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


def host_svg(entry, settings, references=REFERENCE_DRIVES):
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
