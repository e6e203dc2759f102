# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the sync-write probe concludes from its measurements: the verdict against the
thresholds, when the adaptive probe may stop early, where the journal ramp saturates, the
power-loss protection verdict and the faster write cache setting; and the result record of
each disk, measured, refused, planned or served from the cache.

Every function here is pure: measurements in (see fio_job), conclusions out.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev, fio_job, write_cache

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


# --------------------------------------------------------------------------- power-loss protection

# What one fsync may cost, from the SSD selection article's probes: a drive with power-loss
# protection acknowledges a flush from its protected cache (Kioxia CD6 under 0.01 ms, Intel DC
# S3500 0.06 ms over SATA), one without empties its volatile cache to flash (Samsung 980 1.7 ms).
PLP_CHEAP_FLUSH_MS = 0.25
PLP_COSTLY_FLUSH_MS = 0.5
# A durable write slower than this leaves no room to tell a protected cache from no cache at
# all: the write itself costs as much as a flush to flash would.
PLP_FAST_DURABLE_WRITE_MS = 0.5
# Where a verdict's flush cost comes from (``flush_cost_source``): the fsync latency of the
# probe itself, or a run of the same job without fsync.
FROM_FSYNC_LATENCY = "fsync_latency"
FROM_RUN_WITHOUT_FSYNC = "run_without_fsync"
# A probe fsyncs after each write when it has (nearly) as many fsyncs as writes: a run may stop
# between a write and its fsync. One that fsyncs every few writes (fsync=4) does not qualify.
FSYNC_EACH_WRITE_SHARE = 0.99


def write_ms(measurement):
    """Mean time of one write as the probe issued it, its fsync included: the inverse of its
    IOPS at queue depth 1. Not fio's completion plus sync latency: fio 3.33's libaio engine
    times a synchronous fsync from the issue of the write before it (see fsync_cost_ms), so
    its sync latency holds that write too (the SSD selection article's Intel DC S3500: 5.7 us
    submission, 49.9 us completion and 108.5 us sync would take 164 us a write at 8713 IOPS,
    which leave 115)."""
    iops = measurement.get("write_iops")
    return 1000.0 / iops if iops else None


def fsync_cost_ms(measurement):
    """(what one fsync cost, the write's completion taken off its figure), both in ms, from the
    mean fsync latency fio reported for a probe that fsynced after each write; None where the
    probe has no such figure (O_DSYNC writes, whose flush is inside the write's completion;
    dd; an fsync only every few writes).

    At queue depth 1 a write and its fsync follow each other, so their latencies cannot add up
    to more than a durable write takes. fio 3.33's libaio engine runs the fsync synchronously
    and stamps no issue time of its own on it: it is timed from the issue of the write before
    it (the same io_u, reused), so its sync latency holds that write's completion too, and
    the two add up to more. Then the completion is taken off (the article's DC S3500: 108.5 us
    sync less 49.9 us completion, 0.059 ms a flush); an engine that times the fsync on its own
    (psync, io_uring) leaves the sum under a durable write and the figure as fio gave it."""
    latency = measurement.get("latency_us") or {}
    sync, completion = latency.get("sync"), latency.get("completion") or {}
    durable = write_ms(measurement)
    writes, syncs = measurement.get("total_ios") or 0, measurement.get("sync_ios") or 0
    if not sync or durable is None or not writes or not writes * FSYNC_EACH_WRITE_SHARE <= syncs <= writes:
        return None
    sync_ms, completion_ms = sync["mean"] / 1000.0, (completion.get("mean") or 0.0) / 1000.0
    counted = completion_ms if sync_ms + completion_ms > durable else 0.0
    return max(sync_ms - counted, 0.0), counted


def _cache_reason(cache):
    """Why the write cache alone leaves the fsync figures silent on power-loss protection, or
    None when a volatile cache is on and flushed."""
    tool, view = cache.get("tool"), cache.get("kernel_view")
    if cache.get("enabled") is False:
        return ("the write cache is off (%s): every write is durable when it completes and fsync has nothing to "
                "flush, with or without power-loss protection; measure with the cache on to tell"
                % ("queue/write_cache " + view if tool == "sysfs" else tool))
    if tool != "sysfs" and cache.get("enabled") and view == "write through":
        return ("the drive's write cache is on but the kernel treats it as write-through (queue/write_cache) and "
                "sends no flush: fsync reached no cache, and acknowledged writes may be lost on power loss")
    return None


def _plp_fields(source=None, unsynced_iops=None, ratio=None):
    """Every field of a power-loss protection verdict but the verdict, its reasons and error."""
    return {"flush_cost_source": source, "flush_cost_ms": None, "plain_write_ms": None,
            "unsynced_iops": unsynced_iops, "ratio": ratio}


