# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The seq_read_probe module's measurement: sequential reads of disks at several max_sectors_kb
values (the max_sectors_kb article), read-only, and the fastest value per model."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.cephops.osd_tuning.plugins.module_utils import block_queue as queue_utils, fio_job, processes

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


def measure_round(argv, disks, plans, index, timeout):
    """{name: table row} of round ``index``: every disk is set to its value of the round, then
    all are read by one fio run (``argv``). A disk with fewer distinct values in ``plans`` is
    read again at its last one, alongside the others, and gets no row."""
    for disk in disks:
        values = plans[disk["name"]]
        queue_utils.write_attribute(disk["name"], "max_sectors_kb", str(values[min(index, len(values) - 1)]))
    (rc, out, err, timed_out), = processes.run_processes([argv], timeout=timeout)
    try:
        speeds = read_throughput(fio_job.parse_fio_json(out))
    except fio_job.FioOutputError as exc:
        speeds = dict((d["name"], (None, "timed out" if timed_out else "%s (rc=%s): %s" % (exc, rc, err.strip())))
                      for d in disks)
    rows = {}
    for disk in disks:
        if index < len(plans[disk["name"]]):
            mib_s, error = speeds.get(disk["name"], (None, "no result"))
            rows[disk["name"]] = dict(max_sectors_kb=plans[disk["name"]][index],
                                      read_mib_s=None if error else mib_s, error=error)
    return rows


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
    """The value with the highest throughput in ``[{max_sectors_kb, read_mib_s}]``."""
    return max(table, key=lambda row: row["read_mib_s"])["max_sectors_kb"] if table else None


def by_model(results):
    """Per model, the median throughput of its disks at each value, and the fastest value."""
    models = {}
    for result in results:
        for row in result["table"]:
            models.setdefault(result["model"] or UNKNOWN_MODEL, {}).setdefault(row["max_sectors_kb"], []).append(row["read_mib_s"])
    summary = {}
    for model, values in sorted(models.items()):
        table = [dict(max_sectors_kb=kb, read_mib_s=round(_median(speeds), 1), disks=len(speeds))
                 for kb, speeds in sorted(values.items())]
        summary[model] = dict(table=table, best=best_of(table))
    return summary


def model_choices(models):
    """``[{model, max_sectors_kb}]`` of the fastest value per known model, as the role's
    ``max_sectors_kb_models`` takes them."""
    return [dict(model=model, max_sectors_kb=summary["best"]) for model, summary in sorted(models.items())
            if model != UNKNOWN_MODEL and summary["best"] is not None]
