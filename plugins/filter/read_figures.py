# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: read_figures
short_description: Before/after read figures of the disks a tuning role changed
version_added: 0.1.0
description:
  - Pairs two M(cephops.osd_tuning.seq_read_probe) runs, before and after a change, per disk
    measured in both, with the setting the queue plan chose for the disk.
author:
  - cephops maintainers (@cephops)
positional: after, chosen, what, min_change_percent
options:
  _input:
    description: The C(results) of the run before.
    type: list
    elements: dict
    required: true
  after:
    description: The C(results) of the run after.
    type: list
    elements: dict
    required: true
  what:
    description: The name of the setting, for the line, for example V(scheduler).
    type: str
    required: true
  min_change_percent:
    description:
      - How far, in per cent of the median before, the median after must move for the change to
        be V(better) or V(worse); the spread of the runs must not overlap either.
    type: float
    default: 5
extends_documentation_fragment:
  - cephops.osd_tuning.disk_inventory.chosen
"""

EXAMPLES = r"""
- name: Pair the figures
  ansible.builtin.set_fact:
    figures: "{{ before.results | cephops.osd_tuning.read_figures(after.results, plan.chosen, 'scheduler') }}"
"""

RETURN = r"""
_value:
  description:
    - Per disk C(device), C(setting), C(before) and C(after) (each C(read_mib_s), the median,
      C(min_mib_s), C(max_mib_s), C(runs) and C(error), and where the probe read at random too,
      the C(random_*) figures of M(cephops.osd_tuning.seq_read_probe)'s row), C(change_percent)
      (null when a side has no median), C(random_change_percent) (where there are random
      figures), C(verdict), C(why), C(what) and C(line) (all of it in one line).
    - Per measure, V(worse) only when every run after is slower than every run before and the
      median dropped by more than O(min_change_percent); V(better) likewise the other way;
      otherwise V(same), and C(why) says which of the two did not hold (or that a side was not
      measured). The change's C(verdict) is V(worse) where either measure is, else V(better)
      where either is, else V(same); with two measures C(why) gives each one's.
  type: list
  elements: dict
"""

from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import read_verdict


# Before/after read figures of the disks a tuning role changed, from two seq_read_probe runs
# (the SSD optimisation article compared hdparm -Tt before and after, five runs each).
def _figure(result):
    row = result["table"][0] if result.get("table") else {}
    figure = dict(read_mib_s=row.get("read_mib_s"), min_mib_s=row.get("min_mib_s"), max_mib_s=row.get("max_mib_s"),
                  runs=row.get("runs", []), error=row.get("error"))
    figure.update((key, value) for key, value in row.items() if key.startswith("random_"))
    return figure


def compare(before, after, chosen, what, min_change_percent=5):
    """Per disk measured in both ``before`` and ``after`` (seq_read_probe ``results``): the
    setting ``what`` (from the queue plan's ``chosen``), the median read speed with its spread
    before and after, the change in per cent (null when either has no median), the verdict
    and a line that says it all."""
    after_by_disk = dict((result["device"], result) for result in after)
    figures = []
    for result in before:
        if result["device"] not in after_by_disk:
            continue
        first, second = _figure(result), _figure(after_by_disk[result["device"]])
        figure = dict(device=result["device"], what=what, setting=(chosen.get(result["device"]) or {}).get("value"),
                      before=first, after=second, **read_verdict.judge(first, second, min_change_percent))
        figure["line"] = describe(figure)
        figures.append(figure)
    return figures


def describe(figure):
    """One line for the play's output."""
    return "%s: %s %s, %s, median of %d runs (min-max): %s, %s" % (
        figure["device"], figure["what"], figure["setting"], read_verdict.describe(figure["before"], figure["after"], figure),
        len(figure["after"]["runs"]), figure["verdict"], figure["why"])


class FilterModule(object):
    def filters(self):
        return {"read_figures": compare}
