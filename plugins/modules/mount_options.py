#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mount_options
short_description: Ensure mount options such as noatime in fstab and on the live mounts
version_added: 0.1.0
description:
  - Ensures options (by default C(noatime)) on the chosen mounts in one call per host. It edits
    the options field of their fstab lines in place, then remounts them live so the options
    apply now, without unmounting.
  - Keeps everything else of the fstab as written - the source (C(UUID=), C(LABEL=),
    C(PARTUUID=), device paths), field order, whitespace, comments and unrelated lines.
  - Before anything is installed, the edited fstab is written to a temporary file and
    checked with C(findmnt --verify); any problem it finds that the old fstab did not have
    refuses the change.
  - Refuses options the running kernel cannot mount with - XFS C(barrier)/C(nobarrier),
    removed in Linux 4.19, which would stop the host from booting - and any option the
    filesystem rejects on the live remount; the error names the option and the reason.
  - Nothing is left half-applied - every remount happens before the new fstab is installed,
    and when one fails the mounts already remounted get their old options back and the
    fstab stays as it was.
  - Mounts that are not in the fstab (mounted by hand, or defined by a systemd C(.mount)
    unit) are never changed and are reported in RV(unmanaged) with a warning.
  - Adds XFS filesystems made beforehand (by M(community.general.filesystem) behind
    M(cephops.osd_tuning.mkfs_check), as the C(cephops.osd_tuning.mount_options) role does)
    to the fstab by UUID and mounts them, with the same checks and backup.
  - Why not M(ansible.posix.mount)? It rewrites whole fstab lines from its parameters (so
    the caller has to restate source, type and every option), handles one mount per call,
    cannot validate the result before installing it, and remounts only by unmounting or
    with the options it was given. No module of ansible.posix or community.general edits
    the options of existing lines in place.
