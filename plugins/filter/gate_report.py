# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: gate_report
short_description: Render the disk gate's fleet report as JSON, JUnit, Markdown, HTML, cephadm spec, Rook storage or text
version_added: 0.1.0
description:
  - Takes every host's record from P(cephops.osd_tuning.gate_host#filter), in the order of
    O(hosts); a host without a record (unreachable, or failed before the gate finished) is
    listed as not passed.
  - V(json) is the whole document; V(junit) has one test suite per host and one test case per
    disk, blocked disks failing; V(markdown) one table; V(html) a page with an inline SVG chart
    per host (sync IOPS against the thresholds and reference drives from the published articles
    behind the defaults);
    V(cephadm_spec) OSD service specs of the hosts that passed (under the exclude policy, of
    the disks handed to ceph-osd), laid out as gated (C(data_devices), C(db_devices),
    C(wal_devices) paths, by-id or WWN links), each with its C(crush_device_class);
    V(rook_storage) the C(storage) section of a Rook CephCluster naming the same data disks
    (C(useAllDevices) false, nodes by name, devices by stable path with C(config.deviceClass));
    V(table) the plain-text tables.
  - Every disk's CRUSH device class is the one P(cephops.osd_tuning.gate_host#filter) chose;
    where the kernel's rotational flag and what the disk measures disagree, every format flags it
    with the figure that decided.
  - Every format shows each disk's deep-queue IOPS (the OSD start-up bench's shape, its time
    beside it when the time ended the run first) beside its sync IOPS.
  - Every format also shows the fleet per model and firmware (C(models) in V(json)) - each
    group's median and median absolute deviation of sync IOPS and p99 latency, the median
    deep-queue IOPS of all its measured disks however few (the figure like disks share), the disks far
    from them (flagged, not blocked) and models that run more than one firmware; in V(junit)
    on the test cases of the disks concerned, in V(cephadm_spec) as comments.
  - Every refusal reason links to its short explanation in the collection's docs/refusals.md. In
    V(markdown) it is one word a reason in the table (each reason in full below it), in V(html) the
    reason itself, in V(table) and V(junit) the links below the disk's reasons.
  - Everything taken from hardware (models, serials, device names) is escaped for the format.
author:
  - cephops maintainers (@cephops)
positional: output_format, hosts, settings, generated_at
options:
  _input:
    description: Host records, one per host in O(hosts) (null for a host without one).
    type: list
    elements: dict
    required: true
  output_format:
    description: The document to build.
    type: str
    choices: [json, junit, markdown, html, cephadm_spec, rook_storage, table]
    required: true
  hosts:
    description: Every host of the play, in order.
    type: list
    elements: str
    required: true
  settings:
    description: Shown in the report; C(thresholds) per disk class (C(flash), C(hdd)) draw the
      chart's limits, C(cephadm_service_id) prefixes the service ids.
    type: dict
    default: {}
  generated_at:
    description: Time stamp printed in the report.
    type: str
"""

EXAMPLES = r"""
- name: Write the JUnit report
  ansible.builtin.copy:
    dest: /srv/reports/disk_gate.xml
    content: >-
      {{ ansible_play_hosts_all | map('extract', hostvars) | map(attribute='disk_gate_result', default=none)
         | cephops.osd_tuning.gate_report('junit', ansible_play_hosts_all) }}
    mode: "0644"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
_value:
  description: The document as text.
  type: str
"""

import json
import math
import re
import xml.etree.ElementTree as ET
from html import escape

import yaml
from jinja2 import Environment, StrictUndefined

from ansible.errors import AnsibleFilterError
from ansible_collections.cephops.osd_tuning.plugins.module_utils import write_cache
from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import gate_decision
from ansible_collections.cephops.osd_tuning.plugins.plugin_utils.ceph_ansible import DEVICES, LIST_PARTS, LVM_VOLUMES
from ansible_collections.cephops.osd_tuning.plugins.module_utils.blockdev import stable_path


# The disk gate's reports: one renderer per format of the fleet document (gate_decision.py).
#
# JSON is the document itself, JUnit is built with xml.etree and the cephadm spec with
# yaml.safe_dump_all; the text table, Markdown and HTML (with an SVG chart per host) are the
# Jinja2 templates below. Device names and models come from hardware, so every renderer
# escapes what it emits: each value a template prints goes through the filter of its format
# (``h`` for HTML and SVG, ``md`` for Markdown, ``text`` for the table).

# --------------------------------------------------------------------------- shared formatting


def _approval(disk):
    return disk["decision"]


def _iops(value):
    return "-" if value is None else "{0:,.0f}".format(value).replace(",", " ")


def _ms(value):
    return "-" if value is None else ("%.3f" % value).rstrip("0").rstrip(".")


def _deep(disk):
    """The deep-queue figure of a disk: IOPS, with what ended the run when its time did."""
    found = disk.get("deep_queue")
    if not found:
        return "-"
    if found["error"]:
        return "error"
    return _iops(found["write_iops"]) + (" (%ss)" % _ms(found["seconds"]) if found["bounded_by"] == "time" else "")


def _deep_median(group):
    found = group["deep_queue_iops"]
    return "-" if found is None else "%s (%d disks)" % (_iops(found["median"]), found["disks"])


def _cached(disk):
    if not disk["cached"]:
        return "no"
    return "yes (%s h old)" % _ms(round(disk["cache_age_seconds"] / 3600.0, 1))


# XML 1.0 cannot carry most control characters even escaped; hardware strings may hold them.
_XML_INVALID = re.compile(u"[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value):
    return _XML_INVALID.sub(u"\ufffd", u"" if value is None else u"%s" % value)


CHOSEN_BY = {"disk_gate_devices": "the explicit list (disk_gate_devices)",
             "available": "every disk disk_facts calls available (no explicit list, no ceph-ansible variable set)"}


def _health(disk):
    """The disk's SMART health in a few words: passed, or the status with its reasons."""
    health = disk.get("health")
    if not health:
        return "-"
    return health["status"] + (": " + "; ".join(health["reasons"]) if health["reasons"] else "")


