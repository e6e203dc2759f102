# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sequential-read measurements at several max_sectors_kb values (seed 002), read-only."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

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
            "--runtime=%d" % runtime, "--size=%d" % region_bytes] + \
        [arg for name, path in targets for arg in ("--name=" + name, "--filename=" + path)]


def read_throughput(document):
    """{job name: (MiB/s, error text or None)} from fio's JSON."""
    speeds = {}
    for job in document["jobs"]:
        errno = job.get("error", 0)
        error = "fio job error %d (%s)" % (errno, os.strerror(errno)) if errno else None
        speeds[job.get("jobname")] = (round(job.get("read", {}).get("bw_bytes", 0) / float(MIB), 1), error)
    return speeds


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
