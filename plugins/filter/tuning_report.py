# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: tuning_report
short_description: The tuning report of every host of the play, with the read figures before and after
version_added: 0.1.0
description:
  - Per host of O(hosts), per disk, each change the C(io_scheduler) and C(max_sectors_kb) roles
    made now (setting, value, where the value came from) with its read figures before and after
    (median of the runs with the slowest and fastest, from P(cephops.osd_tuning.read_figures#filter)).
  - Per disk also its whole change over the play's queue roles (C(whole)), the figure of the disk
    as the play found it (the first measured change's before) and as it leaves it (the last
    measured change's after, or its before where that change was put back), with their verdict by
    the same rule and O(min_change_percent).
  - A host without either role's result (unreachable, failed before them, or a run that left
    them out) is listed with status C(no_result).
author:
  - cephops maintainers (@cephops)
positional: hosts, generated_at, min_change_percent
options:
  _input:
    description: C(hostvars).
    type: dict
    required: true
  hosts:
    description: Every host of the play, in order.
    type: list
    elements: str
    required: true
  generated_at:
    description: Time stamp written into the report.
    type: str
  min_change_percent:
    description: The least move of the median, in per cent, for which the whole change is V(better) or V(worse).
    type: float
    default: 5
"""

EXAMPLES = r"""
- name: Write the tuning report
  ansible.builtin.copy:
    dest: /srv/reports/tuning.json
    content: "{{ hostvars | cephops.osd_tuning.tuning_report(ansible_play_hosts_all) | ansible.builtin.to_nice_json }}"
    mode: "0644"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
_value:
  description:
    - C(generated_at), C(read_figures) (what the figures are), C(summary) (C(hosts),
      C(hosts_tuned), C(changes), C(undone), C(kept_off)) and C(hosts), per host C(host), C(status)
      (V(tuned) or V(no_result)), C(roles), C(reboot_required), C(kept_off) (per change an earlier
      run measured worse and this one did not try again, C(device), C(setting) and C(why)) and
      C(disks), per disk C(device), C(whole) (C(found), C(left), C(change_percent), C(verdict),
      C(why), C(line); null when no change of the disk was measured) and
      C(changes), each with C(setting), C(value), C(source), C(read) (C(before), C(after),
      C(change_percent), C(verdict), C(why), C(line); null when the read speed was not
      measured) and C(undone) (true when the role put the value before back, the change
      measured V(worse)).
  type: dict
"""

# The tuning report: per host of the play, per disk, what the queue roles changed and the read
# figures before and after each change (read_figures), so they outlive the play's output.

from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import read_verdict

# Role result variable per setting, in the order the roles run.
ROLES = (("scheduler", "io_scheduler_result"), ("max_sectors_kb", "max_sectors_kb_result"))


def _whole(device, changes, min_change_percent):
    """The disk as the play found it and as it leaves it, over its measured changes in the order
    the roles made them; None where none was measured."""
    measured = [change for change in changes if change["read"]]
    if not measured:
        return None
    found, last = measured[0]["read"]["before"], measured[-1]
    left = last["read"]["before"] if last["undone"] else last["read"]["after"]
    whole = dict(found=found, left=left, **read_verdict.judge(found, left, min_change_percent))
    steps = ", ".join("%s %s%s" % (c["setting"], c["value"], " (undone)" if c["undone"] else "") for c in measured)
    whole["line"] = "%s: as found -> as left, %s, after %s: %s, %s" % (
        device, read_verdict.describe(found, left, whole), steps, whole["verdict"], whole["why"])
    return whole


def _host(name, host_vars, min_change_percent):
    results = dict((what, host_vars.get(variable)) for what, variable in ROLES if host_vars.get(variable))
    entry = dict(host=name, status="tuned" if results else "no_result", roles=sorted(results),
                 reboot_required=bool(host_vars.get("io_scheduler_reboot_required")), kept_off=[], disks=[])
    disks = {}
    for what, _variable in ROLES:
        result = results.get(what)
        if not result:
            continue
        entry["kept_off"] += [dict(device=device, setting=what, why=why)
                              for device, why in sorted((result.get("kept_off") or {}).items())]
        figures = dict((figure["device"], figure) for figure in result.get("read_figures") or [])
        undone = result.get("undone") or []
        for device in result.get("changing") or []:
            chosen = (result.get("chosen") or {}).get(device) or {}
            figure = figures.get(device)
            read = None
            if figure:
                read = dict((key, figure[key]) for key in ("before", "after", "change_percent", "random_change_percent",
                                                           "verdict", "why", "line") if key in figure)
            disks.setdefault(device, []).append(dict(setting=what, value=chosen.get("value"),
                                                     source=chosen.get("source"), read=read, undone=device in undone))
    entry["disks"] = [dict(device=device, whole=_whole(device, disks[device], min_change_percent), changes=disks[device])
                      for device in sorted(disks)]
    return entry


def build(hostvars, hosts, generated_at=None, min_change_percent=5):
    """The report of every host in ``hosts`` (the play's, failed and unreachable ones included)
    from ``hostvars``; a host that has neither role's result is listed as ``no_result``."""
    entries = [_host(name, hostvars[name] if name in hostvars else {}, min_change_percent) for name in hosts]
    return dict(
        generated_at=generated_at,
        read_figures=("sequential read and 4 KiB random read at a queue depth of 32 (seq_read_probe, read-only, "
                      "direct I/O) before and after the change: read_mib_s and random_iops are the medians of the "
                      "runs, min_* and max_* their spread, random_lat_ms the median mean latency; a change measured "
                      "worse in either (every run slower, the median down by more than the minimum) is undone"),
        summary=dict(hosts=len(entries), hosts_tuned=sum(1 for e in entries if e["status"] == "tuned"),
                     changes=sum(len(disk["changes"]) for e in entries for disk in e["disks"]),
                     undone=sum(1 for e in entries for disk in e["disks"] for change in disk["changes"]
                                if change["undone"]),
                     kept_off=sum(len(e["kept_off"]) for e in entries)),
        hosts=entries)


class FilterModule(object):
    def filters(self):
        return {"tuning_report": build}