def _health_word(disk):
    return (disk.get("health") or {}).get("status") or "-"


def _controllers(record):
    return record.get("controllers") or "not read"


def _chosen_by(record):
    """Which rule and variables named the disks (see gate_candidates), in words."""
    words = [CHOSEN_BY.get(source, "ceph-ansible's " + source) for source in record.get("chosen_by") or []]
    return ", ".join(words) or "none"


PLP_PASSED = ("approved all the same: its sync figures pass the thresholds, and disk_gate_plp_required is off "
              "(true blocks such a disk)")


def _plp(disk):
    """The power-loss protection verdict (sync_write_probe) with its reasons, and why a disk
    judged unlikely to have it was approved."""
    plp = disk["plp"]
    if not plp:
        return "-"
    passed = [PLP_PASSED] if plp["verdict"] == "unlikely" and disk["approved"] else []
    return "%s: %s" % (plp["verdict"], "; ".join(list(plp["reasons"]) + passed))


def _plp_word(disk):
    return (disk["plp"] or {}).get("verdict") or "-"


def _write_cache(disk):
    """How the drive's write cache was measured (disk_gate_compare_write_cache or
    disk_gate_write_cache disabled) and whether it is back as found, in words; None when the
    probe measured the drive as it was set."""
    compared, disabled = disk.get("write_cache_comparison"), disk.get("write_cache_disabled")
    if (compared or disabled or {}).get("original") == write_cache.ABSENT:
        return "measured as it is, nothing to switch: " + write_cache.NO_CACHE
    if compared:
        observed = compared.get("observed") or {}
        if compared.get("on_iops") is not None:
            said = "on %s, off %s sync IOPS: %s is faster" % (
                _iops(compared["on_iops"]), _iops(compared["off_iops"]), compared["faster"])
        else:
            said = "not compared"
        said += " (the drive reported %s in the half measured on, %s in the half measured off" % (
            observed.get("on", "-"), observed.get("off", "-"))
    elif disabled:
        said = "measured disabled (the drive reported %s before, %s during the probe" % (
            disabled["original"], disabled["during"] or "-")
    else:
        return None
    record = compared or disabled
    said += ", %s after)" % (record.get("after") or "-")
    if record.get("restored") is False:
        said += "; NOT restored: %s" % record.get("restore_error")
    if record.get("error"):
        said += "; %s" % record["error"]
    return said


def _class_of(disk):
    return disk["device_class"]["class"]


def _crush(disk):
    return _class_of(disk) or "-"


def _class_flag(disk):
    """Why the disk's class is flagged (its rotational flag and its measurement disagree), or ""."""
    found = disk["device_class"]
    return "%s, %s: %s" % (found["class"] or "unknown", found["source"], found["why"]) if found["flagged"] else ""


# Each refusal reason's explanation: the section of docs/refusals.md its first matching pattern
# names, with the one word the Markdown table shows; any other reason of a probe that failed is
# that failure. A reason that refuses nothing (a threshold met, check mode's plan) has none.
REFUSALS_URL = "https://github.com/cephops/osd_tuning/blob/main/docs/refusals.md"
REFUSALS = tuple((re.compile(pattern), word, anchor) for pattern, word, anchor in (
    (r"write IOPS \S+ < ", "iops", "sync-write-iops-below-the-threshold"),
    (r"p99 sync latency \S+ ms > ", "latency", "p99-sync-latency-above-the-limit"),
    (r"power-loss protection unlikely", "plp", "power-loss-protection-unlikely"),
    (r"health", "health", "drive-health"),
    (r"open check|open by another process|locked", "in-use", "in-use"),
    (r"region check", "region", "probe-region-not-empty"),
    (r"journal: ", "journal", "interrupted-probe"),
    (r"Insufficient space|smaller than the end of the probe region", "size", "too-small"),
    (r"write_cache disabled", "cache", "write-cache-cannot-be-switched"),
    (r"an LV |a partition of ", "not-disk", "not-a-whole-disk"),
    (r"no disk of the host has this name", "absent", "not-present"),
    (r"rotational disk: not gated", "hdd", "rotational-disk-not-gated"),
    (r"removable|read-only|Device type|Used by ceph-disk|Has |LVM detected|md RAID member|mounted|has holders|"
     r"root disk|swap|signatures unreadable|Data unreadable|content not fully checked", "data", "holds-data"),
))


PROBE_FAILED = ("error", "the-probe-failed")


def _refusal(reason, verdict):
    """(word, link) of the section that explains a disk's refusal reason, or None."""
    for pattern, word, anchor in REFUSALS:
        if pattern.match(reason):
            break
    else:
        if verdict != "error":
            return None
        word, anchor = PROBE_FAILED
    return word, "%s#%s" % (REFUSALS_URL, anchor)


def _refusals(disk):
    """[(word, link)] of a disk's refusal reasons, each section once, in the reasons' order."""
    found = []
    for reason in disk["reasons"]:
        refusal = _refusal(reason, disk["verdict"])
        if refusal and refusal not in found:
            found.append(refusal)
    return found


def _reasons_md(disk):
    """The Markdown table's reasons cell: a linked word per explanation, the reasons below it."""
    return ", ".join("[%s](%s)" % (word, link) for word, link in _refusals(disk)) or "-"


def _reasons_html(disk):
    """A disk's reasons as HTML, each refusal a link to its explanation."""
    return "; ".join('<a href="%s">%s</a>' % (escape(refusal[1]), _html(reason)) if refusal else _html(reason)
                     for reason, refusal in ((r, _refusal(r, disk["verdict"])) for r in disk["reasons"]))


def _disk_lines(disk):
    """The lines under a host's table of the HTML page: how a disk's write cache was measured, and
    why its class is flagged."""
    return ["%s of %s: %s" % (what, disk["device"], said) for what, said in (
        ("Write cache", _write_cache(disk)), ("Device class", _class_flag(disk))) if said]


def _write_caches(document):
    """[(host, device, words)] of every disk whose write cache the probe was to switch."""
    return [(entry["host"], disk["device"], _write_cache(disk)) for entry in document["hosts"]
            for disk in entry["disks"] if _write_cache(disk)]


