"""Stand-in drives: what only real hardware has, for tests on this host.

A loop disk is dressed, in a private mount namespace, as a direct-attached SATA SSD that
takes SET MAX ADDRESS, as an NVMe namespace whose controller manages namespaces (with a
volatile write cache, or without one), or as a virtual drive of a MegaRAID controller; bin/
holds stand-ins for the tools that talk to such drives (hdparm, nvme, sdparm, storcli64),
which replay captured outputs of the real tools (captured/README.md) with the drive's state,
kept in a JSON file, put in.

Real: the block device (the loop disk's bytes, discards, partitions and size), every other
program (wipefs, sgdisk, partx, blkdiscard, fio, udevadm) and the collection's code, which
runs unchanged. Standing in: the kernel's view of the disk (/sys/block, /sys/dev/block and
/dev in the namespace: its transport, serial, WWN, controller and namespace id, and the
write-through queue/write_cache of a drive without a volatile write cache) and the
drive's firmware (the tools' answers). The collection cannot reach any of it: the tools are
first on the PATH of the test's ansible run only, the disguise exists only in the namespace.
"""

import json
import os
import shutil
import stat
import subprocess

from loopdisk import run

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(HERE, "bin")
FIXTURES = os.path.join(HERE, "..", "..", "unit", "fixtures")
# What the disk and its first partition show of the loop disk behind them.
LOOP_ATTRS = ("dev", "size", "ro", "removable", "queue", "holders")
PARTITION_ATTRS = ("partition", "start", "size", "dev", "uevent", "ro", "holders")


def _fixture(name):
    with open(os.path.join(FIXTURES, "nvme", name)) as handle:
        return json.load(handle)


def _sata(sectors):
    # libata's SCSI translation: an ATA port in the device path, the serial in VPD page 0x80.
    serial = "CEPHOPS-STANDIN-0001"
    return dict(name="sdq", parent="devices/pci0000:00/0000:00:1f.2/ata3/host2/target2:0:0/2:0:0:0",
                device={"vendor": "ATA", "model": "CEPHOPS STANDIN", "rev": "1.0",
                        "vpd_pg80": b"\x00\x80\x00\x14" + serial.rjust(20).encode()},
                disk={}, serial=serial, wwn=None,
                state=dict(hdparm=dict(native=sectors, visible=sectors, changed_since_power_on=False,
                                       write_cache=True)))


def _nvme(sectors, id_ctrl="id_ctrl_qemu.json"):
    # The namespace under its controller, with the identity the nvme stand-in answers with. The
    # namespace it came with counts as the first one made: each one made after has a new EUI-64.
    # A controller with a volatile write cache (vwc 1) keeps its state (on, as QEMU's starts);
    # the kernel treats one without (vwc 0) as write-through.
    ctrl, namespace = _fixture(id_ctrl), _fixture("id_ns_qemu.json")
    cache = {"write_cache": True} if ctrl["vwc"] & 1 else {}
    return dict(name="nvme9n1", parent="devices/pci0000:00/0000:00:04.0/nvme/nvme9",
                device={"serial": ctrl["sn"].strip(), "model": ctrl["mn"].strip(), "firmware_rev": ctrl["fr"].strip()},
                disk={"nsid": "1", "wwid": "eui." + namespace["eui64"]},
                serial=ctrl["sn"].strip(), wwn="0x" + namespace["eui64"],
                write_cache=None if cache else "write through",
                state=dict(nvme=dict(controller="/dev/nvme9", cntlid=ctrl["cntlid"], block_size=512, capacity=sectors,
                                     namespaces={"1": dict(nsze=sectors, eui64=namespace["eui64"])}, attached=1,
                                     shown=namespace["eui64"], made=1, id_ctrl=id_ctrl, **cache)))


def _nvme_without_cache(sectors):
    # A Samsung PM9A3's identify data: namespace management, and no volatile write cache.
    return _nvme(sectors, "id_ctrl_ns_management.json")


def _raid(sectors):
    # Virtual drive 1 of the captured storcli output: /dev/sdb with its NAA id; MegaRAID puts
    # virtual drives on channel 2 of its SCSI host.
    wwid = "naa.600605b010e943702a3372c04d2fb6b9"
    return dict(name="sdb", parent="devices/pci0000:00/0000:00:03.0/0000:02:00.0/host0/target0:2:1/0:2:1:0",
                device={"wwid": wwid, "rescan": ""}, disk={}, serial=None, wwn="0x" + wwid[4:],
                state=dict(sdparm=dict(write_cache=True)))


KINDS = {"sata": _sata, "nvme": _nvme, "nvme_without_cache": _nvme_without_cache, "raid": _raid}


