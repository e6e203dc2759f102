#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: seq_read_probe
short_description: Measure sequential reads of disks at several max_sectors_kb values, read-only
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
  description: The fio command line per value (check mode), or of the last value measured.
  returned: always
  type: list
  elements: list
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev, block_queue as queue_utils, irq_counts, processes
from ansible_collections.cephops.osd_tuning.plugins.module_utils import seq_read_probe as read_utils


def main():
    module = AnsibleModule(
        argument_spec=dict(
            devices=dict(type="list", elements="str", required=True),
            max_sectors_kb=dict(type="list", elements="raw", default=["current"]),
            runtime=dict(type="int", default=5),
            repeats=dict(type="int", default=3),
            min_gain_percent=dict(type="float", default=5.0),
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
    plans = dict((d["name"], read_utils.candidate_values(
        module.params["max_sectors_kb"], d["max_sectors_kb"], d["max_hw_sectors_kb"], page_kb)) for d in disks)
    rounds = max(len(values) for values in plans.values()) if plans else 0
    region = min([module.params["region_size_mib"] * read_utils.MIB] + [d["size_bytes"] for d in disks])

    def command():
        return read_utils.read_command(fio, [(d["name"], d["path"]) for d in disks], module.params["runtime"],
                                       module.params["block_size"], region)

    irqs = dict((d["name"], irq_counts.device_irqs(d["name"])) for d in disks)
    results = dict((d["name"], dict(device=d["name"], model=d["model"], original_max_sectors_kb=d["max_sectors_kb"],
                                    irq_source=irqs[d["name"]][0], irqs=irqs[d["name"]][1], table=[], best=None))
                   for d in disks)
    if module.check_mode:
        for name, values in plans.items():
            results[name]["table"] = [dict(max_sectors_kb=v, read_mib_s=None, error=None) for v in values]
        module.exit_json(changed=False, results=[results[n] for n in sorted(results)], models={}, choices=[],
                         commands=[command()] * rounds)

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
                rows = read_utils.measure_round(command(), disks, plans, index, module.params["runtime"] + 60, irqs)
                for name, row in rows.items():
                    runs[name].append(row)
    except (processes.Interrupted, OSError) as exc:
        module.fail_json(msg="measurement stopped: %s" % exc, changed=False)
    finally:
        restore_errors = read_utils.set_back(disks)
    if restore_errors:
        module.fail_json(msg="max_sectors_kb could not be set back: %s" % "; ".join(restore_errors), changed=True)

    for name, result in results.items():
        result["table"] = read_utils.summarise(runs[name])
        result["best"] = read_utils.best_of([row for row in result["table"] if row["read_mib_s"] is not None])
    ordered = [results[n] for n in sorted(results)]
    models = read_utils.by_model([dict(r, table=[row for row in r["table"] if row["read_mib_s"] is not None])
                                  for r in ordered], module.params["min_gain_percent"])
    module.exit_json(changed=False, results=ordered, models=models, choices=read_utils.model_choices(models),
                     commands=[command()])


if __name__ == "__main__":
    main()
