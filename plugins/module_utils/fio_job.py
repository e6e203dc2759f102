# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fio and dd as the probes run them: job options, command lines, and what their output
measured (fio's JSON, dd's closing statistics).

Every function here is pure, so unit tests feed it fio JSON captured from real runs.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

# The SSD selection article (and Ceph's own docs): 4 KiB random writes at queue depth 1, fsync after each.
RANDWRITE_JOB = (
    ("ioengine", "libaio"), ("direct", "1"), ("fsync", "1"),
    ("bs", "4k"), ("iodepth", "1"), ("rw", "randwrite"),
)
# The journal test article: sequential O_DSYNC writes (the cost shows in clat, no sync section).
JOURNAL_JOB = (
    ("ioengine", "libaio"), ("direct", "1"), ("sync", "1"),
    ("bs", "4k"), ("iodepth", "1"), ("rw", "write"),
)
MODE_JOBS = {"randwrite": RANDWRITE_JOB, "journal": JOURNAL_JOB}

# fio stops jobs at --runtime; a job that ran much shorter was cut off.
MIN_RUNTIME_SHARE = 0.9


class FioOutputError(Exception):
    """fio printed no usable JSON; the message says what was wrong."""


# --------------------------------------------------------------------------- commands

def job_options(mode, overrides=None):
    """fio job options of a mode with the user's overrides applied, as an ordered list.
    ``overrides`` come checked and under fio's own names from fio_options.allowed_overrides."""
    options = list(MODE_JOBS[mode])
    for key, value in sorted((overrides or {}).items()):
        options = [(k, v) for k, v in options if k != key]
        if value is not None:
            options.append((key, str(value)))
    return options


def unsynced(options):
    """The same job without fsync/O_DSYNC: the baseline of the power-loss protection hint."""
    return [(k, v) for k, v in options if k not in ("fsync", "fdatasync", "sync")] + [("fsync", "0"), ("sync", "0")]


