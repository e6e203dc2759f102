# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the sync-write probe concludes from its measurements: the verdict against the
thresholds, when the adaptive probe may stop early, where the journal ramp saturates, the
power-loss protection hint and the faster write cache setting.

Every function here is pure: measurements in (see fio_job), conclusions out.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.cephops.osd_tuning.plugins.module_utils import fio_job

# Defaults for flash OSDs, derived from the articles' figures in docs/gate_thresholds.md.
DEFAULT_THRESHOLDS = {
    "min_iops": 5000,
    "marginal_min_iops": 1000,
    "max_p99_sync_latency_ms": 1.0,
    "marginal_max_p99_sync_latency_ms": 5.0,
}


# --------------------------------------------------------------------------- verdicts

def check_thresholds(thresholds):
    """Raise ValueError when the marginal band does not lie below the suitable one."""
    if thresholds["marginal_min_iops"] > thresholds["min_iops"]:
        raise ValueError("marginal_min_iops must not exceed min_iops")
    latency, marginal = thresholds["max_p99_sync_latency_ms"], thresholds["marginal_max_p99_sync_latency_ms"]
    if latency is not None and marginal is not None and marginal < latency:
        raise ValueError("marginal_max_p99_sync_latency_ms must not be below max_p99_sync_latency_ms")


def verdict(measurement, thresholds):
    """(verdict, reasons) of one measurement: suitable when every suitable limit holds,
    marginal when every marginal limit holds, else unsuitable. A latency limit is left
    out when the method measured no percentile (dd)."""
    iops = measurement["write_iops"]
    p99 = fio_job.p99_sync_latency_ms(measurement)
    reasons, suitable, marginal = [], True, True
    if iops >= thresholds["min_iops"]:
        reasons.append("write IOPS %s >= %s" % (_num(iops), _num(thresholds["min_iops"])))
    else:
        suitable = False
        marginal = iops >= thresholds["marginal_min_iops"]
        reasons.append("write IOPS %s < %s (%s %s)" % (
            _num(iops), _num(thresholds["min_iops"]),
            "marginal from" if marginal else "below the marginal floor", _num(thresholds["marginal_min_iops"])))
    limit, marginal_limit = thresholds["max_p99_sync_latency_ms"], thresholds["marginal_max_p99_sync_latency_ms"]
    if p99 is None:
        reasons.append("p99 sync latency not measured by this method")
    elif limit is not None and p99 > limit:
        suitable = False
        within_marginal = marginal_limit is None or p99 <= marginal_limit
        marginal = marginal and within_marginal
        reasons.append("p99 sync latency %s ms > %s ms (%s)" % (
            _num(p99), _num(limit), "marginal up to %s ms" % _num(marginal_limit) if within_marginal
            else "above the marginal limit %s ms" % _num(marginal_limit)))
    elif limit is not None:
        reasons.append("p99 sync latency %s ms <= %s ms" % (_num(p99), _num(limit)))
    if suitable:
        return "suitable", reasons
    return ("marginal" if marginal else "unsuitable"), reasons


def _num(value):
    return ("%.3f" % value).rstrip("0").rstrip(".") if isinstance(value, float) else str(value)


# --------------------------------------------------------------------------- adaptive runtime

def is_clear(measurement, thresholds, margin):
    """True when IOPS and p99 sync latency lie outside [limit/margin, limit*margin] for
    every limit, so a longer run cannot plausibly move the verdict across one."""
    pairs = [(measurement["write_iops"], thresholds["min_iops"]),
             (measurement["write_iops"], thresholds["marginal_min_iops"])]
    p99 = fio_job.p99_sync_latency_ms(measurement)
    for key in ("max_p99_sync_latency_ms", "marginal_max_p99_sync_latency_ms"):
        if thresholds[key] is not None:
            if p99 is None:
                return False
            pairs.append((p99, thresholds[key]))
    return all(value < limit / margin or value > limit * margin for value, limit in pairs)


def is_clearly_unsuitable(measurement, thresholds, margin):
    """True when one metric lies beyond its marginal limit by the margin: the disk is
    unsuitable whatever the other metric does (a slow disk's latency may sit near its limit)."""
    if measurement["write_iops"] < thresholds["marginal_min_iops"] / margin:
        return True
    limit, p99 = thresholds["marginal_max_p99_sync_latency_ms"], fio_job.p99_sync_latency_ms(measurement)
    return limit is not None and p99 is not None and p99 > limit * margin


def decided_early(stages, thresholds, margin):
    """Adaptive rule: the last two stages are each clear of every limit by the margin and
    give the same verdict, or each fall clearly short of one marginal limit. Two samples that
    agree clearly say more than their closeness to each other, which a busy host disturbs
    without moving a verdict."""
    if len(stages) < 2:
        return False
    if all(is_clearly_unsuitable(stage, thresholds, margin) for stage in stages[-2:]):
        return True
    if not all(is_clear(stage, thresholds, margin) for stage in stages[-2:]):
        return False
    return verdict(stages[-2], thresholds)[0] == verdict(stages[-1], thresholds)[0]


# --------------------------------------------------------------------------- journal ramp

def next_numjobs(steps, min_gain, max_numjobs):
    """Next numjobs of the journal ramp (1, 2, 4, ...) or None once saturated or at the cap.

    ``steps`` are [{"numjobs", "write_iops"}] so far; saturation is a step whose IOPS gain
    over the step before falls under ``min_gain`` (a share).
    """
    if not steps:
        return 1
    if saturated_at(steps, min_gain) is not None:
        return None
    following = steps[-1]["numjobs"] * 2
    return following if following <= max_numjobs else None


def saturated_at(steps, min_gain):
    """numjobs after which more jobs gained less than ``min_gain``, else None."""
    for before, after in zip(steps, steps[1:]):
        if before["write_iops"] <= 0 or after["write_iops"] < before["write_iops"] * (1 + min_gain):
            return before["numjobs"]
    return None


# --------------------------------------------------------------------------- power-loss protection hint

def plp_hint(synced_iops, unsynced_iops, ratio_threshold=0.5):
    """Drives with power-loss protection acknowledge a flush from protected cache, so they
    lose little under fsync; drives without one drop to a fraction (the SSD selection article, Vitastor)."""
    if not unsynced_iops:
        return None
    ratio = round(synced_iops / unsynced_iops, 3)
    if ratio >= ratio_threshold:
        text = "fsync costs little (ratio %s): consistent with power-loss protection" % _num(ratio)
    else:
        text = "fsync costs much (ratio %s): likely no power-loss protection" % _num(ratio)
    return {"unsynced_iops": unsynced_iops, "ratio": ratio, "hint": text}


# --------------------------------------------------------------------------- write cache

def faster_cache_setting(on_iops, off_iops):
    """'on' or 'off', whichever measured more sync IOPS (Ceph docs: keep the winner)."""
    return "on" if on_iops >= off_iops else "off"
