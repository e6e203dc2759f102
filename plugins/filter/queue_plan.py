# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import re

from ansible.errors import AnsibleFilterError
from ansible_collections.cephops.osd_tuning.plugins.module_utils import write_cache
from ansible_collections.cephops.osd_tuning.plugins.module_utils.blockdev import resolve_in_inventory

# The queue roles' filters: which disks a role tunes (named_disks), the value of a queue
# attribute each gets now and at every boot (queue_plan), and the udev rules that keep the
# gate's faster write cache setting of a disk at every boot (write_cache_rules), which match a
# disk by identity as queue_plan's rules do. Each is documented in the YAML file of its name
# beside this one: ansible-doc reads a filter's documentation there when its Python file holds
# several filters.

# --------------------------------------------------------------------------- the scope


def host_use(disk):
    """How the host's own system uses a disk (the root filesystem, /boot, swap), or None: such a
    disk is tuned only when named. Other mounts may be an OSD's own (a filestore OSD's data),
    and a disk a run mounts stays in scope for the next run."""
    boot = [mount for mount in disk.get("mountpoints") or () if mount == "/boot" or mount.startswith("/boot/")]
    if disk.get("root_disk"):
        return "holds /"
    if boot:
        return "holds %s" % ", ".join(boot)
    if disk.get("swap"):
        return "holds swap"
    return None


def named_disks(disks, names):
    """The disks the names name, in inventory order; when no name is given, every disk the host
    does not use itself (the disks an OSD is or could be on)."""
    if not names:
        return [disk for disk in disks if not host_use(disk)]
    paths = set(disk["path"] for disk in disks)
    wanted = resolve_in_inventory(disks, names)
    unknown = [name for name, path in zip(names, wanted) if path not in paths]
    if unknown:
        raise AnsibleFilterError("named_disks: no disk of this host has the name %s" % ", ".join(unknown))
    return [disk for disk in disks if disk["path"] in set(wanted)]


# --------------------------------------------------------------------------- the queue plan

# Which queue value each disk gets, now (block_queue) and at every boot (udev rules).
#
# A value is chosen per disk class (ssd, hdd, nvme, virtio: the ``class`` disk_facts gives each
# disk), then per model pattern, then per disk (serial or WWN); the most specific wins. Runtime groups name the disks of this host;
# udev rules match classes and identities, so a replaced disk of the same class is tuned too.
#
# Tunables (a scheduler's ``iosched/`` values) come from the same three places: per class, and
# under ``tunables`` in a model or disk entry. A disk gets what udev leaves at boot, where every
# matching rule runs, least specific first: a rule that keeps the scheduler adds its tunables to
# those already set, a rule that changes it starts again from the new scheduler's defaults.

# Names on single-queue kernels (before 5.0) for the blk-mq scheduler names.
LEGACY_SCHEDULERS = {"none": "noop", "mq-deadline": "deadline"}

CLASS_RULES = {
    "ssd": {"KERNEL": "sd*", "ATTR{queue/rotational}": "0"},
    "hdd": {"KERNEL": "sd*", "ATTR{queue/rotational}": "1"},
    "nvme": {"KERNEL": "nvme*"},
    "virtio": {"KERNEL": "vd*"},
}
CLASSES = tuple(CLASS_RULES)
# udev's ata_id and scsi_id store a model in ENV{ID_MODEL} with each run of whitespace and each
# character outside these (valid UTF-8 aside) made "_"; glob characters stay a pattern.
UDEV_ID_UNSAFE = re.compile(r"[^0-9A-Za-z#+\-.:=@_*?\[\]\u0080-\U0010ffff]")
# A class set to one of these is left alone (0 is no valid size, "" no scheduler).
UNMANAGED = (None, "", 0)


def is_legacy(disks):
    """A single-queue kernel offers cfq/noop/deadline instead of the blk-mq schedulers."""
    return any(name in disk.get("schedulers", []) for disk in disks for name in ("cfq", "noop", "deadline"))


