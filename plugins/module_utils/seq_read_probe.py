# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The seq_read_probe module's measurement: sequential reads of disks at several max_sectors_kb
values (the max_sectors_kb article), read-only, repeated, and the value chosen per model: the
fastest median, if it beats the disks' value before by the minimum gain."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

from ansible_collections.cephops.osd_tuning.plugins.module_utils import block_queue as queue_utils, fio_job, irq_counts
from ansible_collections.cephops.osd_tuning.plugins.module_utils import processes

MIB = 1024 ** 2
UNKNOWN_MODEL = "(unknown)"


def candidate_values(candidates, current, hw_max, page_kb=4):
    """Distinct values to measure for one disk, in the given order.

    ``current`` stands for the disk's value now and ``hw`` for its max_hw_sectors_kb; a
    number above the hardware maximum is measured at the maximum (the kernel refuses more).
    """
    values = []
    for candidate in candidates:
        if candidate == "current":
            value = current
        elif candidate == "hw":
            value = hw_max
        else:
            value = min(max(int(candidate), page_kb), hw_max)
        if value not in values:
            values.append(value)
    return values


def read_command(fio, targets, runtime, block_size, region_bytes):
    """One fio run reading every target side by side; --readonly makes fio refuse any write."""
    return [fio, "--output-format=json", "--readonly", "--allow_file_create=0", "--ioengine=libaio",
            "--direct=1", "--rw=read", "--iodepth=1", "--bs=%s" % block_size, "--time_based",
            "--runtime=%d" % runtime, "--size=%d" % region_bytes] + fio_job.job_sections(targets)


def read_throughput(document):
    """{job name: (MiB/s, error text or None)} from fio's JSON."""
    speeds = {}
    for job in document["jobs"]:
        errno = job.get("error", 0)
        error = "fio job error %d (%s)" % (errno, os.strerror(errno)) if errno else None
        speeds[job.get("jobname")] = (round(job.get("read", {}).get("bw_bytes", 0) / float(MIB), 1), error)
    return speeds


def measure_round(argv, disks, plans, index, timeout, irqs=None):
    """{name: table row} of round ``index``: every disk is set to its value of the round, then
    all are read by one fio run (``argv``). A disk with fewer distinct values in ``plans`` is
    read again at its last one, alongside the others, and gets no row. ``irqs`` maps a disk to
    its (source, IRQ numbers) of irq_counts.device_irqs; its row gets the interrupt rate."""
    irqs = irqs or {}
    for disk in disks:
        values = plans[disk["name"]]
        queue_utils.write_attribute(disk["name"], "max_sectors_kb", str(values[min(index, len(values) - 1)]))
    before, started = irq_counts.snapshot(), time.time()
    (rc, out, err, timed_out), = processes.run_processes([argv], timeout=timeout)
    after, seconds = irq_counts.snapshot(), time.time() - started
    try:
        speeds = read_throughput(fio_job.parse_fio_json(out))
    except fio_job.FioOutputError as exc:
        speeds = dict((d["name"], (None, "timed out" if timed_out else "%s (rc=%s): %s" % (exc, rc, err.strip())))
                      for d in disks)
    rows = {}
    for disk in disks:
        if index < len(plans[disk["name"]]):
            mib_s, error = speeds.get(disk["name"], (None, "no result"))
            source, numbers = irqs.get(disk["name"], (irq_counts.HOST, []))
            rows[disk["name"]] = dict(max_sectors_kb=plans[disk["name"]][index],
                                      read_mib_s=None if error else mib_s, error=error,
                                      interrupts_per_s=irq_counts.rate(before, after, source, numbers, seconds))
    return rows


def summarise(runs):
    """One table row per value from the rows of every repeat (in measurement order): the median
    read speed with its spread, the median interrupt rate. A value with a failed run has no
    speed, so it cannot be chosen on fewer runs than the others."""
    values = []
    for row in runs:
        if row["max_sectors_kb"] not in values:
            values.append(row["max_sectors_kb"])
    table = []
    for value in values:
        rows = [row for row in runs if row["max_sectors_kb"] == value]
        errors = [row["error"] for row in rows if row["error"]]
        speeds = [row["read_mib_s"] for row in rows]
        rates = [row["interrupts_per_s"] for row in rows if row.get("interrupts_per_s") is not None]
        table.append(dict(max_sectors_kb=value, runs=speeds, error=errors[0] if errors else None,
                          read_mib_s=None if errors else round(_median(speeds), 1),
                          min_mib_s=None if errors else min(speeds), max_mib_s=None if errors else max(speeds),
                          interrupts_per_s=round(_median(rates), 1) if rates else None))
    return table


