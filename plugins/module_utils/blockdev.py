# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Block device inventory shared by every module of the collection.

Reading and interpreting are kept apart: ``take_snapshot`` reads sysfs, udev data,
/proc, on-disk signatures and, for disks nothing else refuses, a sample of their content
(module_utils/blankness.py) in one pass and returns plain data; ``build_disks`` turns such
a snapshot into disk records without touching the system. Unit tests feed snapshots
captured on real hosts to ``build_disks``.

The names a user gives a disk are resolved on the host (``resolve_disk``) or, on the
controller, through the ``links`` of an inventory ``build_disks`` made (``resolve_in_inventory``),
as ceph-ansible resolves devices with ``readlink -f``, without another look at the host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import binascii
import errno
import json
import os
import re
import stat

from ansible_collections.cephops.osd_tuning.plugins.module_utils import blankness, processes
from ansible_collections.cephops.osd_tuning.plugins.module_utils.mountinfo import parse_mountinfo

SYS_BLOCK = "/sys/block"
SYS_CLASS_BLOCK = "/sys/class/block"
# udev's persistent links live in /dev/disk/by-<kind>/ (by-id, by-path, by-diskseq, ...).
DISK_LINKS_DIR = "/dev/disk"
BY_ID_DIR = DISK_LINKS_DIR + "/by-id"
UDEV_DATA_DIR = "/run/udev/data"

# ceph-volume refuses devices smaller than 5 GB (src/ceph-volume/ceph_volume/util/device.py).
CEPH_MIN_SIZE_BYTES = 5 * 1024 ** 3
BLUESTORE_LABEL = b"bluestore block device"

# Kernel name prefixes that are not physical disks; listed only when asked for.
VIRTUAL_PREFIXES = ("dm-", "md", "rbd", "zram", "nbd")
# Never candidates: optical drives, RAM disks, floppies.
IGNORED_PREFIXES = ("sr", "ram", "fd")

# What makes a disk the same disk tomorrow: every record of a disk outside the inventory (a
# probe result, its result cache key, a gate decision) copies these, through copy_identity().
IDENTITY_KEYS = ("model", "serial", "wwn", "firmware", "size_bytes")
# The part of it a firmware update keeps: what the probe journal knows a disk by, so a region
# an interrupted probe left is restored after the update too.
LASTING_IDENTITY_KEYS = ("serial", "wwn", "size_bytes")

# Transports of the SCSI disks (sd*) that the ssd and hdd classes cover; USB disks are not tuned.
SCSI_TRANSPORTS = ("sata", "ata", "sas", "scsi", "fc", "iscsi")

DISK_ATTRS = (
    "dev", "size", "ro", "removable",
    "queue/rotational", "queue/scheduler", "queue/max_sectors_kb",
    "queue/max_hw_sectors_kb", "queue/read_ahead_kb", "queue/nr_requests",
    "queue/write_cache", "queue/discard_max_bytes", "queue/discard_granularity",
    "queue/logical_block_size", "queue/physical_block_size",
    "device/model", "device/vendor", "device/serial", "device/rev",
    "device/firmware_rev", "device/wwid", "wwid", "serial",
)
PARTITION_ATTRS = ("dev", "start", "size", "uevent")

