# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sync_write_probe module's run: which disks it may probe, probing them (Prober), and
the result record of each disk; and its result cache, one JSON file per disk identity and probe
settings, so a disk measured recently under the same settings is not probed again."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os
import tempfile
import time

from ansible_collections.cephops.osd_tuning.plugins.module_utils import (
    blockdev, direct_io, fio_job, probe_region, probe_verdict, processes, write_cache)


# --------------------------------------------------------------------------- the result cache

# 2: the power-loss protection verdict replaced the hint.
CACHE_FORMAT = 2
# Only measurements are kept: an error or a refusal must be looked at again on the next run.
CACHEABLE_VERDICTS = ("suitable", "marginal", "unsuitable")
# Every setting that shapes a measurement or its verdict; the timeout and fio's path do not.
CACHE_KEY_SETTINGS = ("mode", "method", "options", "runtime", "region", "thresholds", "parallel", "adaptive",
                      "stage_seconds", "margin", "plp_runtime", "compare_write_cache", "min_gain", "max_numjobs")
# Settings added since, with the value that measures as before they existed: they enter the key
# only at another value, so the entries stored before them stay valid.
LATER_CACHE_KEY_SETTINGS = {"write_cache": "as_is"}


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
    return dict(blockdev.copy_identity(disk), backing_file=backing_file)


def entry_key(identity, settings):
    """Hex digest naming the cache entry of one disk under one set of probe settings."""
    document = {"format": CACHE_FORMAT, "disk": identity,
                "settings": dict((name, settings[name]) for name in CACHE_KEY_SETTINGS)}
    for name, before in LATER_CACHE_KEY_SETTINGS.items():
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


# --------------------------------------------------------------------------- a run of the module

def requested(devices):
    """(entries, names): one (device as given, kernel name or None, refused result or None)
    per requested device, and the kernel names to judge. A disk named twice (say by name and
    by-id link) is judged once and both entries carry its result."""
    entries, names = [], []
    for spec in devices:
        try:
            name = blockdev.resolve_disk(spec)
        except blockdev.DeviceError as exc:
            entries.append((spec, None, refused_result(spec, [str(exc)])))
            continue
        entries.append((spec, name, None))
        if name not in names:
            names.append(name)
    return entries, names


def thresholds_of(settings, name):
    """The thresholds that judge disk ``name``: those of its class (device_classes) or the run's."""
    return settings.get("thresholds_by_name", {}).get(name) or settings["thresholds"]


def judge(run_command, names, overwrite, settings, journal, cache, check_mode, warn):
    """({name: result}, pending restores, changed) of one run over the disks ``names``.

    Each disk's journal record is handled first; then the refusal checks, the result cache
    (``cache`` is (directory, max age in seconds), or None) and the region check leave the
    disks to probe. Check mode reads all of that and writes nothing. ``overwrite`` are the
    disks named in overwrite_data; ``warn(text)`` reports what does not fail the run.
    """
    disks, recovered = _recover(run_command, names, overwrite, journal, check_mode)
    # Check mode cannot zero a region an interrupted probe left: judge such a disk as if it had.
    planned = set(n for n, found in recovered.items() if found[0] == "planned")
    outcomes, probe = _refuse(names, disks, overwrite | planned, recovered, settings)
    now = time.time()
    keys = {}
    if cache:
        keys = _from_cache(probe, outcomes, settings, cache, now)
        probe = [d for d in probe if d["name"] not in outcomes]
    _check_regions(probe, outcomes, settings, overwrite | planned)
    _check_open(probe, outcomes)

    prober = Prober(run_command, settings, journal)
    if check_mode:
        commands = dict((n, argv) for names_, argv in prober.probe_commands(probe) for n in names_)
        for disk in probe:
            outcomes[disk["name"]] = planned_result(disk, settings, commands[disk["name"]],
                                                    write_cache.read(run_command, disk))
    else:
        processes.trap_termination()
        measured = prober.probe_all(probe)
        for disk in probe:
            outcomes[disk["name"]] = probe_result(disk, measured[disk["name"]], settings, prober.fio_version)
    for name, (action, text, details) in recovered.items():
        if action != "refused":
            outcomes[name]["recovered"] = dict(details, action=action, note=text)
    if keys and not check_mode:
        _store(cache, [outcomes[d["name"]] for d in probe], keys, now, warn)

    identities = [disks[n]["identity"] for n in names]
    pending = []
    for record in journal.records():
        if record.get("identity") in identities:
            continue
        found = _pending(record)
        # A probe of another play or operator keeps its record while it runs: not interrupted.
        if probe_region.owner_alive(record):
            warn("a probe of %s started at %s is still running (pid %d); the probe journal's record of it is its own"
                 % (found["device"], found["started_at"], record["pid"]))
            continue
        pending.append(found)
        warn("a probe of %s interrupted at %s left probe data in its region: the next probe of that disk restores "
             "the region before it probes (name it in devices, or run the gate on it); record %s"
             % (found["device"], found["started_at"], found["file"]))
    changed = bool(prober.written) or any(a == "restored" for a, _t, _d in recovered.values())
    return outcomes, pending, changed


