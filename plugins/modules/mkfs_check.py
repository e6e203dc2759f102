#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mkfs_check
short_description: Check that disks may get a new XFS filesystem, and make it
version_added: 0.1.0
description:
  - Checks every requested filesystem of a host in one call and fails, naming the check that
    refused, unless each may be made. With O(make) it then makes them, one disk after another,
    as the C(cephops.osd_tuning.mount_options) role does; without, it changes nothing.
  - Right before each C(mkfs.xfs) the open check looks again (without O(make), its last look
    comes after the content read). A process that opened the disk since the inventory, as a
    virtual machine opens its raw disk, refuses it with C(refused by the open check) and the
    process's name and pid; the disks made before it stay made.
  - A disk is formatted only when the checks of M(cephops.osd_tuning.disk_facts) call it
    available (the error says C(the disk is not blank) with its reject reasons).
    M(community.general.filesystem) alone formats a disk in which blkid finds no filesystem,
    such as a partition table whose signature was wiped or data without a signature.
  - O(filesystems[].overwrite_data) lifts the content checks' reasons for that disk alone,
    with a warning naming what is destroyed.
  - Refuses mkfs.xfs options that are known to hurt (C(refused mkfs.xfs option)).
  - A disk whose XFS filesystem the fstab already mounts at the requested mount point by
    UUID was made on an earlier run and is left alone (RV(filesystems[].create) is false), so
    a second run changes nothing. Another source in the fstab at that mount point, or
    another mount there, refuses.
  - Why a module and not M(cephops.osd_tuning.disk_facts) with a filter? The earlier run's
    filesystem is recognised through the fstab, which disk_facts does not read, and the
    warning about what O(filesystems[].overwrite_data) destroys needs the host's answer.
  - Why does it make the filesystem and not M(community.general.filesystem)? That module asks
    only blkid before it formats, one task per disk; no module of ansible.builtin,
    ansible.posix or community.general looks, in the call that writes, whether another
    process holds the disk open.