def _percent(share):
    return "%s %%" % _ms(share * 100)


def _rule(models):
    """The outlier rule of gate_decision.fleet_models in words, with its constants."""
    rule = models["rule"]
    return ("a disk is flagged when its sync IOPS or p99 latency is further from the median of its model and "
            "firmware than %g x %g x MAD or %s of the median, whichever is more; groups of fewer than %d measured "
            "disks are not judged" % (rule["k"], rule["sigma_per_mad"], _percent(rule["floor"]),
                                      rule["min_group"]))


def _value(key, value):
    """A figure of gate_decision.fleet_models as the reports print it: IOPS or milliseconds."""
    return _iops(value) if key == "write_iops" else _ms(value)


def _figure(group, key):
    figure = group["figures"][key]
    return "-" if figure is None else "%s (MAD %s)" % (_value(key, figure["median"]), _value(key, figure["mad"]))


def _judged(group, min_group):
    return "yes" if group["judged"] else "no: %d of %d measured disks" % (group["measured"], min_group)


UNITS = {"write_iops": "", "p99_sync_latency_ms": " ms"}


def _outlier(outlier):
    """What makes a disk an outlier, in words: the figure, its median and the allowed deviation."""
    key = outlier["figure"]
    value, median, allowed = (_value(key, outlier[field]) + UNITS[key] for field in ("value", "median", "allowed"))
    return "%s %s, %s the median %s of its model and firmware by more than %s" % (
        outlier["label"], value, outlier["direction"], median, allowed)


def _hosts(hosts, shown=5):
    names = ", ".join(hosts[:shown])
    return names if len(hosts) <= shown else "%s and %d more hosts" % (names, len(hosts) - shown)


def _firmware_mix(mixed):
    return "; ".join("%s on %d disks (%s)" % (_text(f["firmware"] or "unknown"), f["disks"], _hosts(f["hosts"]))
                     for f in mixed["firmware"])


def _disk_notes(document):
    """{(host, device): [line, ...]}: a disk's power-loss protection verdict, how its write
    cache was measured, its outliers and its model's firmware mix, for JUnit, which reports
    disk by disk."""
    models = document["models"]
    notes = {}
    for entry in document["hosts"]:
        for disk in entry["disks"]:
            if disk["plp"]:
                notes[(entry["host"], disk["device"])] = ["power-loss protection " + _plp(disk)]
            if _write_cache(disk):
                notes.setdefault((entry["host"], disk["device"]), []).append("write cache " + _write_cache(disk))
            if _class_flag(disk):
                notes.setdefault((entry["host"], disk["device"]), []).append("device class " + _class_flag(disk))
    for group in models["groups"]:
        for outlier in group["outliers"]:
            notes.setdefault((outlier["host"], outlier["device"]), []).append(
                "fleet outlier: " + _outlier(outlier))
    mixed = dict((m["model"], m) for m in models["mixed_firmware"])
    for entry in document["hosts"]:
        for disk in entry["disks"]:
            if disk["model"] in mixed:
                notes.setdefault((entry["host"], disk["device"]), []).append(
                    "firmware %s; the fleet runs this model with %s" % (
                        _text(disk["firmware"] or "unknown"), _firmware_mix(mixed[disk["model"]])))
    return notes


def _md(value):
    """A Markdown table cell: pipes and newlines would break the table. Renderers pass HTML
    through, so what could start a tag, a comment or an autolink (``<`` before a letter, ``/``,
    ``!`` or ``?``) or a character reference (``&`` before a letter or ``#``) is escaped; the rest
    stays as written, so ``>= 80`` and ``< 100`` read the same as text and rendered."""
    text = re.sub(r"<(?=[A-Za-z/!?])", "&lt;", re.sub(r"&(?=[A-Za-z#])", "&amp;", _text(value)))
    return re.sub(r"\s+", " ", text).replace("|", "\\|").strip() or "-"


VERDICT_COLOURS = {"suitable": "#2e7d32", "marginal": "#f9a825", "unsuitable": "#c62828", "unhealthy": "#c62828"}
CHART = {"label_width": 190, "plot_width": 520, "row": 22, "top": 34, "bottom": 34, "low": 10, "high": 100000}
# Disk labels are set in an 11 px monospace font, whose characters are 0.6 em wide (6.6 px): the
# label column grows with the longest label, so a label is never cut (two by-id paths of one
# maker share their first 40 characters).
LABEL_CHAR_WIDTH = 6.8
LABEL_MARGIN = 12


def _x(iops, label_width=CHART["label_width"]):
    """Horizontal position of an IOPS figure on the chart's log scale."""
    low, high = math.log10(CHART["low"]), math.log10(CHART["high"])
    value = math.log10(min(max(iops, CHART["low"]), CHART["high"]))
    return label_width + (value - low) / (high - low) * CHART["plot_width"]


def _label(disk):
    """A disk's whole label on the chart: its device and, if known, its model."""
    return _text(disk["device"]) + (" " + _text(disk["model"]) if disk.get("model") else "")


def _html(value):
    return escape(_text(value))


class _Environment(Environment):
    """Templates of the fleet document: ``a.b`` looks up the key ``b`` of a dict first, the
    faster way for documents made of dicts."""

    def getattr(self, obj, attribute):
        try:
            return obj[attribute]
        except (TypeError, LookupError):
            return Environment.getattr(self, obj, attribute)


_ENV = _Environment(trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, undefined=StrictUndefined)
_ENV.filters.update(text=_text, iops=_iops, ms=_ms, deep=_deep, deep_median=_deep_median, cached=_cached, plp=_plp,
                    plp_word=_plp_word, approval=_approval, chosen_by=_chosen_by,
                    crush=_crush, class_flag=_class_flag, disk_lines=_disk_lines,
                    md=_md, h=_html, x=_x, label=_label, rule=_rule, figure=_figure, judged=_judged, outlier=_outlier,
                    firmware_mix=_firmware_mix, health=_health, controllers=_controllers, write_cache=_write_cache,
                    write_caches=_write_caches, refusals=_refusals, reasons_md=_reasons_md, reasons_html=_reasons_html,
                    health_word=_health_word)