def _model_matches(pattern, model):
    return fnmatch.fnmatchcase((model or "").strip(), pattern)


def _override_matches(override, disk):
    return bool((override.get("serial") and override["serial"] == disk.get("serial"))
                or (override.get("wwn") and override["wwn"] == disk.get("wwn")))


def layers(disk, attribute, classes, models=(), overrides=(), extra=None):
    """``(value, tunables, source, keep_worse)`` of every entry that matches the disk, in the order
    udev applies their rules: class, then models, then disks, each list from its last entry to its
    first, so that the first matching entry of a list is applied last and wins, as in ``choose``."""
    found = []
    cls = disk["class"]
    if cls and classes.get(cls) not in UNMANAGED:
        found.append((classes[cls], (extra or {}).get(cls) or {}, "class %s" % cls, False))
    for entry in reversed(list(models)):
        if _model_matches(entry["model"], disk.get("model")):
            found.append((entry[attribute], entry.get("tunables") or {}, "model %s" % entry["model"],
                          bool(entry.get("keep_worse"))))
    for override in reversed(list(overrides)):
        if _override_matches(override, disk):
            found.append((override[attribute], override.get("tunables") or {},
                          "disk %s" % (override.get("serial") or override.get("wwn")), bool(override.get("keep_worse"))))
    return found


def choose(disk, attribute, classes, models=(), overrides=(), extra=None):
    """The value for one disk, where it came from, its tunables and whether its rule keeps it
    even where it is measured worse, or (None, None, {}, False).

    ``models`` and ``overrides`` entries carry the value under the attribute's name, for
    example ``{"model": "Samsung SSD 980*", "scheduler": "mq-deadline"}``, and may carry
    ``tunables`` and ``keep_worse``; ``extra`` holds the tunables of each class.
    """
    value, source, tunables, keep_worse = None, None, {}, False
    matching = layers(disk, attribute, classes, models, overrides, extra)
    for layer_value, layer_tunables, layer_source, layer_keep in matching:
        if layer_value != value:  # a new scheduler starts from its own defaults
            tunables = {}
        value, source, keep_worse = layer_value, layer_source, layer_keep
        tunables = dict(tunables, **layer_tunables)
    return value, source, tunables, keep_worse


def check_extra(classes, extra):
    """Tunables may only name a class whose value the caller manages."""
    errors = []
    for cls in sorted(extra or {}):
        if cls not in CLASS_RULES:
            errors.append("tunables are set per disk class (%s), not for %r" % (", ".join(CLASSES), cls))
        elif classes.get(cls) in UNMANAGED and extra[cls]:
            errors.append("tunables for class %s, which is left alone (no value chosen for it)" % cls)
    return errors


def translate(value, legacy):
    return LEGACY_SCHEDULERS.get(value, value) if legacy else value


