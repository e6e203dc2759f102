# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fio and dd as the probes run them: job options, command lines, and what their output
measured (fio's JSON, dd's closing statistics).

Every function here is pure, so unit tests feed it fio JSON captured from real runs.

Which fio options a user may give the sync-write probe, checked against fio's own names.

fio takes an option by its name, by its alias (``fileoffset`` is ``offset``) and, on the
command line, by any unambiguous abbreviation (``--fileoff``). So a list of options to refuse
can never be complete; instead only an allow-list of options that cannot change where or how
much the probe writes, nor touch anything outside its region, is accepted. Each key is
looked up with ``fio --cmdhelp=KEY``, which names the option a key stands for, and the probe
then passes fio that canonical name.
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
# The shape of the bench an OSD runs at its first start for the mClock scheduler's capacity:
# 4 KiB random writes, many in flight, one flush at the end (Ceph's osd bench writes 12,288,000
# bytes by default). What it measures is how many queued writes a disk absorbs, not its flush.
DEEP_QUEUE_JOB = (
    ("ioengine", "libaio"), ("direct", "1"), ("bs", "4k"), ("rw", "randwrite"), ("end_fsync", "1"),
)
DEEP_QUEUE_BYTES = 12288000

# fio stops jobs at --runtime; a job that ran much shorter was cut off.
MIN_RUNTIME_SHARE = 0.9


class FioOutputError(Exception):
    """fio printed no usable JSON; the message says what was wrong."""


# --------------------------------------------------------------------------- commands

def job_options(mode, overrides=None):
    """fio job options of a mode with the user's overrides applied, as an ordered list.
    ``overrides`` come checked and under fio's own names from allowed_overrides."""
    options = list(MODE_JOBS[mode])
    for key, value in sorted((overrides or {}).items()):
        options = [(k, v) for k, v in options if k != key]
        if value is not None:
            options.append((key, str(value)))
    return options


def unsynced(options):
    """The same job without fsync/O_DSYNC: the baseline of the power-loss protection hint."""
    return [(k, v) for k, v in options if k not in ("fsync", "fdatasync", "sync")] + [("fsync", "0"), ("sync", "0")]


# What every probe's fio run starts with: JSON output, no file made where a disk was named, and
# --thread: fio's forked job processes start sessions of their own and outlive a killed module
# (and Ansible's async timeout, which kills a process group), one killed while starting waiting
# forever; threads die with fio.
RUN_OPTIONS = ("--output-format=json", "--allow_file_create=0", "--thread")