def _recover(run_command, names, overwrite, journal, check_mode):
    """({name: disk}, {name: (action, text, details)}): the disks with their journal identity,
    and what was done about the record an interrupted probe left (see probe_region.recovery)."""
    disks, recovered = _inventory(run_command, names), {}
    for name in names:
        disk = disks[name]
        disk["identity"], disk["stable_identity"] = probe_region.journal_identity(disk, backing_file(name))
        try:
            found = probe_region.recovery(journal, disk, disk["identity"], disk["stable_identity"],
                                          blockdev.blocking_reasons(disk, overwrite_data=True), name in overwrite,
                                          check_mode)
        except probe_region.RegionError as exc:
            found = ("refused", "journal: zeroing the region an interrupted probe left behind failed: %s" % exc, None)
        if found:
            recovered[name] = found
    if any(action == "restored" for action, _text, _details in recovered.values()):
        # The region is zero again: judge the disks as they are now.
        fresh = _inventory(run_command, [n for n, found in recovered.items() if found[0] == "restored"])
        for name, disk in fresh.items():
            disk["identity"], disk["stable_identity"] = disks[name]["identity"], disks[name]["stable_identity"]
            disks[name] = disk
    return disks, recovered


def _refuse(names, disks, overwrite, recovered, settings):
    """({name: refused result}, [disks left to probe]) after the refusal checks of disk_facts,
    the journal's refusals, the disk's size and, with the write cache to be disabled, whether
    the drive's own cache can be switched."""
    outcomes, probe = {}, []
    region_end = sum(settings["region"])
    for name in names:
        disk = disks[name]
        reasons = blockdev.blocking_reasons(disk, overwrite_data=name in overwrite)
        if name in recovered and recovered[name][0] == "refused":
            # First: the content checks then also see the probe data the record explains.
            reasons.insert(0, recovered[name][1])
        if disk["size_bytes"] < region_end:
            reasons.append("smaller than the end of the probe region (%d bytes)" % region_end)
        if settings["write_cache"] == "disabled" and write_cache.tool_for(disk["transport"]) == "sysfs":
            reasons.append("write_cache disabled: the drive's own write cache cannot be switched here (transport "
                           "%s); only the kernel's view (queue/write_cache) can, which stops the flushes, not the "
                           "cache" % disk["transport"])
        if reasons:
            outcomes[name] = refused_result(disk["path"], reasons, disk)
        else:
            probe.append(disk)
    return outcomes, probe


