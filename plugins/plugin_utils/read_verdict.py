# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdict on two read figures (per measure, the median of the runs with their slowest and
fastest): one change's before and after (the read_figures filter), or a disk as the play found
it and as it leaves it (the tuning_report filter)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# The measures a figure can hold: (name, median, slowest, fastest, error); seq_read_probe's row
# keys. The random one is there only where the probe ran with random_read.
SEQUENTIAL = ("sequential read", "read_mib_s", "min_mib_s", "max_mib_s", "error")
RANDOM = ("4 KiB random read", "random_iops", "random_min_iops", "random_max_iops", "random_error")


def judge(first, second, min_change_percent):
    """``{change_percent, verdict, why}`` of a change from the figure ``first`` to ``second``,
    with ``random_change_percent`` too where either holds the random measure.

    Per measure: the median's move in per cent (None where either has no median), and better or
    worse only when the runs' spreads do not overlap and the median moved by more than
    ``min_change_percent``, so that a noisy host says same. The change is worse where any measure
    is, else better where any is, else same; ``why`` names the measures where there are two."""
    measures = [SEQUENTIAL] + ([RANDOM] if RANDOM[1] in first or RANDOM[1] in second else [])
    judged = [_judge_one(first, second, measure, float(min_change_percent)) for measure in measures]
    outcome = dict(change_percent=judged[0][0])
    if len(judged) > 1:
        outcome["random_change_percent"] = judged[1][0]
    verdicts = [verdict for _change, verdict, _why in judged]
    outcome["verdict"] = "worse" if "worse" in verdicts else "better" if "better" in verdicts else "same"
    if len(judged) == 1:
        outcome["why"] = judged[0][2]
    else:
        # The measures that decided first: a worse verdict is explained by what got worse.
        ordered = sorted(zip(measures, judged), key=lambda pair: pair[1][1] != outcome["verdict"])
        outcome["why"] = "; ".join("%s %s: %s" % (measure[0], verdict, why) for measure, (_c, verdict, why) in ordered)
    return outcome


def _judge_one(first, second, measure, min_change_percent):
    """(change in per cent or None, verdict, why) of one measure."""
    _name, median, slowest, fastest, _error = measure
    if not first.get(median) or second.get(median) is None:
        return None, "same", "not measured on both sides"
    change = round(100.0 * (second[median] - first[median]) / first[median], 1)
    if second[fastest] < first[slowest]:
        direction = "worse"
    elif second[slowest] > first[fastest]:
        direction = "better"
    else:
        return change, "same", "the runs before and after overlap"
    if abs(change) <= min_change_percent:
        return change, "same", "the median moved by %.1f%%, not more than %s%%" % (abs(change), min_change_percent)
    return change, direction, "every run %s and the median %+.1f%% (more than %s%%)" % (
        "slower" if direction == "worse" else "faster", change, min_change_percent)


def describe(first, second, outcome):
    """Each measure of a judged change as the play's lines show it, from ``first`` to ``second``
    with the change in per cent: "sequential read A -> B, +x%" and, where it was taken,
    "; 4 KiB random read (QD32) P -> Q, +y%"."""
    parts = ["sequential read %s -> %s%s" % (
        _figure(first, SEQUENTIAL), _figure(second, SEQUENTIAL), _percent(outcome["change_percent"]))]
    if "random_change_percent" in outcome:
        parts.append("4 KiB random read (QD32) %s -> %s%s" % (
            _figure(first, RANDOM), _figure(second, RANDOM), _percent(outcome["random_change_percent"])))
    return "; ".join(parts)


def _figure(figure, measure):
    _name, median, slowest, fastest, error = measure
    if figure.get(median) is None:
        return "not measured (%s)" % figure.get(error)
    if measure is SEQUENTIAL:
        return "%s MiB/s (%s-%s)" % (figure[median], figure[slowest], figure[fastest])
    return "%s IOPS (%s-%s), %s ms" % (figure[median], figure[slowest], figure[fastest], figure["random_lat_ms"])


def _percent(change):
    return "" if change is None else ", %+.1f%%" % change