# Reasons use ceph-volume's wording where it has one, so operators see familiar text.
REASON_REMOVABLE = "removable"
REASON_READ_ONLY = "read-only"
REASON_LOCKED = "locked"
REASON_TOO_SMALL = "Insufficient space (<5GB)"
REASON_BAD_TYPE = "Device type is not acceptable"
REASON_CEPH_DISK = "Used by ceph-disk"
REASON_BLUESTORE = "Has BlueStore device label"
REASON_GPT = "Has GPT headers"
REASON_PARTITION_TABLE = "Has a partition table"
REASON_PARTITIONS = "Has partitions"
REASON_FILESYSTEM = "Has a FileSystem"
REASON_LVM = "LVM detected"
REASON_MD = "md RAID member"
REASON_MOUNTED = "mounted"
REASON_HOLDERS = "has holders"
REASON_ROOT = "root disk"
REASON_SWAP = "swap"
REASON_LUKS = "Has a LUKS header"
# A process that holds the disk or a partition open may be writing to it (a virtual machine's
# raw disk, a database on a bare device) without any mount, holder or signature.
REASON_OPEN = "open by another process: %s"
# Fail closed: a disk whose signatures cannot be read is never called blank.
REASON_UNREADABLE = "signatures unreadable"
# Found by the content checks (blankness.py) on a disk without signatures at its start;
# these alone may be overridden by an explicit overwrite_data.
REASON_DATA = "Has data without a signature (%d of %d sampled MiB not zero)"
REASON_PARTITION_ENTRIES = "Has partition entries without a table signature (%s)"
REASON_AT_OFFSET = "%s at offset %d"
REASON_DATA_UNREADABLE = "Data unreadable (%s)"
REASON_NOT_FULLY_CHECKED = ("content not fully checked (a rotational disk over %d GiB gets a sample, as the full "
                            "check would seek for minutes; name it in overwrite_data, or accept the sample with "
                            "accept_sampled_content_check)" % (blankness.ROTATIONAL_FULL_CHECK_MAX_BYTES // 1024 ** 3))

# wipefs signature type -> reason; anything not listed is a filesystem or similar.
SIGNATURE_REASONS = {
    "gpt": REASON_GPT,
    "PMBR": REASON_GPT,
    "dos": REASON_PARTITION_TABLE,
    "atari": REASON_PARTITION_TABLE,
    "bsd": REASON_PARTITION_TABLE,
    "mac": REASON_PARTITION_TABLE,
    "sgi": REASON_PARTITION_TABLE,
    "sun": REASON_PARTITION_TABLE,
    "LVM2_member": REASON_LVM,
    "linux_raid_member": REASON_MD,
    "ceph_bluestore": REASON_BLUESTORE,
    "crypto_LUKS": REASON_LUKS,
    "swap": REASON_SWAP,
}


class DeviceError(Exception):
    """A device the caller named cannot be used; the message says why."""


# --------------------------------------------------------------------------- reading

def read_file(path, binary=False):
    """A file's content, or None when it cannot be read (gone, no permission, not text)."""
    try:
        with open(path, "rb" if binary else "r") as handle:
            return handle.read()
    except (IOError, OSError, UnicodeDecodeError):
        return None


def read_value(path):
    """A sysfs attribute's or marker file's value without its line end, or None."""
    text = read_file(path)
    return None if text is None else text.strip()


def _listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def _is_excl_busy(path):
    """True when an exclusive open fails with EBUSY (held by a mount, holder or ceph-osd)."""
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)))
    except OSError as exc:
        return exc.errno == errno.EBUSY
    return False


def _read_attrs(base, names):
    attrs = {}
    for name in names:
        value = read_value(os.path.join(base, name))
        if value is not None:
            attrs[name] = value
    pg80 = read_file(os.path.join(base, "device/vpd_pg80"), binary=True)
    if pg80 and len(pg80) > 4:
        # SCSI VPD page 0x80: 4-byte header, then the unit serial number in ASCII.
        attrs["device/vpd_pg80"] = pg80[4:].decode("ascii", "replace").strip(" \x00")
    pgb1 = read_file(os.path.join(base, "device/vpd_pgb1"), binary=True)
    if pgb1 and len(pgb1) >= 6:
        # SCSI VPD page 0xb1 (block device characteristics): the medium rotation rate in bytes 4-5.
        attrs["device/vpd_pgb1"] = binascii.hexlify(pgb1[:8]).decode("ascii")
    return attrs


def _disk_links():
    """{kernel name: every /dev/disk/by-*/ link that resolves to it}."""
    links = {}
    for kind in _listdir(DISK_LINKS_DIR):
        if not kind.startswith("by-"):
            continue
        for link in _listdir(os.path.join(DISK_LINKS_DIR, kind)):
            path = os.path.join(DISK_LINKS_DIR, kind, link)
            links.setdefault(os.path.basename(os.path.realpath(path)), []).append(path)
    return links


def wanted_kernel_name(name, include_loop=False, include_virtual=False):
    if name.startswith(IGNORED_PREFIXES):
        return False
    if name.startswith("loop"):
        return include_loop
    if name.startswith(VIRTUAL_PREFIXES):
        return include_virtual
    return True