# --------------------------------------------------------------------------- text table

def _aligned(rows):
    """Plain-text rows in columns; the last column is not padded."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join(("".join(cell.ljust(width) + "  " for cell, width in zip(row, widths)) + row[-1]).rstrip()
                     for row in rows)


HOST_TABLE = _ENV.from_string("""\
{{ table }}
{% for disk in record.disks if disk | class_flag %}
{{ ("device class of %s: %s" | format(disk.device, disk | class_flag)) | text }}
{% endfor %}
{% for disk in record.disks if disk.plp %}
{{ ("power-loss protection of %s: %s" | format(disk.device, disk | plp)) | text }}
{% endfor %}
{% for disk in record.disks if disk | write_cache %}
{{ ("write cache of %s: %s" | format(disk.device, disk | write_cache)) | text }}
{% endfor %}
{% for disk in record.disks if disk | refusals %}
{{ ("why %s: %s" | format(disk.device, disk | refusals | map('join', ' ') | join(', '))) | text }}
{% endfor %}
{% for error in record.errors %}
{{ ("error: " ~ error | text).rstrip() }}
{% endfor %}
RAID controllers: {{ record | controllers | text }}
disks chosen by: {{ record | chosen_by }}""")


def host_table(record):
    """Plain-text table of one host's disks, the message of a blocked host."""
    header = ("DEVICE", "CLASS", "CRUSH", "VERDICT", "SYNC IOPS", "P99 MS", "DEEP-QUEUE IOPS", "CACHED", "PLP", "HEALTH",
              "DECISION", "REASONS")
    rows = [header] + [tuple(_text(cell) for cell in (
        d["device"], d["thresholds_class"], _crush(d), d["verdict"] or "-", _iops(d["write_iops"]), _ms(d["p99_sync_latency_ms"]),
        _deep(d), _cached(d), (d["plp"] or {}).get("verdict") or "-",
        (d.get("health") or {}).get("status", "-"), _approval(d), "; ".join(d["reasons"])))
        for d in record["disks"]]
    return HOST_TABLE.render(table=_aligned(rows), record=record)


MODELS_TABLE = _ENV.from_string("""\
Per model and firmware: {{ models | rule }}.
{{ table }}
{% for group in models.groups %}
{% for outlier in group.outliers %}
{{ ("outlier: %s %s (%s, %s): %s" | format(outlier.host, outlier.device, group.model, group.firmware or "-", \
outlier | outlier)) | text }}
{% endfor %}
{% endfor %}
{% for mixed in models.mixed_firmware %}
{{ ("mixed firmware: %s: %s" | format(mixed.model, mixed | firmware_mix)) | text }}
{% endfor %}
measured disks without a model (not grouped): {{ models.measured_without_model }}""")


def models_table(models):
    """Plain-text table of the fleet per model and firmware, its outliers and mixed firmware."""
    header = ("MODEL", "FIRMWARE", "DISKS", "HOSTS", "MEDIAN SYNC IOPS", "MEDIAN P99 MS", "MEDIAN DEEP-QUEUE IOPS",
              "JUDGED", "OUTLIERS")
    rows = [header] + [tuple(_text(cell) for cell in (
        g["model"], g["firmware"] or "-", g["disks"], g["hosts"], _figure(g, "write_iops"),
        _figure(g, "p99_sync_latency_ms"), _deep_median(g), _judged(g, models["rule"]["min_group"]), len(g["outliers"])))
        for g in models["groups"]]
    return MODELS_TABLE.render(table=_aligned(rows), models=models)


def to_table(document):
    """Every host's text table under a line naming it and its state, then the fleet per model."""
    hosts = ["%s: %s\n%s" % (_text(entry["host"]), "passed" if entry["passed"] else "not passed", host_table(entry))
             for entry in document["hosts"]]
    return "\n\n".join(hosts + [models_table(document["models"])])


# --------------------------------------------------------------------------- JSON and JUnit

def to_json(document):
    return json.dumps(document, indent=2, sort_keys=True)


def to_junit(document):
    """One test suite per host, one test case per disk; a blocked disk is a failure, a disk
    not gated (HDD skip) or still pending (check mode) is skipped, a host without a record
    is one failing test case."""
    root = ET.Element("testsuites", name="disk_gate")
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    notes = _disk_notes(document)
    for entry in document["hosts"]:
        suite = ET.SubElement(root, "testsuite", name=_text(entry["host"]))
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", name="raid_controllers", value=_text(_controllers(entry)))
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
                failure.text = _text("\n".join(disk["reasons"] + ["explained at %s" % link for _word, link in _refusals(disk)]))
            elif disk["approved"] is None or not disk["gated"]:
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=_text("; ".join(disk["reasons"])))
            else:
                out = ET.SubElement(case, "system-out")
                out.text = _text("%s, %s sync IOPS, p99 %s ms%s%s, health %s" % (
                    disk["verdict"], _iops(disk["write_iops"]), _ms(disk["p99_sync_latency_ms"]),
                    ", %s deep-queue IOPS" % _deep(disk) if disk["deep_queue"] else "",
                    ", cached" if disk["cached"] else "", _health(disk)))
            if disk is not None and notes.get((entry["host"], disk["device"])):
                out = case.find("system-out")
                if out is None:
                    out = ET.SubElement(case, "system-out")
                out.text = _text("\n".join(([out.text] if out.text else []) + notes[(entry["host"], disk["device"])]))
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
        suite.set("errors", "0")
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("errors", "0")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# --------------------------------------------------------------------------- Markdown

