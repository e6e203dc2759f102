# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The disk gate's decisions, pure functions of the candidates and the probe job.

``host_record`` turns one host's candidates and probe job into approved and blocked disks;
``fleet_document`` gathers every host's record (hosts without one count as not approved)
and the per-model view of ``fleet_models`` into the document the renderers of gate_report.py
turn into reports.

``fleet_models``, the fleet per model: every measured disk next to the disks of its model and
firmware.

Disks of one model and firmware should measure alike; one that does not (worn, failing, a
different cache setting, a slot on a slower controller) is flagged even when it passes the
thresholds. The rule is robust, so the outliers it looks for cannot hide themselves:

    flagged when |x - median| > max(K * 1.4826 * MAD, FLOOR * median)

per figure (sync IOPS, p99 latency) and group, where MAD is the median of |x - median|.
1.4826 * MAD estimates the standard deviation of normally distributed figures while up to
half of the group may be outliers; K = 3.5 is the usual cut for this modified z-score
(Iglewicz and Hoaglin). The FLOOR keeps identical disks, whose MAD is 0 or nearly so (fio
reports percentiles in buckets), from flagging noise. Groups with fewer than MIN_GROUP
measured disks are not judged: with two or three values the median is one of the disks
under judgement.

A model that runs more than one firmware in the fleet is listed with the disks and hosts of
each: firmware should be current and alike.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch

from ansible_collections.cephops.osd_tuning.plugins.module_utils.blockdev import copy_identity
from ansible_collections.cephops.osd_tuning.plugins.plugin_utils.ceph_ansible import DEVICES, handover

NO_RESULT = "no gate result: the host was unreachable or failed before the gate finished"

# Reference drives for the chart. The SSD selection article: its probe (4k random writes, fsync after each).
# The journal test article: the journal test (sequential 4k O_DSYNC writes, one job), published in MB/s and
# converted here at 256 IOPS per MB/s (fio's old MB = 1024 KiB, 4 KiB per write).
REFERENCE_DRIVES = (
    {"label": "Samsung 850 Pro 256GB", "iops": 384, "kind": "consumer SATA", "source": "journal test article, 1.5 MB/s"},
    {"label": "Samsung 980", "iops": 574, "kind": "consumer NVMe", "source": "SSD selection article"},
    {"label": "Crucial MX200", "iops": 947, "kind": "consumer SATA", "source": "journal test article, 3.7 MB/s"},
    {"label": "Intel DC S3500", "iops": 8713, "kind": "enterprise SATA", "source": "SSD selection article"},
    {"label": "Samsung SM863 240GB", "iops": 16563, "kind": "enterprise SATA", "source": "journal test article, 64.7 MB/s"},
    {"label": "Kioxia CD6", "iops": 36600, "kind": "enterprise NVMe", "source": "SSD selection article"},
)


# The device class, from what a disk measures where the kernel's rotational flag says otherwise.
# A durable write (4 KiB written and flushed, the probe's QD1 median: the write's completion plus
# its fsync) waits on a spinning disk for the sector to come under the head: half a turn on the
# median, 2 ms at 15 000 rpm, 4.2 ms at 7 200. So no spinning disk takes 1 ms or less, and flash
# that takes 4 ms or more is as slow as one. A RAID controller's write-back cache absorbs the
# flush, so behind one the figure says nothing of the disk.
FLASH_MAX_MS = 1.0
SPINNING_MIN_MS = 4.0
DEVICE_CLASSES = ("hdd", "ssd", "nvme")


def durable_write_ms(latency_us):
    """The median durable write in ms (completion plus fsync), the mean where fio gave no median
    (dd), or None."""
    completion, sync = (latency_us or {}).get("completion") or {}, (latency_us or {}).get("sync") or {}
    write = completion.get("p50") if completion.get("p50") is not None else completion.get("mean")
    if write is None:
        return None
    return round((write + (sync.get("p50") or 0)) / 1000.0, 3)