def take_snapshot(run_command, names=None, include_loop=False, include_virtual=False, whole_disk_write=False,
                  accept_sampled=False):
    """Read everything ``build_disks`` needs, for the given kernel names or all disks; with
    ``whole_disk_write`` the content checks are the writers' (blankness.read_contents), and
    ``accept_sampled`` (the user's word) lets a disk that got a sample instead pass them.

    ``run_command(argv)`` returns ``(rc, stdout, stderr)``; it is AnsibleModule.run_command
    with LC_ALL=C in the modules.
    """
    if names is None:
        names = [n for n in _listdir(SYS_BLOCK)
                 if wanted_kernel_name(n, include_loop, include_virtual)]
        if include_loop:
            # An unattached loop device has size 0 and is not a disk.
            names = [n for n in names
                     if not (n.startswith("loop") and (read_file(os.path.join(SYS_BLOCK, n, "size")) or "0").strip() == "0")]
    disk_links = _disk_links()
    blocks = {}
    for name in names:
        base = os.path.join(SYS_BLOCK, name)
        attrs = _read_attrs(base, DISK_ATTRS)
        partitions = {}
        for child in _partition_names(base):
            pbase = os.path.join(base, child)
            partitions[child] = {
                "attrs": _read_attrs(pbase, PARTITION_ATTRS),
                "holders": _listdir(os.path.join(pbase, "holders")),
            }
        dev = attrs.get("dev", "")
        blocks[name] = {
            "sysfs_path": os.path.realpath(base),
            "attrs": attrs,
            "partitions": partitions,
            "holders": _listdir(os.path.join(base, "holders")),
            "udev": read_file(os.path.join(UDEV_DATA_DIR, "b" + dev)) or "",
            "links": sorted(disk_links.get(name, [])),
            "head": _read_head("/dev/" + name),
            "excl_busy": _is_excl_busy("/dev/" + name),
        }
        blocks[name]["holder_tree"] = _holder_tree(blocks[name])
    _find_openers(blocks)
    mountinfo = read_file("/proc/self/mountinfo") or ""
    signatures, probe_errors = _wipefs(run_command, blocks)
    snapshot = {
        "blocks": blocks,
        "mountinfo": mountinfo,
        "swap_devs": _swap_devs(read_file("/proc/swaps") or ""),
        "root_dev": _root_dev(mountinfo),
        "signatures": signatures,
        "probe_errors": probe_errors,
    }
    # Content is read only where nothing else refuses the disk (size aside: ata_hpa checks
    # disks of any size); a mounted or partitioned disk is not blank whatever it holds.
    unrefused = [(d["path"], d["size_bytes"], d["logical_sector_size"] or 512, d["rotational"])
                 for d in build_disks(snapshot, min_size_bytes=0) if not d["reject_reasons"]]
    for path, content in blankness.read_contents(run_command, unrefused, whole_disk_write).items():
        blocks[os.path.basename(path)]["content"] = dict(content, sample_accepted=accept_sampled) \
            if content["fully_checked"] is False else content
    return snapshot


def _find_openers(blocks):
    """Each block's ``open_by``: the processes holding the disk or one of its partitions open."""
    devices = {}
    for name, block in blocks.items():
        devices[block["attrs"].get("dev")] = (name, name)
        devices.update((entry["attrs"].get("dev"), (name, part)) for part, entry in block["partitions"].items())
    for name, openers in _openers(devices).items():
        blocks[name]["open_by"] = openers


def open_now(disks):
    """{kernel name: reason} of the disks (disk records) that another process holds open, the
    disk or one of its partitions, at this moment: the last check before a write, as a process
    may have opened a disk since the inventory. One look at /proc for all of them."""
    devices = {}
    for disk in disks:
        devices[disk["devnum"]] = (disk["name"], disk["name"])
        devices.update((read_value(os.path.join(SYS_CLASS_BLOCK, part, "dev")), (disk["name"], part))
                       for part in disk["partitions"])
    return dict((name, open_reason(openers, name)) for name, openers in _openers(devices).items())


def held_now(names):
    """open_now for whole disks given by kernel name, read from sysfs: {name: reason}."""
    disks = []
    for name in names:
        base = os.path.join(SYS_BLOCK, name)
        disks.append(dict(name=name, devnum=read_value(os.path.join(base, "dev")), partitions=_partition_names(base)))
    return open_now(disks)


def _partition_names(base):
    """Kernel names of the partitions under a disk's sysfs directory ``base``."""
    return [child for child in _listdir(base) if os.path.exists(os.path.join(base, child, "partition"))]