author:
  - cephops maintainers (@cephops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - cephops.osd_tuning.attributes
options:
  mounts:
    description:
      - The mounts to manage, as absolute mount points or selectors.
      - V(ceph) selects O(ceph_dir) and every mount below it (FileStore OSD data, mon stores,
        journals on a filesystem); V(local) selects every filesystem on a local disk (XFS,
        ext2/3/4, btrfs, f2fs, ...). Selectors take mounts from fstab and from the live
        mount table, and list mounts that are not on a disk filesystem (such as the tmpfs
        directories of BlueStore OSDs) in RV(not_disk_filesystems).
      - A mount point that is neither mounted nor in the fstab is an error.
    type: list
    elements: str
    default: [ceph]
  ceph_dir:
    description:
      - Where Ceph keeps its data, for the V(ceph) selector.
    type: path
    default: /var/lib/ceph
  options:
    description:
      - Options to ensure. An option replaces its opposite (V(noexec) replaces V(exec)) and
        other values of the same key (V(logbsize=256k) replaces V(logbsize=32k)); an access
        time mode (V(noatime), V(relatime), V(strictatime)) replaces the others.
      - V(noatime) implies V(nodiratime) - V(nodiratime) is accepted but not written next to
        it, and an existing V(nodiratime) is removed when V(noatime) is added.
      - V(defaults) is dropped from a line once it has other options.
    type: list
    elements: str
    default: [noatime]
  absent_options:
    description:
      - Options to remove. A name without value (V(logbsize)) removes every value of it.
    type: list
    elements: str
    default: []
  fstab:
    description:
      - The fstab to edit.
    type: path
    default: /etc/fstab
  backup:
    description:
      - Keep a copy of the old fstab before installing the new one, in C(backups/) beside
        O(record), so that nothing the collection made stays in C(/etc); beside the file
        without O(record).
    type: bool
    default: true
  remount:
    description:
      - Remount the changed mounts so the options apply now. When false, only the fstab is
        edited and the options apply at the next mount.
    type: bool
    default: true
  record:
    description:
      - A JSON file that keeps each mount's fstab options as they were before this collection
        first changed them, so O(restore) can put them back.
    type: path
  restore:
    description:
      - Give every mount in O(record) its original fstab options back (removing what was
        added, putting back what was replaced), live and in the fstab, then drop it from the
        record. Requires O(record); O(mounts), O(options) and O(absent_options) are not used.
    type: bool
    default: false
  new_mounts:
    description:
      - XFS filesystems to add to the fstab by UUID and mount with O(options). This module
        does not make filesystems; a device without XFS is an error.
      - A mount point the fstab already mounts the same UUID at is left as it is (its
        options are managed like those of O(mounts)), so a second run changes nothing.
        Another source in the fstab there, or another mount there, is an error.
      - In check mode a device without a filesystem yet is planned with the UUID shown as
        C((set-by-mkfs.xfs)), for a filesystem an earlier task of the play would make.
    type: list
    elements: dict
    default: []
    suboptions:
      device:
        description:
          - The device that holds the filesystem (a C(/dev) path or C(/dev/disk/by-id) link).
        type: str
        required: true
      mountpoint:
        description:
          - Where to mount it; created when missing.
        type: path
        required: true
notes:
  - Must run as root (C(become=true)).
  - A remount passes the mount's current per-mount flags back together with the change,
    because a classic remount resets the flags it is not given (C(nosuid), C(nodev), ...).
  - Some filesystem options are accepted on a remount but only take effect at the next
    mount (XFS C(logbsize), for example); they are listed in RV(mounts[].pending).
  - After the fstab changes on a systemd host, run C(systemctl daemon-reload) so the units
    generated from the fstab match it (the C(cephops.osd_tuning.mount_options) role does).
attributes:
  check_mode:
    details: Reads everything and returns the planned fstab lines and remounts; writes nothing.
seealso:
  - module: ansible.posix.mount
  - module: cephops.osd_tuning.mkfs_check
  - name: findmnt(8)
    description: C(--verify) checks an fstab without mounting anything.
    link: https://man7.org/linux/man-pages/man8/findmnt.8.html
"""

EXAMPLES = r"""
- name: Ensure noatime on every Ceph filesystem
  cephops.osd_tuning.mount_options:
  register: atime

- name: Ensure noatime and a larger XFS log buffer on two mounts, nobarrier removed
  cephops.osd_tuning.mount_options:
    mounts:
      - /var/lib/ceph/osd/ceph-0
      - /var/lib/ceph/mon/ceph-a
    options: [noatime, logbsize=256k]
    absent_options: [nobarrier]

- name: Add an XFS filesystem made beforehand to the fstab by UUID and mount it with noatime
  cephops.osd_tuning.mount_options:
    mounts: []
    new_mounts:
      - device: /dev/disk/by-id/wwn-0x5002538e40a1b2c3
        mountpoint: /var/lib/ceph/osd/ceph-7
"""

RETURN = r"""
mounts:
  description: One entry per managed mount (in the fstab), in the order of O(mounts).
  returned: always
  type: list
  elements: dict
  contains:
    mountpoint:
      description: Mount point.
      type: str
      sample: /var/lib/ceph/osd/ceph-0
    source:
      description: Source as written in the fstab.
      type: str
      sample: UUID=0b1e8c52-3c4e-4f0e-9d55-2d6a7c0b8f10
    fstype:
      description: Filesystem type.
      type: str
      sample: xfs
    lineno:
      description: Line number in the fstab.
      type: int
      sample: 12
    mounted:
      description: Whether it is mounted now.
      type: bool
    fstab_changed:
      description: Whether its fstab line changes.
      type: bool
    before:
      description: Its fstab line before.
      type: str
      sample: "UUID=0b1e8c52-3c4e-4f0e-9d55-2d6a7c0b8f10 /var/lib/ceph/osd/ceph-0 xfs defaults 0 0"
    after:
      description: Its fstab line after.
      type: str
      sample: "UUID=0b1e8c52-3c4e-4f0e-9d55-2d6a7c0b8f10 /var/lib/ceph/osd/ceph-0 xfs noatime 0 0"
    remounted:
      description: Whether it was remounted (in check mode, whether it would be).
      type: bool
    remount_options:
      description: The options of the remount, null when none is needed.
      type: list
      elements: str
      sample: [rw, noatime]
    pending:
      description: Filesystem options the kernel accepted but does not show yet; they
        apply at the next mount.
      type: list
      elements: str
      sample: [logbsize=256k]
unmanaged:
  description: Selected mounts that are mounted but not in the fstab; they are not changed.
  returned: always
  type: list
  elements: dict
  sample: [{mountpoint: /var/lib/ceph/osd/ceph-3, source: /dev/sdd1, reason: "mounted but not in fstab: ..."}]
not_disk_filesystems:
  description:
    - Mounts a selector found that are not on a disk filesystem, with the reason; they are
      not changed.
    - Named C(skipped) in earlier releases, a key Ansible reserves for a skipped task, so on a
      host with tmpfs OSD directories the task showed as skipped and its change was lost.
  returned: always
  type: list
  elements: dict
  sample: [{mountpoint: /var/lib/ceph/osd/ceph-0, reason: tmpfs is not a disk filesystem}]
added:
  description: The fstab lines added for O(new_mounts); C(uuid) is null in check mode for a
    filesystem not made yet.
  returned: always
  type: list
  elements: dict
  sample: [{device: /dev/sdc, mountpoint: /var/lib/ceph/osd/ceph-7, uuid: 5b6f..., line: "UUID=5b6f... /var/lib/ceph/osd/ceph-7 xfs noatime 0 0"}]
backup_file:
  description: The copy of the old fstab, when one was made.
  returned: changed and O(backup=true)
  type: str
  sample: /var/lib/cephops-osd-tuning/backups/etc_fstab.2714.2026-03-01@10:12:31~
diff:
  description: The fstab before and after.
  returned: always
  type: dict
  contains:
    before:
      description: Old fstab text.
      type: str
    after:
      description: New fstab text.
      type: str
"""

import os
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.cephops.osd_tuning.plugins.module_utils import fstab, mountinfo, records

SYSTEMD_UNIT_DIRS = ("/etc/systemd/system", "/run/systemd/system", "/usr/local/lib/systemd/system",
                     "/usr/lib/systemd/system", "/lib/systemd/system")
# The UUID of a filesystem that check mode expects an earlier task to make.
NEW_UUID = "(set-by-mkfs.xfs)"


class Failure(Exception):
    """Stop and report; raised after anything already changed live was put back."""


def new_line(spec, uuid, options):
    return "UUID=%s %s xfs %s 0 0" % (uuid, fstab.escape(spec["mountpoint"]), ",".join(options))


def verify(run, old_text, new_text, done):
    """Problems findmnt --verify finds in new_text that old_text did not have."""
    found = []
    for text in (old_text, new_text):
        handle, path = tempfile.mkstemp(prefix=".fstab-verify.")
        try:
            with os.fdopen(handle, "w") as out:
                out.write(text)
            out, err = run(["findmnt", "--verify", "--tab-file", path], check=False)[1:]
        finally:
            os.unlink(path)
        found.append(fstab.verify_messages(out, err))
    new = sorted(found[1] - found[0])
    if new:
        raise Failure("the edited fstab does not pass findmnt --verify (%s): %s" % (done, "; ".join(new)))


def stage(run, path, old_text, new_text, added):
    """The new fstab in a temporary file next to the old one, checked by findmnt (which
    needs the new mount points to exist)."""
    if new_text == old_text:
        return None
    for spec in added:
        if not os.path.isdir(spec["mountpoint"]):
            os.makedirs(spec["mountpoint"])
    verify(run, old_text, new_text, "only the new mount points were made" if added else "nothing was changed")
    handle, tmp = tempfile.mkstemp(prefix=".fstab.", dir=os.path.dirname(os.path.realpath(path)))
    with os.fdopen(handle, "w") as out:
        out.write(new_text)
    return tmp


def unit_file(target):
    """The systemd unit file of a mount point, if one exists."""
    name = fstab.systemd_unit_name(target)
    for directory in SYSTEMD_UNIT_DIRS:
        if os.path.exists(os.path.join(directory, name)):
            return os.path.join(directory, name)
    return None


class MountOptions:
    def __init__(self, module):
        self.module = module
        self.params = module.params
        self.done = []  # (argv undoing a live change) in the order the changes were made

    def run(self, argv, check=True):
        rc, out, err = self.module.run_command(argv)
        if check and rc != 0:
            raise Failure("%s failed: %s" % (" ".join(argv), (err or out).strip()))
        return rc, out, err

    def remount(self, target, options):
        return self.run(["mount", "--options-mode", "ignore", "-o", ",".join(["remount"] + options), target],
                        check=False)

    def undo(self):
        for argv in reversed(self.done):
            self.run(argv, check=False)
        self.done = []

    # ----------------------------------------------------------------------- new mounts

    def plan_new_mounts(self, entries, live):
        """The new mounts the fstab does not have yet, each with the UUID of its filesystem
        (None in check mode when it is still to be made)."""
        planned = []
        for spec in self.params["new_mounts"]:
            target = fstab.normalize_path(spec["mountpoint"])
            tags = self.fs_tags(spec["device"])
            refusal = fstab.new_mount_refusal(target, "UUID=%s" % tags["UUID"] if "UUID" in tags else None,
                                              spec["device"], entries, live)
            if refusal:
                raise Failure(refusal)
            if target in entries:
                continue  # added on an earlier run: only its options are managed
            # In check mode the filesystem may be one that an earlier task would have made.
            if tags.get("TYPE") != "xfs" and (tags or not self.module.check_mode):
                raise Failure("%s: holds %s, not an XFS filesystem" % (spec["device"], tags.get("TYPE") or "no filesystem"))
            planned.append(dict(spec, mountpoint=target, uuid=tags.get("UUID")))
        return planned

    def fs_tags(self, device):
        """UUID, TYPE and the other tags blkid reads from the filesystem on ``device``."""
        out = self.run(["blkid", "--probe", "--output", "export", device], check=False)[1]
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    # ----------------------------------------------------------------------- live changes

    def apply_remount(self, plan, mount):
        target, options = plan["mountpoint"], plan["remount_options"]
        rc, out, err = self.remount(target, options)
        if rc != 0:
            culprit = self.find_refused(target, mount["vfs_options"], options)
            raise Failure("%s: the %s filesystem refused %s on a test remount (%s); fstab and live "
                          "mounts are unchanged" % (target, plan["fstype"], culprit, (err or out).strip()))
        restore = ["bind"] if "bind" in options else []
        self.done.append(["mount", "--options-mode", "ignore", "-o",
                          ",".join(["remount"] + restore + mount["vfs_options"]), target])

    def find_refused(self, target, vfs_options, options):
        """Which of the new options the filesystem refuses, trying each alone on top of the
        live flags (and restoring them after each success)."""
        new = [o for o in options if o not in vfs_options and o != "bind"]
        if len(new) > 1:
            for option in new:
                rc = self.remount(target, fstab.remount_options(vfs_options, [option]) if option in
                                  fstab.VFS_OPTIONS else fstab.remount_options(vfs_options, [], [], [option]))[0]
                if rc != 0:
                    return option
                self.remount(target, vfs_options)
        return "the options " + ",".join(new) if len(new) != 1 else "the option " + new[0]

    def mount_new(self, spec, options):
        kernel = [o for o in options if not fstab.is_userspace(o)] or ["defaults"]
        self.run(["mount", "--options-mode", "ignore", "-t", "xfs", "-o", ",".join(kernel),
                  spec["device"], spec["mountpoint"]])
        self.done.append(["umount", spec["mountpoint"]])

    # ----------------------------------------------------------------------- main flow

    def execute(self):
        params = self.params
        options, absent = fstab.normalize_request(params["options"], params["absent_options"])
        record = records.load(params["record"], fstab.RECORD_SECTIONS) if params["record"] else None
        path = params["fstab"]
        try:
            with open(path) as handle:
                old_text = handle.read()
        except (IOError, OSError) as exc:
            raise Failure("cannot read %s: %s" % (path, exc))
        with open("/proc/self/mountinfo") as handle:
            live = mountinfo.live_index(handle.read())
        entries = fstab.fstab_index(fstab.parse_fstab(old_text))
        new_fs = self.plan_new_mounts(entries, live)
        # A mount added on an earlier run is managed like any other mount.
        added_before = [fs["mountpoint"] for fs in params["new_mounts"]
                        if fstab.normalize_path(fs["mountpoint"]) in entries]
        selectors = list(params["mounts"]) + added_before
        if params["restore"]:
            # Only what the record kept, each mount with its own way back.
            selectors = [t for t in sorted(record["mounts"]) if t in entries]
        targets, not_disk = fstab.select_targets(selectors, entries, live, params["ceph_dir"]) if selectors else ([], [])
        requests = dict((t, fstab.restore_request(fstab.original_options(record["mounts"][t]), entries[t]["options"])
                         if params["restore"] else (options, absent)) for t in targets)
        kernel = os.uname()[2]
        for spec in new_fs:
            refusals = fstab.removed_option_refusals("xfs", options, kernel)
            if refusals:
                raise Failure("%s: %s" % (spec["mountpoint"], "; ".join(refusals)))

        plans, unmanaged = [], []
        for target in targets:
            plan = fstab.plan_mount(target, entries.get(target), live.get(target), requests[target][0],
                                    requests[target][1], kernel, unit_file(target))
            plan["request"] = requests[target]
            line = fstab.original_line(record["mounts"][target], entries[target]["text"]) if params["restore"] else None
            if line is not None:
                plan["after"] = line
            for warning in plan.pop("warnings"):
                self.module.warn(warning)
            if "unmanaged" in plan:
                self.module.warn("%s: %s" % (target, plan["unmanaged"]))
                unmanaged.append({"mountpoint": target, "source": plan["source"], "reason": plan["unmanaged"]})
                continue
            if not params["remount"]:
                plan["remount_options"] = None
            plans.append(plan)

        new_options = fstab.merge_options([], options) if new_fs else []
        replacements = dict((p["lineno"], p["after"]) for p in plans if p["after"] != p["before"])
        added = [dict(spec, line=new_line(spec, spec["uuid"] or NEW_UUID, new_options)) for spec in new_fs]
        new_text = fstab.replace_lines(old_text, replacements, [a["line"] for a in added])
        result = dict(changed=False, mounts=[], unmanaged=unmanaged, not_disk_filesystems=not_disk, added=added)
        result["diff"] = {"before": old_text, "after": new_text,
                          "before_header": path, "after_header": path}

        for plan in plans:
            plan["fstab_changed"] = plan["after"] != plan["before"]
            plan["remounted"] = plan["remount_options"] is not None
            plan["pending"] = []
        result["mounts"] = plans
        result["changed"] = bool(added or replacements or any(p["remounted"] for p in plans))
        if self.module.check_mode or not result["changed"]:
            if record is not None and params["restore"] and not self.module.check_mode:
                self.keep_record(record, plans, entries)
            return result

        try:
            tmp = stage(self.run, path, old_text, new_text, added)
            try:
                for spec in added:
                    self.mount_new(spec, new_options)
                for plan in plans:
                    if plan["remounted"]:
                        self.apply_remount(plan, live[plan["mountpoint"]])
                self.check_live(plans)
                if record is not None:
                    self.keep_record(record, plans, entries)
                if new_text != old_text:
                    if params["backup"]:
                        result["backup_file"] = records.backup_of(self.module, path)
                    self.module.atomic_move(tmp, os.path.realpath(path), unsafe_writes=False)
                    tmp = None
            finally:
                if tmp:
                    os.unlink(tmp)
        except Exception:
            self.undo()
            raise
        return result

    def check_live(self, plans):
        """Read the mount table back: the options must be in effect; filesystem options the
        kernel accepted but does not show yet are reported as pending."""
        with open("/proc/self/mountinfo") as handle:
            live = mountinfo.live_index(handle.read())
        for plan in plans:
            mount = live.get(plan["mountpoint"])
            if not plan["remounted"] or mount is None:
                continue
            if not fstab.live_satisfies(mount["vfs_options"], *plan["request"]):
                raise Failure("%s: remounted, but the mount shows %s" % (plan["mountpoint"], ",".join(mount["vfs_options"])))
            plan["pending"] = [o for o in plan["fs_options_added"] if o not in mount["super_options"]]
            for option in plan["pending"]:
                self.module.warn("%s: %s is in fstab but the kernel does not show it yet; it applies at the "
                                 "next mount" % (plan["mountpoint"], option))

    def keep_record(self, record, plans, entries):
        """Remember the original options of the mounts changed now, or forget the ones a
        restore put back; write the record atomically, or remove it once nothing is left."""
        if self.params["restore"]:
            fstab.forget(record, [p["mountpoint"] for p in plans])
        else:
            fstab.remember(record, [(p["mountpoint"], entries[p["mountpoint"]]["options"], p["before"], p["after"])
                                    for p in plans if p["fstab_changed"]])
        records.save(self.module, self.params["record"], record)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            mounts=dict(type="list", elements="str", default=["ceph"]),
            ceph_dir=dict(type="path", default="/var/lib/ceph"),
            options=dict(type="list", elements="str", default=["noatime"]),
            absent_options=dict(type="list", elements="str", default=[]),
            fstab=dict(type="path", default="/etc/fstab"),
            backup=dict(type="bool", default=True),
            remount=dict(type="bool", default=True),
            record=dict(type="path"),
            restore=dict(type="bool", default=False),
            new_mounts=dict(type="list", elements="dict", default=[], options=dict(
                device=dict(type="str", required=True),
                mountpoint=dict(type="path", required=True),
            )),
        ),
        required_if=[("restore", True, ("record",))],
        supports_check_mode=True,
    )
    module.run_command_environ_update = {"LC_ALL": "C"}  # output is parsed
    for tool in ("findmnt", "mount", "blkid"):
        module.get_bin_path(tool, required=True)
    try:
        result = MountOptions(module).execute()
    except (Failure, fstab.OptionError, records.RecordError) as exc:
        module.fail_json(msg=str(exc))
    for plan in result["mounts"]:
        plan.pop("fs_options_added")
        plan.pop("request")
    module.exit_json(**result)


if __name__ == "__main__":
    main()
