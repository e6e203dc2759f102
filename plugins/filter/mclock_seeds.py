# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: mclock_seeds
short_description: The mClock capacity each approved disk of a host is seeded with
version_added: 0.2.0
description:
  - From the gate's fleet document (the C(json) report of P(cephops.osd_tuning.gate_report#filter)),
    the seeds of one host for M(cephops.osd_tuning.mclock_capacity) - one per approved disk
    that was measured, with the figure it gets.
  - The figure is the median deep-queue IOPS of every measured disk of its model and firmware
    in the fleet (like disks get like figures), the disk's own where its model is unknown, a
    model's pin from O(models) before either, each times O(factor).
  - A disk without a deep-queue figure (a result cached before the figure existed, a run with
    C(disk_gate_deep_queue_seconds) 0) and no pin gets no seed; its OSD keeps its own value.
options:
  _input:
    description: The gate's fleet document.
    type: dict
    required: true
  host:
    description: The host whose disks to seed.
    type: str
    required: true
  models:
    description:
      - Pins per model, each C(model) (a shell pattern, matched against the whole model string)
        and C(iops); the first that matches wins.
    type: list
    elements: dict
    default: []
  factor:
    description: What the figure is multiplied by (see docs/mclock.md for what the lab measured).
    type: float
    default: 1.0
"""

EXAMPLES = r"""
- name: Seed each OSD's mClock capacity from the gate's report
  cephops.osd_tuning.mclock_capacity:
    seeds: "{{ lookup('ansible.builtin.file', 'reports/disk_gate.json') | from_json
               | cephops.osd_tuning.mclock_seeds(inventory_hostname) }}"
"""

RETURN = r"""
_value:
  description:
    - One seed per approved, measured disk of O(host) - C(name) (its kernel name when gated),
      C(device), its identity (C(model), C(serial), C(wwn), C(firmware), C(size_bytes)), C(iops)
      and C(why) (where the figure comes from).
  type: list
  elements: dict
"""

import fnmatch

from ansible.errors import AnsibleFilterError

from ansible_collections.cephops.osd_tuning.plugins.module_utils.blockdev import copy_identity


def mclock_seeds(document, host, models=None, factor=1.0):
    entries = [entry for entry in document.get("hosts", []) if entry.get("host") == host]
    if not entries:
        raise AnsibleFilterError("mclock_seeds: the gate's report has no host %s" % host)
    medians = dict(((g["model"], g["firmware"]), g) for g in document["models"]["groups"] if g.get("deep_queue_iops"))
    seeds = []
    for disk in entries[0]["disks"]:
        if not disk.get("approved"):
            continue
        pin = [p for p in models or [] if fnmatch.fnmatchcase(disk.get("model") or "", str(p["model"]))]
        group = medians.get((disk.get("model"), disk.get("firmware")))
        own = (disk.get("deep_queue") or {}).get("write_iops")
        if pin:
            iops, why = float(pin[0]["iops"]), "pinned by mclock_capacity_models (%s)" % pin[0]["model"]
        elif group:
            found = group["deep_queue_iops"]
            iops, why = found["median"], "the median deep-queue IOPS of %d disks of %s firmware %s" % (
                found["disks"], disk["model"], disk.get("firmware") or "unknown")
        elif own:
            iops, why = own, "its own deep-queue IOPS"
        else:
            continue
        if factor != 1.0:
            iops, why = iops * factor, "%s, times %g" % (why, factor)
        seeds.append(dict(copy_identity(disk), name=disk.get("name"), device=disk["device"], iops=round(iops, 1), why=why))
    return seeds


class FilterModule(object):
    def filters(self):
        return {"mclock_seeds": mclock_seeds}
