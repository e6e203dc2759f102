# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The flow the over-provisioning modules share: ata_hpa, overprovision_partition and
nvme_namespace.

Each module takes every disk of its method in one call, as entries that name a disk by
serial, WWN or device. ``run`` finds the disks, asks the method to plan each one, refuses
before anything is written when any check of any disk fails, applies the disks one after
the other, and keeps the record through module_utils/records.py: per disk identity, what
the method needs to recognise its work and to put back the original (``restore: true``).

A method is an object with:

``name``
    as in the record entries and the role (``hpa``, ``partition``, ``nvme_namespace``);
``defaults``
    the fields every disk's result has, also when it was refused before anything ran;
``check_entries(entries)``
    the messages for entries no disk could satisfy (a reserve out of range), before any
    disk is looked at;
``prepare()``
    finds the programs it needs (AnsibleModule.get_bin_path, required);
``inspect(disk, block, entry)``
    reads what the method changes, from the disk record and its snapshot block (``entry``
    is None for a restore); raises Refused when the disk is not one the method can handle
    (nothing was run against it);
``plan(disk, state, entry, recorded)``, ``plan_restore(disk, state, recorded)``
    return a Plan;
``apply(disk, state, plan)``
    makes the change, reads it back and returns the fields to report (``name``: the kernel
    name of the disk afterwards, when it changed); raises Failed;
``record_entry(disk, plan, applied, recorded)``
    the record entry after a change (``recorded``: the earlier one, whose originals stay);
``refusal(disk, checks, restoring)``
    the message for a disk whose checks refuse it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev, records

MIB = 1024 * 1024
SELECTORS = ("serial", "wwn", "device")
RECORD_SECTIONS = {"disks": {}}


class Refused(Exception):
    """The method refuses a disk before it runs anything against it."""

    def __init__(self, message, checks):
        super(Refused, self).__init__(message)
        self.checks = checks


class Failed(Exception):
    """A change failed; the message says what state the disk is in."""

    def __init__(self, message, changed=False, fields=None):
        super(Failed, self).__init__(message)
        self.changed = changed
        self.fields = fields or {}


class Plan(dict):
    """What a method plans for one disk: ``change`` (bool), ``checks`` (every check that
    refuses the change, empty when none does), ``actions`` (argv lists, in order),
    ``before`` and ``after`` (one line each for the diff), ``work`` (what the method's
    apply needs) and ``fields`` (reported per disk)."""

    def __init__(self, change=False, checks=None, actions=None, before="", after="", work=None, **fields):
        super(Plan, self).__init__(change=change, checks=checks or [], actions=actions or [], before=before,
                                   after=after, work=work or {}, fields=fields)


def argument_spec(entry_options=None, entry_exclusive=(), record_required=False):
    """The options of every over-provisioning module; ``entry_options`` adds the method's own
    options to each entry of ``disks``."""
    options = dict(
        serial=dict(type="str"),
        wwn=dict(type="str"),
        device=dict(type="str"),
        reserve_percent=dict(type="float"),
        overwrite_data=dict(type="bool", default=False),
    )
    options.update(entry_options or {})
    return dict(
        disks=dict(type="list", elements="dict", default=[], options=options,
                   mutually_exclusive=[SELECTORS] + list(entry_exclusive), required_one_of=[SELECTORS]),
        reserve_percent=dict(type="float", default=20),
        erase=dict(type="bool", default=False),
        record=dict(type="path", required=record_required),
        restore=dict(type="bool", default=False),
        accept_sampled_content_check=dict(type="bool", default=False),
    )


def describe(entry):
    """An entry as the user wrote it, by its selector: ``{'serial': 'S4EW...'}``."""
    return "{%s}" % ", ".join("'%s': '%s'" % (key, entry[key]) for key in SELECTORS if entry.get(key))