def plan(disks, attribute, classes, models=(), overrides=(), extra=None, legacy=None, kept=None, figures=(),
         keep_worse=False, left_alone=()):
    """``{queues, rules, chosen, changing, undone}`` for block_queue, udev_queue_rules and the report.

    ``changing`` names the disks whose current value (as disk_facts reports it) differs.

    ``chosen`` maps a disk's name to its ``value``, the ``source`` rule and ``keep_worse``, true
    where that rule keeps its value even where it is measured worse.

    ``kept`` maps a disk's name to why it keeps the value it had (a change measured worse):
    the disk is set back to it now and gets a udev rule of its own that keeps it at boot, after
    its class's and model's rules, where it has a serial or WWN to match. The rule's comment
    leaves the why out: a change measured worse now and one kept off by its remembered verdict
    in a later run give the same rules file, so that run changes nothing.

    ``figures`` are this run's read figures (the read_figures filter's): a disk whose change
    they call ``worse`` is kept at its value before as well, and named in ``undone``, but where
    ``keep_worse`` is true or the disk's rule keeps its value measured worse. The disks of
    ``kept`` stay kept: this plan sets every disk again.

    ``left_alone`` are the host's other disks, which this plan does not set: each gets a rule
    first in the file that skips the rest, so that no class or model rule sets it at boot
    either. ``left_alone`` in the result maps each to why.

    ``extra`` maps a class to more attributes that go with its value, for example
    ``{"hdd": {"fifo_batch": 16}}`` (scheduler tunables, written under ``iosched/``); model
    and disk entries carry theirs under ``tunables``. Scheduler names are translated for
    single-queue kernels when ``legacy`` (default: detected from the disks).
    """
    errors = check_extra(classes, extra)
    if errors:
        raise ValueError("; ".join(errors))
    if legacy is None:
        legacy = attribute == "scheduler" and is_legacy(disks)

    def attributes_for(value, tunables):
        wanted = {attribute: translate(value, legacy)}
        for name, tunable in (tunables or {}).items():
            wanted["iosched/%s" % name if attribute == "scheduler" else name] = tunable
        return wanted

    kept = dict(kept or {})
    worse = dict((figure["device"], "measured worse: %s" % figure["why"]) for figure in figures or ()
                 if figure.get("verdict") == "worse" and not keep_worse)
    groups, chosen, warnings, clamped, pinned, undone = {}, {}, [], [], [], []
    for disk in disks:
        value, source, tunables, rule_keeps_worse = choose(disk, attribute, classes, models, overrides, extra)
        if value in UNMANAGED:
            continue
        if disk["name"] in worse and disk["name"] not in kept and not rule_keeps_worse:
            kept[disk["name"]] = worse[disk["name"]]
            undone.append(disk["name"])
        if disk["name"] in kept:
            value, source, tunables, rule_keeps_worse = disk.get(attribute), "kept: %s" % kept[disk["name"]], None, False
            pinned.append((disk, value, kept[disk["name"]]))
        elif attribute == "max_sectors_kb":
            value, warning = clamp_max_sectors(disk, value)
            if warning:
                warnings.append(warning)
                clamped.append((disk, value))
        chosen[disk["name"]] = dict(value=translate(value, legacy), source=source, keep_worse=rule_keeps_worse)
        wanted = attributes_for(value, tunables)
        groups.setdefault(repr(sorted(wanted.items())), (wanted, []))[1].append(disk["name"])
    queues = [dict(devices=sorted(names), attributes=attrs) for attrs, names in
              sorted(groups.values(), key=lambda group: group[1])]

    # Least specific first, each list from its last entry to its first: udev applies every
    # matching rule, so the last one applied is the one that wins (see ``layers``).
    rules = []
    for cls in CLASSES:
        if classes.get(cls) not in UNMANAGED:
            rules.append(dict(comment="class %s" % cls, match=CLASS_RULES[cls],
                              attributes=attributes_for(classes[cls], (extra or {}).get(cls))))
    for entry in reversed(list(models)):
        for match in model_matches(entry["model"]):
            rules.append(dict(comment="model %s" % entry["model"], match=match,
                              attributes=attributes_for(entry[attribute], entry.get("tunables"))))
    for override in reversed(list(overrides)):
        identity = override.get("serial") or override["wwn"]
        matches = serial_matches(identity) if override.get("serial") else [{"ENV{ID_WWN}": identity}]
        for match in matches:
            rules.append(dict(comment="disk %s" % identity, match=match,
                              attributes=attributes_for(override[attribute], override.get("tunables"))))
    # udev cannot take min(value, max_hw_sectors_kb): clamped disks get a rule of their own.
    for disk, value in clamped:
        match = identity_match(disk)
        if match:
            rules.append(dict(comment="disk %s, clamped to its max_hw_sectors_kb" % disk["name"], match=match,
                              attributes=attributes_for(value, None)))
        else:
            warnings.append("%s: no serial or WWN, so its udev rule cannot be clamped; the kernel will refuse "
                            "the class value at boot and keep its default" % disk["name"])
    for disk, value, why in pinned:
        match = identity_match(disk)
        if match:
            rules.append(dict(comment="disk %s, kept at %s: a change measured worse" % (disk["name"], value), match=match,
                              attributes={attribute: value}))
        else:
            warnings.append("%s: no serial or WWN, so no udev rule keeps it at %s at boot (%s)" % (
                disk["name"], value, why))
    skips, alone = [], {}
    for disk in left_alone:
        alone[disk["name"]] = host_use(disk) or "not named"
        match = skip_match(disk)
        if match:
            skips.append(dict(comment="disk %s, left alone: %s" % (disk["name"], alone[disk["name"]]), match=match,
                              skip=True))
        elif any(rule["comment"].startswith(("class ", "model ")) for rule in rules):
            warnings.append("%s: left alone now, but it has no serial, WWN or path for a udev rule to skip it by, "
                            "so a class or model rule may set it at boot" % disk["name"])
    changing = sorted(d["name"] for d in disks if d["name"] in chosen and str(chosen[d["name"]]["value"]) != str(
        d.get(attribute)))
    return dict(queues=queues, rules=skips + rules if rules else [], chosen=chosen, changing=changing, legacy=legacy,
                warnings=warnings, undone=sorted(undone), left_alone=alone)