def _openers(devices):
    """{disk name: [{pid, command, device}]} of the disks whose devices another process holds;
    ``devices`` maps "major:minor" to (disk name, the disk's or partition's name)."""
    devices.pop(None, None)
    found = {}
    for devnum, holders in processes.holding(devices).items():
        name, device = devices[devnum]
        found.setdefault(name, []).extend(dict(pid=pid, command=comm, device=device) for pid, comm in holders)
    return dict((name, sorted(openers, key=lambda opener: (opener["pid"], opener["device"])))
                for name, openers in found.items() if openers)


def open_reason(openers, name):
    """The reason that refuses disk ``name`` for its ``open_by`` entries."""
    return REASON_OPEN % ", ".join(
        "%s (pid %d%s)" % (opener["command"], opener["pid"], "" if opener["device"] == name else ", on " + opener["device"])
        for opener in openers)


def _read_head(path):
    """First bytes of a device as text (a BlueStore label is plain ASCII at offset 0)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(len(BLUESTORE_LABEL))
    except (IOError, OSError):
        return None
    return data.decode("latin-1")


def _holder_tree(block):
    """{name: major:minor} of the holders of a disk and its partitions, recursively
    (LVM on md on a partition), so mounts and swap on top of them count for the disk."""
    tree = {}
    pending = list(block["holders"])
    for part in block["partitions"].values():
        pending.extend(part["holders"])
    while pending:
        name = pending.pop()
        if name in tree:
            continue
        tree[name] = (read_file(os.path.join(SYS_CLASS_BLOCK, name, "dev")) or "").strip()
        pending.extend(_listdir(os.path.join(SYS_CLASS_BLOCK, name, "holders")))
    return tree


def _swap_devs(swaps_text):
    devs = []
    for line in swaps_text.splitlines()[1:]:
        fields = line.split()
        if not fields:
            continue
        try:
            st = os.stat(fields[0])
        except OSError:
            continue
        if stat.S_ISBLK(st.st_mode):
            devs.append("%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev)))
    return devs


def _root_dev(mountinfo_text):
    """major:minor of the block device under /, also for btrfs/overlay (0:N) roots."""
    for entry in parse_mountinfo(mountinfo_text):
        if entry["target"] != "/":
            continue
        devnum = entry["devnum"]
        try:
            st = os.stat(entry["source"])
            if stat.S_ISBLK(st.st_mode):
                devnum = "%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
        except OSError:
            pass
        return devnum
    return None


def _wipefs(run_command, blocks):
    """Signatures libblkid finds on the disks and partitions, and the devices it could not read.

    One wipefs call covers every device; wipefs also reports a lone backup GPT header at
    the end of a disk, which blkid -p does not. When that call fails, each device is probed
    alone so one unreadable device does not hide the others. --no-act never writes.
    """
    paths = []
    for name, block in sorted(blocks.items()):
        paths.append("/dev/" + name)
        paths.extend("/dev/" + part for part in sorted(block["partitions"]))
    if not paths:
        return [], {}
    rc, out, err = run_command(["wipefs", "--no-act", "--json"] + paths)
    if rc == 0:
        return parse_wipefs_json(out), {}
    signatures, errors = [], {}
    for path in paths:
        rc, out, err = run_command(["wipefs", "--no-act", "--json", path])
        if rc == 0:
            signatures.extend(parse_wipefs_json(out))
        else:
            errors[os.path.basename(path)] = (err or out).strip() or "wipefs rc=%s" % rc
    return signatures, errors


# --------------------------------------------------------------------------- parsing

def parse_wipefs_json(text):
    """Signatures from ``wipefs --json``: one document listing every device's signatures."""
    text = (text or "").strip()
    return json.loads(text).get("signatures", []) if text else []


def parse_scheduler(text):
    """``'[mq-deadline] kyber none'`` -> (current, available, changeable).

    A bare ``none`` without brackets means the queue has no elevator support at all
    (some stacked or very old drivers): it cannot be changed.
    """
    text = (text or "").strip()
    if not text:
        return None, [], False
    names = [n.strip("[]") for n in text.split()]
    current = re.search(r"\[([^\]]+)\]", text)
    if current:
        return current.group(1), names, len(names) > 1
    return names[0], names, False


