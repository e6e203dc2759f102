# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdict on two read figures (median of the runs, with their slowest and fastest): one
change's before and after (the read_figures filter), or a disk as the play found it and as it
leaves it (the tuning_report filter)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def judge(first, second, min_change_percent):
    """``{change_percent, verdict, why}`` of a change from the figure ``first`` to ``second``:
    the median's move in per cent (None where either has no median), and better or worse only
    when the runs' spreads do not overlap and the median moved by more than
    ``min_change_percent``, so that a noisy host says same."""
    change = None
    if first["read_mib_s"] and second["read_mib_s"] is not None:
        change = round(100.0 * (second["read_mib_s"] - first["read_mib_s"]) / first["read_mib_s"], 1)
    verdict, why = _verdict(first, second, change, float(min_change_percent))
    return dict(change_percent=change, verdict=verdict, why=why)


def _verdict(first, second, change, min_change_percent):
    if change is None:
        return "same", "not measured on both sides"
    if second["max_mib_s"] < first["min_mib_s"]:
        direction = "worse"
    elif second["min_mib_s"] > first["max_mib_s"]:
        direction = "better"
    else:
        return "same", "the runs before and after overlap"
    if abs(change) <= min_change_percent:
        return "same", "the median moved by %.1f%%, not more than %s%%" % (abs(change), min_change_percent)
    return direction, "every run %s and the median %+.1f%% (more than %s%%)" % (
        "slower" if direction == "worse" else "faster", change, min_change_percent)


def describe(speed):
    """A figure as the play's lines show it."""
    if speed["read_mib_s"] is None:
        return "not measured (%s)" % speed["error"]
    return "%s MiB/s (%s-%s)" % (speed["read_mib_s"], speed["min_mib_s"], speed["max_mib_s"])