class Drive:
    """``Drive(kind, disk, mount_ns, root)``: the loop ``disk`` as a drive of ``kind`` (sata,
    nvme, nvme_without_cache or raid) for whatever runs with the ``mount_ns`` prefix and the
    ``env`` variables; ``root`` is an empty directory for its sysfs, /dev, /run and state."""

    def __init__(self, kind, disk, mount_ns, root):
        self.disk, self.root, self.mount_ns = disk, str(root), mount_ns
        spec = KINDS[kind](disk.size // 512)
        self.name = spec["name"]
        assert not os.path.exists("/sys/block/" + self.name), "this host has a %s already" % self.name
        self.path = "/dev/" + self.name
        # As disk_facts reports them.
        self.serial, self.wwn = spec["serial"], spec["wwn"]
        loop = os.path.realpath("/sys/block/" + disk.name)
        parent = os.path.join(self.root, "sys", spec["parent"])
        self.sysfs = os.path.join(parent, self.name) if self.name.startswith("nvme") else \
            os.path.join(parent, "block", self.name)
        os.makedirs(self.sysfs)
        for attr, value in spec["device"].items():
            _write(os.path.join(parent, attr), value)
        for attr, value in spec["disk"].items():
            _write(os.path.join(self.sysfs, attr), value)
        os.symlink(parent, os.path.join(self.sysfs, "device"))
        for attr in LOOP_ATTRS:
            os.symlink(os.path.join(loop, attr), os.path.join(self.sysfs, attr))
        # The partition the kernel makes on the loop disk shows as the drive's first one; a
        # directory, as partx takes no link for one, whose files are there while it is.
        partition = self.name + ("p1" if self.name.startswith("nvme") else "1")
        os.mkdir(os.path.join(self.sysfs, partition))
        for attr in PARTITION_ATTRS:
            os.symlink(os.path.join(loop, disk.name + "p1", attr), os.path.join(self.sysfs, partition, attr))
        self.state_file = os.path.join(self.root, "state.json")
        with open(self.state_file, "w") as handle:
            json.dump(dict(spec["state"], device=self.path, loop=disk.path, backing=disk.backing, sysfs=self.sysfs),
                      handle)
        self._namespace(mount_ns, loop, partition, spec.get("write_cache"))

    def _namespace(self, mount_ns, loop, partition, kernel_view):
        """/sys/block, /sys/dev/block and /dev show the drive in place of the loop disk; /run
        is a directory of its own, as empty as at boot. ``kernel_view`` replaces the loop disk's
        queue/write_cache there: the loop device's own setting would outlive the loop disk
        (it holds through a detach and the next attach)."""
        sys_block, sys_dev_block, dev, host_dev, self.run_dir = (
            os.path.join(self.root, name) for name in ("sys-block", "sys-dev-block", "dev", "host-dev", "run"))
        for directory in (sys_block, sys_dev_block, dev, host_dev, self.run_dir):
            os.mkdir(directory)
        for name in os.listdir("/sys/block"):
            if name != self.disk.name:
                os.symlink(os.path.realpath("/sys/block/" + name), os.path.join(sys_block, name))
        os.symlink(self.sysfs, os.path.join(sys_block, self.name))
        with open(os.path.join(loop, "dev")) as handle:
            devnum = handle.read().strip()
        for number in os.listdir("/sys/dev/block"):
            target = self.sysfs if number == devnum else os.path.realpath("/sys/dev/block/" + number)
            os.symlink(target, os.path.join(sys_dev_block, number))
        for name in os.listdir("/dev"):
            os.symlink(os.path.join(host_dev, name), os.path.join(dev, name))
        major, minor = devnum.split(":")
        os.mknod(os.path.join(dev, self.name), 0o600 | stat.S_IFBLK, os.makedev(int(major), int(minor)))
        os.symlink(os.path.join(host_dev, self.disk.name + "p1"), os.path.join(dev, partition))
        run(mount_ns + ["mount", "--rbind", "/dev", host_dev])
        for source, target in ((sys_block, "/sys/block"), (sys_dev_block, "/sys/dev/block"), (dev, "/dev"),
                               (self.run_dir, "/run")):
            run(mount_ns + ["mount", "--bind", source, target])
        if kernel_view:
            view = os.path.join(self.root, "write_cache")
            _write(view, kernel_view)
            run(mount_ns + ["mount", "--bind", view, os.path.join(loop, "queue", "write_cache")])

    @property
    def env(self):
        """The variables that put the stand-in tools first on the PATH, with this drive's state."""
        return {"PATH": BIN + os.pathsep + os.environ["PATH"], "CEPHOPS_STANDIN_STATE": self.state_file}

    def run(self, argv):
        """Run ``argv`` where the drive is, as an operator at the host's console would."""
        return subprocess.run(self.mount_ns + argv, capture_output=True, text=True, env=dict(os.environ, **self.env),
                              check=True)

    def state(self):
        with open(self.state_file) as handle:
            return json.load(handle)

    def power_cycle(self):
        """Off and on: /run is empty again, a drive forgets the permanent change it took and
        the kernel shows the size the drive reports now."""
        for name in os.listdir(self.run_dir):
            shutil.rmtree(os.path.join(self.run_dir, name))
        state = self.state()
        if "hdparm" in state:
            state["hdparm"]["changed_since_power_on"] = False
            with open(self.state_file, "w") as handle:
                json.dump(state, handle)
            os.truncate(self.disk.backing, state["hdparm"]["visible"] * 512)
            run(["losetup", "--set-capacity", self.disk.path])


def _write(path, value):
    with open(path, "wb" if isinstance(value, bytes) else "w") as handle:
        handle.write(value if isinstance(value, bytes) else value + "\n")