def parse_udev(text):
    """udev database entry -> (properties, symlinks)."""
    props, links = {}, []
    for line in (text or "").splitlines():
        if line.startswith("E:") and "=" in line:
            key, value = line[2:].split("=", 1)
            props[key] = value
        elif line.startswith("S:"):
            links.append("/dev/" + line[2:])
    return props, links


def copy_identity(disk, keys=IDENTITY_KEYS):
    """The identity ``keys`` of a disk or of any record of one, None where it has none."""
    return dict((key, disk.get(key)) for key in keys)


def disk_class(name, transport, rotational):
    """ssd or hdd (SCSI disks, by the kernel's rotational flag), nvme or virtio: the classes the
    queue roles choose values by; None for disks no class covers (loop, usb, dm, ...)."""
    if transport in ("nvme", "virtio"):
        return transport
    if transport in SCSI_TRANSPORTS and name.startswith("sd"):
        return "hdd" if rotational else "ssd"
    return None


def gate_class(rotational):
    """The disk gate's thresholds for a disk: hdd when the kernel calls it rotational, else flash."""
    return "hdd" if rotational else "flash"


def detect_transport(name, sysfs_path, udev_props):
    """Transport from the device's sysfs path, the way lsblk derives TRAN."""
    path = sysfs_path or ""
    if name.startswith("nvme"):
        return "nvme"
    if name.startswith("loop"):
        return "loop"
    if name.startswith(VIRTUAL_PREFIXES):
        return "virtual"
    if "/usb" in path:
        return "usb"
    if re.search(r"/ata\d+/", path):
        return "sata" if udev_props.get("ID_ATA_SATA", "1") == "1" else "ata"
    if "/end_device-" in path or "/expander-" in path:
        return "sas"
    if "/session" in path and "/target" in path:
        return "iscsi"
    if "/rport-" in path:
        return "fc"
    # Before virtio: a disk behind virtio-scsi (a SCSI target under the virtio device) takes
    # SCSI commands, and its write cache is switched with sdparm like any SCSI disk's.
    if "/target" in path:
        return "scsi"
    if "/virtio" in path:
        return "virtio"
    return "unknown"


def _int(value, default=None):
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _first(*values):
    for value in values:
        if value not in (None, ""):
            return value
    return None


def _serial(props, attrs):
    return _first(props.get("ID_SERIAL_SHORT"), attrs.get("device/serial"), attrs.get("serial"),
                  attrs.get("device/vpd_pg80"))


UDEV_ESCAPE = re.compile(r"\\x([0-9a-fA-F]{2})")


def udev_decode(value):
    """A udev ``*_ENC`` property (``\\x20`` for a space) back to the string the device reported."""
    raw, pos = bytearray(), 0
    for match in UDEV_ESCAPE.finditer(value):
        raw.extend(value[pos:match.start()].encode("utf-8"))
        raw.append(int(match.group(1), 16))
        pos = match.end()
    raw.extend(value[pos:].encode("utf-8"))
    return raw.decode("utf-8", "replace")


def _is_ata(props):
    """udev's ata_id read the drive's ATA IDENTIFY data (SATA, PATA, USB bridges passing it on)."""
    return props.get("ID_ATA") == "1"


def _model(props, attrs):
    # libata's SCSI translation keeps 16 of an ATA model's 40 characters in sysfs, so two models
    # sharing their first 16 look alike there; ata_id has all 40, spaces kept only in ID_MODEL_ENC.
    if _is_ata(props) and props.get("ID_MODEL_ENC"):
        return udev_decode(props["ID_MODEL_ENC"]).strip() or None
    return _first(attrs.get("device/model"), props.get("ID_MODEL"))


def _firmware(props, attrs):
    # The same for the firmware revision: 8 characters in IDENTIFY, 4 in sysfs device/rev.
    if _is_ata(props) and props.get("ID_REVISION"):
        return props["ID_REVISION"]
    return _first(attrs.get("device/firmware_rev"), attrs.get("device/rev"), props.get("ID_REVISION"))


def _vendor(props, attrs):
    # IDENTIFY has no vendor field; libata's "ATA" in sysfs names the translation, not the maker.
    if _is_ata(props):
        return None
    return _first(attrs.get("device/vendor"), props.get("ID_VENDOR"))


