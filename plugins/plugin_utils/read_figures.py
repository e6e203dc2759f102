# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Before/after read figures of the disks a tuning role changed, from two seq_read_probe runs
(the SSD optimisation article compared hdparm -Tt before and after, five runs each)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def _figure(result):
    row = result["table"][0] if result.get("table") else {}
    return dict(read_mib_s=row.get("read_mib_s"), min_mib_s=row.get("min_mib_s"), max_mib_s=row.get("max_mib_s"),
                runs=row.get("runs", []), error=row.get("error"))


def compare(before, after, chosen, what):
    """Per disk measured in both ``before`` and ``after`` (seq_read_probe ``results``): the
    setting ``what`` (from the queue plan's ``chosen``), the median read speed with its spread
    before and after, the change in per cent (null when either has no median) and a line
    that says it all."""
    after_by_disk = dict((result["device"], result) for result in after)
    figures = []
    for result in before:
        if result["device"] not in after_by_disk:
            continue
        first, second = _figure(result), _figure(after_by_disk[result["device"]])
        change = None
        if first["read_mib_s"] and second["read_mib_s"] is not None:
            change = round(100.0 * (second["read_mib_s"] - first["read_mib_s"]) / first["read_mib_s"], 1)
        figure = dict(device=result["device"], what=what, setting=(chosen.get(result["device"]) or {}).get("value"),
                      before=first, after=second, change_percent=change)
        figure["line"] = describe(figure)
        figures.append(figure)
    return figures


def describe(figure):
    """One line for the play's output."""
    def side(speed):
        if speed["read_mib_s"] is None:
            return "not measured (%s)" % speed["error"]
        return "%s MiB/s (%s-%s)" % (speed["read_mib_s"], speed["min_mib_s"], speed["max_mib_s"])
    change = "" if figure["change_percent"] is None else ", %+.1f%%" % figure["change_percent"]
    return "%s: %s %s, sequential read %s -> %s%s, median of %d runs (min-max)" % (
        figure["device"], figure["what"], figure["setting"], side(figure["before"]), side(figure["after"]), change,
        len(figure["after"]["runs"]))
