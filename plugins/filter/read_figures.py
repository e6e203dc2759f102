# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: read_figures
short_description: Before/after sequential read figures of the disks a tuning role changed
version_added: 0.1.0
description:
  - Pairs two M(cephops.osd_tuning.seq_read_probe) runs, before and after a change, per disk
    measured in both, with the setting the queue plan chose for the disk.
author:
  - cephops maintainers (@cephops)
positional: after, chosen, what
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
  chosen:
    description: The C(chosen) of M(cephops.osd_tuning.queue_plan) (disk to value and source).
    type: dict
    required: true
  what:
    description: The name of the setting, for the line, for example V(scheduler).
    type: str
    required: true
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
      C(min_mib_s), C(max_mib_s), C(runs) and C(error)), C(change_percent) (null when a
      side has no median), C(what) and C(line) (all of it in one line).
  type: list
  elements: dict
"""

from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import read_figures as figures_utils


def read_figures(before, after, chosen, what):
    return figures_utils.compare(before, after, chosen, what)


class FilterModule(object):
    def filters(self):
        return {"read_figures": read_figures}