def write_back_disks(controllers):
    """The devices a RAID controller's write-back cache sits in front of (controller_cache)."""
    return set(drive.get("os_drive") for tool in (controllers or {}).get("tools") or []
               for drive in tool.get("virtual_drives") or []
               if "back" in (drive.get("write_policy") or "").lower() and drive.get("os_drive"))


def _pinned(disk, settings):
    for pin in settings.get("device_class_overrides") or []:
        if any(pin.get(key) and pin[key] == disk.get(key) for key in ("serial", "wwn")):
            return pin["class"], "pinned for its %s (disk_gate_device_class_overrides)" % (
                "serial" if pin.get("serial") else "WWN")
    for pin in settings.get("device_class_models") or []:
        if disk.get("model") and fnmatch.fnmatchcase(disk["model"], pin["model"]):
            return pin["class"], "pinned for model %s (disk_gate_device_class_models)" % pin["model"]
    return None, None


def device_class(disk, settings, write_back):
    """The CRUSH device class a disk gets, with what decided it: ``class``, ``source``
    (pinned, measured or kernel), ``kernel`` (the class the rotational flag gives, as Ceph takes
    it), ``measured`` (flash, spinning or None), ``durable_write_ms``, ``flagged`` (the flag and
    the measurement disagree) and ``why``."""
    rotational = disk.get("rotational")
    kernel = None if rotational is None else "hdd" if rotational else "nvme" if disk.get("transport") == "nvme" else "ssd"
    figure = disk.get("durable_write_ms")
    measured = None
    if figure is not None and disk["device"] not in write_back:
        measured = "flash" if figure <= FLASH_MAX_MS else "spinning" if figure >= SPINNING_MIN_MS else None
    flagged = (kernel == "hdd" and measured == "flash") or (kernel in ("ssd", "nvme") and measured == "spinning")
    said = None
    if flagged:
        said = ("the kernel calls it rotational, but a durable write took %s ms (median), faster than a spinning disk "
                "can (<= %s ms)" % (figure, FLASH_MAX_MS) if measured == "flash" else
                "the kernel calls it non-rotational, but a durable write took %s ms (median), as slow as a spinning "
                "disk (>= %s ms)" % (figure, SPINNING_MIN_MS))
    chosen, pinned_why = _pinned(disk, settings)
    if chosen:
        source, why = "pinned", pinned_why
    elif flagged and measured == "flash":
        # Flash that says it spins: mClock's HDD defaults and the HDD rule would waste it.
        chosen, source, why = "nvme" if disk.get("transport") == "nvme" else "ssd", "measured", said
    else:
        # Slow flash stays flash: the flag is reported, the class is the operator's to pin.
        chosen, source = kernel, "kernel"
        why = said or ("the kernel's rotational flag" + (
            "; a write-back controller cache hides the disk's own latency" if disk["device"] in write_back else ""))
    return {"class": chosen, "source": source, "kernel": kernel, "measured": measured, "durable_write_ms": figure,
            "flagged": flagged, "why": why}


def passes(verdict, allow_marginal):
    """True, False, or None while undecided (check mode plans a probe without a verdict)."""
    if verdict is None:
        return None
    return verdict in ("suitable", "skipped", "not_probed") or (verdict == "marginal" and bool(allow_marginal))


def decide(verdict, allow_marginal, absent_policy, fail_closed=False):
    """approved, blocked, pending (check mode), or absent: a disk not present is skipped, as
    ceph-ansible skips it, unless ``absent_policy`` is block. ``fail_closed`` (where an operator
    qualifies disks) blocks every name the gate could not judge: an absent one, and an LV or a
    partition, which pass ungated otherwise."""
    if verdict == "absent":
        return "blocked" if absent_policy in ("block", "fail") or fail_closed else "absent"
    if verdict == "not_probed" and fail_closed:
        return "blocked"
    return {True: "approved", False: "blocked", None: "pending"}[passes(verdict, allow_marginal)]