def model_matches(pattern):
    """The udev matches that find the disks ``choose`` gives a model pattern, one rule each.

    SCSI and ATA disks (sd*) by ENV{ID_MODEL}: for ATA it holds all 40 characters of the model,
    where sysfs keeps the 16 of libata's SCSI translation and cannot tell two models with the
    same start apart. NVMe by its sysfs model, which is complete but padded with spaces.
    """
    udev_pattern = UDEV_ID_UNSAFE.sub("_", re.sub(r"\s+", "_", pattern.strip()))
    padded = pattern if pattern.endswith("*") else pattern + "*"
    return [{"KERNEL": "sd*", "ENV{ID_MODEL}": udev_pattern}, {"KERNEL": "nvme*", "ATTRS{model}": padded}]


def serial_matches(serial):
    """The udev matches of a disk by serial, one rule each: ENV{ID_SERIAL_SHORT} for SCSI, ATA
    and NVMe disks; a virtio disk has only ENV{ID_SERIAL} (60-persistent-storage.rules), which
    for the others holds the model too."""
    return [{"ENV{ID_SERIAL_SHORT}": serial}, {"KERNEL": "vd*", "ENV{ID_SERIAL}": serial}]


def identity_match(disk):
    """The udev match of one disk by its serial, else its WWN; None without either."""
    if disk.get("serial"):
        return serial_matches(disk["serial"])[1 if disk["name"].startswith("vd") else 0]
    if disk.get("wwn"):
        return {"ENV{ID_WWN}": disk["wwn"]}
    return None


SAFE_PATH = re.compile(r"^[A-Za-z0-9:._+-]+$")


def skip_match(disk):
    """The udev match a skip rule finds one disk by: its identity, else its slot (ENV{ID_PATH},
    the name of its /dev/disk/by-path link), as for a virtio disk without a serial; None
    without either."""
    match = identity_match(disk)
    if match:
        return match
    paths = sorted((link.rsplit("/", 1)[-1] for link in disk.get("links") or ()
                    if link.startswith("/dev/disk/by-path/")), key=lambda path: (path.startswith("virtio-"), len(path)))
    paths = [path for path in paths if SAFE_PATH.match(path)]
    return {"ENV{ID_PATH}": paths[0]} if paths else None


def clamp_max_sectors(disk, value, page_kb=4):
    """``value`` bounded by what the disk accepts, and a warning when it had to change."""
    value = int(value)
    high = disk.get("max_hw_sectors_kb")
    if high and value > high:
        return high, "%s: max_sectors_kb %d clamped to its max_hw_sectors_kb %d" % (disk["name"], value, high)
    if value < page_kb:
        return page_kb, "%s: max_sectors_kb %d raised to the page size, %d KiB" % (disk["name"], value, page_kb)
    return value, None


