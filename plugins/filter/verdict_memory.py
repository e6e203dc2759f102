# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: verdict_memory
short_description: The changes a queue role measured worse on a disk, remembered across runs
version_added: 0.1.0
description:
  - A queue role keeps, per host, the changes it measured V(worse) and put back, each by disk
    identity (serial, else WWN, else kernel name), firmware, kernel release, setting and value,
    with the date and the reason. The next run keeps such a disk at its value instead of trying
    the same change again; a new firmware or kernel tries it again.
  - Returns C(kept), the disks of O(_input)'s memory whose chosen value was measured worse
    before on the same firmware and kernel (for the C(kept) option of the queue_plan filter), but for
    those whose rule keeps its value measured worse (C(keep_worse) in O(chosen)),
    and C(memory), the memory with the V(worse) verdicts of O(figures) added (an entry per disk,
    setting and value; a newer one replaces an older).
author:
  - cephops maintainers (@cephops)
positional: disks, chosen, setting, figures, today, kernel
options:
  _input:
    description: The memory as the role last wrote it, C(verdicts) a list; empty or null for none.
    type: dict
    required: true
  disks:
    description: The disks as M(cephops.osd_tuning.disk_facts) reports them.
    type: list
    elements: dict
    required: true
  setting:
    description: The queue attribute, V(scheduler) or V(max_sectors_kb).
    type: str
    required: true
  figures:
    description: The C(read_figures) of this run, whose V(worse) verdicts are added.
    type: list
    elements: dict
    default: []
  today:
    description: The date the added verdicts get, as YYYY-MM-DD.
    type: str
    default: ""
  kernel:
    description:
      - The host's kernel release now (C(ansible_facts.kernel)), kept with the added verdicts and
        compared with the remembered ones; a verdict remembered without one (before this option)
        is compared by firmware alone.
    type: str
    default: ""
extends_documentation_fragment:
  - cephops.osd_tuning.disk_inventory.chosen
"""

EXAMPLES = r"""
- name: Keep off the changes measured worse before
  ansible.builtin.set_fact:
    kept: "{{ (memory | cephops.osd_tuning.verdict_memory(disks, plan.chosen, 'max_sectors_kb')).kept }}"
"""

RETURN = r"""
_value:
  description:
    - C(kept) (disk name to why, V(measured worse on DATE with the same firmware and kernel) and the
      reason) and C(memory) (C(verdicts), each with C(identity), C(firmware), C(kernel), C(setting),
      C(value), C(date) and C(why)).
  type: dict
"""


def identity(disk):
    """What names the disk across reboots and reorderings: its serial, else its WWN, else its kernel name."""
    for key in ("serial", "wwn"):
        if disk.get(key):
            return "%s %s" % (key, disk[key])
    return "name %s" % disk["name"]


def _key(entry):
    return (entry["identity"], entry["setting"], str(entry["value"]))


def verdict_memory(memory, disks, chosen, setting, figures=None, today="", kernel=""):
    """``{kept, memory}``: the disks whose chosen value was measured worse before on their
    firmware and this kernel, and the memory with this run's worse verdicts added."""
    verdicts = list((memory or {}).get("verdicts") or [])
    by_name = dict((disk["name"], disk) for disk in disks)
    known = dict((_key(entry), entry) for entry in verdicts)
    kept = {}
    for name, choice in sorted(chosen.items()):
        if choice.get("keep_worse"):
            continue
        disk = by_name.get(name)
        entry = disk and known.get((identity(disk), setting, str(choice["value"])))
        if entry and entry.get("firmware") == disk.get("firmware") and entry.get("kernel", kernel) == kernel:
            kept[name] = "%s %s measured worse on %s with the same firmware and kernel: %s" % (
                setting, choice["value"], entry["date"], entry["why"])
    for figure in figures or []:
        disk = by_name.get(figure["device"])
        if figure.get("verdict") != "worse" or not disk:
            continue
        entry = dict(identity=identity(disk), firmware=disk.get("firmware"), kernel=kernel, setting=setting,
                     value=figure["setting"], date=today, why=figure["why"])
        known[_key(entry)] = entry
    return dict(kept=kept, memory=dict(verdicts=[known[key] for key in sorted(known)]))


class FilterModule(object):
    def filters(self):
        return {"verdict_memory": verdict_memory}