MARKDOWN = _ENV.from_string("""\
{% set summary = document.summary %}
# Disk gate report

Generated {{ document.generated_at | md }}. {{ summary.hosts_passed }} of {{ summary.hosts }} hosts passed; \
{{ summary.approved }} of {{ summary.disks }} disks approved, {{ summary.blocked }} blocked, \
{{ summary.pending }} pending, {{ summary.absent }} absent, {{ summary.cached }} from cache.

{% for entry in document.hosts %}
- Disks of {{ entry.host | md }} chosen by {{ entry | chosen_by | md }}.
- RAID controllers of {{ entry.host | md }}: {{ entry | controllers | md }}.
{% endfor %}

| Host | Device | Model | Class | CRUSH class | Verdict | Sync IOPS | p99 ms | Deep-queue IOPS | Cached | Power-loss protection | Health | Decision | Reasons |
| --- | --- | --- | --- | --- | --- | ---: | ---: | ---: | --- | --- | --- | --- | --- |
{% for entry in document.hosts %}
{% if not entry.disks %}
| {{ entry.host | md }} | - | - | - | - | {{ entry.status | md }} | - | - | - | - | - | - | blocked | [error]({{ probe_failed }}) |
{% endif %}
{% for disk in entry.disks %}
| {{ entry.host | md }} | {{ disk.device | md }} | {{ disk.model | md }} | {{ disk.thresholds_class | md }} | {{ disk | crush | md }} | \
{{ disk.verdict | md }} | {{ disk.write_iops | iops | md }} | {{ disk.p99_sync_latency_ms | ms | md }} | \
{{ disk | deep | md }} | {{ disk | cached | md }} | {{ disk | plp_word | md }} | {{ disk | health_word | md }} | \
{{ disk | approval | md }} | {{ disk | reasons_md }} |
{% endfor %}
{% endfor %}
{% for host, device, said in document | write_caches %}
{% if loop.first %}

{% endif %}
- Write cache of {{ host | md }} {{ device | md }}: {{ said | md }}.
{% endfor %}
{% for entry in document.hosts %}
{% for disk in entry.disks if disk.plp %}
{% if loop.first %}

{% endif %}
- Power-loss protection of {{ entry.host | md }} {{ disk.device | md }}: {{ disk | plp | md }}.
{% endfor %}
{% endfor %}
{% for entry in document.hosts if entry.errors %}
{% if loop.first %}

{% endif %}
- Errors of {{ entry.host | md }}: {{ entry.errors | join("; ") | md }}.
{% endfor %}
{% for entry in document.hosts %}
{% for disk in entry.disks if disk.reasons %}
{% if loop.first %}

{% endif %}
- Reasons of {{ entry.host | md }} {{ disk.device | md }}: {{ disk.reasons | join("; ") | md }}.
{% endfor %}
{% endfor %}
{% for entry in document.hosts %}
{% for disk in entry.disks if disk.health and disk.health.reasons %}
{% if loop.first %}

{% endif %}
- Health of {{ entry.host | md }} {{ disk.device | md }}: {{ disk | health | md }}.
{% endfor %}
{% endfor %}
{% for entry in document.hosts %}
{% for disk in entry.disks if disk | class_flag %}
{% if loop.first %}

{% endif %}
- Device class of {{ entry.host | md }} {{ disk.device | md }}: {{ disk | class_flag | md }}.
{% endfor %}
{% endfor %}

{% set models = document.models %}
## Per model and firmware

Rule: {{ models | rule | md }}. Measured disks without a model (not grouped): {{ models.measured_without_model }}.

| Model | Firmware | Disks | Hosts | Median sync IOPS | Median p99 ms | Median deep-queue IOPS | Judged | Outliers |
| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |
{% for group in models.groups %}
| {{ group.model | md }} | {{ group.firmware | md }} | {{ group.disks }} | {{ group.hosts }} | \
{{ group | figure("write_iops") | md }} | {{ group | figure("p99_sync_latency_ms") | md }} | {{ group | deep_median | md }} | \
{{ group | judged(models.rule.min_group) | md }} | {{ group.outliers | length }} |
{% endfor %}

{% for group in models.groups %}
{% for outlier in group.outliers %}
- Outlier: {{ outlier.host | md }} {{ outlier.device | md }} ({{ group.model | md }}, {{ group.firmware | md }}): \
{{ outlier | outlier | md }}.
{% endfor %}
{% endfor %}
{% for mixed in models.mixed_firmware %}
- Mixed firmware: {{ mixed.model | md }}: {{ mixed | firmware_mix | md }}.
{% endfor %}

Reference drives (sync IOPS): \
{% for drive in document.reference_drives %}{{ drive.label | md }} {{ drive.iops | iops }} ({{ drive.source | md }})\
{{ ", " if not loop.last }}{% endfor %}

""")


def to_markdown(document):
    return MARKDOWN.render(document=document, probe_failed="%s#%s" % (REFUSALS_URL, PROBE_FAILED[1]))


# --------------------------------------------------------------------------- HTML and SVG

def _thresholds_in_use(entry, settings):
    """The threshold lines of the disk classes gated on this host: flash solid, HDD dotted."""
    lines = []
    for group in sorted(set(d["thresholds_class"] for d in entry["disks"] if d["gated"])):
        limits = (settings.get("thresholds") or {}).get(group) or {}
        for key, colour, text in (("min_iops", "#2e7d32", "suitable"), ("marginal_min_iops", "#f9a825", "marginal")):
            if limits.get(key):
                lines.append({"iops": limits[key], "colour": colour, "dotted": group != "flash",
                              "title": "%s %s from %s IOPS" % (group, text, _iops(limits[key]))})
    return lines


