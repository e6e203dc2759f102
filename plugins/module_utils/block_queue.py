# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Block queue attributes (/sys/block/X/queue/*): read, plan, write.

``plan_disk`` is pure: it takes what ``read_queue`` read and what the caller wants, and
returns the writes to make, or the errors that forbid any write. Callers plan every disk
before they write to any, so bad input never leaves a host half-tuned.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import resource

from ansible_collections.cephops.osd_tuning.plugins.module_utils import records
from ansible_collections.cephops.osd_tuning.plugins.module_utils.blockdev import parse_scheduler

SYS_BLOCK = "/sys/block"
IOSCHED = "iosched/"
# Integer attributes the collection may set; anything else is refused rather than written blind.
INTEGER_ATTRIBUTES = ("max_sectors_kb", "read_ahead_kb", "nr_requests", "rq_affinity", "nomerges",
                      "add_random", "wbt_lat_usec")
ATTRIBUTES = ("scheduler",) + INTEGER_ATTRIBUTES
# Tunables each scheduler exposes under queue/iosched/ (Linux 5.x-6.x); used to check a
# tunable before the scheduler it belongs to is active. Unknown schedulers are checked after
# the switch instead.
SCHEDULER_TUNABLES = {
    "mq-deadline": ("read_expire", "write_expire", "writes_starved", "fifo_batch", "front_merges",
                    "async_depth", "prio_aging_expire"),
    "deadline": ("read_expire", "write_expire", "writes_starved", "fifo_batch", "front_merges"),
    "kyber": ("read_lat_nsec", "write_lat_nsec"),
    "bfq": ("back_seek_max", "back_seek_penalty", "fifo_expire_async", "fifo_expire_sync",
            "low_latency", "max_budget", "slice_idle", "slice_idle_us", "strict_guarantees",
            "timeout_sync"),
    "none": (),
    "noop": (),
}


def page_size_kb():
    return resource.getpagesize() // 1024


def read_queue(name):
    """Raw strings of the queue attributes and of the active scheduler's tunables."""
    queue = os.path.join(SYS_BLOCK, name, "queue")
    state = {}
    for attr in ATTRIBUTES + ("max_hw_sectors_kb",):
        try:
            with open(os.path.join(queue, attr)) as handle:
                state[attr] = handle.read().strip()
        except (IOError, OSError):
            pass
    state["iosched"] = {}
    iosched = os.path.join(queue, "iosched")
    for tunable in sorted(os.listdir(iosched)) if os.path.isdir(iosched) else []:
        try:
            with open(os.path.join(iosched, tunable)) as handle:
                state["iosched"][tunable] = handle.read().strip()
        except (IOError, OSError):
            pass
    return state


def _as_int(attr, value):
    if isinstance(value, bool):
        raise ValueError("%s: %r is not an integer" % (attr, value))
    try:
        return int(str(value).strip())
    except ValueError:
        raise ValueError("%s: %r is not an integer" % (attr, value))


def plan_disk(name, state, wanted, clamp=False, page_kb=4):
    """Writes that bring one disk to ``wanted``.

    Returns ``(changes, warnings, errors)``; ``changes`` is a list of
    ``(attribute, before, after)`` in the order they must be written: the scheduler first,
    because its tunables only exist once it is active.
    """
    changes, warnings, errors = [], [], []
    current, available, changeable = parse_scheduler(state.get("scheduler"))
    target_scheduler = current

    if "scheduler" in wanted:
        target = str(wanted["scheduler"]).strip()
        if target != current:
            if not changeable:
                errors.append("%s: scheduler cannot be changed (the queue offers only %r)" % (name, current))
            elif target not in available:
                hint = " (%s appears once its kernel module is loaded)" % target if target in ("bfq", "kyber") else ""
                errors.append("%s: scheduler %r is not available; choices: %s%s"
                              % (name, target, ", ".join(available), hint))
            else:
                changes.append(("scheduler", current, target))
                target_scheduler = target

    for attr in sorted(a for a in wanted if a != "scheduler"):
        value = wanted[attr]
        if attr.startswith(IOSCHED):
            tunable = attr[len(IOSCHED):]
            if target_scheduler == current:
                known = tuple(state.get("iosched", {}))
            else:
                known = SCHEDULER_TUNABLES.get(target_scheduler)
            if known is not None and tunable not in known:
                errors.append("%s: %s is not a tunable of scheduler %r (it has: %s)"
                              % (name, attr, target_scheduler, ", ".join(known) or "none"))
                continue
            try:
                after = _as_int(attr, value)
            except ValueError as exc:
                errors.append("%s: %s" % (name, exc))
                continue
            before = state.get("iosched", {}).get(tunable) if target_scheduler == current else None
            if before != str(after):
                changes.append((attr, before, str(after)))
            continue
        if attr not in INTEGER_ATTRIBUTES:
            errors.append("%s: %s is not a queue attribute this collection sets (it sets: %s, iosched/*)"
                          % (name, attr, ", ".join(ATTRIBUTES)))
            continue
        try:
            after = _as_int(attr, value)
        except ValueError as exc:
            errors.append("%s: %s" % (name, exc))
            continue
        if attr == "max_sectors_kb":
            after = _bound_max_sectors(name, after, state, clamp, page_kb, warnings, errors)
            if after is None:
                continue
        elif after < 0:
            errors.append("%s: %s: %d is negative" % (name, attr, after))
            continue
        if attr not in state:
            errors.append("%s: queue/%s does not exist on this kernel" % (name, attr))
            continue
        if state[attr] != str(after):
            changes.append((attr, state[attr], str(after)))
    return changes, warnings, errors


def _bound_max_sectors(name, value, state, clamp, page_kb, warnings, errors):
    """max_sectors_kb must lie in [page size, max_hw_sectors_kb]; the kernel says EINVAL otherwise."""
    hw_max = int(state.get("max_hw_sectors_kb", 0)) or None
    low, high = page_kb, hw_max
    if high is not None and value > high:
        if clamp:
            warnings.append("%s: max_sectors_kb %d clamped to max_hw_sectors_kb %d" % (name, value, high))
            return high
        errors.append("%s: max_sectors_kb %d is above max_hw_sectors_kb %d" % (name, value, high))
        return None
    if value < low:
        if clamp:
            warnings.append("%s: max_sectors_kb %d raised to the page size, %d KiB" % (name, value, low))
            return low
        errors.append("%s: max_sectors_kb %d is below the page size, %d KiB" % (name, value, low))
        return None
    return value


def write_attribute(name, attr, value):
    with open(os.path.join(SYS_BLOCK, name, "queue", attr), "w") as handle:
        handle.write(value)


# --------------------------------------------------------------------------- record of originals

# The record of original values: {"disks": {identity key: {"name", "attributes"}}}.
RECORD_SECTIONS = {"disks": {}}


def remember(record, key, name, changes):
    """Keep the value each attribute had before the collection first changed it."""
    for attr, before, _after in changes:
        if before is None:  # a tunable of a scheduler that was not active: nothing to restore
            continue
        entry = records.keep_first(record["disks"], key, {"name": name, "attributes": {}})
        entry["name"] = name
        entry["attributes"].setdefault(attr, before)
    return record