def plp_unknown(why):
    """The verdict of a disk without a flush cost to judge."""
    return dict(_plp_fields(), verdict="unknown", reasons=[why])


def flush_cost(durable, plain):
    """What fsync adds to a write, in ms: the durable write less the same write without it."""
    return round(max(durable - plain, 0.0), 3)


def plp_of_write_times(durable, plain, cache, figures, found=None):
    """Power-loss protection ``likely``, ``unlikely`` or ``unknown`` with its reasons, from the
    mean durable write (``durable`` ms, its fsync included) and the same write without the
    fsync (``plain`` ms): fsync costs the difference (flush_cost). ``figures`` is the first
    reason, which gives the figures and where they come from; ``found`` the result fields
    the caller measured; ``cache`` the write cache as write_cache.read gives it (None when
    not read).

    A drive with power-loss protection acknowledges a flush from its protected cache, so the
    cost is small and durable writes are fast; one without must empty a volatile cache to
    flash. Nothing on the bus reports power-loss protection, and the cost only shows while
    the drive has a volatile cache, it is on, and the kernel sends flushes."""
    cost = flush_cost(durable, plain)
    found = dict(found or _plp_fields(), flush_cost_ms=cost, plain_write_ms=round(plain, 3))
    fast = durable <= PLP_FAST_DURABLE_WRITE_MS
    reasons = [figures]
    cache = cache or {}
    silenced = _cache_reason(cache)
    if cache.get("enabled") is None and cache.get("volatile") is None:
        reasons.insert(0, "the write cache state could not be read: the figures alone decide")
    elif cache.get("present") is False:
        return dict(found, verdict="likely" if fast else "unknown", reasons=[
            write_cache.NO_CACHE + ": acknowledged writes are durable by design"
        ] + reasons + [
            "durable writes are fast (up to %s ms): held in a protected buffer or written through" % _num(
                PLP_FAST_DURABLE_WRITE_MS) if fast else
            "durable writes take more than %s ms: nothing shows a protected buffer" % _num(PLP_FAST_DURABLE_WRITE_MS)])
    elif silenced:
        return dict(found, verdict="unknown", reasons=[silenced] + reasons)
    if cost >= PLP_COSTLY_FLUSH_MS:
        verdict, why = "unlikely", "a flush of %s ms or more empties a volatile cache to flash" % _num(
            PLP_COSTLY_FLUSH_MS)
    elif cost > PLP_CHEAP_FLUSH_MS:
        verdict, why = "unknown", "between a protected cache (up to %s ms) and a flush to flash (%s ms or more)" % (
            _num(PLP_CHEAP_FLUSH_MS), _num(PLP_COSTLY_FLUSH_MS))
    elif not fast:
        verdict, why = "unknown", (
            "fsync costs little, but a durable write takes more than %s ms: every write is slow, so the flush cost "
            "cannot be told apart" % _num(PLP_FAST_DURABLE_WRITE_MS))
    else:
        verdict, why = "likely", "flushes acknowledged within %s ms and fast durable writes: a protected cache" % (
            _num(PLP_CHEAP_FLUSH_MS))
    return dict(found, verdict=verdict, reasons=reasons + [why])


def plp_from_fsync(synced, cache):
    """The verdict from the probe's own measurement (``synced``), whose fsync latency gives the
    flush cost (fsync_cost_ms) and its durable write less that cost the plain write: no run of
    its own. None where the probe has no fsync latency to read."""
    found = fsync_cost_ms(synced)
    if found is None:
        return None
    cost, counted = found
    durable = write_ms(synced)
    plain = max(durable - cost, 0.0)
    source = "the mean fsync latency fio reported"
    if counted:
        source += ", %s ms, less the write's completion, %s ms, which fio timed with it" % (
            _num(round(cost + counted, 3)), _num(round(counted, 3)))
    figures = "a durable write takes %s ms (%s IOPS), the write itself %s ms: fsync costs %s ms (%s)" % (
        _num(round(durable, 3)), _num(synced["write_iops"]), _num(round(plain, 3)), _num(flush_cost(durable, plain)),
        source)
    return plp_of_write_times(durable, plain, cache, figures, _plp_fields(FROM_FSYNC_LATENCY))