def _from_cache(probe, outcomes, settings, cache, now):
    """Serve the disks of ``probe`` that have a valid cache entry into ``outcomes``; returns
    {name: cache key} of every disk that can be cached."""
    cache_dir, max_age = cache
    keys = {}
    for disk in probe:
        identity = disk_identity(disk, backing_file(disk["name"]))
        if identity is not None:
            # The disk's own thresholds: a key as one job per class of thresholds made it.
            keys[disk["name"]] = entry_key(identity, dict(settings, thresholds=thresholds_of(
                settings, disk["name"])))
            hit = lookup(cache_dir, keys[disk["name"]], now, max_age)
            if hit:
                outcomes[disk["name"]] = cached_result(disk, *hit)
    return keys


def _check_regions(probe, outcomes, settings, overwrite):
    """Refuse, into ``outcomes`` and out of ``probe``, each disk whose probe region is not all
    zeros. Reading is safe in check mode too, so check mode predicts these refusals exactly."""
    region = settings["region"]
    checks = direct_io.in_parallel(lambda d: probe_region.nonzero_mib(d["path"], region), probe,
                                   errors=probe_region.ERRORS)
    for disk, (nonzero, error) in zip(list(probe), checks):
        reason = None
        if error:
            reason = "region check: %s" % error
        elif nonzero and disk["name"] not in overwrite:
            reason = ("region check: %d of %d MiB of the probe region from %d MiB are not zero, so the disk holds "
                      "data the probe would overwrite; name the disk in overwrite_data to allow that (the region "
                      "is left zeroed)" % (len(nonzero), region[1] // probe_region.MIB, region[0] // probe_region.MIB))
        if reason:
            outcomes[disk["name"]] = refused_result(disk["path"], [reason], disk)
            probe.remove(disk)
        else:
            disk["region_nonzero_mib"] = len(nonzero or [])


def _check_open(probe, outcomes):
    """Refuse, into ``outcomes`` and out of ``probe``, each disk a process opened since the
    inventory: the last check before the write cache is switched and fio starts."""
    held = blockdev.open_now(probe)
    for disk in [d for d in probe if d["name"] in held]:
        outcomes[disk["name"]] = refused_result(disk["path"], ["open check: %s since the inventory" % held[disk["name"]]],
                                                disk)
        probe.remove(disk)


def _store(cache, measured, keys, now, warn):
    """Cache the verdicts measured now; a cache that cannot be written costs a re-probe
    next time, never this run's results."""
    cache_dir, max_age = cache
    prune(cache_dir, now, max_age)
    for result in measured:
        if result["verdict"] in CACHEABLE_VERDICTS and result["name"] in keys:
            try:
                store(cache_dir, keys[result["name"]], result, now)
            except (IOError, OSError) as exc:
                warn("could not cache the result of %s: %s" % (result["device"], exc))


def _inventory(run_command, names):
    return dict((d["name"], d) for d in blockdev.build_disks(blockdev.take_snapshot(run_command, names)))


def _pending(record):
    return {"device": record.get("device"), "model": record.get("model"), "serial": record.get("serial"),
            "started_at": probe_region.when(record.get("started_at", 0)), "region": record.get("region"),
            "file": record["file"]}


def backing_file(name):
    """The file behind a loop device, its only stable identity."""
    if not name.startswith("loop"):
        return None
    try:
        with open("/sys/block/%s/loop/backing_file" % name) as handle:
            return handle.read().strip() or None
    except (IOError, OSError):
        return None


# --------------------------------------------------------------------------- probing

ADAPTIVE_MAX_STAGES = 3


class Prober:
    """Probes a set of available disks and always cleans up after itself.

    ``run_command(argv)`` -> (rc, out, err) runs the short commands (write cache reads and
    switches); the probes go through processes.run_processes. Results are keyed by kernel name.
    """

    def __init__(self, run_command, settings, journal):
        self.run_command = run_command
        self.s = settings
        self.journal = journal
        self.written = set()
        self.fio_version = None
        self.caches = write_cache.Switcher(run_command)

    # ---- planning

    def probe_commands(self, disks, options=None, runtime=None, numjobs=1):
        """[(names, argv)]: one command for all disks, or one per disk when not parallel."""
        options = options or self.s["options"]
        runtime = runtime or self.s["runtime"]
        if self.s["method"] == "dd":
            return [([d["name"]], fio_job.dd_command(d["path"], self.s["region"])) for d in disks]
        groups = [disks] if self.s["parallel"] else [[d] for d in disks]
        return [([d["name"] for d in group],
                 fio_job.fio_command(self.s["fio"], [(d["name"], d["path"]) for d in group],
                                     options, runtime, self.s["region"], numjobs))
                for group in groups if group]

    # ---- measuring

    def measure(self, disks, options=None, runtime=None, numjobs=1):
        """{name: {"measurement"|"error": ...}, "command": argv} for one probe of the disks."""
        runtime = runtime or self.s["runtime"]
        commands = self.probe_commands(disks, options, runtime, numjobs)
        batches = [commands] if self.s["parallel"] else [[c] for c in commands]
        outcomes = {}
        for batch in batches:
            if self.s["method"] == "dd":
                runs = processes.run_processes([argv for _names, argv in batch], runtime + self.s["timeout"],
                                               stop_after=runtime)
                for (names, argv), (rc, _out, err, timed_out) in zip(batch, runs):
                    outcome = fio_job.dd_outcome(rc, err) if not timed_out else {"error": "dd did not stop; killed"}
                    outcomes[names[0]] = dict(outcome, command=argv)
                continue
            for names, argv in batch:
                rc, out, err, timed_out = processes.run_processes([argv], self.s["timeout"])[0]
                if timed_out:
                    found = dict((n, {"error": "fio did not finish within %d s; killed" % self.s["timeout"]}) for n in names)
                else:
                    found, version = fio_job.fio_outcome(rc, out, err, names, runtime)
                    self.fio_version = version or self.fio_version
                for name in names:
                    outcomes[name] = dict(found[name], command=argv)
        return outcomes

    def measure_main(self, disks):
        """The verdict probe: full length, or adaptive stages with a full-length fallback."""
        final, stages = {}, dict((d["name"], []) for d in disks)
        pending = list(disks)
        if self.s["adaptive"]:
            for _stage in range(ADAPTIVE_MAX_STAGES):
                if not pending:
                    break
                outcomes = self.measure(pending, runtime=self.s["stage_seconds"])
                still = []
                for disk in pending:
                    outcome = outcomes[disk["name"]]
                    if "measurement" in outcome:
                        stages[disk["name"]].append(outcome["measurement"])
                    if "error" in outcome or probe_verdict.decided_early(
                            stages[disk["name"]], thresholds_of(self.s, disk["name"]), self.s["margin"]):
                        final[disk["name"]] = outcome
                    else:
                        still.append(disk)
                pending = still
        if pending:
            final.update(self.measure(pending))
        for disk in disks:
            name = disk["name"]
            probed = sum(m["runtime_ms"] for m in stages[name])
            if "measurement" in final[name] and final[name]["measurement"] not in stages[name]:
                probed += final[name]["measurement"]["runtime_ms"]
            final[name]["adaptive"] = {
                "enabled": self.s["adaptive"],
                "stages": len(stages[name]),
                "decided_early": bool(stages[name]) and final[name].get("measurement") is stages[name][-1],
                "seconds_probed": round(probed / 1000.0, 1),
            }
        return final

    def plp_verdicts(self, disks, measured, caches):
        """Each disk's power-loss protection verdict from a short run of the same job without fsync."""
        outcomes = self.measure(disks, options=fio_job.unsynced(self.s["options"]), runtime=self.s["plp_runtime"])
        verdicts = {}
        for disk in disks:
            outcome = outcomes[disk["name"]]
            if "error" in outcome:
                verdicts[disk["name"]] = dict(probe_verdict.plp_unknown(
                    "the probe without fsync failed: %s" % outcome["error"]), error=outcome["error"])
            else:
                verdicts[disk["name"]] = dict(probe_verdict.plp_verdict(
                    measured[disk["name"]], outcome["measurement"], caches[disk["name"]]), error=None)
        return verdicts

    def probe_all(self, disks):
        """{name: result fields} for every disk. Each disk is journaled before its first write
        and its region restored to zeros afterwards whatever happens; write caches are switched
        back (also those switched off for the whole probe); an interrupt turns every unfinished
        disk into an error."""
        results = dict((d["name"], {"write_cache": write_cache.read(self.run_command, d)}) for d in disks)
        try:
            during = {}
            if self.s["write_cache"] == "disabled":
                disks, during = self.caches.disable(disks, results)
            self.begin(disks)
            main = self.measure_main(disks)
            for disk in disks:
                results[disk["name"]].update(main[disk["name"]])
            good = [d for d in disks if "measurement" in main[d["name"]]]
            measured = dict((d["name"], main[d["name"]]["measurement"]) for d in good)
            if good and self.s["mode"] == "journal":
                for name, ramp in journal_ramp(self.measure, self.s, good, measured).items():
                    results[name]["journal"] = ramp
            # The cache as it was while measuring: what the power-loss verdict must weigh.
            caches = dict((d["name"], during.get(d["name"]) or results[d["name"]]["write_cache"]) for d in good)
            if good and self.s["plp_runtime"] and self.s["method"] == "fio":
                for name, verdict in self.plp_verdicts(good, measured, caches).items():
                    results[name]["plp"] = verdict
            for disk in good:
                results[disk["name"]].setdefault("plp", dict(probe_verdict.plp_unknown(
                    "no probe without fsync to compare with (plp_runtime 0, or the dd method)"), error=None))
            if good and self.s["compare_write_cache"]:
                for name, comparison in compare_write_cache(self.measure, self.caches, good, caches, measured).items():
                    results[name]["write_cache_comparison"] = comparison
        except (processes.Interrupted, probe_region.JournalError) as exc:
            for disk in disks:
                results[disk["name"]].setdefault("error", str(exc))
                results[disk["name"]].pop("measurement", None)
        finally:
            try:
                self.caches.restore(results)
            finally:
                restored = self.restore_written(disks)
        for name, (zeroed_bytes, error) in restored.items():
            results[name].update(zeroed=error is None, zeroed_bytes=zeroed_bytes)
            if error:
                results[name]["error"] = "; ".join(e for e in (results[name].get("error"), error) if e)
                results[name].pop("measurement", None)
        return results

    def begin(self, disks):
        """Journal every disk durably before anything writes to it: a run killed later leaves
        a record from which the next run restores the region."""
        for disk in disks:
            self.journal.begin(disk["identity"], disk, self.s["region"], disk["stable_identity"],
                               disk["region_nonzero_mib"])
            self.written.add(disk["name"])

    def restore_written(self, disks):
        """{name: (bytes zeroed, error or None)} for every journaled disk, all disks at once: a
        host with many disks would otherwise spend most of its gating time restoring. No time
        limit: a restore cut short leaves probe data behind. A disk whose region reads back as
        zeros leaves the journal; the others stay in it for the next run."""
        written = [d for d in disks if d["name"] in self.written]
        outcomes = direct_io.in_parallel(lambda d: probe_region.restore_zeros(d["path"], self.s["region"]), written,
                                         errors=probe_region.ERRORS)
        restored = {}
        for disk, (zeroed_bytes, error) in zip(written, outcomes):
            if error is None:
                self.journal.finish(disk["identity"])
            else:
                error = ("the probe region still holds probe data (%s); %s keeps the record, and the next run "
                         "restores it once the disk is back, or zero it yourself: %s" % (
                             error, self.journal.path(disk["identity"]),
                             probe_region.zero_command(disk["path"], self.s["region"])))
            restored[disk["name"]] = (zeroed_bytes, error)
        return restored


def journal_ramp(measure, settings, disks, first):
    """The journal test article's ramp: numjobs 1, 2, 4, ... per disk until the gain falls under min_gain."""
    steps = dict((d["name"], [_step(1, first[d["name"]])]) for d in disks)
    errors = {}
    ramping = list(disks)
    while ramping:
        numjobs = probe_verdict.next_numjobs(steps[ramping[0]["name"]], settings["min_gain"], settings["max_numjobs"])
        ramping = [d for d in ramping if probe_verdict.next_numjobs(
            steps[d["name"]], settings["min_gain"], settings["max_numjobs"]) == numjobs]
        if numjobs is None or not ramping:
            break
        outcomes = measure(ramping, numjobs=numjobs)
        for disk in ramping:
            outcome = outcomes[disk["name"]]
            if "error" in outcome:
                errors[disk["name"]] = outcome["error"]
            else:
                steps[disk["name"]].append(_step(numjobs, outcome["measurement"]))
        ramping = [d for d in ramping if d["name"] not in errors]
    return dict((name, {
        "steps": found,
        "saturated_at": probe_verdict.saturated_at(found, settings["min_gain"]),
        "error": errors.get(name),
    }) for name, found in steps.items())


def compare_write_cache(measure, caches_switcher, disks, caches, measured):
    """Measure each disk with its write cache switched the other way, then switch it back.
    The drive is read back after each switch: ``observed`` is the state it reported in the
    half measured as on and in the half measured as off, ``after`` the state it reports
    once switched back."""
    comparisons, switched, other_half = {}, [], []
    try:
        for disk in disks:
            name, cache = disk["name"], caches[disk["name"]]
            if write_cache.state(cache) == write_cache.ABSENT:
                comparisons[name] = {"original": write_cache.ABSENT, "error": None,
                                     "note": write_cache.NO_CACHE + ": nothing to switch"}
                continue
            if cache["enabled"] is None:
                comparisons[name] = {"error": "write cache state unknown; not switched"}
                continue
            switched.append(disk)
            wanted = write_cache.STATES[not cache["enabled"]]
            error, found = caches_switcher.switch_checked(disk, cache["tool"], not cache["enabled"], wanted)
            comparisons[name] = {"observed": {write_cache.state(cache): write_cache.state(cache), wanted: found},
                                 "error": error}
            if error is None:
                other_half.append(disk)
        outcomes = measure(other_half) if other_half else {}
    finally:
        for disk in switched:
            comparisons[disk["name"]].update(caches_switcher.switch_back(disk, caches[disk["name"]]))
    for disk in other_half:
        name, original = disk["name"], caches[disk["name"]]["enabled"]
        outcome = outcomes[name]
        if "error" in outcome:
            comparisons[name]["error"] = outcome["error"]
            continue
        here, other = measured[name]["write_iops"], outcome["measurement"]["write_iops"]
        on_iops, off_iops = (here, other) if original else (other, here)
        comparisons[name].update(on_iops=on_iops, off_iops=off_iops,
                                 faster=probe_verdict.faster_cache_setting(on_iops, off_iops),
                                 original=write_cache.STATES[original])
    return comparisons


def _step(numjobs, measurement):
    return {"numjobs": numjobs, "write_iops": measurement["write_iops"],
            "write_bw_bytes": measurement["write_bw_bytes"]}


# --------------------------------------------------------------------------- results

def empty_result(device, disk=None):
    """Every key a result carries (see the module's RETURN), unmeasured."""
    disk = disk or {}
    result = {
        "device": device, "name": disk.get("name"), "transport": disk.get("transport"), "rotational": disk.get("rotational"),
        "verdict": None, "reasons": [], "method": None, "mode": None, "command": None,
        "fio_version": None, "write_iops": None, "write_bw_bytes": None, "total_ios": None,
        "runtime_ms": None, "latency_us": None, "p99_sync_latency_ms": None, "adaptive": None,
        "journal": None, "plp": None, "write_cache": None, "write_cache_comparison": None,
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
    for key in ("command", "adaptive", "journal", "plp", "write_cache", "write_cache_comparison",
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
    result["verdict"], result["reasons"] = probe_verdict.verdict(measurement, thresholds_of(settings, disk["name"]))
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
