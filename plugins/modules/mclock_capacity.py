#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mclock_capacity
short_description: Seed each OSD's mClock capacity from the gate's measurement of its disk
version_added: 0.2.0
description:
  - At its first start every OSD benches its disk and keeps the result as its mClock capacity
    (C(osd_mclock_max_capacity_iops_ssd) or C(_hdd) of C(osd.N) in the monitors' configuration
    database). That bench is short and noisy, and Ceph keeps what it found for the OSD's life.
    This module puts the gate's figure there instead, so that like disks get like figures.
  - It maps each OSD of the host to its disk with ceph-volume's own lists (C(lvm list) and
    C(raw list)) and matches the disk to O(seeds) by the gate's identity key (WWN, else serial,
    else kernel name). An OSD on a disk no seed names is left alone, and named.
  - Per OSD it reads the option the OSD uses (C(_hdd) where C(ceph osd metadata) says its
    store is rotational, C(_ssd) otherwise) and its bounds,
    C(osd_mclock_iops_capacity_threshold_*) and, where the release has it,
    C(osd_mclock_iops_capacity_low_threshold_*), with C(ceph config get osd.N). A release
    without an option is detected by C(ceph config get) refusing it, never guessed. A figure
    outside the bounds is clamped, and named.
  - Then it sets the value with C(ceph config set osd.N), only where the database holds another,
    and records what C(osd.N) held before (the OSD's own bench result, or nothing). O(state=absent)
    puts that back, so the OSD's own value stands again; a value someone changed since is left
    and named.
  - Without a working C(ceph) CLI (not installed, no keyring, no monitor answering) it changes
    nothing and returns RV(commands), the exact C(ceph config set) lines for an operator to run;
    it fails only with O(require_cluster=true).
  - No module of ansible.builtin, ansible.posix or community.general reads ceph-volume's lists
    or sets Ceph's configuration, hence this one.
author:
  - cephops maintainers (@cephops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - cephops.osd_tuning.attributes.no_diff
options:
  seeds:
    description:
      - The gate's figures of this host's disks, as P(cephops.osd_tuning.mclock_seeds#filter)
        gives them - C(name) (the kernel name when gated), C(wwn), C(serial), C(model),
        C(iops) (the figure to seed) and C(why) (where it comes from).
    type: list
    elements: dict
    default: []
  state:
    description:
      - V(present) seeds; V(absent) puts back what the record holds and forgets it.
    type: str
    choices: [present, absent]
    default: present
  record:
    description: The JSON file that keeps what each C(osd.N) held before it was seeded.
    type: path
    default: /var/lib/cephops-osd-tuning/mclock_capacity.json
  ceph:
    description:
      - The C(ceph) command as this host runs it, as a list, for example
        V([cephadm, shell, --, ceph]) on a cephadm host without the CLI installed.
    type: list
    elements: str
    default: [ceph]
  ceph_volume:
    description:
      - The C(ceph-volume) command, as a list, for example V([cephadm, ceph-volume, --]).
    type: list
    elements: str
    default: [ceph-volume]
  connect_timeout:
    description: Seconds each C(ceph) call waits for a monitor.
    type: int
    default: 15
  require_cluster:
    description:
      - Fail where the cluster cannot be reached, instead of returning the commands to run.
    type: bool
    default: false
notes:
  - Must run as root (C(become=true)) for ceph-volume to read the disks.
  - Masked settings (C(osd/class:ssd)) are resolved by the monitors in C(ceph config get).
attributes:
  check_mode:
    support: full
    details: Reads everything a real run reads and returns what it would set or put back.
"""

EXAMPLES = r"""
- name: Seed each OSD's mClock capacity from the gate's figures
  cephops.osd_tuning.mclock_capacity:
    seeds: "{{ fleet | cephops.osd_tuning.mclock_seeds(inventory_hostname) }}"
  become: true

- name: Put back each OSD's own mClock capacity
  cephops.osd_tuning.mclock_capacity:
    state: absent
  become: true
"""

RETURN = r"""
osds:
  description: One entry per OSD ceph-volume lists on the host.
  returned: success
  type: list
  elements: dict
  contains:
    osd:
      description: The OSD's id.
      type: int
    device:
      description: The whole disk its data sits on, or null.
      type: str
    action:
      description:
        - V(set), V(unchanged), V(left_alone) (no seed for its disk), V(not_reached) (no
          cluster, see RV(commands)), V(restored), V(removed) (nothing was there before), or
          V(kept) (changed by someone since it was seeded).
      type: str
    option:
      description: The option it uses, C(osd_mclock_max_capacity_iops_ssd) or C(_hdd).
      type: str
    value:
      description: The value set (or to set), after clamping.
      type: float
    before:
      description: What C(osd.N) held in the configuration database before, null for nothing.
      type: str
    bounds:
      description: C(low) and C(high) as the cluster reported them (null where its release has no such option).
      type: dict
    notes:
      description: What was clamped, missing or left alone, in words.
      type: list
      elements: str
lines:
  description: What each OSD got, one line each, as the role shows it.
  returned: success
  type: list
  elements: str
commands:
  description: The C(ceph config set) (or C(rm)) lines that do what this run did or would do.
  returned: success
  type: list
  elements: str
cluster:
  description: Null when the cluster answered, else why it could not be reached.
  returned: success
  type: str
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev, records

OPTION = "osd_mclock_max_capacity_iops_%s"
BOUNDS = (("high", "osd_mclock_iops_capacity_threshold_%s"), ("low", "osd_mclock_iops_capacity_low_threshold_%s"))
SECTIONS = {"osds": {}}


class ClusterError(Exception):
    """The cluster could not be asked; the message says why."""


class Ceph:
    """The ceph CLI of this host, JSON in and out."""

    def __init__(self, module, argv, timeout):
        self.module, self.argv, self.timeout = module, list(argv), timeout

    def run(self, args, json_out=True):
        if not self.module.get_bin_path(self.argv[0]):
            raise ClusterError("%s: not installed on this host" % self.argv[0])
        argv = self.argv + ["--connect-timeout", str(self.timeout)] + list(args)
        if json_out:
            argv += ["--format", "json"]
        try:
            rc, out, err = self.module.run_command(argv)
        except (OSError, IOError) as exc:
            raise ClusterError("%s: %s" % (argv[0], exc))
        if rc != 0:
            raise ClusterError("%s exited with %d: %s" % (" ".join(argv), rc, " ".join(err.split())[-300:]))
        return json.loads(out) if json_out and out.strip() else out

    def get(self, osd, option):
        """The value ``ceph config get osd.N option`` gives, None where the release has no such option."""
        try:
            return self.run(["config", "get", "osd.%d" % osd, option])
        except ClusterError as exc:
            if "unrecognized" in str(exc) or "ENOENT" in str(exc) or "No such file" in str(exc):
                return None
            raise


def list_osds(module, ceph_volume):
    """({osd id: kernel name of the whole disk its data sits on, or None}, the errors of a list
    that failed) from ceph-volume's lvm and raw lists; ClusterError where neither answered."""
    found, errors = {}, []
    if not module.get_bin_path(ceph_volume[0]):
        raise ClusterError("%s: not installed on this host" % ceph_volume[0])
    for kind in ("lvm", "raw"):
        argv = list(ceph_volume) + [kind, "list", "--format", "json"]
        rc, out, err = module.run_command(argv)
        if rc != 0:
            errors.append("%s: %s" % (" ".join(argv), " ".join(err.split())[-300:]))
            continue
        try:
            listed = json.loads(out) if out.strip() else {}
        except ValueError:
            errors.append("%s printed no JSON" % " ".join(argv))
            continue
        if kind == "lvm":
            for osd, volumes in listed.items():
                data = [dev for volume in volumes if volume.get("type") == "block" for dev in volume.get("devices", [])]
                found[int(osd)] = whole_disk(data[0]) if data else None
        else:
            # raw list also finds the bluestore label of an lvm OSD, on its LV: lvm list's disk stands.
            for entry in listed.values():
                found.setdefault(int(entry["osd_id"]), whole_disk(entry.get("device")))
    if len(errors) == 2:
        raise ClusterError("; ".join(errors))
    return found, errors


def whole_disk(path):
    """The kernel name of the whole disk under a device path (a partition's parent), or None."""
    if not path:
        return None
    try:
        st = os.stat(os.path.realpath(path))
    except OSError:
        return None
    sysdir = os.path.realpath("/sys/dev/block/%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev)))
    if os.path.exists(os.path.join(sysdir, "partition")):
        sysdir = os.path.dirname(sysdir)
    return os.path.basename(sysdir)


def seed_key(seed):
    return blockdev.identity_key_of(seed, seed.get("name"))


def rotational_of(ceph, dump):
    """{osd id: True/False} as ceph osd metadata says its store is, {} without a cluster."""
    if dump is None:
        return {}
    return dict((int(entry["id"]), str(entry.get("rotational")) == "1") for entry in ceph.run(["osd", "metadata"])
                if entry.get("rotational") is not None)


def held(dump):
    """{(section, option): value} of the configuration database, masked entries aside."""
    return dict(((entry["section"], entry["name"]), entry["value"]) for entry in dump if not entry.get("mask"))


def clamp(value, bounds, notes):
    if bounds["high"] is not None and value > bounds["high"]:
        notes.append("the figure %.0f is above osd_mclock_iops_capacity_threshold (%g): clamped" % (value, bounds["high"]))
        return float(bounds["high"])
    if bounds["low"] is not None and value < bounds["low"]:
        notes.append("the figure %.0f is below osd_mclock_iops_capacity_low_threshold (%g): clamped" % (value, bounds["low"]))
        return float(bounds["low"])
    return value


def bounds_of(ceph, osd, kind, notes):
    found = {}
    for name, option in BOUNDS:
        value = ceph.get(osd, option % kind)
        found[name] = float(value) if value not in (None, "") else None
        if found[name] is None:
            notes.append("this release has no %s: not applied" % (option % kind))
    return found


def seed(module, ceph, record, seeds, osds, dump):
    """The entries and commands of a seeding run (``dump``: the configuration database, None
    without a cluster); changes the cluster and ``record`` unless in check mode."""
    by_key = dict((seed_key(s), s) for s in seeds)
    rotational = rotational_of(ceph, dump)
    entries, commands = [], []
    for osd, disk in sorted(osds.items()):
        entry = {"osd": osd, "device": "/dev/" + disk if disk else None, "option": None, "value": None,
                 "before": None, "bounds": None, "notes": []}
        entries.append(entry)
        found = by_key.get(blockdev.identity_key(disk)) if disk else None
        if found is None:
            entry.update(action="left_alone", notes=["the gate never measured %s: its own value stands" % (
                entry["device"] or "its disk")])
            continue
        spins = rotational.get(osd)
        if spins is None:
            spins = blockdev.read_value("/sys/block/%s/queue/rotational" % disk) == "1"
            entry["notes"].append("store rotational %s as the disk's flag says (no OSD metadata)" % ("yes" if spins else "no"))
        kind = "hdd" if spins else "ssd"
        option, section = OPTION % kind, "osd.%d" % osd
        entry.update(option=option, notes=entry["notes"] + [found.get("why") or "the gate's figure"])
        if dump is None:
            entry.update(action="not_reached", value=float(found["iops"]))
            commands.append("ceph config set %s %s %s" % (section, option, _number(entry["value"])))
            continue
        entry["bounds"] = bounds_of(ceph, osd, kind, entry["notes"])
        entry["value"] = clamp(float(found["iops"]), entry["bounds"], entry["notes"])
        current = dump.get((section, option))
        entry["before"] = current
        if current is not None and float(current) == entry["value"]:
            entry["action"] = "unchanged"
            continue
        entry["action"] = "set"
        commands.append("ceph config set %s %s %s" % (section, option, _number(entry["value"])))
        if not module.check_mode:
            # Recorded first: a run stopped after the set still leaves what puts it back.
            records.keep_first(record["osds"], "%s %s" % (section, option), {"before": current})["set"] = _number(
                entry["value"])
            records.save(module, module.params["record"], record)
            ceph.run(["config", "set", section, option, _number(entry["value"])], json_out=False)
    return entries, commands


def restore(module, ceph, record, dump):
    """Put back what each seeded osd.N held; every entry is tried, whatever fails on the way."""
    entries, commands, errors = [], [], []
    for key, kept in sorted(record["osds"].items()):
        section, option = key.split(" ", 1)
        entry = {"osd": int(section.split(".", 1)[1]), "device": None, "option": option, "value": None,
                 "before": kept["before"], "bounds": None, "notes": []}
        entries.append(entry)
        current = dump.get((section, option))
        if current is not None and float(current) != float(kept["set"]):
            entry.update(action="kept", notes=["%s is %s, not the %s seeded: changed since, left as it is" % (
                key, current, kept["set"])])
        else:
            args = ["config", "set", section, option, kept["before"]] if kept["before"] is not None else [
                "config", "rm", section, option]
            entry["action"] = "restored" if kept["before"] is not None else "removed"
            commands.append("ceph " + " ".join(args))
            if not module.check_mode:
                try:
                    ceph.run(args, json_out=False)
                except ClusterError as exc:
                    errors.append(str(exc))
                    continue
        if not module.check_mode:
            del record["osds"][key]
    if not module.check_mode:
        records.save(module, module.params["record"], record)
    return entries, commands, errors


ACTIONS = {"set": "set", "unchanged": "already", "not_reached": "to set (no cluster)", "restored": "put back",
           "removed": "removed", "kept": "left"}


def line(entry):
    """One OSD's outcome in words."""
    where = "osd.%d%s" % (entry["osd"], " (%s)" % entry["device"] if entry["device"] else "")
    if entry["action"] == "left_alone":
        return "%s: left alone: %s" % (where, "; ".join(entry["notes"]))
    value = " %s" % _number(entry["value"]) if entry["value"] is not None else ""
    before = "" if entry["action"] in ("not_reached", "unchanged") else ", was %s" % (
        entry["before"] if entry["before"] is not None else "not set")
    return "%s: %s %s%s%s; %s" % (where, ACTIONS[entry["action"]], entry["option"], value, before,
                                  "; ".join(entry["notes"]))


def _number(value):
    return ("%f" % value).rstrip("0").rstrip(".")


def main():
    module = AnsibleModule(
        argument_spec=dict(
            seeds=dict(type="list", elements="dict", default=[]),
            state=dict(type="str", choices=["present", "absent"], default="present"),
            record=dict(type="path", default="/var/lib/cephops-osd-tuning/mclock_capacity.json"),
            ceph=dict(type="list", elements="str", default=["ceph"]),
            ceph_volume=dict(type="list", elements="str", default=["ceph-volume"]),
            connect_timeout=dict(type="int", default=15),
            require_cluster=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    module.run_command_environ_update = {"LC_ALL": "C"}  # output is parsed
    params = module.params
    for found in params["seeds"]:
        try:
            if float(found["iops"]) <= 0:
                raise ValueError
        except (KeyError, TypeError, ValueError):
            module.fail_json(msg="every seed needs a positive iops: %s" % json.dumps(found, sort_keys=True))
    try:
        record = records.load(params["record"], SECTIONS)
    except records.RecordError as exc:
        module.fail_json(msg=str(exc))
    if params["state"] == "absent" and not record["osds"]:
        module.exit_json(changed=False, osds=[], commands=[], cluster=None, lines=[])
    ceph = Ceph(module, params["ceph"], params["connect_timeout"])
    dump, cluster_error = None, None
    try:
        dump = held(ceph.run(["config", "dump"]))
    except (ClusterError, ValueError) as exc:
        cluster_error = "the cluster cannot be reached from this host (%s): nothing set" % exc
    if cluster_error and (params["require_cluster"] or params["state"] == "absent"):
        module.fail_json(msg=cluster_error, cluster=cluster_error)

    if params["state"] == "absent":
        entries, commands, errors = restore(module, ceph, record, dump)
        if errors:
            module.fail_json(msg="; ".join(errors), osds=entries, commands=commands, cluster=None)
        module.exit_json(changed=bool(commands), osds=entries, commands=commands, cluster=None,
                         lines=[line(e) for e in entries])

    try:
        osds, list_errors = list_osds(module, params["ceph_volume"])
    except ClusterError as exc:
        module.fail_json(msg="ceph-volume lists no OSD of this host: %s" % exc)
    for error in list_errors:
        module.warn(error)
    try:
        entries, commands = seed(module, ceph, record, params["seeds"], osds, dump)
    except ClusterError as exc:
        module.fail_json(msg=str(exc))
    changed = not cluster_error and bool(commands)
    module.exit_json(changed=changed, osds=entries, commands=commands, cluster=cluster_error,
                     lines=[line(e) for e in entries])


if __name__ == "__main__":
    main()
