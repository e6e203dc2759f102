# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sync-write probe's result cache: one JSON file per disk identity and probe settings,
so a disk measured recently under the same settings is not probed again."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os
import tempfile

# 2: the power-loss protection verdict replaced the hint.
FORMAT = 2
# Only measurements are kept: an error or a refusal must be looked at again on the next run.
CACHEABLE_VERDICTS = ("suitable", "marginal", "unsuitable")
# Every setting that shapes a measurement or its verdict; the timeout and fio's path do not.
SETTINGS = ("mode", "method", "options", "runtime", "region", "thresholds", "parallel", "adaptive",
            "stage_seconds", "margin", "plp_runtime", "compare_write_cache", "min_gain",
            "max_numjobs")
# Settings added since, with the value that measures as before they existed: they enter the key
# only at another value, so the entries stored before them stay valid.
LATER_SETTINGS = {"write_cache": "as_is"}


def disk_identity(disk, backing_file=None):
    """What a cached result is bound to: WWN or serial with the full model, firmware and
    size, so a swapped disk, new firmware or a resized namespace misses. A serial is unique
    only within its maker's models (udev's by-id names join model and serial for that
    reason), and two models may share their first 16 characters, all SATA shows in sysfs:
    the model is the whole string from the identify data. A loop device has neither WWN nor
    serial and is known by its backing file instead. None when nothing stable identifies the
    disk (not cached)."""
    if not (disk.get("wwn") or disk.get("serial") or backing_file):
        return None
    return {"wwn": disk.get("wwn"), "serial": disk.get("serial"), "model": disk.get("model"),
            "firmware": disk.get("firmware"), "size_bytes": disk.get("size_bytes"), "backing_file": backing_file}


def entry_key(identity, settings):
    """Hex digest naming the cache entry of one disk under one set of probe settings."""
    document = {"format": FORMAT, "disk": identity,
                "settings": dict((name, settings[name]) for name in SETTINGS)}
    for name, before in LATER_SETTINGS.items():
        if settings[name] != before:
            document["settings"][name] = settings[name]
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode("utf-8")).hexdigest()


def entry_path(cache_dir, key):
    return os.path.join(cache_dir, key + ".json")


def lookup(cache_dir, key, now, max_age):
    """(result, age in seconds) of a stored entry younger than ``max_age``, else None.
    An unreadable or damaged entry, or one from the future (clock set back), is a miss."""
    try:
        with open(entry_path(cache_dir, key)) as handle:
            entry = json.load(handle)
        age = now - float(entry["stored_at"])
        result = entry["result"]
    except (IOError, OSError, ValueError, KeyError, TypeError):
        return None
    if entry.get("key") != key or not 0 <= age <= max_age or result.get("verdict") not in CACHEABLE_VERDICTS:
        return None
    return result, int(age)


def store(cache_dir, key, result, now):
    """Store one result atomically (readers never see half a file); the directory is
    root's alone since it names the host's disks."""
    if not os.path.isdir(cache_dir):
        os.makedirs(cache_dir, 0o700)
    handle, temporary = tempfile.mkstemp(dir=cache_dir, suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as out:
            json.dump({"key": key, "stored_at": now, "result": result}, out, sort_keys=True)
        os.rename(temporary, entry_path(cache_dir, key))
    except BaseException:
        os.unlink(temporary)
        raise


def prune(cache_dir, now, max_age):
    """Remove entries older than ``max_age`` (by file time), which no lookup would serve."""
    try:
        names = os.listdir(cache_dir)
    except OSError:
        return
    for name in names:
        path = os.path.join(cache_dir, name)
        try:
            if name.endswith(".json") and now - os.path.getmtime(path) > max_age:
                os.unlink(path)
        except OSError:
            pass