def check_reserve(entries, low, high):
    """The messages for entries whose reserve is outside low-high percent (a method's
    ``check_entries``)."""
    return ["%s: reserve_percent %s is outside %s-%s" % (describe(e), e["reserve_percent"], low, high)
            for e in entries if not low <= e["reserve_percent"] <= high]


def reserved_size(total, reserve_percent, unit):
    """``total`` less ``reserve_percent``, rounded down to a multiple of ``unit``.

    Integer arithmetic: a float percentage of 2^31 sectors or 2^40 bytes loses precision.
    """
    keep = total * int(round((100 - reserve_percent) * 1000)) // 100000
    return keep // unit * unit


def _listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def find_disks(entries):
    """The kernel name of each entry's disk, in order.

    ``device`` is resolved like every module resolves a device (path, kernel name or
    by-id link; partitions refused); ``serial`` and ``wwn`` must match exactly one disk.
    Virtual devices (device-mapper, md, ...) are no disks to over-provision. Raises
    blockdev.DeviceError naming every entry that finds no disk, several, or a disk
    another entry names.
    """
    errors, names, identities = [], [], None
    for entry in entries:
        if entry.get("device"):
            try:
                name = blockdev.resolve_disk(entry["device"])
            except blockdev.DeviceError as exc:
                errors.append(str(exc))
                continue
            if not blockdev.wanted_kernel_name(name, include_loop=True):
                errors.append("%s: a virtual device (%s), not a disk" % (entry["device"], name))
                continue
        else:
            if identities is None:
                identities = dict((n, blockdev.identity(n)) for n in _listdir(blockdev.SYS_BLOCK)
                                  if blockdev.wanted_kernel_name(n))
            key = "serial" if entry.get("serial") else "wwn"
            found = [n for n, ident in sorted(identities.items())
                     if (ident[key] or "").lower() == entry[key].lower()]
            if len(found) != 1:
                problem = "matches several disks: " + ", ".join("/dev/" + n for n in found) if found \
                    else "no disk of this host matches"
                errors.append("entry %s: %s" % (describe(entry), problem))
                continue
            name = found[0]
        if name in names:
            errors.append("/dev/%s: named by more than one entry" % name)
            continue
        names.append(name)
    if errors:
        raise blockdev.DeviceError("; ".join(errors))
    return names


def recorded_disks(record, names=None):
    """(kernel name, identity key) of each disk in the record that is present, or of
    ``names`` alone; and what is not found: the recorded devices that are not present, or
    the ``names`` the record does not hold."""
    if names is not None:
        keys = [(name, blockdev.identity_key(name)) for name in names]
        return [(n, k) for n, k in keys if k in record["disks"]], ["/dev/" + n for n, k in keys if k not in record["disks"]]
    present = dict((blockdev.identity_key(n), n) for n in _listdir(blockdev.SYS_BLOCK))
    found = [(present[k], k) for k in sorted(record["disks"]) if k in present]
    missing = ["%s (%s)" % (record["disks"][k].get("device"), k) for k in sorted(record["disks"]) if k not in present]
    return found, missing


