# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet per model: every measured disk next to the disks of its model and firmware.

Disks of one model and firmware should measure alike; one that does not (worn, failing, a
different cache setting, a slot on a slower controller) is flagged even when it passes the
thresholds. The rule is robust, so the outliers it looks for cannot hide themselves:

    flagged when |x - median| > max(K * 1.4826 * MAD, FLOOR * median)

per figure (sync IOPS, p99 latency) and group, where MAD is the median of |x - median|.
1.4826 * MAD estimates the standard deviation of normally distributed figures while up to
half of the group may be outliers; K = 3.5 is the usual cut for this modified z-score
(Iglewicz and Hoaglin). The FLOOR keeps identical disks, whose MAD is 0 or nearly so (fio
reports percentiles in buckets), from flagging noise. Groups with fewer than MIN_GROUP
measured disks are not judged: with two or three values the median is one of the disks
under judgement.

A model that runs more than one firmware in the fleet is listed with the disks and hosts of
each: firmware should be current and alike.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

MIN_GROUP = 5
K = 3.5
SIGMA_PER_MAD = 1.4826
FLOOR = 0.25
FIGURES = (("write_iops", "sync IOPS"), ("p99_sync_latency_ms", "p99 latency"))


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return float(ordered[middle]) if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2.0


def spread(values):
    """Median, MAD and the deviation from the median allowed before a value is flagged."""
    centre = median(values)
    mad = median([abs(value - centre) for value in values])
    return {"median": round(centre, 3), "mad": round(mad, 3),
            "allowed": round(max(K * SIGMA_PER_MAD * mad, FLOOR * abs(centre)), 3)}


def _member(entry, disk):
    return {"host": entry["host"], "device": disk["device"], "serial": disk["serial"], "decision": disk["decision"],
            "write_iops": disk["write_iops"], "p99_sync_latency_ms": disk["p99_sync_latency_ms"]}


def _judge(members):
    """The statistics of each figure and the members far from their median."""
    figures, outliers = {}, []
    for key, label in FIGURES:
        values = [m[key] for m in members if m[key] is not None]
        if len(values) < MIN_GROUP:
            figures[key] = None
            continue
        figures[key] = found = spread(values)
        for member in members:
            value = member[key]
            if value is not None and abs(value - found["median"]) > found["allowed"]:
                outliers.append(dict(member, figure=key, label=label, value=value, median=found["median"],
                                     allowed=found["allowed"],
                                     direction="above" if value > found["median"] else "below"))
    return figures, outliers


def _group(model, firmware, members):
    measured = [m for m in members if m["write_iops"] is not None]
    figures, outliers = _judge(measured)
    return {"model": model, "firmware": firmware, "disks": len(members), "measured": len(measured),
            "hosts": len(set(m["host"] for m in members)), "judged": len(measured) >= MIN_GROUP,
            "figures": figures, "outliers": outliers}


def _mixed_firmware(groups, members):
    by_model = {}
    for group in groups:
        by_model.setdefault(group["model"], []).append(group)
    mixed = []
    for model, found in sorted(by_model.items()):
        if len(found) > 1:
            mixed.append({"model": model, "firmware": [
                {"firmware": g["firmware"], "disks": g["disks"],
                 "hosts": sorted(set(m["host"] for m in members[(model, g["firmware"])]))} for g in found]})
    return mixed


def fleet_models(entries):
    """The per-model view of the fleet document's host entries: ``groups`` (one per model and
    firmware, with the median, MAD and allowed deviation of each figure when judged, and the
    outliers), ``mixed_firmware``, ``measured_without_model`` (not grouped: nothing says which
    disks they should match) and the ``rule``'s constants."""
    members, without_model = {}, 0
    for entry in entries:
        for disk in entry["disks"]:
            if not disk["model"]:
                if disk["write_iops"] is not None:
                    without_model += 1
                continue
            members.setdefault((disk["model"], disk["firmware"]), []).append(_member(entry, disk))
    keys = sorted(members, key=lambda key: (key[0], key[1] or ""))
    groups = [_group(model, firmware, members[(model, firmware)]) for model, firmware in keys]
    return {"rule": {"min_group": MIN_GROUP, "k": K, "sigma_per_mad": SIGMA_PER_MAD, "floor": FLOOR},
            "groups": groups, "outliers": sum(len(g["outliers"]) for g in groups),
            "mixed_firmware": _mixed_firmware(groups, members), "measured_without_model": without_model}