def fio_command(fio, targets, options, runtime, region, numjobs=1):
    """One fio invocation probing every target side by side, one job section per disk.

    ``targets`` is a list of (job name, device path); ``region`` is (offset, length) in
    bytes. Without --group_reporting each job reports on its own. With ``numjobs`` > 1 the
    region is split so each clone writes its own slice and nothing leaves the region.
    """
    offset, length = region
    argv = [fio] + list(RUN_OPTIONS) + ["--time_based", "--runtime=%d" % runtime, "--offset=%d" % offset]
    if numjobs > 1:
        argv += ["--numjobs=%d" % numjobs, "--size=%d" % (length // numjobs),
                 "--offset_increment=%d" % (length // numjobs)]
    else:
        argv.append("--size=%d" % length)
    return argv + ["--%s=%s" % option for option in options] + job_sections(targets)


def deep_queue_command(fio, targets, region, iodepth, seconds):
    """One fio run of the deep-queue job over every target inside the probe region. It ends
    after DEEP_QUEUE_BYTES or ``seconds``, whichever comes first (not --time_based), and fio
    counts the closing flush in its runtime and so in the IOPS it reports."""
    offset, length = region
    argv = [fio] + list(RUN_OPTIONS) + ["--runtime=%d" % seconds, "--offset=%d" % offset, "--size=%d" % length,
                                        "--io_size=%d" % min(DEEP_QUEUE_BYTES, length), "--iodepth=%d" % iodepth]
    return argv + ["--%s=%s" % option for option in DEEP_QUEUE_JOB] + job_sections(targets)


def deep_queue_figure(measurement, iodepth, region_length):
    """The deep-queue figure of one disk's measurement, with what ended the run."""
    written = measurement["total_ios"] * 4096
    return {"write_iops": measurement["write_iops"], "iodepth": iodepth, "bytes": written,
            "seconds": round(measurement["runtime_ms"] / 1000.0, 3),
            "bounded_by": "bytes" if written >= min(DEEP_QUEUE_BYTES, region_length) else "time", "error": None}


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
            # fsyncs (or fdatasyncs) fio issued, which the power-loss verdict pairs with the writes.
            "sync_ios": sum(j.get("sync", {}).get("total_ios", 0) for j in jobs),
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
        "sync_ios": 0,
        "runtime_ms": int(seconds * 1000),
        "job_errors": [],
        "latency_us": {"completion": {"mean": round(seconds * 1e6 / ios, 3), "p50": None, "p99": None, "p99_9": None},
                       "sync": None},
    }}


# Canonical fio names (as ``fio --cmdhelp`` prints them). fio keeps every I/O of a job inside
# [offset, offset + size), the range the probe sets, whatever these options say.
ALLOWED_OPTIONS = frozenset((
    # How writes are issued and made durable: engine, O_DIRECT or the page cache, fsync,
    # fdatasync, O_SYNC/O_DSYNC, a flush at the end.
    "ioengine", "direct", "buffered", "fsync", "fdatasync", "sync", "end_fsync", "fsync_on_close",
    # Block sizes and alignment: fio fits every block inside the range.
    "bs", "bsrange", "bssplit", "ba",
    # Writes in flight and how they are submitted and reaped: when they go, not where.
    "iodepth", "iodepth_batch", "iodepth_batch_complete_min", "iodepth_batch_complete_max", "iodepth_low",
    # Direction and read/write mix.
    "rw", "rwmixread", "rwmixwrite",
    # Which offsets inside the range random I/O picks.
    "randrepeat", "randseed", "allrandrepeat", "norandommap", "random_generator", "random_distribution",
    "percentage_random",
    # Pace: rate limits and idle time between writes.
    "rate", "rate_min", "rate_process", "rate_cycle", "rate_ignore_thinktime", "rate_iops", "rate_iops_min",
    "thinktime", "thinktime_spin", "thinktime_blocks", "thinktime_blocks_type", "thinktime_iotime",
    # Scheduling of fio itself: CPU and I/O priority, CPU affinity. (The probe always runs fio's
    # jobs as threads, so that they die with it.)
    "nice", "prio", "prioclass", "cpus_allowed", "cpumask", "cpus_allowed_policy",
    # Memory of the I/O buffers.
    "mem",
    # Content of the written buffers.
    "zero_buffers", "refill_buffers", "scramble_buffers", "buffer_pattern", "buffer_compress_percentage",
    "buffer_compress_chunk", "dedupe_percentage",
    # What fio measures and reports.
    "clat_percentiles", "lat_percentiles", "slat_percentiles", "percentile_list", "significant_figures",
    "gtod_reduce", "disable_lat", "disable_clat", "disable_slat",
    # Drops the disk's cached pages before the job, so reads are not served from memory.
    "invalidate",
))

# Allowed options with values that reach outside the region: other engines delete files
# (filedelete), run programs (exec), send SCSI commands (sg) or load code (external:);
# trims discard data and rw's ":N" suffix skips ahead; mem's "type:FILE" creates and
# truncates FILE.
VALUE_CHOICES = {
    "ioengine": ("libaio", "io_uring", "psync", "sync", "pvsync", "pvsync2", "posixaio"),
    "rw": ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw"),
    "mem": ("malloc", "shm", "shmhuge", "mmap", "mmapshared", "mmaphuge"),
}
# A buffer_pattern part in single quotes names a file fio reads.
FORBIDDEN_IN_VALUE = {"buffer_pattern": "'"}

NAME = re.compile(r"\A[a-z0-9_-]+\Z")
UNSAFE_VALUE = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")

WHERE_TO_LOOK = ("The options the probe allows are listed under fio_options in "
                 "ansible-doc cephops.osd_tuning.sync_write_probe.")


def cmdhelp_command(fio, key):
    return [fio, "--cmdhelp=" + key]


def parse_cmdhelp(stdout, stderr):
    """(canonical name, [aliases]) from ``fio --cmdhelp=KEY``, None when fio has no option of
    exactly that name. fio then says 'No such command' (exit status 0) and may print the
    closest option, which must not count as a match."""
    if "No such command" in (stdout or "") + (stderr or ""):
        return None
    lines = [line for line in (stdout or "").splitlines() if line.strip()]
    match = re.match(r"^\s*([a-z0-9_-]+): ", lines[0]) if lines else None
    if not match:
        return None
    aliases = [m.group(1) for m in (re.match(r"^\s*alias: (\S+)\s*$", line) for line in lines[1:]) if m]
    return match.group(1), aliases


def allowed_overrides(overrides, fio, run_command):
    """The user's fio options as {canonical name: value}, or ValueError naming every option
    refused and why.

    ``fio`` is fio's path (None when it is not installed); ``run_command(argv)`` returns
    (rc, stdout, stderr) and runs ``fio --cmdhelp`` once per distinct key.
    """
    if not overrides:
        return {}
    if fio is None:
        raise ValueError("fio_options refused: fio is not installed, so the probe writes with dd, "
                         "which takes no fio options (%s)" % ", ".join(sorted(overrides)))
    refused, given = [], {}
    for key in sorted(overrides):
        name = key.lstrip("-")
        if not NAME.match(name):
            refused.append("%s: not an option name (only a-z, 0-9, _ and -)" % json.dumps(key, ensure_ascii=False))
        else:
            given.setdefault(name, []).append(key)
    accepted, set_by = {}, {}
    for name in sorted(given):
        rc, out, err = run_command(cmdhelp_command(fio, name))
        canonical, aliases = (parse_cmdhelp(out, err) if rc == 0 else None) or (None, [])
        for key in given[name]:
            if rc != 0:
                refused.append("%s: fio --cmdhelp failed (rc=%s): %s" % (key, rc, " ".join((err or out).split())))
            elif name != canonical and name not in aliases:
                refused.append("%s: fio has no option or alias of exactly this name "
                               "(abbreviations are refused: give the full name)" % key)
            elif canonical not in ALLOWED_OPTIONS and name == canonical:
                refused.append("%s: not allowed" % key)
            elif canonical not in ALLOWED_OPTIONS:
                refused.append("%s: alias of %s, which is not allowed" % (key, canonical))
            else:
                problem = value_problem(canonical, overrides[key])
                if problem:
                    refused.append("%s: %s" % (key, problem))
                set_by.setdefault(canonical, []).append(key)
                accepted[canonical] = overrides[key]
    for canonical, keys in sorted(set_by.items()):
        if len(keys) > 1:
            refused.append("%s: each sets %s, give it once" % (" and ".join(keys), canonical))
    if refused:
        raise ValueError("fio_options refused, nothing was run. %s. %s" % ("; ".join(refused), WHERE_TO_LOOK))
    return accepted


def value_problem(canonical, value):
    """Why the value of an allowed option is refused, or None."""
    if value is None:
        return None
    text = str(value)
    if UNSAFE_VALUE.search(text):
        return "the value holds whitespace or a control character"
    choices = VALUE_CHOICES.get(canonical)
    if choices and text not in choices:
        return "value %s is not allowed (one of %s)" % (text, ", ".join(choices))
    forbidden = FORBIDDEN_IN_VALUE.get(canonical)
    if forbidden and forbidden in text:
        return "the value holds %s, which makes fio read a file" % forbidden
    return None