def job_outcome(started, finished):
    """{"results": [...]} or {"error": why} of the host's probe job, or {} when it had no disk to
    probe. ``started`` is the registered result of the async start task and ``finished`` that of
    the async_status task that waited for the job. Anything but a finished, successful job is an
    error: the gate fails closed."""
    started, finished = started or {}, finished or {}
    if started.get("skipped"):
        return {}
    if started.get("unreachable"):
        return {"error": "host unreachable when the probe started: %s" % started.get("msg", "")}
    if not started.get("failed") and "ansible_job_id" not in started and "results" in started:
        # Check mode runs the module without async (ansible-core before 2.17 refuses both).
        return {"results": started["results"]}
    if started.get("failed") or not started.get("ansible_job_id"):
        return {"error": "the probe did not start: %s" % started.get("msg", "")}
    if not finished or finished.get("skipped"):
        return {"error": "no status of the probe job"}
    if finished.get("unreachable"):
        return {"error": "host unreachable during the probe: %s" % finished.get("msg", "")}
    if finished.get("failed") or not finished.get("finished") or "results" not in finished:
        # A module failure arrives as a finished job with a msg and no results, its failed
        # flag cleared by the poll's failed_when.
        return {"error": "the probe failed: %s" % (finished.get("msg") or "unfinished")}
    return {"results": finished.get("results") or []}


def health_verdict(verdict, health, require):
    """The probe's verdict, or ``unhealthy`` (with its reasons) when the drive's health failed,
    or is unknown and ``require`` is set."""
    if not health:
        return verdict, []
    if health["status"] == "failed":
        return "unhealthy", ["health: %s" % reason for reason in health["reasons"]]
    if health["status"] == "unknown" and require:
        return "unhealthy", ["health unknown (disk_gate_health_required): %s" % "; ".join(health["reasons"])]
    return verdict, []


def _disk_entry(candidate, result, settings, health, write_back):
    entry = {
        "device": candidate["device"], "given": list(candidate["given"]), "sources": list(candidate["sources"]),
        "slots": [list(slot) for slot in candidate["slots"]], "roles": list(candidate["roles"]),
        "thresholds_class": candidate["thresholds_class"], "presence": candidate["presence"], "links": list(candidate["links"]),
        "name": None, "transport": None, "rotational": candidate.get("rotational"), "verdict": None, "reasons": [],
        "write_iops": None, "p99_sync_latency_ms": None, "runtime_ms": None, "cached": False,
        "cache_age_seconds": None, "plp": None, "write_cache_comparison": None, "write_cache_disabled": None,
        "durable_write_ms": durable_write_ms(result.get("latency_us")),
        "deep_queue": deep_queue(result.get("deep_queue")),
    }
    entry.update(copy_identity(result), wwn=result.get("wwn") or candidate["wwn"])
    for key in ("name", "transport", "verdict", "reasons", "write_iops", "p99_sync_latency_ms", "runtime_ms", "cached",
                "cache_age_seconds"):
        if result.get(key) is not None:
            entry[key] = result[key]
    if result.get("rotational") is not None:
        entry["rotational"] = result["rotational"]
    if result.get("plp"):
        entry["plp"] = {"verdict": result["plp"]["verdict"], "reasons": list(result["plp"]["reasons"])}
    for key in ("write_cache_comparison", "write_cache_disabled"):
        if result.get(key):
            entry[key] = dict(result[key])
    # An LV, a partition or an absent disk has no health of its own.
    entry["health"] = health.get(candidate["device"]) if entry["verdict"] not in ("absent", "not_probed") else None
    verdict, reasons = health_verdict(entry["verdict"], entry["health"], settings.get("health_required"))
    if reasons:
        entry["verdict"], entry["reasons"] = verdict, reasons + list(entry["reasons"])
    entry["decision"] = decide(entry["verdict"], settings.get("allow_marginal"), settings.get("absent_policy"),
                               settings.get("fail_closed"))
    if entry["decision"] == "approved" and settings.get("plp_required") and (entry["plp"] or {}).get("verdict") == "unlikely":
        entry["decision"] = "blocked"
        entry["reasons"] = ["power-loss protection unlikely (disk_gate_plp_required)"] + entry["reasons"]
    entry["approved"] = {"approved": True, "blocked": False}.get(entry["decision"])
    entry["gated"] = entry["verdict"] not in ("skipped", "not_probed", "absent")
    entry["device_class"] = device_class(entry, settings, write_back)
    return entry