def rotation_rate(props, attrs):
    """Nominal media rotation rate in rpm from the identify data: 0 for solid state, None
    when the disk does not report one (NVMe, virtio, SCSI disks without VPD page 0xb1)."""
    if _is_ata(props):
        return _int(props.get("ID_ATA_ROTATION_RATE_RPM"))
    pgb1 = attrs.get("device/vpd_pgb1")
    if pgb1:
        rate = int(pgb1[8:12], 16)
        # SBC-4: 1 is a non-rotating medium, 0x0401-0xfffe the rate in rpm, the rest unreported.
        return 0 if rate == 1 else rate if 0x401 <= rate <= 0xfffe else None
    return None


def identity(name):
    """The WWN and serial of a disk, as disk records have them (either may be None). Reads
    only the few attributes it needs."""
    attrs = _read_attrs(os.path.join(SYS_BLOCK, name), ("dev", "wwid", "device/wwid", "serial", "device/serial"))
    props = parse_udev(read_file(os.path.join(UDEV_DATA_DIR, "b" + attrs.get("dev", ""))) or "")[0]
    return {"wwn": _wwn(props, attrs), "serial": _serial(props, attrs)}


def identity_key(name):
    """A key that follows a disk across reboots and renames: its WWN, else its serial, else
    its kernel name."""
    return identity_key_of(identity(name), name)


def identity_key_of(found, name):
    """identity_key of a disk whose WWN and serial ``found`` holds (a record of it)."""
    if found.get("wwn"):
        return "wwn:" + found["wwn"]
    return "serial:" + found["serial"] if found.get("serial") else "name:" + str(name)


def _wwn(props, attrs):
    # ID_WWN, not ID_WWN_WITH_EXTENSION: udev rules of this collection match on ENV{ID_WWN}.
    wwn = props.get("ID_WWN")
    if wwn:
        return wwn
    wwid = _first(attrs.get("wwid"), attrs.get("device/wwid")) or ""
    match = re.match(r"(naa|eui)\.([0-9a-fA-F]+)$", wwid)
    return "0x" + match.group(2).lower() if match else None


# --------------------------------------------------------------------------- building

