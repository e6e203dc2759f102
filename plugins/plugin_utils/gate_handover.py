# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ceph-osd receives under the exclude policy: ceph-ansible's variables, approved entries only.

An OSD is its data disk with its DB and WAL; handing ceph-osd a data disk without the DB or
WAL it was planned with changes the layout, so an OSD goes or stays whole:

- ``lvm_volumes``: an entry stays when every part of it (data, db, wal) is approved.
- ``devices`` with ``dedicated_devices`` / ``bluestore_wal_devices``: ceph-ansible hands them
  to ``ceph-volume lvm batch``, which lays the DB (WAL) volumes of all data disks out over
  all DB (WAL) disks. With as many DB (WAL) disks as data disks each data disk has its own,
  the i-th with the i-th: the pair goes or stays together. With fewer, they are shared by
  every data disk: one not approved drops every data disk, and the lists with them.

The result names only the variables that named disks of the host (the explicit list and the
available disks become ``devices``), so the role leaves the others as they are.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DATA_SOURCES = ("devices", "osd_auto_discovery", "disk_gate_devices", "available")
FAST_SOURCES = (("dedicated_devices", "DB"), ("bluestore_wal_devices", "WAL"))


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
    """({variable: value ceph-osd receives}, [why each approved disk or entry was dropped]).
    ``lvm_volumes`` is given as the indexes of the entries that stay."""
    dropped = []
    result = _batch(disks, dropped)
    kept = _lvm_volumes(disks, dropped)
    if kept is not None:
        result["lvm_volumes"] = kept
    return result, dropped