def fio_command(fio, targets, options, runtime, region, numjobs=1):
    """One fio invocation probing every target side by side, one job section per disk.

    ``targets`` is a list of (job name, device path); ``region`` is (offset, length) in
    bytes. Without --group_reporting each job reports on its own. With ``numjobs`` > 1 the
    region is split so each clone writes its own slice and nothing leaves the region.
    """
    offset, length = region
    # --thread: fio's forked job processes start sessions of their own and outlive a killed
    # module (and Ansible's async timeout, which kills a process group); threads die with fio.
    argv = [fio, "--output-format=json", "--allow_file_create=0", "--thread", "--time_based",
            "--runtime=%d" % runtime, "--offset=%d" % offset]
    if numjobs > 1:
        argv += ["--numjobs=%d" % numjobs, "--size=%d" % (length // numjobs),
                 "--offset_increment=%d" % (length // numjobs)]
    else:
        argv.append("--size=%d" % length)
    return argv + ["--%s=%s" % option for option in options] + job_sections(targets)


def job_sections(targets):
    """One job section per (job name, device path): each disk reports on its own."""
    return [arg for name, path in targets for arg in ("--name=" + name, "--filename=" + path)]


def dd_command(path, region, block_size=4096):
    """The journal test article's fallback: O_DIRECT|O_DSYNC sequential writes through the region."""
    offset, length = region
    return ["dd", "if=/dev/urandom", "of=" + path, "bs=%d" % block_size,
            "seek=%d" % (offset // block_size), "count=%d" % (length // block_size),
            "oflag=direct,dsync", "conv=notrunc,nocreat"]


# --------------------------------------------------------------------------- fio output

def parse_fio_json(text):
    """The JSON document in fio's stdout; fio may print notices such as
    'fio: terminating on signal 15' before it."""
    text = text or ""
    match = re.search(r"^\{", text, re.M)
    if not match:
        raise FioOutputError("fio printed no JSON")
    try:
        document, _end = json.JSONDecoder().raw_decode(text[match.start():])
    except ValueError as exc:
        raise FioOutputError("fio output is not complete JSON (%s)" % exc)
    if not isinstance(document, dict) or not isinstance(document.get("jobs"), list):
        raise FioOutputError("fio JSON has no jobs list")
    return document


def _percentiles_us(stats):
    percentile = stats.get("percentile") or {}

    def pick(key):
        value = percentile.get(key)
        return None if value is None else round(value / 1000.0, 3)

    return {
        "mean": round(stats.get("mean", 0) / 1000.0, 3),
        "p50": pick("50.000000"),
        "p99": pick("99.000000"),
        "p99_9": pick("99.900000"),
    }


def _worst(values):
    values = [v for v in values if v is not None]
    return max(values) if values else None


def _latency_us(jobs, section, stats_key):
    """Latency of one kind over a disk's job clones: the mean weighted by I/O count and the
    worst clone's percentiles (fio percentiles cannot be merged)."""
    entries = [(j[section][stats_key], j[section].get("total_ios", 0)) for j in jobs
               if section in j and stats_key in j[section]]
    entries = [(stats, ios) for stats, ios in entries if stats.get("N", 0) > 0]
    if not entries:
        return None
    parts = [_percentiles_us(stats) for stats, _ios in entries]
    ios = sum(stats["N"] for stats, _ios in entries)
    merged = {"mean": round(sum(p["mean"] * s["N"] for p, (s, _i) in zip(parts, entries)) / ios, 3)}
    for key in ("p50", "p99", "p99_9"):
        merged[key] = _worst(p[key] for p in parts)
    return merged


def measure_jobs(document):
    """{job name: measurement} with the clones of one job (numjobs) summed up."""
    by_name = {}
    for job in document["jobs"]:
        by_name.setdefault(job.get("jobname"), []).append(job)
    measurements = {}
    for name, jobs in by_name.items():
        writes = [j.get("write", {}) for j in jobs]
        measurements[name] = {
            "write_iops": round(sum(w.get("iops", 0) for w in writes), 1),
            "write_bw_bytes": sum(w.get("bw_bytes", 0) for w in writes),
            "total_ios": sum(w.get("total_ios", 0) for w in writes),
            "runtime_ms": max(j.get("job_runtime", 0) for j in jobs),
            "job_errors": sorted(set(j.get("error", 0) for j in jobs if j.get("error", 0))),
            "latency_us": {
                "completion": _latency_us(jobs, "write", "clat_ns"),
                "sync": _latency_us(jobs, "sync", "lat_ns"),
            },
        }
    return measurements


def p99_sync_latency_ms(measurement):
    """p99 of what makes a write durable: the fsync latency when fio issued fsync, the write
    completion latency with O_DSYNC (sync=1), where the flush is part of the write."""
    latency = measurement.get("latency_us") or {}
    stats = latency.get("sync") or latency.get("completion")
    if not stats or stats.get("p99") is None:
        return None
    return round(stats["p99"] / 1000.0, 3)


def fio_outcome(rc, stdout, stderr, names, runtime):
    """Per job name either ``{"measurement": ...}`` or ``{"error": "why"}``.

    Never a measurement when fio failed as a whole (rc != 0 without a job error: a signal,
    a setup error), when the job itself reported an error, completed no write or ran
    shorter than asked.
    """
    stderr_text = " ".join((stderr or "").split())[-400:]
    try:
        document = parse_fio_json(stdout)
    except FioOutputError as exc:
        reason = "fio exited with rc=%s: %s%s" % (rc, exc, (": " + stderr_text) if stderr_text else "")
        return dict((name, {"error": reason}) for name in names), None
    measurements = measure_jobs(document)
    any_job_error = any(m["job_errors"] for m in measurements.values())
    outcome = {}
    for name in names:
        found = measurements.get(name)
        if found is None:
            outcome[name] = {"error": "fio reported no result for this disk"}
        elif found["job_errors"]:
            outcome[name] = {"error": "fio job failed with %s%s" % (
                ", ".join(_errno_text(e) for e in found["job_errors"]),
                (": " + stderr_text) if stderr_text else "")}
        elif rc != 0 and not any_job_error:
            outcome[name] = {"error": "fio exited with rc=%s%s" % (rc, (": " + stderr_text) if stderr_text else "")}
        elif found["total_ios"] == 0:
            outcome[name] = {"error": "fio completed no write"}
        elif found["runtime_ms"] < runtime * 1000 * MIN_RUNTIME_SHARE:
            outcome[name] = {"error": "fio ran %d ms of %d s" % (found["runtime_ms"], runtime)}
        else:
            outcome[name] = {"measurement": found}
    return outcome, document.get("fio version")


def _errno_text(number):
    try:
        return "errno %d (%s)" % (number, os.strerror(number))
    except (TypeError, ValueError):
        return "error %s" % number


def dd_outcome(rc, stderr, block_size=4096):
    """Measurement from dd's closing statistics (printed on completion and on SIGINT)."""
    match = re.search(r"^(\d+) bytes .*copied, ([0-9.]+) s", stderr or "", re.M)
    if not match or float(match.group(2)) <= 0 or int(match.group(1)) == 0:
        return {"error": "dd exited with rc=%s: %s" % (rc, " ".join((stderr or "").split())[-400:])}
    written, seconds = int(match.group(1)), float(match.group(2))
    ios = written // block_size
    return {"measurement": {
        "write_iops": round(ios / seconds, 1),
        "write_bw_bytes": int(written / seconds),
        "total_ios": ios,
        "runtime_ms": int(seconds * 1000),
        "job_errors": [],
        "latency_us": {"completion": {"mean": round(seconds * 1e6 / ios, 3), "p50": None, "p99": None, "p99_9": None},
                       "sync": None},
    }}