def build_disks(snapshot, min_size_bytes=CEPH_MIN_SIZE_BYTES):
    """Disk records (see the disk_facts RETURN documentation) from a snapshot."""
    mounts = parse_mountinfo(snapshot["mountinfo"])
    mounts_by_dev = {}
    for entry in mounts:
        mounts_by_dev.setdefault(entry["devnum"], []).append(entry["target"])
    sigs_by_dev = {}
    for sig in snapshot["signatures"]:
        sigs_by_dev.setdefault(sig.get("device"), []).append(sig)
    swap_devs = set(snapshot["swap_devs"])

    disks = []
    for name in sorted(snapshot["blocks"]):
        block = snapshot["blocks"][name]
        attrs = block["attrs"]
        props, udev_links = parse_udev(block["udev"])
        partitions = sorted(block["partitions"])
        holders = sorted(block["holder_tree"])
        related_devs = set([attrs.get("dev")] + list(block["holder_tree"].values())
                           + [p["attrs"].get("dev") for p in block["partitions"].values()])
        related_devs.discard(None)
        related_devs.discard("")
        mountpoints = sorted(set(mp for d in related_devs for mp in mounts_by_dev.get(d, [])))
        signatures = []
        for device in [name] + partitions:
            for sig in sigs_by_dev.get(device, []):
                signatures.append({
                    "device": device,
                    "type": sig.get("type"),
                    "offset": sig.get("offset"),
                    "uuid": sig.get("uuid"),
                    "label": sig.get("label"),
                })
        scheduler, schedulers, changeable = parse_scheduler(attrs.get("queue/scheduler"))
        sectors = _int(attrs.get("size"), 0)
        links = sorted(set(block["links"]) | set(l for l in udev_links if l.startswith(DISK_LINKS_DIR + "/by-")))
        transport = detect_transport(name, block["sysfs_path"], props)
        rotational = attrs.get("queue/rotational") == "1"
        disk = {
            "name": name,
            "path": "/dev/" + name,
            "devnum": attrs.get("dev"),
            "by_id": [link for link in links if link.startswith(BY_ID_DIR + "/")],
            "links": ["/dev/" + name] + links,
            "wwn": _wwn(props, attrs),
            "model": _model(props, attrs),
            "vendor": _vendor(props, attrs),
            "serial": _serial(props, attrs),
            "firmware": _firmware(props, attrs),
            "transport": transport,
            "class": disk_class(name, transport, rotational),
            "gate_class": gate_class(rotational),
            "size_bytes": sectors * 512,
            "logical_sector_size": _int(attrs.get("queue/logical_block_size")),
            "physical_sector_size": _int(attrs.get("queue/physical_block_size")),
            "rotational": rotational,
            "rotation_rate_rpm": rotation_rate(props, attrs),
            "removable": attrs.get("removable") == "1",
            "read_only": attrs.get("ro") == "1",
            "scheduler": scheduler,
            "schedulers": schedulers,
            "scheduler_changeable": changeable,
            "max_sectors_kb": _int(attrs.get("queue/max_sectors_kb")),
            "max_hw_sectors_kb": _int(attrs.get("queue/max_hw_sectors_kb")),
            "read_ahead_kb": _int(attrs.get("queue/read_ahead_kb")),
            "nr_requests": _int(attrs.get("queue/nr_requests")),
            "write_cache": attrs.get("queue/write_cache"),
            "discard": _int(attrs.get("queue/discard_max_bytes"), 0) > 0,
            "discard_max_bytes": _int(attrs.get("queue/discard_max_bytes"), 0),
            "partitions": partitions,
            "holders": holders,
            "mountpoints": mountpoints,
            "swap": bool(swap_devs & related_devs),
            "signatures": signatures,
            "bluestore_label": (block.get("head") or "").startswith(BLUESTORE_LABEL.decode()),
            "root_disk": snapshot["root_dev"] in related_devs,
            "locked": bool(block.get("excl_busy")),
            "open_by": block.get("open_by", []),
            "ceph_disk_partitions": _ceph_disk_partitions(block),
            "probe_errors": ["%s: %s" % (dev, msg) for dev, msg in sorted(snapshot.get("probe_errors", {}).items())
                             if dev == name or dev in block["partitions"]],
            # None: not read, because another reason refuses the disk already.
            "content": block.get("content"),
        }
        disk["data_reasons"] = content_reasons(disk["content"])
        disk["reject_reasons"] = reject_reasons(disk, min_size_bytes)
        disk["available"] = not disk["reject_reasons"]
        disks.append(disk)
    return disks


def _ceph_disk_partitions(block):
    names = []
    for name, part in block["partitions"].items():
        uevent = part["attrs"].get("uevent", "")
        match = re.search(r"^PARTNAME=(.*)$", uevent, re.M)
        if match and match.group(1).lower().startswith("ceph"):
            names.append(name)
    return names


def reject_reasons(disk, min_size_bytes=CEPH_MIN_SIZE_BYTES):
    """Why a disk cannot take an OSD, in ceph-volume's words where it has them."""
    reasons = []

    def add(reason):
        if reason not in reasons:
            reasons.append(reason)

    if disk["removable"]:
        add(REASON_REMOVABLE)
    if disk["read_only"]:
        add(REASON_READ_ONLY)
    if disk["locked"]:
        add(REASON_LOCKED)
    if disk["open_by"]:
        add(open_reason(disk["open_by"], disk["name"]))
    if disk["size_bytes"] < min_size_bytes:
        add(REASON_TOO_SMALL if min_size_bytes == CEPH_MIN_SIZE_BYTES
            else "Insufficient space (<%d bytes)" % min_size_bytes)
    if disk["name"].startswith(("zram", "nbd")):
        add(REASON_BAD_TYPE)
    if disk["ceph_disk_partitions"]:
        add(REASON_CEPH_DISK)
    if disk["probe_errors"]:
        add(REASON_UNREADABLE)
    if disk["bluestore_label"]:
        add(REASON_BLUESTORE)
    for sig in disk["signatures"]:
        if sig["device"] == disk["name"]:
            add(SIGNATURE_REASONS.get(sig["type"], REASON_FILESYSTEM))
    if disk["partitions"]:
        add(REASON_PARTITIONS)
    if disk["holders"]:
        add(REASON_HOLDERS)
    if disk["mountpoints"]:
        add(REASON_MOUNTED)
    if disk["swap"]:
        add(REASON_SWAP)
    if disk["root_disk"]:
        add(REASON_ROOT)
    for reason in disk["data_reasons"]:
        add(reason)
    return reasons


