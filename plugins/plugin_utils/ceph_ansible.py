# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Everything the gate knows of ceph-ansible: which disks its variables name, and what ceph-osd
receives from them under the exclude policy. The one place that knows ceph-ansible's variable
names; the role hands it the host's values of ``READ_VARS`` (the ceph_ansible_vars lookup).

**Candidates.** The disks the gate judges: every one ceph-ansible would deploy, named as the
user names them. One rule, in this order, for every entry point (the disk_gate role, site.yml,
qualify.yml): an explicit list when given; else ceph-ansible's variables when any is defined
(``devices``, ``dedicated_devices`` (DB), ``bluestore_wal_devices`` (WAL), the data, DB and WAL
of ``lvm_volumes``, ``osd_auto_discovery``); else every disk the inventory calls available.
Each candidate's ``sources`` say which rule and variable named it and its ``slots`` where
(which entry of which variable, as which part), so that ``handover`` can hand ceph-osd
consistent variables. Names are mapped to disks through the links disk_facts resolved
(blockdev.py), as ceph-facts resolves them with ``readlink -f``. Not every name is a disk the
probe may write: an LV of ``lvm_volumes`` and a partition are reported as not probed, a name no
disk has as absent.

**Handover.** An OSD is its data disk with its DB and WAL; handing ceph-osd a data disk without
the DB or WAL it was planned with changes the layout, so an OSD goes or stays whole:

- ``lvm_volumes``: an entry stays when every part of it (data, db, wal) is approved.
- ``devices`` with ``dedicated_devices`` / ``bluestore_wal_devices``: ceph-ansible hands them
  to ``ceph-volume lvm batch``, which lays the DB (WAL) volumes of all data disks out over
  all DB (WAL) disks. With as many DB (WAL) disks as data disks each data disk has its own,
  the i-th with the i-th: the pair goes or stays together. With fewer, they are shared by
  every data disk: one not approved drops every data disk, and the lists with them.

The handover names only the variables that named disks of the host (the explicit list and the
available disks become ``devices``), so the role leaves the others as they are.