author:
  - cephops maintainers (@cephops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - cephops.osd_tuning.attributes.no_diff
  - cephops.osd_tuning.content_check
options:
  filesystems:
    description:
      - The XFS filesystems to make.
    type: list
    elements: dict
    required: true
    suboptions:
      device:
        description:
          - The whole disk, as kernel name, C(/dev) path or C(/dev/disk/by-id) link.
        type: str
        required: true
      mountpoint:
        description:
          - Where the filesystem is to be mounted.
        type: path
        required: true
      mkfs_options:
        description:
          - Options for C(mkfs.xfs), before the device. The default is what ceph-volume used
            for FileStore. C(-n size=64k) is refused, as it can cause severe problems on
            systems under load (XFS FAQ), and so is an option holding a blank.
        type: list
        elements: str
        default: ["-f", "-i", "size=2048"]
      overwrite_data:
        description:
          - The disk may hold data that no tool recognises; it is destroyed.
          - Lifts only the reasons of the content checks of M(cephops.osd_tuning.disk_facts)
            (its C(data_reasons)). Signatures at the start, partitions the kernel sees,
            mounts, holders, swap and the root disk always refuse.
        type: bool
        default: false
  fstab:
    description:
      - The fstab that records the filesystems made on earlier runs.
    type: path
    default: /etc/fstab
  make:
    description:
      - Make the filesystems that pass the checks (C(mkfs.xfs) with O(filesystems[].mkfs_options)),
        each right after the open check looks at its disk again. In check mode the result says
        changed where a filesystem would be made, and nothing is written.
    type: bool
    default: false
notes:
  - Must run as root (C(become=true)) to read signatures and disk content.
attributes:
  check_mode:
    details: Changes nothing in check mode; without O(make), changes nothing in either mode.
seealso:
  - module: community.general.filesystem
  - module: cephops.osd_tuning.disk_facts
  - module: cephops.osd_tuning.mount_options
"""

EXAMPLES = r"""
- name: Make the XFS filesystems on the disks that pass the checks
  cephops.osd_tuning.mkfs_check:
    filesystems:
      - device: /dev/disk/by-id/wwn-0x5002538e40a1b2c3
        mountpoint: /var/lib/ceph/osd/ceph-7
    make: true
  register: mkfs

- name: Add them to the fstab by UUID and mount them with noatime
  cephops.osd_tuning.mount_options:
    mounts: []
    new_mounts: "{{ mkfs.mounts }}"
"""

RETURN = r"""
filesystems:
  description: One entry per requested filesystem, in order.
  returned: success
  type: list
  elements: dict
  contains:
    device:
      description: The disk as given.
      type: str
      sample: /dev/disk/by-id/wwn-0x5002538e40a1b2c3
    path:
      description: Its device node.
      type: str
      sample: /dev/sdc
    mountpoint:
      description: The mount point, normalised.
      type: str
      sample: /var/lib/ceph/osd/ceph-7
    opts:
      description: The mkfs.xfs options as one string, for the C(opts) of M(community.general.filesystem).
      type: str
      sample: -f -i size=2048
    create:
      description: The filesystem is to be made; false when an earlier run made it.
      type: bool
    made:
      description: This run made it (O(make), not in check mode).
      type: bool
mounts:
  description: The same filesystems as C(device) (the device node) and C(mountpoint), for
    the O(cephops.osd_tuning.mount_options#module:new_mounts) of M(cephops.osd_tuning.mount_options).
  returned: success
  type: list
  elements: dict
  sample: [{device: /dev/sdc, mountpoint: /var/lib/ceph/osd/ceph-7}]
"""

import re

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev, fstab, mountinfo


# Whether a new XFS filesystem may be made on a disk: pure functions, then the checks on the
# host and the mkfs.xfs runs. blkid alone, as community.general.filesystem asks it, calls a disk
# blank that holds no filesystem; these checks add everything the disk model knows (partition
# entries, data without a signature, holders, processes holding it open, mounts, the root disk)
# and the fstab.
def option_refusals(mkfs_options):
    """Reasons to refuse mkfs.xfs options: a 64 KiB directory block size (XFS FAQ: it can
    cause severe problems on systems under load), and blanks inside an option, which
    community.general.filesystem would split into two (it takes the options as one string)."""
    refusals = []
    args = list(mkfs_options)
    for index, arg in enumerate(args):
        if re.search(r"\s", arg):
            refusals.append("\"%s\": holds a blank, which would split it into two options" % arg)
            continue
        value = None
        if arg == "-n" and index + 1 < len(args):
            value = args[index + 1]
        elif arg.startswith("-n") and len(arg) > 2:
            value = arg[2:]
        if value is None:
            continue
        for sub in value.split(","):
            key, size = sub.partition("=")[::2]
            if key.strip() == "size" and _bytes(size) >= 64 * 1024:
                refusals.append(
                    "-n size=%s: a 64 KiB directory block size can cause severe problems on "
                    "systems under load (XFS FAQ); keep the default" % size)
    return refusals


def _bytes(size):
    match = re.match(r"^\s*(\d+)\s*([kmg]?)i?b?\s*$", size, re.I)
    if not match:
        return 0
    return int(match.group(1)) * {"": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}[match.group(2).lower()]


def xfs_uuid(disk):
    """UUID of the XFS filesystem on the whole disk (not in a partition), None without one."""
    for sig in disk["signatures"]:
        if sig.get("device") == disk["name"] and sig.get("type") == "xfs":
            return sig.get("uuid")
    return None


def plan(spec, disk, entries, live):
    """What to do for one requested filesystem, from the disk model of its disk and the fstab
    (``entries``) and live mounts (``live``) indexed by mount point.

    Returns ``{"create": bool, "refusal": text or None}``. A filesystem the fstab already
    mounts at the mount point by its UUID was made on an earlier run and is left alone;
    anything else must be blank, where ``overwrite_data`` lifts the content checks' reasons.
    """
    target = fstab.normalize_path(spec["mountpoint"])
    refusals = option_refusals(spec["mkfs_options"])
    if refusals:
        return {"create": False, "refusal": "%s: refused mkfs.xfs option %s" % (spec["device"], "; ".join(refusals))}
    uuid = xfs_uuid(disk)
    conflict = fstab.new_mount_refusal(target, "UUID=%s" % uuid if uuid else None, spec["device"], entries, live)
    if conflict:
        return {"create": False, "refusal": conflict}
    if target in entries:
        return {"create": False, "refusal": None}
    refusing = blockdev.blocking_reasons(disk, spec["overwrite_data"])
    if refusing:
        return {"create": False, "refusal": "%s: refused to create a filesystem, the disk is not blank: %s"
                % (spec["device"], ", ".join(refusing))}
    return {"create": True, "refusal": None}


def check(module):
    specs = module.params["filesystems"]
    names = []
    for spec in specs:
        name = blockdev.resolve_disks([spec["device"]])[0]
        if name in names:
            raise blockdev.DeviceError("%s: the disk of an earlier entry" % spec["device"])
        names.append(name)
    try:
        with open(module.params["fstab"]) as handle:
            entries = fstab.fstab_index(fstab.parse_fstab(handle.read()))
    except (IOError, OSError) as exc:
        module.fail_json(msg="cannot read %s: %s" % (module.params["fstab"], exc))
    with open("/proc/self/mountinfo") as handle:
        live = mountinfo.live_index(handle.read())
    snapshot = blockdev.take_snapshot(module.run_command, names, include_loop=True, include_virtual=True,
                                      whole_disk_write=True,
                                      accept_sampled=module.params["accept_sampled_content_check"])
    disks = dict((disk["name"], disk) for disk in blockdev.build_disks(snapshot))
    found, refusals, warnings = [], [], []
    for spec, name in zip(specs, names):
        disk = disks[name]
        planned = plan(spec, disk, entries, live)
        if planned["refusal"]:
            refusals.append(planned["refusal"])
        elif planned["create"] and disk["data_reasons"]:
            warnings.append("%s: overwrite_data is set, mkfs.xfs destroys what the content checks found: %s"
                            % (spec["device"], ", ".join(disk["data_reasons"])))
        found.append(dict(device=spec["device"], path=disk["path"], mountpoint=fstab.normalize_path(spec["mountpoint"]),
                          opts=" ".join(spec["mkfs_options"]), create=planned["create"], made=False))
    # The content read takes a minute on a large disk: a process may have opened one meanwhile.
    refusals.extend(open_refusals([disks[name] for name, entry in zip(names, found) if entry["create"]], "nothing"))
    if refusals:
        module.fail_json(msg="; ".join(refusals))
    # Only once nothing refuses: a refused run destroys nothing.
    for warning in warnings:
        module.warn(warning)
    return found, [disks[name] for name in names]


def open_refusals(disks, made):
    """The refusals of the disks another process holds open at this moment (one look at /proc)."""
    held = blockdev.open_now(disks)
    return ["%s: refused by the open check: %s since the inventory; %s was written to it" % (
        disk["path"], held[disk["name"]], made) for disk in disks if disk["name"] in held]


def make(module, found, disks):
    """mkfs.xfs on each disk ``found`` plans, one after another; the open check looks at each
    disk again right before its own mkfs.xfs, which may come minutes after the inventory."""
    mkfs = module.get_bin_path("mkfs.xfs", required=True)
    for spec, entry, disk in zip(module.params["filesystems"], found, disks):
        if not entry["create"]:
            continue
        refused = open_refusals([disk], "no filesystem")
        if refused:
            module.fail_json(msg=refused[0], changed=any(e["made"] for e in found), filesystems=found)
        rc, _out, err = module.run_command([mkfs] + spec["mkfs_options"] + [disk["path"]])
        if rc != 0:
            module.fail_json(msg="%s: mkfs.xfs failed (rc %d): %s" % (disk["path"], rc, err.strip()),
                             changed=any(e["made"] for e in found), filesystems=found)
        entry["made"] = True


def main():
    module = AnsibleModule(
        argument_spec=dict(
            filesystems=dict(type="list", elements="dict", required=True, options=dict(
                device=dict(type="str", required=True),
                mountpoint=dict(type="path", required=True),
                mkfs_options=dict(type="list", elements="str", default=["-f", "-i", "size=2048"]),
                overwrite_data=dict(type="bool", default=False),
            )),
            fstab=dict(type="path", default="/etc/fstab"),
            accept_sampled_content_check=dict(type="bool", default=False),
            make=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    module.run_command_environ_update = {"LC_ALL": "C"}
    for tool in ("wipefs", "blkid") + (("mkfs.xfs",) if module.params["make"] else ()):
        module.get_bin_path(tool, required=True)
    try:
        found, disks = check(module)
    except (blockdev.DeviceError, fstab.OptionError) as exc:
        module.fail_json(msg=str(exc))
    if module.params["make"] and not module.check_mode:
        make(module, found, disks)
    module.exit_json(changed=module.params["make"] and any(f["create"] for f in found), filesystems=found,
                     mounts=[dict(device=f["path"], mountpoint=f["mountpoint"]) for f in found])


if __name__ == "__main__":
    main()