def plp_verdict(synced, unsynced, cache):
    """The verdict from the probe's measurement (``synced``) and a run of the same job without
    fsync (``unsynced``): each write's time is the inverse of its run's IOPS at queue depth 1.
    For probes without an fsync latency of their own (O_DSYNC writes)."""
    iops, unsynced_iops = synced["write_iops"], unsynced["write_iops"]
    found = _plp_fields(FROM_RUN_WITHOUT_FSYNC, unsynced_iops,
                        round(iops / unsynced_iops, 3) if unsynced_iops else None)
    durable, plain = write_ms(synced), write_ms(unsynced)
    if durable is None or plain is None:
        return dict(found, verdict="unknown", reasons=["no IOPS figures of both runs"])
    figures = "a durable write takes %s ms (%s IOPS), one without fsync %s ms (%s IOPS): fsync costs %s ms" % (
        _num(round(durable, 3)), _num(iops), _num(round(plain, 3)), _num(unsynced_iops),
        _num(flush_cost(durable, plain)))
    return plp_of_write_times(durable, plain, cache, figures, found)


# --------------------------------------------------------------------------- write cache

def faster_cache_setting(on_iops, off_iops):
    """'on' or 'off', whichever measured more sync IOPS (Ceph docs: keep the winner)."""
    return "on" if on_iops >= off_iops else "off"


def thresholds_of(settings, name):
    """The thresholds that judge disk ``name``: those of its class (device_classes) or the run's."""
    return settings.get("thresholds_by_name", {}).get(name) or settings["thresholds"]


# --------------------------------------------------------------------------- results

def empty_result(device, disk=None):
    """Every key a result carries (see the module's RETURN), unmeasured."""
    disk = disk or {}
    result = {
        "device": device, "name": disk.get("name"), "transport": disk.get("transport"), "rotational": disk.get("rotational"),
        "verdict": None, "reasons": [], "method": None, "mode": None, "command": None,
        "fio_version": None, "write_iops": None, "write_bw_bytes": None, "total_ios": None,
        "runtime_ms": None, "latency_us": None, "p99_sync_latency_ms": None, "adaptive": None,
        "journal": None, "plp": None, "deep_queue": None, "write_cache": None, "write_cache_comparison": None,
        "write_cache_disabled": None, "region": None, "region_nonzero_mib": None, "written": False, "zeroed": None, "zeroed_bytes": None,
        "recovered": None, "cached": False, "cache_age_seconds": None,
    }
    result.update(blockdev.copy_identity(disk))
    return result


def refused_result(device, reasons, disk=None):
    return dict(empty_result(device, disk), verdict="refused", reasons=list(reasons))


def planned_result(disk, settings, command, cache):
    """What check mode would do with a disk whose write cache reads as ``cache``."""
    reasons = ["check mode: would probe the region and restore it to zeros afterwards"]
    if settings["write_cache"] == "disabled" and write_cache.state(cache) == write_cache.ABSENT:
        reasons.append("check mode: %s: would measure it as it is, nothing to switch" % write_cache.NO_CACHE)
    elif settings["write_cache"] == "disabled":
        reasons.append("check mode: would switch the drive's write cache off for the probe and back afterwards")
    return dict(empty_result(disk["path"], disk), method=settings["method"], mode=settings["mode"],
                command=command, region=_region_dict(settings["region"]), write_cache=cache,
                region_nonzero_mib=disk["region_nonzero_mib"], reasons=reasons)


def probe_result(disk, outcome, settings, fio_version):
    """The result of a probed disk: a verdict from the measurement, or error with its cause."""
    result = dict(empty_result(disk["path"], disk), method=settings["method"], mode=settings["mode"],
                  region=_region_dict(settings["region"]), region_nonzero_mib=disk["region_nonzero_mib"],
                  written=True, fio_version=fio_version if settings["method"] == "fio" else None)
    for key in ("command", "adaptive", "journal", "plp", "deep_queue", "write_cache", "write_cache_comparison",
                "write_cache_disabled", "written", "zeroed", "zeroed_bytes"):
        if key in outcome:
            result[key] = outcome[key]
    measurement = outcome.get("measurement")
    if measurement is None:
        result.update(verdict="error", reasons=[outcome.get("error") or "no measurement"])
        return result
    for key in ("write_iops", "write_bw_bytes", "total_ios", "runtime_ms", "latency_us"):
        result[key] = measurement[key]
    result["p99_sync_latency_ms"] = fio_job.p99_sync_latency_ms(measurement)
    result["verdict"], result["reasons"] = verdict(measurement, thresholds_of(settings, disk["name"]))
    return result


def _region_dict(region):
    return {"offset": region[0], "length": region[1]}


def cached_result(disk, stored, age):
    """A stored result served for the disk as it is now: its current name and path,
    marked cached, and nothing written in this run."""
    fresh = empty_result(disk["path"], disk)
    result = dict(stored)
    for key in ("device", "name", "transport", "rotational") + blockdev.IDENTITY_KEYS:
        result[key] = fresh[key]
    result.update(written=False, zeroed=None, zeroed_bytes=None, region_nonzero_mib=None, recovered=None,
                  cached=True, cache_age_seconds=age)
    return result