# One line of SVG: every line of the template ends in a backslash.
HOST_SVG = _ENV.from_string("""\
{% set rows = entry.disks or [none] %}\
{% set bottom = chart.top + rows | length * chart.row %}\
{% set height = bottom + chart.bottom %}\
{% set width = chart.label_width + chart.plot_width + 20 %}\
<svg xmlns="http://www.w3.org/2000/svg" width="{{ width }}" height="{{ height }}" \
viewBox="0 0 {{ width }} {{ height }}" role="img" aria-label="{{ ('sync write IOPS of ' ~ entry.host | text) | h }}">\
<title>{{ ('Sync write IOPS on %s (log scale)' | format(entry.host | text)) | h }}</title>\
{% for iops in ticks %}\
<line x1="{{ '%.1f' | format(iops | x(chart.label_width)) }}" y1="{{ chart.top - 6 }}" x2="{{ '%.1f' | format(iops | x(chart.label_width)) }}" \
y2="{{ bottom }}" stroke="#ddd"/>\
<text x="{{ '%.1f' | format(iops | x(chart.label_width)) }}" y="{{ bottom + 14 }}" font-size="10" text-anchor="middle">\
{{ iops | iops }}</text>\
{% endfor %}\
<text x="{{ '%.1f' | format(chart.label_width + chart.plot_width / 2.0) }}" y="{{ bottom + 28 }}" font-size="10" \
text-anchor="middle">sync write IOPS (log scale)</text>\
{% for drive in references %}\
{% set x = '%.1f' | format(drive.iops | x(chart.label_width)) %}\
<g><title>{{ 'R%d %s: %s IOPS (%s)' | format(loop.index, drive.label, drive.iops | iops, drive.source) | h }}</title>\
<line x1="{{ x }}" y1="{{ chart.top - 4 }}" x2="{{ x }}" y2="{{ bottom }}" stroke="#999" stroke-dasharray="4 3"/>\
<text x="{{ x }}" y="{{ chart.top - 8 - 9 * (loop.index % 2) }}" font-size="9" fill="#666" text-anchor="middle">\
R{{ loop.index }}</text></g>\
{% endfor %}\
{% for line in thresholds %}\
<g><title>{{ line.title | h }}</title><line x1="{{ '%.1f' | format(line.iops | x(chart.label_width)) }}" y1="{{ chart.top - 6 }}" \
x2="{{ '%.1f' | format(line.iops | x(chart.label_width)) }}" y2="{{ bottom }}" stroke="{{ line.colour }}" stroke-width="2"\
{% if line.dotted %} stroke-dasharray="2 3"{% endif %}/></g>\
{% endfor %}\
{% for disk in rows %}\
{% set y = chart.top + loop.index0 * chart.row %}\
{% if disk is none %}\
<text x="4" y="{{ y + 14 }}" font-size="11">{{ entry.errors | join('; ') | h }}</text>\
{% else %}\
<text x="4" y="{{ y + 14 }}" font-size="11" font-family="monospace">{{ disk | label | h }}</text>\
{% if disk.write_iops is none %}\
<text x="{{ chart.label_width + 4 }}" y="{{ y + 14 }}" font-size="11" fill="#c62828">\
{{ (disk.verdict or 'pending') | h }}</text>\
{% else %}\
{% set x = disk.write_iops | x(chart.label_width) %}\
<g><title>{{ '%s: %s, %s IOPS, p99 %s ms, %s' | format(disk.device, disk.verdict, disk.write_iops | iops, \
disk.p99_sync_latency_ms | ms, disk | approval) | h }}</title>\
<rect x="{{ chart.label_width }}" y="{{ y + 3 }}" width="{{ '%.1f' | format([x - chart.label_width, 1] | max) }}" \
height="{{ chart.row - 8 }}" fill="{{ colours.get(disk.verdict, '#777') }}"/>\
<text x="{{ '%.1f' | format(x + 4) }}" y="{{ y + 14 }}" font-size="10">\
{{ (disk.write_iops | iops ~ ('' if disk.approved else ' blocked')) | h }}</text></g>\
{% endif %}\
{% endif %}\
{% endfor %}\
</svg>""")


def host_svg(entry, settings, references):
    """Inline SVG: one bar per disk (sync IOPS, log scale), the thresholds of the disk classes
    shown (flash solid, HDD dotted) and the reference drives (grey, numbered R1...)."""
    ticks = [10 ** exponent for exponent in range(int(math.log10(CHART["low"])), int(math.log10(CHART["high"])) + 1)]
    longest = max([len(_label(disk)) for disk in entry.get("disks") or []] or [0])
    chart = dict(CHART, label_width=max(CHART["label_width"], int(math.ceil(longest * LABEL_CHAR_WIDTH)) + LABEL_MARGIN))
    return HOST_SVG.render(entry=entry, chart=chart, ticks=ticks, references=references,
                           thresholds=_thresholds_in_use(entry, settings), colours=VERDICT_COLOURS)