def queue_plan(disks, attribute, classes, models=None, overrides=None, extra=None, kept=None, figures=None,
               keep_worse=False, left_alone=None):
    try:
        return plan(disks, attribute, classes, models or [], overrides or [], extra or {}, kept=kept or {},
                    figures=figures or [], keep_worse=keep_worse, left_alone=left_alone or [])
    except ValueError as exc:
        raise AnsibleFilterError("queue_plan: %s" % exc)


# --------------------------------------------------------------------------- write cache rules

# The faster write cache setting of each compared disk, kept at every boot by a udev rule that
# runs the drive's own tool (the commands of the comparison, which never save to the drive).
#
# A disk is left out, with the reason, when it has no volatile write cache (nothing to switch),
# when its comparison did not end cleanly, when only the kernel's view of its cache exists
# (loop, virtio: turning that view off stops the flushes a volatile cache behind it needs), or
# when it has neither serial nor WWN to match at boot.

# After sdparm, sd sees the new mode page only once the disk is revalidated (write_cache.py);
# udev's ATTR{} assignments happen before any RUN, so the rescan is a program of its own.
RESCAN = ["/bin/sh", "-c", "echo 1 > /sys$devpath/device/rescan"]


def _skip_reason(disk, comparison, tool):
    if comparison.get("original") == write_cache.ABSENT:
        return comparison["note"]
    if comparison.get("error") or not comparison.get("restored") or comparison.get("faster") not in ("on", "off"):
        return "its write cache comparison did not end cleanly: %s" % (
            comparison.get("error") or comparison.get("restore_error") or "no faster setting")
    if tool == "sysfs":
        return ("only the kernel's view of its write cache exists (transport %s): no drive tool "
                "switches it" % disk.get("transport"))
    if identity_match(disk) is None:
        return "no serial or WWN for a udev rule to match at boot"
    return None


def write_cache_rules(disks):
    """{"rules": rules for udev_queue_rules, "trigger": kernel names, "persisted": [...],
    "skipped": [{"device", "reason"}], "lines": one per disk for the play's output} from the
    gate's disk entries (disk_gate_result.disks)."""
    rules, trigger, persisted, skipped, lines = [], [], [], [], []
    for disk in disks:
        comparison = disk.get("write_cache_comparison")
        if not comparison:
            continue
        tool = write_cache.tool_for(disk.get("transport"))
        reason = _skip_reason(disk, comparison, tool)
        if reason:
            skipped.append({"device": disk["device"], "reason": reason})
            lines.append("%s: write cache not kept: %s" % (disk["device"], reason))
            continue
        setting = comparison["faster"]
        match = identity_match(disk)
        run = [write_cache.set_command(tool, "$devnode", setting == "on")]
        if tool == "sdparm":
            run.append(RESCAN)
        # The comment names neither the kernel name nor the figures, which change from run to
        # run: the file changes only when a setting does.
        # When the disk appears only: the rescan after sdparm can cause a change event, and an
        # operator's own switch later should hold until the next boot.
        rules.append({"comment": "write cache %s: the faster setting in the gate's comparison" % setting,
                      "action": "add", "match": match, "run": run})
        lines.append("%s: write cache %s (%d sync IOPS on, %d off), now and at every boot (%s)" % (
            disk["device"], setting, comparison["on_iops"], comparison["off_iops"], tool))
        trigger.append(disk["name"])
        persisted.append({"device": disk["device"], "write_cache": setting, "tool": tool,
                          "on_iops": comparison["on_iops"], "off_iops": comparison["off_iops"]})
    return {"rules": rules, "trigger": trigger, "persisted": persisted, "skipped": skipped, "lines": lines}


class FilterModule(object):
    def filters(self):
        return {
            "named_disks": named_disks,
            "queue_plan": queue_plan,
            "write_cache_rules": write_cache_rules,
        }