def set_back(disks):
    """Set every disk's max_sectors_kb back to its value before; ["name: why"] of those that failed."""
    errors = []
    for disk in disks:
        try:
            queue_utils.write_attribute(disk["name"], "max_sectors_kb", str(disk["max_sectors_kb"]))
        except (IOError, OSError) as exc:
            errors.append("%s: %s" % (disk["name"], exc))
    return errors


def _median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2.0


def best_of(table):
    """The value with the highest throughput in ``[{max_sectors_kb, read_mib_s}]``; the
    smallest of equals."""
    return max(table, key=lambda row: (row["read_mib_s"], -row["max_sectors_kb"]))["max_sectors_kb"] if table else None


def choose(table, baseline, min_gain_percent):
    """The value to use from a measured ``table`` (rows with a read speed): the fastest one if
    it reads at least ``min_gain_percent`` faster than ``baseline`` (the disks' value before),
    else ``baseline``; a tie is no gain. No choice (None) when the baseline was not measured.
    Returns dict(chosen, best, gain_percent, reason)."""
    speeds = dict((row["max_sectors_kb"], row["read_mib_s"]) for row in table)
    best = best_of(table)
    if baseline not in speeds or not speeds[baseline]:
        return dict(chosen=None, best=best, gain_percent=None,
                    reason="no choice: the value before (%s) was not measured" % baseline)
    gain = round(100.0 * (speeds[best] - speeds[baseline]) / speeds[baseline], 1)
    if best != baseline and gain > 0 and gain >= min_gain_percent:
        return dict(chosen=best, best=best, gain_percent=gain,
                    reason="%s reads %s%% faster than %s (at least %s%% required)"
                           % (best, gain, baseline, min_gain_percent))
    return dict(chosen=baseline, best=best, gain_percent=gain,
                reason="%s kept: the fastest, %s, reads %s%% faster (at least %s%% required)"
                       % (baseline, best, gain, min_gain_percent) if best != baseline
                else "%s kept: it reads fastest" % baseline)


def _most_common(values):
    return sorted(set(values), key=lambda value: (-values.count(value), value))[0]


def by_model(results, min_gain_percent):
    """Per model, the median over its disks of their median read speed and interrupt rate at
    each value, the value its disks had before (the most common one) and the choice."""
    models, before = {}, {}
    for result in results:
        model = result["model"] or UNKNOWN_MODEL
        before.setdefault(model, []).append(result["original_max_sectors_kb"])
        for row in result["table"]:
            models.setdefault(model, {}).setdefault(row["max_sectors_kb"], []).append(row)
    summary = {}
    for model, values in sorted(models.items()):
        table = []
        for kb, rows in sorted(values.items()):
            rates = [row["interrupts_per_s"] for row in rows if row.get("interrupts_per_s") is not None]
            table.append(dict(max_sectors_kb=kb, read_mib_s=round(_median([row["read_mib_s"] for row in rows]), 1),
                              interrupts_per_s=round(_median(rates), 1) if rates else None, disks=len(rows)))
        baseline = _most_common(before[model])
        summary[model] = dict(table=table, baseline=baseline, **choose(table, baseline, min_gain_percent))
    return summary


def model_pattern(model):
    """A shell pattern that matches exactly ``model`` (fnmatch and udev alike)."""
    return "".join("[%s]" % char if char in "*?[" else char for char in model)


def model_choices(models):
    """``[{model, max_sectors_kb}]`` of the value chosen per known model, as the role's
    ``max_sectors_kb_models`` takes them."""
    return [dict(model=model_pattern(model), max_sectors_kb=summary["chosen"])
            for model, summary in sorted(models.items())
            if model != UNKNOWN_MODEL and summary["chosen"] is not None]