def deep_queue(found):
    """The deep-queue figure a report shows of a probe result's (None when not run)."""
    if not found:
        return None
    return dict((key, found.get(key)) for key in ("write_iops", "iodepth", "bytes", "seconds", "bounded_by", "error"))


def _result(candidate, outcome, by_device, settings):
    """What decides a candidate: not probed, absent, skipped (HDD skip), or the probe job's result."""
    if not candidate["probe"]:
        return {"verdict": "absent" if candidate["presence"] == "absent" else "not_probed",
                "reasons": list(candidate["reasons"])}
    if candidate["thresholds_class"] == "hdd" and settings.get("hdd_policy") == "skip":
        return {"verdict": "skipped", "reasons": ["rotational disk: not gated (disk_gate_hdd_policy skip)"]}
    if "error" in outcome:
        return {"verdict": "error", "reasons": [outcome["error"]]}
    return by_device.get(candidate["device"]) or {
        "verdict": "error", "reasons": ["the probe returned no result for this disk"]}


def host_record(host, candidates, started, finished, settings, health=None, controllers=None):
    """One host's decision: every candidate with its verdict and decision.

    ``started`` and ``finished`` describe the host's probe job (see job_outcome).
    ``settings``: ``allow_marginal``, ``hdd_policy`` (probe or skip), ``absent_policy``
    (skip or block), ``fail_closed`` (see decide), ``health_required``, ``cephadm_host`` (the
    host's name in the orchestrator) and the device class pins ``device_class_models`` and
    ``device_class_overrides`` (see device_class). A disk whose probe errored or gave no result is never approved.
    ``health`` is the disk_health module's result, ``controllers`` controller_cache's.
    """
    outcome = job_outcome(started, finished)
    by_device = {}
    for result in outcome.get("results", []):
        by_device.setdefault(result.get("device"), result)
    errors = [outcome["error"]] if "error" in outcome else []
    by_disk = (health or {}).get("health") or {}
    write_back = write_back_disks(controllers)
    disks = [_disk_entry(candidate, _result(candidate, outcome, by_device, settings), settings, by_disk, write_back)
             for candidate in candidates]
    chosen_by = []
    for candidate in candidates:
        chosen_by += [source for source in candidate["sources"] if source not in chosen_by]
    return _summarise({"host": host, "cephadm_host": settings.get("cephadm_host") or host,
                       "status": "error" if errors else "ok", "errors": errors, "chosen_by": chosen_by,
                       "disks": disks, "controllers": (controllers or {}).get("summary")})


def _summarise(record):
    disks = record["disks"]
    for decision in ("approved", "blocked", "pending", "absent"):
        record[decision] = [d["device"] for d in disks if d["decision"] == decision]
    # What ceph-osd receives under the exclude policy, and what it loses on the way.
    record["handover"], record["dropped"], record["lvm_volumes_classes"] = handover(disks)
    record["devices"] = record["handover"].get(DEVICES, [])
    record["passed"] = record["status"] == "ok" and not record["blocked"] and not record["pending"]
    return record


def missing_record(host):
    return _summarise({"host": host, "cephadm_host": host, "status": "no_result", "errors": [NO_RESULT],
                       "chosen_by": [], "disks": [], "controllers": None})


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
            "approved": sum(1 for d in disks if d["decision"] == "approved"),
            "blocked": sum(1 for d in disks if d["decision"] == "blocked"),
            "pending": sum(1 for d in disks if d["decision"] == "pending"),
            "absent": sum(1 for d in disks if d["decision"] == "absent"),
            "cached": sum(1 for d in disks if d["cached"]),
            "unhealthy": sum(1 for d in disks if d["verdict"] == "unhealthy"),
        },
        "hosts": entries,
        "models": fleet_models(entries),
        "reference_drives": list(REFERENCE_DRIVES),
    }