HTML = _ENV.from_string("""\
{% set summary = document.summary %}
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Disk gate report</title>
<style>body{font-family:sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse;margin:.5em 0 1.5em}\
td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px;text-align:left}\
.approved{color:#2e7d32}.blocked{color:#c62828;font-weight:bold}.pending,.absent{color:#777}</style></head><body>
<h1>Disk gate report</h1>
<p>Generated {{ document.generated_at | h }}. Policy {{ settings.get('policy') | h }}. \
{{ summary.hosts_passed }} of {{ summary.hosts }} hosts passed; {{ summary.approved }} of {{ summary.disks }} disks \
approved, {{ summary.blocked }} blocked, {{ summary.pending }} pending, {{ summary.absent }} absent, \
{{ summary.cached }} from cache.</p>
<p>Bars: sync write IOPS of each disk on a log scale, green suitable, yellow marginal, red unsuitable. \
Vertical lines: the thresholds (flash solid, HDD dotted; green suitable, yellow marginal) and the reference drives \
(grey, numbered):</p><ul>
{% for drive in document.reference_drives %}
<li>R{{ loop.index }} {{ drive.label | h }} ({{ drive.kind | h }}): {{ drive.iops | iops }} IOPS, \
{{ drive.source | h }}</li>
{% endfor %}
</ul>
{% for entry in document.hosts %}
<h2 id="{{ entry.host | h }}">{{ entry.host | h }} <span class="{{ 'approved' if entry.passed else 'blocked' }}">\
{{ 'passed' if entry.passed else 'not passed' }}</span></h2>
{% for error in entry.errors %}
<p class="blocked">{{ error | h }}</p>
{% endfor %}
<p>RAID controllers: {{ entry | controllers | h }}</p>
{{ svg(entry, settings, document.reference_drives) }}
{% if entry.disks %}
<table><tr><th>Device</th><th>Model</th><th>Serial</th><th>Class</th><th>CRUSH class</th><th>Verdict</th><th>Sync IOPS</th>\
<th>p99 ms</th><th>Deep-queue IOPS</th><th>Cached</th><th>Power-loss protection</th><th>Health</th><th>Decision</th><th>Reasons</th></tr>
{% for disk in entry.disks %}
<tr><td>{{ disk.device | h }}</td><td>{{ (disk.model or '-') | h }}</td><td>{{ (disk.serial or '-') | h }}</td>\
<td>{{ disk.thresholds_class | h }}</td><td>{{ disk | crush | h }}</td><td>{{ (disk.verdict or '-') | h }}</td><td>{{ disk.write_iops | iops | h }}</td>\
<td>{{ disk.p99_sync_latency_ms | ms | h }}</td><td>{{ disk | deep | h }}</td><td>{{ disk | cached | h }}</td><td>{{ disk | plp | h }}</td>\
<td>{{ disk | health | h }}</td>\
<td class="{{ disk | approval }}">{{ disk | approval | h }}</td><td>{{ disk | reasons_html }}</td></tr>
{% endfor %}
</table>
{% for line in entry.disks | map('disk_lines') | sum(start=[]) %}
{% if loop.first %}<ul>
{% endif %}
<li>{{ line | h }}</li>
{% if loop.last %}</ul>
{% endif %}
{% endfor %}
{% endif %}
{% endfor %}
{% set models = document.models %}
<h2 id="per-model">Per model and firmware</h2>
<p>Rule: {{ models | rule | h }}. Measured disks without a model (not grouped): {{ models.measured_without_model }}.</p>
{% if models.groups %}
<table><tr><th>Model</th><th>Firmware</th><th>Disks</th><th>Hosts</th><th>Median sync IOPS</th><th>Median p99 ms</th>\
<th>Median deep-queue IOPS</th><th>Judged</th><th>Outliers</th></tr>
{% for group in models.groups %}
<tr><td>{{ group.model | h }}</td><td>{{ (group.firmware or '-') | h }}</td><td>{{ group.disks }}</td>\
<td>{{ group.hosts }}</td><td>{{ group | figure('write_iops') | h }}</td>\
<td>{{ group | figure('p99_sync_latency_ms') | h }}</td><td>{{ group | deep_median | h }}</td><td>{{ group | judged(models.rule.min_group) | h }}</td>\
<td class="{{ 'blocked' if group.outliers else 'approved' }}">{{ group.outliers | length }}</td></tr>
{% endfor %}
</table>
{% endif %}
{% if models.outliers or models.mixed_firmware %}
<ul>
{% for group in models.groups %}
{% for outlier in group.outliers %}
<li class="blocked">Outlier: {{ outlier.host | h }} {{ outlier.device | h }} ({{ group.model | h }}, \
{{ (group.firmware or '-') | h }}): {{ outlier | outlier | h }}</li>
{% endfor %}
{% endfor %}
{% for mixed in models.mixed_firmware %}
<li>Mixed firmware: {{ mixed.model | h }}: {{ mixed | firmware_mix | h }}</li>
{% endfor %}
</ul>
{% endif %}
</body></html>
""")


def to_html(document):
    return HTML.render(document=document, settings=document.get("settings") or {}, svg=host_svg)


# --------------------------------------------------------------------------- cephadm

