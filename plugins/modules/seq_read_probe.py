#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: seq_read_probe
short_description: Measure sequential (and 4 KiB random) reads of disks at several max_sectors_kb values, read-only
version_added: 0.1.0
description:
  - Reads each disk sequentially with fio (direct I/O, one request of O(block_size) at a time)
    at every value of O(max_sectors_kb), all disks side by side in one fio run per value, the
    values in turn, O(repeats) times. Reports per disk and value the median throughput with its
    spread and the interrupt rate, and per model the median over its disks and the value chosen.
  - The choice per model is the fastest median only if it reads at least O(min_gain_percent)
    faster than the value the model's disks had before (the kernel's default unless something
    set it); otherwise, and on a tie, the value before stays. One run of a few seconds varies
    by some per cent, so the fastest of single runs is often noise.
  - The interrupt rate (smaller requests mean more interrupts) counts the interrupts of the
    PCI function that serves the disk in C(/proc/interrupts), shared by the disks of that
    function; for a disk without one (loop devices) the host's total from C(/proc/stat), which
    includes every other interrupt. RV(results[].irq_source) says which.
  - With O(random_read), every round also reads each disk at random in 4 KiB requests, 32 at a
    time (the queue depth where a scheduler's merging and a queue limit show), and reports the
    IOPS and mean latency of those runs beside the sequential figure. The tuning roles ask for
    both, so that a change judged on its before/after figures is judged on both kinds of read.
  - The max_sectors_kb article found that 64 KiB raised sequential reads by 23% on one SSD model and lowered them
    on another; this measures it per model instead of guessing.
  - Read-only. fio runs with C(--readonly), which makes it refuse any write, so disks that
    hold data can be measured too. max_sectors_kb is changed for the time of the
    measurement only and always set back, also when fio fails or the module is interrupted.
  - A disk that another process holds open (see the C(disk_facts) module's C(open_by)) is
    refused before any value is changed, as the temporary max_sectors_kb would apply to that
    process's I/O and its I/O to the figures; the module fails naming the process.
  - Used by the C(max_sectors_kb) role for its measurement mode and for the before/after
    figure of the disks it changes.
author:
  - cephops maintainers (@cephops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - cephops.osd_tuning.attributes.no_diff
options:
  devices:
    description: Disks to read, as kernel names, C(/dev) paths or C(/dev/disk/by-id) links.
    type: list
    elements: str
    required: true
  max_sectors_kb:
    description:
      - Values to measure at, in KiB. V(current) is each disk's value now, V(hw) its
        C(max_hw_sectors_kb). Values above a disk's hardware maximum are measured at it.
    type: list
    elements: raw
    default: [current]
  runtime:
    description: Seconds of reading per value.
    type: int
    default: 5
  repeats:
    description: How often every value is measured; the median counts. At least 1.
    type: int
    default: 3
  min_gain_percent:
    description:
      - How much faster, in per cent of the value before, the fastest value must read to be
        chosen. The max_sectors_kb article measured a 23% difference between values; runs of
        a few seconds at one value differ by some per cent, and 5% keeps that noise from
        choosing. Not proven for every disk; where C(min_mib_s) and C(max_mib_s) of one value
        lie further apart than that, raise it.
    type: float
    default: 5
  random_read:
    description:
      - Also read each disk at random, 4 KiB requests at a queue depth of 32, for O(runtime)
        seconds per round, after the sequential run of the round. Adds C(random_*) to each row.
    type: bool
    default: false
  block_size:
    description: Size of each read request (fio C(bs)); larger than max_sectors_kb so the kernel splits it.
    type: str
    default: 4M
  region_size_mib:
    description: Read the first this many MiB of each disk (less on a smaller disk).
    type: int
    default: 1024
attributes:
  check_mode:
    details: Returns the values and the fio command per value; reads nothing and changes nothing.
requirements:
  - fio
seealso:
  - module: cephops.osd_tuning.block_queue
"""

EXAMPLES = r"""
- name: Which max_sectors_kb reads fastest, per model?
  cephops.osd_tuning.seq_read_probe:
    devices: [sdb, sdc, sdd]
    max_sectors_kb: [64, 128, 256, 512, hw]
  register: reads

- name: Show the best value per model
  ansible.builtin.debug:
    msg: "{{ reads.models | dict2items | map(attribute='key') | zip(reads.models.values() | map(attribute='best')) }}"
"""

RETURN = r"""
results:
  description: One entry per disk.
  returned: always
  type: list
  elements: dict
  contains:
    device:
      description: Kernel name.
      type: str
    model:
      description: Model as disk_facts reports it.
      type: str
    original_max_sectors_kb:
      description: The disk's value before, set back afterwards.
      type: int
    irq_source:
      description:
        - V(device) when C(interrupts_per_s) counts the interrupts of the disk's PCI function
          (C(irqs)), V(host) when it is the host's total (no PCI function, such as loop devices).
      type: str
    irqs:
      description: The IRQ numbers counted for the disk; empty for V(host).
      type: list
      elements: int
    table:
      description:
        - Per value, C(max_sectors_kb), C(runs) (MiB/s of every repeat), C(read_mib_s) (their
          median), C(min_mib_s), C(max_mib_s), C(interrupts_per_s) (median) and C(error)
          (fio's error text of the first failed run, or null; then there is no median).
        - With O(random_read), also C(random_runs) (IOPS of every repeat), C(random_iops) (their
          median), C(random_min_iops), C(random_max_iops), C(random_lat_ms) (the median of the
          runs' mean latency, in ms) and C(random_error), likewise.
      type: list
      elements: dict
    best:
      description: The value with the fastest median.
      type: int
models:
  description:
    - Per model, C(table) (per value the median over its disks of C(read_mib_s) and
      C(interrupts_per_s), and C(disks)), C(baseline) (the value its disks had before),
      C(best) (fastest median), C(gain_percent) (of C(best) over C(baseline)), C(chosen) and C(reason).
  returned: always
  type: dict
choices:
  description: The chosen value per known model, as C(model) (a pattern matching the model exactly) and C(max_sectors_kb) items.
  returned: always
  type: list
  elements: dict
  sample: [{model: CEPHOPS SATA SSD 870 PRO 3840GB WITH PLP, max_sectors_kb: 64}]
commands:
  description:
    - The fio command line per value (check mode), or of the last value measured; with
      O(random_read) the random one follows each sequential one.
  returned: always
  type: list
  elements: list
"""

import os
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev, block_queue as queue_utils, fio_job, processes


# Interrupt counts of a disk, for the interrupt rate a max_sectors_kb value costs (smaller
# requests mean more of them, the max_sectors_kb article's other cost).
#
# A disk's interrupts are those of the PCI function that serves it (virtio-blk, NVMe, AHCI, SAS
# HBA), found through sysfs and counted in /proc/interrupts. They are shared by every disk of that
# function (the ports of one AHCI controller). A disk with no PCI function (loop, device mapper)
# has no interrupts of its own: it is counted by the host's total (the first number of the
# ``intr`` line of /proc/stat), which includes every other interrupt of the host, timers too.
HOST = "host"
DEVICE = "device"


def device_irqs(name, sys_root="/sys"):
    """(source, IRQ numbers) of disk ``name``: (DEVICE, [...]) from the nearest ancestor of
    its device with ``msi_irqs`` or a non-zero ``irq``, else (HOST, [])."""
    path = os.path.realpath(os.path.join(sys_root, "block", name, "device"))
    top = os.path.join(sys_root, "devices")
    while path.startswith(top + os.sep):
        msi = os.path.join(path, "msi_irqs")
        if os.path.isdir(msi):
            irqs = sorted(int(entry) for entry in os.listdir(msi) if entry.isdigit())
            if irqs:
                return DEVICE, irqs
        irq = blockdev.read_value(os.path.join(path, "irq"))
        if irq and irq.isdigit() and int(irq) > 0:
            return DEVICE, [int(irq)]
        path = os.path.dirname(path)
    return HOST, []


def parse_interrupts(text):
    """{IRQ number: count summed over CPUs} of /proc/interrupts' numbered lines."""
    lines = text.splitlines()
    cpus = len(lines[0].split()) if lines else 0
    counts = {}
    for line in lines[1:]:
        label, _sep, rest = line.partition(":")
        if not label.strip().isdigit():
            continue
        fields = rest.split()[:cpus]
        counts[int(label)] = sum(int(field) for field in fields if field.isdigit())
    return counts


def parse_stat_total(text):
    """The host's total interrupt count: the first number of /proc/stat's ``intr`` line."""
    for line in text.splitlines():
        if line.startswith("intr "):
            return int(line.split()[1])
    raise ValueError("no intr line in /proc/stat")


def snapshot(proc_root="/proc"):
    """({IRQ: count}, host total) now."""
    with open(os.path.join(proc_root, "interrupts")) as handle:
        per_irq = parse_interrupts(handle.read())
    with open(os.path.join(proc_root, "stat")) as handle:
        total = parse_stat_total(handle.read())
    return per_irq, total


def rate(before, after, source, irqs, seconds):
    """Interrupts per second of one disk between two snapshots."""
    if seconds <= 0:
        return None
    if source == HOST:
        delta = after[1] - before[1]
    else:
        delta = sum(after[0].get(irq, 0) - before[0].get(irq, 0) for irq in irqs)
    return round(delta / float(seconds), 1)


# The seq_read_probe module's measurement: sequential reads of disks at several max_sectors_kb
# values (the max_sectors_kb article), read-only, repeated, and the value chosen per model: the
# fastest median, if it beats the disks' value before by the minimum gain.
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


def read_command(fio, targets, runtime, block_size, region_bytes, rw="read", iodepth=1):
    """One fio run reading every target side by side; --readonly makes fio refuse any write."""
    return [fio] + list(fio_job.RUN_OPTIONS) + [
        "--readonly", "--ioengine=libaio", "--direct=1", "--rw=%s" % rw, "--iodepth=%d" % iodepth,
        "--bs=%s" % block_size, "--time_based", "--runtime=%d" % runtime, "--size=%d" % region_bytes,
    ] + fio_job.job_sections(targets)


def random_read_command(fio, targets, runtime, region_bytes):
    """The random read of random_read: 4 KiB requests, 32 in flight per disk."""
    return read_command(fio, targets, runtime, "4k", region_bytes, rw="randread", iodepth=32)


def _job_error(job):
    errno = job.get("error", 0)
    return "fio job error %d (%s)" % (errno, os.strerror(errno)) if errno else None


def read_throughput(document):
    """{job name: (MiB/s, error text or None)} from fio's JSON."""
    return dict((job.get("jobname"), (round(job.get("read", {}).get("bw_bytes", 0) / float(MIB), 1), _job_error(job)))
                for job in document["jobs"])


def random_figures(document):
    """{job name: (IOPS, mean latency in ms, error text or None)} from fio's JSON."""
    figures = {}
    for job in document["jobs"]:
        read = job.get("read", {})
        figures[job.get("jobname")] = (round(read.get("iops", 0), 1), round(read.get("lat_ns", {}).get("mean", 0) / 1e6, 3),
                                       _job_error(job))
    return figures


def run_fio(argv, timeout, parse):
    """(``parse`` of one fio run's JSON, None), or ({}, why) where the run gave none."""
    (rc, out, err, timed_out), = processes.run_processes([argv], timeout=timeout)
    try:
        return parse(fio_job.parse_fio_json(out)), None
    except fio_job.FioOutputError as exc:
        return {}, "timed out" if timed_out else "%s (rc=%s): %s" % (exc, rc, err.strip())


def measure_round(argvs, disks, plans, index, timeout, irqs=None):
    """{name: table row} of round ``index``: every disk is set to its value of the round, then
    all are read by one fio run (``argvs[0]``), and at random by another where ``argvs`` has a
    second. A disk with fewer distinct values in ``plans`` is read again at its last one,
    alongside the others, and gets no row. ``irqs`` maps a disk to its (source, IRQ numbers)
    of device_irqs; its row gets the interrupt rate of the sequential run."""
    irqs = irqs or {}
    for disk in disks:
        values = plans[disk["name"]]
        queue_utils.write_attribute(disk["name"], "max_sectors_kb", str(values[min(index, len(values) - 1)]))
    before, started = snapshot(), time.time()
    speeds, failed = run_fio(argvs[0], timeout, read_throughput)
    after, seconds = snapshot(), time.time() - started
    randoms, random_failed = run_fio(argvs[1], timeout, random_figures) if len(argvs) > 1 else ({}, None)
    rows = {}
    for disk in disks:
        if index < len(plans[disk["name"]]):
            mib_s, error = speeds.get(disk["name"], (None, failed or "no result"))
            source, numbers = irqs.get(disk["name"], (HOST, []))
            rows[disk["name"]] = row = dict(max_sectors_kb=plans[disk["name"]][index],
                                            read_mib_s=None if error else mib_s, error=error,
                                            interrupts_per_s=rate(before, after, source, numbers, seconds))
            if len(argvs) > 1:
                iops, lat_ms, error = randoms.get(disk["name"], (None, None, random_failed or "no result"))
                row.update(random_iops=None if error else iops, random_lat_ms=None if error else lat_ms,
                           random_error=error)
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
        if "random_error" in rows[0]:
            table[-1].update(_random_summary(rows))
    return table


def _random_summary(rows):
    """The random read figures of one value's rows: median IOPS with its spread, median latency."""
    errors = [row["random_error"] for row in rows if row["random_error"]]
    iops = [row["random_iops"] for row in rows]
    if errors:
        return dict(random_runs=iops, random_error=errors[0], random_iops=None, random_min_iops=None,
                    random_max_iops=None, random_lat_ms=None)
    return dict(random_runs=iops, random_error=None, random_iops=round(_median(iops), 1), random_min_iops=min(iops),
                random_max_iops=max(iops), random_lat_ms=round(_median([row["random_lat_ms"] for row in rows]), 3))


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


def main():
    module = AnsibleModule(
        argument_spec=dict(
            devices=dict(type="list", elements="str", required=True),
            max_sectors_kb=dict(type="list", elements="raw", default=["current"]),
            runtime=dict(type="int", default=5),
            repeats=dict(type="int", default=3),
            min_gain_percent=dict(type="float", default=5.0),
            random_read=dict(type="bool", default=False),
            block_size=dict(type="str", default="4M"),
            region_size_mib=dict(type="int", default=1024),
        ),
        supports_check_mode=True,
    )
    module.run_command_environ_update = {"LC_ALL": "C"}  # output is parsed
    for value in module.params["max_sectors_kb"]:
        if value in ("current", "hw"):
            continue
        try:
            if int(value) < 1:
                raise ValueError()
        except (TypeError, ValueError):
            module.fail_json(msg="max_sectors_kb: %r is neither a positive number, current nor hw" % (value,))
    if module.params["min_gain_percent"] < 0:
        module.fail_json(msg="min_gain_percent must not be negative")
    for key in ("runtime", "repeats", "region_size_mib"):
        if module.params[key] < 1:
            module.fail_json(msg="%s must be at least 1" % key)
    fio = module.get_bin_path("fio", required=True)
    module.get_bin_path("wipefs", required=True)

    try:
        names = blockdev.resolve_disks(module.params["devices"])
        disks = blockdev.build_disks(blockdev.take_snapshot(module.run_command, names, include_loop=True))
    except blockdev.DeviceError as exc:
        module.fail_json(msg=str(exc))
    page_kb = queue_utils.page_size_kb()
    plans = dict((d["name"], candidate_values(
        module.params["max_sectors_kb"], d["max_sectors_kb"], d["max_hw_sectors_kb"], page_kb)) for d in disks)
    rounds = max(len(values) for values in plans.values()) if plans else 0
    region = min([module.params["region_size_mib"] * MIB] + [d["size_bytes"] for d in disks])

    def commands():
        targets = [(d["name"], d["path"]) for d in disks]
        argvs = [read_command(fio, targets, module.params["runtime"], module.params["block_size"], region)]
        if module.params["random_read"]:
            argvs.append(random_read_command(fio, targets, module.params["runtime"], region))
        return argvs

    irqs = dict((d["name"], device_irqs(d["name"])) for d in disks)
    results = dict((d["name"], dict(device=d["name"], model=d["model"], original_max_sectors_kb=d["max_sectors_kb"],
                                    irq_source=irqs[d["name"]][0], irqs=irqs[d["name"]][1], table=[], best=None))
                   for d in disks)
    if module.check_mode:
        for name, values in plans.items():
            results[name]["table"] = [dict(max_sectors_kb=v, read_mib_s=None, error=None) for v in values]
        module.exit_json(changed=False, results=[results[n] for n in sorted(results)], models={}, choices=[],
                         commands=commands() * rounds)

    held = blockdev.open_now(disks)
    if held:
        module.fail_json(msg="refused by the open check: %s; no max_sectors_kb was changed" % "; ".join(
            "%s: %s" % (d["path"], held[d["name"]]) for d in disks if d["name"] in held), changed=False)
    runs = dict((name, []) for name in results)
    processes.trap_termination()
    try:
        # The values take turns within each repeat, so a drift of the disk's speed spreads over all.
        for _repeat in range(module.params["repeats"]):
            for index in range(rounds):
                rows = measure_round(commands(), disks, plans, index, module.params["runtime"] + 60, irqs)
                for name, row in rows.items():
                    runs[name].append(row)
    except (processes.Interrupted, OSError) as exc:
        module.fail_json(msg="measurement stopped: %s" % exc, changed=False)
    finally:
        restore_errors = set_back(disks)
    if restore_errors:
        module.fail_json(msg="max_sectors_kb could not be set back: %s" % "; ".join(restore_errors), changed=True)

    for name, result in results.items():
        result["table"] = summarise(runs[name])
        result["best"] = best_of([row for row in result["table"] if row["read_mib_s"] is not None])
    ordered = [results[n] for n in sorted(results)]
    models = by_model([dict(r, table=[row for row in r["table"] if row["read_mib_s"] is not None])
                       for r in ordered], module.params["min_gain_percent"])
    module.exit_json(changed=False, results=ordered, models=models, choices=model_choices(models),
                     commands=commands())


if __name__ == "__main__":
    main()