**Device class.** ceph-volume takes one ``crush_device_class`` for its batch and one per
``lvm_volumes`` entry; the handover carries the class the gate chose for the data disks
(gate_decision.device_class): ``crush_device_class`` where the batch's data disks share one, and
``lvm_volumes_classes``, the class of each entry it keeps, which the role puts under the entries
(an entry's own ``crush_device_class`` wins).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.cephops.osd_tuning.plugins.module_utils.blockdev import by_name, dev_path

# ceph-ansible's default, matched with Ansible's `match` test (re.match): so "md*" excludes
# every name starting with "m" and "dm-*" every name starting with "dm", as ceph-ansible does.
CEPH_ANSIBLE_EXCLUDE = "dm-*|loop*|md*|rbd*"
CEPH_ANSIBLE_VARS = ("devices", "dedicated_devices", "bluestore_wal_devices", "lvm_volumes", "osd_auto_discovery")
# What the candidate rule reads of the host's variables.
READ_VARS = CEPH_ANSIBLE_VARS + ("osd_auto_discovery_exclude",)

# The variables other files read a handover by (its data disks, its lvm_volumes entries);
# they take the lists' names from LIST_PARTS.
DEVICES = "devices"
LVM_VOLUMES = "lvm_volumes"
CRUSH_DEVICE_CLASS = "crush_device_class"
# The OSD part each list provides (cephadm's data_devices, db_devices, wal_devices).
LIST_PARTS = ((DEVICES, "data"), ("dedicated_devices", "db"), ("bluestore_wal_devices", "wal"))
# lvm_volumes: each part's key and the key that makes it an LV (ceph-ansible's names).
LVM_PARTS = (("data", "data_vg"), ("db", "db_vg"), ("wal", "wal_vg"))

DATA_SOURCES = ("devices", "osd_auto_discovery", "disk_gate_devices", "available")
FAST_SOURCES = (("dedicated_devices", "DB"), ("bluestore_wal_devices", "WAL"))

LV_REASON = "an LV (%s), not a disk the probe may write: not probed"
PARTITION_REASON = "a partition of %s; the probe writes only whole disks: not probed"
ABSENT_REASON = "no disk of the host has this name (not present)"


def lvm_parts(lvm_volumes):
    """(entry index, part, name, LV or not) of every data, db and wal of lvm_volumes. A part
    with its ``*_vg`` names an LV ("vg/lv"); without it, a device or partition that
    ceph-volume turns into an LV."""
    parts = []
    for index, entry in enumerate(lvm_volumes or []):
        if not isinstance(entry, dict):
            continue
        for part, vg_key in LVM_PARTS:
            if entry.get(part):
                if entry.get(vg_key):
                    parts.append((index, part, "%s/%s" % (entry[vg_key], entry[part]), True))
                else:
                    parts.append((index, part, dev_path(entry[part]), False))
    return parts


def auto_discovered(disks, exclude=CEPH_ANSIBLE_EXCLUDE, taken=()):
    """Paths of the disks ``osd_auto_discovery`` picks, as ceph-facts does: not removable, not
    empty, no partitions, no holders, not mounted, a kernel name the exclude regex does not
    match, and not already a DB or WAL device or an lvm_volumes data (``taken``)."""
    pattern = re.compile(exclude) if exclude else None
    return [disk["path"] for disk in disks
            if not disk["removable"] and disk["size_bytes"] > 0 and not disk["partitions"]
            and not disk["holders"] and not disk["mountpoints"]
            and not (pattern and pattern.match(disk["name"])) and disk["path"] not in taken]


def requested(disks, variables, explicit=None):
    """[(name as given, source, slot, LV or not)], slot = (source, entry index, part):
    ``explicit`` when not empty; else ceph-ansible's variables in its order when any is
    defined (not missing or None in ``variables``, the host's variables); else the available
    disks."""
    if explicit:
        return [(dev_path(spec), "disk_gate_devices", ("disk_gate_devices", i, "data"), False)
                for i, spec in enumerate(explicit)]
    if all(variables.get(name) is None for name in CEPH_ANSIBLE_VARS):
        return [(disk["path"], "available", ("available", i, "data"), False)
                for i, disk in enumerate(d for d in disks if d.get("available"))]
    found = []
    for source, part in LIST_PARTS:
        found += [(dev_path(spec), source, (source, i, part), False) for i, spec in enumerate(variables.get(source) or [])]
    lvm = lvm_parts(variables.get("lvm_volumes"))
    found += [(name, "lvm_volumes", ("lvm_volumes", i, part), lv) for i, part, name, lv in lvm]
    if variables.get("osd_auto_discovery"):
        # Compared as given: ceph-facts resolves no link when osd_auto_discovery is on.
        taken = set(name for name, source, slot, lv in found
                    if source in ("dedicated_devices", "bluestore_wal_devices")
                    or (source == "lvm_volumes" and slot[2] == "data"))
        exclude = variables.get("osd_auto_discovery_exclude", CEPH_ANSIBLE_EXCLUDE)
        found += [(path, "osd_auto_discovery", ("osd_auto_discovery", i, "data"), False)
                  for i, path in enumerate(auto_discovered(disks, exclude, taken))]
    return found


def _partitions(disks):
    """{/dev path of every partition: its disk's path}."""
    return dict(("/dev/" + part, disk["path"]) for disk in disks for part in disk["partitions"])


def _not_probed(name, lv, index, partitions):
    """(presence, why the probe does not write it) of a name that is not a disk of the
    inventory: None when it is one."""
    if lv:
        return "present", LV_REASON % name
    if name in index:
        return None
    if name in partitions:
        return "present", PARTITION_REASON % partitions[name]
    return "absent", ABSENT_REASON


def candidates(disks, variables, explicit=None, part_classes=()):
    """One entry per disk or name: ``device`` (the disk's device node, or the name as given
    when it is no disk of the inventory), ``given`` (every name it was given as),
    ``sources``, ``slots``, ``roles`` (data, db, wal), ``probe`` (whether the probe judges
    it), ``presence`` (present or absent), ``reasons`` (why it is not probed), and from the
    inventory ``rotational``, ``gate_class`` (flash for a name the inventory does not list,
    the stricter thresholds) and ``links``, ``wwn``. ``thresholds_class`` is the thresholds it is
    probed with: its gate class, or ``wal``/``db`` for a WAL/DB disk when that part is in
    ``part_classes`` (has thresholds of its own). A disk named twice is judged once."""
    index, partitions = by_name(disks), _partitions(disks)
    found, order = {}, []
    for given, source, slot, lv in requested(disks, variables, explicit):
        disk = {} if lv else index.get(given) or {}
        device = disk.get("path", given)
        if device not in found:
            order.append(device)
            presence, why = _not_probed(given, lv, index, partitions) or ("present", None)
            found[device] = {"device": device, "given": [], "sources": [], "slots": [], "roles": [],
                             "probe": why is None, "presence": presence, "reasons": [why] if why else [],
                             "rotational": disk.get("rotational"), "gate_class": disk.get("gate_class", "flash"),
                             "links": list(disk.get("links") or []), "wwn": disk.get("wwn")}
        entry = found[device]
        entry["slots"].append(list(slot))
        for key, value in (("given", given), ("sources", source), ("roles", slot[2])):
            if value not in entry[key]:
                entry[key].append(value)
    for entry in found.values():
        entry["thresholds_class"] = next(
            (part for part in ("wal", "db") if part in entry["roles"] and part in part_classes), entry["gate_class"])
    return [found[device] for device in order]


def _entries(disks, sources):
    """[(device, approved)] of the slots of ``sources``, in their order, each disk once."""
    slots = sorted((sources.index(slot[0]), slot[1], disk["device"], disk["decision"] == "approved")
                   for disk in disks for slot in disk["slots"] if slot[0] in sources)
    seen, entries = set(), []
    for _source, _index, device, approved in slots:
        if device not in seen:
            seen.add(device)
            entries.append((device, approved))
    return entries


def _batch(disks, dropped):
    """{devices, dedicated_devices, bluestore_wal_devices} (those that named a disk)."""
    data = _entries(disks, DATA_SOURCES)
    keep = [approved for _device, approved in data]
    lists = {}
    for source, part in FAST_SOURCES:
        fast = _entries(disks, (source,))
        if not fast:
            continue
        if len(fast) == len(data):
            for i, (device, approved) in enumerate(fast):
                if not approved and keep[i]:
                    keep[i] = False
                    dropped.append("%s: its %s disk %s is not approved" % (data[i][0], part, device))
            lists[source] = fast
            continue
        blocked = [device for device, approved in fast if not approved]
        if blocked:
            for i, (device, _approved) in enumerate(data):
                if keep[i]:
                    keep[i] = False
                    dropped.append("%s: %s disk %s, shared by every data disk, is not approved"
                                   % (device, part, ", ".join(blocked)))
        lists[source] = fast
    handover = {}
    if data:
        handover["devices"] = [device for (device, _approved), kept in zip(data, keep) if kept]
    for source, fast in lists.items():
        if len(fast) == len(data):
            handover[source] = [device for (device, _approved), kept in zip(fast, keep) if kept]
            dropped += ["%s: the data disk it pairs with, %s, is not handed over" % (device, data[i][0])
                        for i, (device, approved) in enumerate(fast) if approved and not keep[i]]
        else:
            handover[source] = [device for device, approved in fast if approved] if any(keep) else []
    return handover


def _lvm_volumes(disks, dropped):
    """Indexes of the lvm_volumes entries whose every part is approved; None without any."""
    parts = {}
    for disk in disks:
        for source, index, part in disk["slots"]:
            if source == "lvm_volumes":
                parts.setdefault(index, []).append((part, disk["device"], disk["decision"] == "approved"))
    kept = []
    for index in sorted(parts):
        refused = ["%s %s" % (part, device) for part, device, approved in parts[index] if not approved]
        if refused:
            dropped.append("lvm_volumes entry %d: %s not approved" % (index, ", ".join(refused)))
        else:
            kept.append(index)
    return kept if parts else None


def handover(disks):
    """({variable: value ceph-osd receives}, [why each approved disk or entry was dropped],
    [{crush_device_class: the class} of each lvm_volumes entry kept, {} where none is known]). ``lvm_volumes`` is given as the indexes of the
    entries that stay."""
    dropped = []
    result = _batch(disks, dropped)
    by_device = dict((disk["device"], disk) for disk in disks)
    batch = set(by_device[device]["device_class"]["class"] for device in result.get(DEVICES) or [] if device in by_device)
    if len(batch) == 1 and None not in batch:
        result[CRUSH_DEVICE_CLASS] = batch.pop()
    kept = _lvm_volumes(disks, dropped)
    classes = []
    if kept is not None:
        result[LVM_VOLUMES] = kept
        data = dict((slot[1], disk) for disk in disks for slot in disk["slots"] if slot[0] == LVM_VOLUMES and slot[2] == "data")
        found = [data[index]["device_class"]["class"] if index in data else None for index in kept]
        classes = [{CRUSH_DEVICE_CLASS: device_class} if device_class else {} for device_class in found]
    return result, dropped, classes
