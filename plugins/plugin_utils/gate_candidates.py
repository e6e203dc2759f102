# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The disks the gate judges: every one ceph-ansible would deploy, named as the user names them.

One rule, in this order, for every entry point (the disk_gate role, site.yml, qualify.yml):
an explicit list when given; else ceph-ansible's variables when any is defined (``devices``,
``dedicated_devices`` (DB), ``bluestore_wal_devices`` (WAL), the data, DB and WAL of
``lvm_volumes``, ``osd_auto_discovery``); else every disk the inventory calls available. Each
candidate's ``sources`` say which rule and variable named it and its ``slots`` where (which
entry of which variable, as which part), so that the exclude policy can hand ceph-osd
consistent variables (gate_handover.py). This module is the one place that knows
ceph-ansible's variable names; the role hands it the host's variables as they are.

Names are mapped to disks through the links disk_facts resolved (disk_paths.py), as
ceph-facts resolves them with ``readlink -f``. Not every name is a disk the probe may write:
an LV of ``lvm_volumes`` and a partition are reported as not probed, a name no disk has as
absent.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.cephops.osd_tuning.plugins.plugin_utils.disk_paths import by_name, dev_path

# ceph-ansible's default, matched with Ansible's `match` test (re.match): so "md*" excludes
# every name starting with "m" and "dm-*" every name starting with "dm", as ceph-ansible does.
CEPH_ANSIBLE_EXCLUDE = "dm-*|loop*|md*|rbd*"
CEPH_ANSIBLE_VARS = ("devices", "dedicated_devices", "bluestore_wal_devices", "lvm_volumes", "osd_auto_discovery")

# The OSD part each list provides (cephadm's data_devices, db_devices, wal_devices).
LIST_PARTS = (("devices", "data"), ("dedicated_devices", "db"), ("bluestore_wal_devices", "wal"))
# lvm_volumes: each part's key and the key that makes it an LV (ceph-ansible's names).
LVM_PARTS = (("data", "data_vg"), ("db", "db_vg"), ("wal", "wal_vg"))

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
    the stricter thresholds) and ``links``, ``wwn``. ``class`` is the thresholds it is
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
        entry["class"] = next((part for part in ("wal", "db") if part in entry["roles"] and part in part_classes),
                              entry["gate_class"])
    return [found[device] for device in order]