def content_reasons(content):
    """Why the content checks find a disk not blank, most specific first: partition entries
    left without a table signature, signatures away from the start of the disk, and data
    none of those explains. None (content not read) gives none."""
    if not content:
        return []
    reasons = []
    sources = []
    for entry in content["partition_entries"]:
        if entry["source"] not in sources:
            sources.append(entry["source"])
    if sources:
        reasons.append(REASON_PARTITION_ENTRIES % ", ".join(sources))
    for sig in content["signatures"]:
        kind = SIGNATURE_REASONS.get(sig["type"])
        # A filesystem's type is the one thing the generic wording does not say.
        reasons.append(REASON_AT_OFFSET % (kind or REASON_FILESYSTEM, sig["offset"])
                       + ("" if kind else " (%s)" % sig["type"]))
    if content["nonzero_mib"] and not reasons:
        reasons.append(REASON_DATA % (content["nonzero_mib"], content["sampled_mib"]))
    if content.get("fully_checked") is False and not content.get("sample_accepted"):
        reasons.append(REASON_NOT_FULLY_CHECKED)
    for error in content["errors"]:
        if error["offset"] is None:
            reasons.append(REASON_DATA_UNREADABLE % error["error"])
        else:
            reasons.append(REASON_AT_OFFSET % (REASON_UNREADABLE, error["offset"]) + " (%s)" % error["error"])
    return reasons


def blocking_reasons(disk, overwrite_data=False):
    """The reject reasons that still refuse a whole-disk write to ``disk``. ``overwrite_data``
    (set explicitly for that disk) lifts the content checks' reasons alone: data no tool
    recognises may be destroyed on request, signatures, partitions, mounts, holders, other
    processes and the root disk never are."""
    if not overwrite_data:
        return list(disk["reject_reasons"])
    return [r for r in disk["reject_reasons"] if r not in disk["data_reasons"]]


# --------------------------------------------------------------------------- resolving

def resolve_disk(spec):
    """Kernel name of the whole disk a user named by kernel name, /dev path or by-id link.

    Raises DeviceError naming the device when it does not exist, is not a block device
    or is a partition.
    """
    if not spec or not isinstance(spec, str):
        raise DeviceError("empty device name")
    path = spec if spec.startswith("/") else "/dev/" + spec
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        raise DeviceError("%s: no such device" % spec)
    if not stat.S_ISBLK(st.st_mode):
        raise DeviceError("%s: not a block device (%s)" % (spec, real))
    devnum = "%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
    sysdir = os.path.realpath(os.path.join("/sys/dev/block", devnum))
    name = os.path.basename(sysdir)
    if os.path.exists(os.path.join(sysdir, "partition")):
        parent = os.path.basename(os.path.dirname(sysdir))
        raise DeviceError("%s: is a partition (%s of /dev/%s), not a whole disk" % (spec, name, parent))
    return name


def resolve_disks(specs):
    """Resolve a list of names once; duplicates (a name and its by-id link) collapse."""
    names, errors = [], []
    for spec in specs:
        try:
            name = resolve_disk(spec)
        except DeviceError as exc:
            errors.append(str(exc))
            continue
        if name not in names:
            names.append(name)
    if errors:
        raise DeviceError("; ".join(errors))
    return names


def dev_path(spec):
    """/dev path of a kernel name, a path unchanged."""
    return spec if spec.startswith("/") else "/dev/" + spec


def by_name(disks):
    """{every name of every disk of an inventory: the disk}."""
    return dict((link, disk) for disk in disks for link in disk["links"])


def resolve_in_inventory(disks, names):
    """The device node of the inventory's disk each name (kernel name, path or link) is a name
    of; a name no disk has stays as given, as a /dev path, so that the module it reaches
    reports it."""
    index = by_name(disks)
    return [index[dev_path(name)]["path"] if dev_path(name) in index else dev_path(name) for name in names]


def stable_path(given, links, device):
    """The name a disk keeps across reboots and controller changes: the by-id link the user
    gave, else its WWN link, else another by-id link, else its device node."""
    by_id = BY_ID_DIR + "/"
    for names, prefix in ((given, by_id), (links, by_id + "wwn-"), (links, by_id)):
        found = [name for name in names if name.startswith(prefix)]
        if found:
            return found[0]
    return device