def _service_id(*parts):
    """Ceph takes only [a-zA-Z0-9_.-] in a service id (ServiceSpec.validate)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "-", "-".join(_text(part) for part in parts))


# yaml.safe_dump_all with libyaml's emitter where PyYAML has it: the same text, 30 times faster.
_YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
SPEC_PARTS = (("data", "data_devices"), ("db", "db_devices"), ("wal", "wal_devices"))


def _osd_spec(service_id, host, paths, device_class=None):
    spec = dict((key, {"paths": paths[part]}) for part, key in SPEC_PARTS if paths.get(part))
    if device_class:
        spec["crush_device_class"] = _text(device_class)
    return {"service_type": "osd", "service_id": service_id, "placement": {"hosts": [_text(host)]}, "spec": spec}


def _lvm_entries(entry):
    """(index, [(part, disk)], whether a drive group can name it) of each lvm_volumes entry the
    host hands over: one with an LV or a partition it cannot."""
    for index in entry["handover"].get(LVM_VOLUMES, []):
        parts = [(slot[2], d) for d in entry["disks"] for slot in d["slots"] if slot[:2] == [LVM_VOLUMES, index]]
        yield index, parts, not any(d["verdict"] == "not_probed" for _part, d in parts)


def _batch_specs(prefix, entry, batch, disks, stable, notes):
    """The batch's specs: one with the class its data disks share; one per class where they
    differ and no DB or WAL disk is shared (a spec takes one class); else one without, noted."""
    groups = {}
    for device in batch["data"]:
        groups.setdefault(_class_of(disks[device]), []).append(device)

    def spec(service_id, data, device_class):
        paths = dict(batch, data=data)
        return _osd_spec(service_id, entry["cephadm_host"],
                         dict((part, [stable[d] for d in devices]) for part, devices in paths.items()), device_class)

    if len(groups) == 1:
        return [spec(_service_id(prefix, entry["host"]), batch["data"], list(groups)[0])]
    if not (batch["db"] or batch["wal"]):
        return [spec(_service_id(prefix, entry["host"], device_class or "unclassified"), groups[device_class], device_class)
                for device_class in sorted(groups, key=lambda c: c or "")]
    notes.append("%s: data disks of classes %s share DB/WAL disks, and a spec takes one class: set each OSD's with "
                 "`ceph osd crush set-device-class` after deployment"
                 % (entry["host"], ", ".join(sorted(c or "unknown" for c in groups))))
    return [spec(_service_id(prefix, entry["host"]), batch["data"], None)]


def _host_specs(prefix, entry, notes):
    """The specs of one host's handed-over disks, named by stable paths: one for the disks of
    ceph-volume's batch (devices, dedicated_devices, bluestore_wal_devices), one per
    lvm_volumes entry; an entry with an LV or a partition, which a drive group cannot name,
    is left out with a note."""
    disks = dict((d["device"], d) for d in entry["disks"])
    stable = dict((device, _text(stable_path(d["given"], d["links"], device))) for device, d in disks.items())
    handover = entry["handover"]
    batch = dict((part, handover.get(variable, [])) for variable, part in LIST_PARTS)
    specs = _batch_specs(prefix, entry, batch, disks, stable, notes) if batch["data"] else []
    for index, parts, nameable in _lvm_entries(entry):
        if not nameable:
            notes.append("%s: lvm_volumes entry %d left out: it names an LV or a partition" % (entry["host"], index))
            continue
        specs.append(_osd_spec(_service_id(prefix, entry["host"], "lvm", index), entry["cephadm_host"],
                               dict((part, [stable[d["device"]]]) for part, d in parts),
                               next((_class_of(d) for part, d in parts if part == "data"), None)))
    return specs


def to_cephadm_spec(document):
    """OSD service specs of the disks the gate lets through, per host (paths differ per
    host), laid out as they were gated. Under the exclude policy every host's handed-over
    disks; under block and warn only hosts that passed. Service ids start with the settings'
    ``cephadm_service_id``. Comments head the file: what was left out, the fleet's outliers
    and mixed firmware (gate_decision.fleet_models), the disks unlikely to have power-loss protection
    and the unhealthy disks with their health reasons."""
    settings = document.get("settings") or {}
    prefix = settings.get("cephadm_service_id") or "gated"
    specs, notes = [], []
    for entry in _passed_entries(document):
        specs += _host_specs(prefix, entry, notes)
    notes += ["%s %s: fleet outlier: %s" % (outlier["host"], outlier["device"], _outlier(outlier))
              for group in document["models"]["groups"] for outlier in group["outliers"]]
    notes += ["mixed firmware: %s: %s" % (mixed["model"], _firmware_mix(mixed))
              for mixed in document["models"]["mixed_firmware"]]
    disks = [(entry["host"], disk) for entry in document["hosts"] for disk in entry["disks"]]
    notes += ["%s %s: power-loss protection %s" % (host, disk["device"], _plp(disk))
              for host, disk in disks if (disk["plp"] or {}).get("verdict") == "unlikely"]
    notes += ["%s %s: health %s" % (host, disk["device"], _health(disk))
              for host, disk in disks if disk["verdict"] == "unhealthy"]
    notes += _class_notes(document)
    head = "".join("# %s\n" % _text(note).replace("\n", " ") for note in notes)
    if not specs:
        return head + "# no host has disks the gate lets through\n"
    return head + yaml.dump_all(specs, Dumper=_YAML_DUMPER, explicit_start=True, sort_keys=False,
                                default_flow_style=False, allow_unicode=True)


def _handed_data(entry):
    """The host's handed-over data disks, in order: the batch's, then each lvm_volumes entry's
    (an entry that names an LV or a partition is left out, as in the cephadm spec)."""
    disks = dict((d["device"], d) for d in entry["disks"])
    handover = entry["handover"]
    data = [disks[device] for device in handover.get(DEVICES, []) if device in disks]
    for _index, parts, nameable in _lvm_entries(entry):
        if nameable:
            data += [d for part, d in parts if part == "data"]
    fast = sorted(set(device for variable, part in LIST_PARTS if part != "data" for device in handover.get(variable, [])))
    return data, fast


def _passed_entries(document):
    """The hosts whose disks the outputs for the orchestrators name: under the exclude policy every
    host's handed-over disks, under block and warn only hosts that passed."""
    settings = document.get("settings") or {}
    return [entry for entry in document["hosts"]
            if entry["passed"] or (settings.get("policy") == "exclude" and entry["status"] != "no_result")]


def _class_notes(document):
    return ["%s %s: device class %s (%s)" % (entry["host"], disk["device"], disk["device_class"]["class"],
                                             disk["device_class"]["why"])
            for entry in document["hosts"] for disk in entry["disks"]
            if disk["device_class"]["flagged"]]


def to_rook_storage(document):
    """The ``storage`` section of a Rook CephCluster naming the disks the gate lets through:
    no node or device but these (``useAllNodes``, ``useAllDevices`` false), each node by its
    orchestrator name (the hostname Rook matches ``kubernetes.io/hostname`` with), each data disk
    by its stable path with its CRUSH class (``config.deviceClass``). DB and WAL disks are named
    in the comments that head it, with the flagged device classes."""
    nodes, notes = [], []
    for entry in _passed_entries(document):
        data, fast = _handed_data(entry)
        if fast:
            notes.append("%s: DB/WAL disks %s are not in this section: give the node's devices a metadataDevice "
                         "by hand" % (entry["host"], ", ".join(fast)))
        devices = []
        for disk in data:
            device = {"name": _text(stable_path(disk["given"], disk["links"], disk["device"]))}
            if _class_of(disk):
                device["config"] = {"deviceClass": _text(_class_of(disk))}
            devices.append(device)
        if devices:
            nodes.append({"name": _text(entry["cephadm_host"]), "devices": devices})
    head = "".join("# %s\n" % _text(note).replace("\n", " ") for note in notes + _class_notes(document))
    if not nodes:
        head += "# no host has disks the gate lets through\n"
    return head + yaml.dump({"storage": {"useAllNodes": False, "useAllDevices": False, "nodes": nodes}},
                            Dumper=_YAML_DUMPER, sort_keys=False, default_flow_style=False, allow_unicode=True)


BUILDERS = {
    "table": to_table,
    "json": to_json,
    "junit": to_junit,
    "markdown": to_markdown,
    "html": to_html,
    "cephadm_spec": to_cephadm_spec,
    "rook_storage": to_rook_storage,
}


def gate_report(records, output_format, hosts, settings=None, generated_at=None):
    if output_format not in BUILDERS:
        raise AnsibleFilterError("gate_report: unknown format %s (one of %s)"
                                 % (output_format, ", ".join(sorted(BUILDERS))))
    document = gate_decision.fleet_document(hosts, records, settings or {}, generated_at)
    return BUILDERS[output_format](document)


class FilterModule(object):
    def filters(self):
        return {"gate_report": gate_report}
