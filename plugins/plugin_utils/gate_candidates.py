# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The disks the gate probes: the ones that will be deployed, named as the user names them.

One rule, in this order, for every entry point (the disk_gate role, site.yml, qualify.yml):
an explicit list when given; else ceph-ansible's variables when any is defined (``devices``,
``dedicated_devices`` (DB), ``bluestore_wal_devices`` (WAL), ``lvm_volumes``,
``osd_auto_discovery``); else every disk the inventory calls available. Each candidate's
``sources`` say which rule and variable named it. This module is the one place that knows
ceph-ansible's variable names; the role hands it the host's variables as they are.

Names are mapped to disks through the links disk_facts resolved (disk_paths.py), as
ceph-facts resolves them with ``readlink -f``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.cephops.osd_tuning.plugins.plugin_utils.disk_paths import by_name, dev_path

# ceph-ansible's default, matched with Ansible's `match` test (re.match): so "md*" excludes
# every name starting with "m" and "dm-*" every name starting with "dm", as ceph-ansible does.
CEPH_ANSIBLE_EXCLUDE = "dm-*|loop*|md*|rbd*"
CEPH_ANSIBLE_VARS = ("devices", "dedicated_devices", "bluestore_wal_devices", "lvm_volumes", "osd_auto_discovery")

# Which OSD part each source provides (cephadm's data_devices, db_devices, wal_devices).
SOURCE_ROLES = {
    "disk_gate_devices": "data",
    "available": "data",
    "devices": "data",
    "osd_auto_discovery": "data",
    "lvm_volumes": "data",
    "dedicated_devices": "db",
    "bluestore_wal_devices": "wal",
}
# Sources whose disks the exclude policy may drop from ``devices``; dropping a DB/WAL device or
# an lvm_volumes entry would change the OSD layout, so a blocked one of those fails the host.
DROPPABLE_SOURCES = ("disk_gate_devices", "available", "devices", "osd_auto_discovery")


def lvm_raw_devices(lvm_volumes):
    """The ``data`` of lvm_volumes entries that name a raw device: without ``data_vg`` the
    data is a device (or partition) ceph-volume turns into an LV; with it, an LV name."""
    return [entry["data"] for entry in lvm_volumes or []
            if isinstance(entry, dict) and entry.get("data") and not entry.get("data_vg")]


def auto_discovered(disks, exclude=CEPH_ANSIBLE_EXCLUDE):
    """Paths of the disks ``osd_auto_discovery`` picks: not removable, not empty, no
    partitions, no holders, not mounted, and a kernel name the exclude regex does not match."""
    pattern = re.compile(exclude) if exclude else None
    return [disk["path"] for disk in disks
            if not disk["removable"] and disk["size_bytes"] > 0 and not disk["partitions"]
            and not disk["holders"] and not disk["mountpoints"]
            and not (pattern and pattern.match(disk["name"]))]


def requested(disks, variables, explicit=None):
    """[(path as given, source)]: ``explicit`` when not empty; else ceph-ansible's variables in
    its order when any is defined (not missing or None in ``variables``, the host's
    variables); else the available disks."""
    if explicit:
        return [(dev_path(spec), "disk_gate_devices") for spec in explicit]
    if all(variables.get(name) is None for name in CEPH_ANSIBLE_VARS):
        return [(disk["path"], "available") for disk in disks if disk.get("available")]
    pairs = []
    for source in ("devices", "dedicated_devices", "bluestore_wal_devices"):
        pairs += [(dev_path(spec), source) for spec in variables.get(source) or []]
    pairs += [(dev_path(spec), "lvm_volumes") for spec in lvm_raw_devices(variables.get("lvm_volumes"))]
    if variables.get("osd_auto_discovery"):
        exclude = variables.get("osd_auto_discovery_exclude", CEPH_ANSIBLE_EXCLUDE)
        pairs += [(path, "osd_auto_discovery") for path in auto_discovered(disks, exclude)]
    return pairs


def candidates(disks, variables, explicit=None):
    """One entry per disk: ``device`` (the disk's device node, or the name as given when no
    disk of the inventory has that name: the probe then reports it missing), ``given`` (every
    name it was given as), ``sources``, ``roles`` (data, db, wal), and from the inventory
    ``rotational`` (None for an unknown disk) and ``gate_class`` (flash for an unknown disk,
    the stricter thresholds). A disk named twice is probed once."""
    index = by_name(disks)
    found, order = {}, []
    for given, source in requested(disks, variables, explicit):
        disk = index.get(given) or {}
        device = disk.get("path", given)
        if device not in found:
            order.append(device)
            found[device] = {"device": device, "given": [], "sources": [], "roles": [],
                             "rotational": disk.get("rotational"), "gate_class": disk.get("gate_class", "flash")}
        entry = found[device]
        for key, value in (("given", given), ("sources", source), ("roles", SOURCE_ROLES[source])):
            if value not in entry[key]:
                entry[key].append(value)
    return [found[device] for device in order]