# The fleet per model (see the module's documentation).
MIN_GROUP = 5
K = 3.5
SIGMA_PER_MAD = 1.4826
FLOOR = 0.25
FIGURES = (("write_iops", "sync IOPS"), ("p99_sync_latency_ms", "p99 latency"))


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return float(ordered[middle]) if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2.0


def spread(values):
    """Median, MAD and the deviation from the median allowed before a value is flagged."""
    centre = median(values)
    mad = median([abs(value - centre) for value in values])
    return {"median": round(centre, 3), "mad": round(mad, 3),
            "allowed": round(max(K * SIGMA_PER_MAD * mad, FLOOR * abs(centre)), 3)}


def _member(entry, disk):
    return {"host": entry["host"], "device": disk["device"], "serial": disk["serial"], "decision": disk["decision"],
            "write_iops": disk["write_iops"], "p99_sync_latency_ms": disk["p99_sync_latency_ms"],
            "deep_queue_iops": (disk.get("deep_queue") or {}).get("write_iops")}


def _judge(members):
    """The statistics of each figure and the members far from their median."""
    figures, outliers = {}, []
    for key, label in FIGURES:
        values = [m[key] for m in members if m[key] is not None]
        if len(values) < MIN_GROUP:
            figures[key] = None
            continue
        figures[key] = found = spread(values)
        for member in members:
            value = member[key]
            if value is not None and abs(value - found["median"]) > found["allowed"]:
                outliers.append(dict(member, figure=key, label=label, value=value, median=found["median"],
                                     allowed=found["allowed"],
                                     direction="above" if value > found["median"] else "below"))
    return figures, outliers


def _group(model, firmware, members):
    measured = [m for m in members if m["write_iops"] is not None]
    figures, outliers = _judge(measured)
    deep = [m["deep_queue_iops"] for m in members if m["deep_queue_iops"] is not None]
    return {"model": model, "firmware": firmware, "disks": len(members), "measured": len(measured),
            "hosts": len(set(m["host"] for m in members)), "judged": len(measured) >= MIN_GROUP,
            "figures": figures, "outliers": outliers,
            # Every measured disk counts, however few: like disks get this one figure (the mClock seed).
            "deep_queue_iops": {"median": round(median(deep), 1), "disks": len(deep)} if deep else None}


def _mixed_firmware(groups, members):
    by_model = {}
    for group in groups:
        by_model.setdefault(group["model"], []).append(group)
    mixed = []
    for model, found in sorted(by_model.items()):
        if len(found) > 1:
            mixed.append({"model": model, "firmware": [
                {"firmware": g["firmware"], "disks": g["disks"],
                 "hosts": sorted(set(m["host"] for m in members[(model, g["firmware"])]))} for g in found]})
    return mixed


def fleet_models(entries):
    """The per-model view of the fleet document's host entries: ``groups`` (one per model and
    firmware, with the median, MAD and allowed deviation of each figure when judged, and the
    outliers), ``mixed_firmware``, ``measured_without_model`` (not grouped: nothing says which
    disks they should match) and the ``rule``'s constants."""
    members, without_model = {}, 0
    for entry in entries:
        for disk in entry["disks"]:
            if not disk["model"]:
                if disk["write_iops"] is not None:
                    without_model += 1
                continue
            members.setdefault((disk["model"], disk["firmware"]), []).append(_member(entry, disk))
    keys = sorted(members, key=lambda key: (key[0], key[1] or ""))
    groups = [_group(model, firmware, members[(model, firmware)]) for model, firmware in keys]
    return {"rule": {"min_group": MIN_GROUP, "k": K, "sigma_per_mad": SIGMA_PER_MAD, "floor": FLOOR},
            "groups": groups, "outliers": sum(len(g["outliers"]) for g in groups),
            "mixed_firmware": _mixed_firmware(groups, members), "measured_without_model": without_model}