def record_entry(method, disk, **values):
    """A record entry: the method, who the disk is, and the method's own values."""
    entry = dict(method=method, device=disk["path"], serial=disk["serial"], wwn=disk["wwn"],
                 recorded_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    entry.update(values)
    return entry


def _command(argv):
    return " ".join([os.path.basename(argv[0])] + [str(a) for a in argv[1:]])


def run(module, method):
    """Plan, refuse, apply and record for every disk of ``module.params``; exits the module."""
    params = module.params
    # Every command's output is read (hdparm, sgdisk, nvme-cli, wipefs): the C locale, for all.
    module.run_command_environ_update = dict(module.run_command_environ_update, LC_ALL="C")
    result = dict(changed=False, actions=[], disks=[])
    try:
        record = records.load(params["record"], RECORD_SECTIONS) if params["record"] else None
    except records.RecordError as exc:
        module.fail_json(msg=str(exc), **result)
    entries = [dict(e, reserve_percent=params["reserve_percent"] if e["reserve_percent"] is None
                    else e["reserve_percent"]) for e in params["disks"]]
    refused = [] if params["restore"] else method.check_entries(entries)
    if refused:
        module.fail_json(msg="; ".join(refused) + "; nothing was read or written", **result)
    try:
        names = find_disks(entries) if entries else None
    except blockdev.DeviceError as exc:
        module.fail_json(msg=str(exc), **result)
    if params["restore"]:
        targets, result["not_recorded" if names is not None else "missing"] = recorded_disks(record, names)
        targets = [(name, key, None) for name, key in targets]
    else:
        targets = [(name, blockdev.identity_key(name), entry) for name, entry in zip(names or [], entries)]
    if not targets:
        module.exit_json(**result)

    method.prepare()
    snapshot = blockdev.take_snapshot(module.run_command, [name for name, _key, _entry in targets], include_loop=True,
                                      whole_disk_write=True, accept_sampled=params["accept_sampled_content_check"])
    disks = dict((d["name"], d) for d in blockdev.build_disks(snapshot, min_size_bytes=0))
    pending, refusals, put_back = [], [], []
    for name, key, entry in targets:
        disk = disks[name]
        report = dict(method.defaults, device=disk["path"], serial=disk["serial"], wwn=disk["wwn"], changed=False,
                      checks=[], actions=[])
        result["disks"].append(report)
        recorded = record["disks"].get(key) if record is not None else None
        try:
            state = method.inspect(disk, snapshot["blocks"][name], entry)
        except Refused as exc:
            report["checks"] = exc.checks
            refusals.append(str(exc))
            continue
        plan = method.plan_restore(disk, state, recorded) if params["restore"] else \
            method.plan(disk, state, entry, recorded)
        report.update(plan["fields"], checks=plan["checks"])
        if plan["checks"]:
            refusals.append(method.refusal(disk, plan["checks"], params["restore"]))
        elif plan["change"]:
            report.update(changed=True, actions=[_command(argv) for argv in plan["actions"]])
            pending.append(dict(report=report, disk=disk, key=key, state=state, plan=plan, recorded=recorded))
        elif params["restore"]:
            put_back.append(key)  # the original is there already
    if refusals:
        module.fail_json(msg="; ".join(refusals), **result)

    result.update(changed=bool(pending), actions=[a for step in pending for a in step["report"]["actions"]],
                  diff=dict(before="".join(step["plan"]["before"] + "\n" for step in pending),
                            after="".join(step["plan"]["after"] + "\n" for step in pending)))
    if module.check_mode:
        module.exit_json(**result)
    if put_back:
        for key in put_back:
            record["disks"].pop(key)
        records.save(module, params["record"], record)

    for index, step in enumerate(pending):
        disk, key = step["disk"], step["key"]
        try:
            held = blockdev.open_now([disk])
            if held:
                raise Failed("%s: refused by the open check: %s since the inventory; nothing was written to it"
                             % (disk["path"], held[disk["name"]]))
            fields = method.apply(disk, step["state"], step["plan"])
        except Failed as exc:
            step["report"].update(exc.fields, changed=exc.changed)
            for later in pending[index + 1:]:
                later["report"]["changed"] = False
            result["changed"] = index > 0 or exc.changed
            module.fail_json(msg=str(exc), **result)
        new_name = fields.pop("name", disk["name"])
        step["report"].update(fields)
        if record is None:
            continue
        record["disks"].pop(key, None)
        if not params["restore"]:
            entry = method.record_entry(disk, step["plan"], fields, step["recorded"])
            record["disks"][blockdev.identity_key(new_name)] = entry
        # After each disk: a later failure must not lose what an earlier disk needs undone.
        records.save(module, params["record"], record)
    module.exit_json(**result)
