# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: queue_plan
short_description: Choose a block queue value per disk, and the udev rules that keep it
version_added: 0.1.0
description:
  - Takes the disks of M(cephops.osd_tuning.disk_facts) and chooses the value of one queue
    attribute for each, by the disk's C(class) (V(ssd), V(hdd), V(nvme), V(virtio)), then model
    pattern, then serial or WWN; the most specific wins.
  - Returns the groups for M(cephops.osd_tuning.block_queue) (this host's disks now) and the
    rules for M(cephops.osd_tuning.udev_queue_rules) (every matching disk at every boot).
  - Scheduler names are translated on single-queue kernels (V(none) to V(noop),
    V(mq-deadline) to V(deadline)).
author:
  - cephops maintainers (@cephops)
positional: attribute, classes, models, overrides, extra, kept
options:
  attribute:
    description: The queue attribute, for example V(scheduler) or V(max_sectors_kb).
    type: str
    required: true
  classes:
    description: Value per disk class; a class left out or null is not managed.
    type: dict
    required: true
  models:
    description:
      - List of C(model) (shell pattern) with the value under the attribute's name, and
        optionally C(tunables) (mapping) that go with it.
    type: list
    elements: dict
    default: []
  overrides:
    description:
      - List of C(serial) or C(wwn) with the value under the attribute's name, and optionally
        C(tunables) (mapping) that go with it.
    type: list
    elements: dict
    default: []
  extra:
    description:
      - More attributes that go with a class's value (scheduler tunables, written under
        C(iosched/)), class to mapping. Naming a class that is not managed fails.
      - A disk gets the tunables udev leaves at boot, where every matching rule runs from class
        to model to disk; a rule that keeps the scheduler adds its tunables, one that changes
        it starts from the new scheduler's defaults.
    type: dict
    default: {}
  kept:
    description:
      - Disk name to why it keeps the value it has (a change the role measured worse). Such a
        disk is set back to that value now (its C(queues) group) and gets a udev rule of its own,
        after those of its class and model, that keeps it at boot; without a serial or WWN to
        match it gets none, and C(warnings) says so.
    type: dict
    default: {}
extends_documentation_fragment:
  - cephops.osd_tuning.disk_inventory
"""

EXAMPLES = r"""
- name: Plan schedulers
  ansible.builtin.set_fact:
    plan: "{{ inventory.disks | cephops.osd_tuning.queue_plan('scheduler', {'ssd': 'none', 'hdd': 'mq-deadline'}) }}"

- name: Plan schedulers with tunables for HDDs and for one model
  ansible.builtin.set_fact:
    plan: >-
      {{ inventory.disks | cephops.osd_tuning.queue_plan('scheduler', {'ssd': 'none', 'hdd': 'mq-deadline'},
                                                          [{'model': 'ST4000NM*', 'scheduler': 'mq-deadline',
                                                            'tunables': {'read_expire': 200}}],
                                                          [], {'hdd': {'fifo_batch': 16}}) }}
"""

RETURN = r"""
_value:
  description: C(queues) (block_queue groups), C(rules) (udev rules), C(chosen) (disk to value, source and keep_worse), C(changing), C(legacy), C(warnings).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import queue_plan as planner


def queue_plan(disks, attribute, classes, models=None, overrides=None, extra=None, kept=None):
    try:
        return planner.plan(disks, attribute, classes, models or [], overrides or [], extra or {}, kept=kept or {})
    except ValueError as exc:
        raise AnsibleFilterError("queue_plan: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"queue_plan": queue_plan}
