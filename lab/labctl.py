"""Disposable Debian VMs with a zoo of block devices for testing cephops.osd_tuning.

Every VM boots a copy-on-write overlay of a cached image (see labimage.py) and
gets the same set of drives with stable serials, so tests can pick disks by
serial or model. The pre-filled drives are overlays of cached base images too,
so a write to one shows in its overlay (check-bases, down). All state of one
lab (overlays, pidfiles, sockets, console logs, SSH key, inventory) lives in
its state directory.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import dataclasses
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import labimage  # noqa: E402  (sibling module, importable once the path is set)
from labimage import log  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
QEMU = "qemu-system-x86_64"
NAME_RE = re.compile(r"^[a-z][a-z0-9-]{0,30}$")
# A boot beside the rest of `make test` took 238 s to SSH, and once over 300 s, when the retry
# cost a whole boot more: a hung boot is rarer than a slow one.
SSH_TIMEOUT = int(os.environ.get("LAB_BOOT_TIMEOUT", "600"))
SCRATCH_DISK_SIZE = "10G"
# Under a VM's state directory: what a scenario's plays write on the controller for its tests to
# read (reports); `save` keeps it with the disks.
REPORTS_DIR = "reports"
AHCI_PORTS = 6
# What ATA IDENTIFY holds, and QEMU's ide-hd keeps (it cuts longer strings silently): 40
# characters of model, 8 of firmware. The guest's sysfs shows 16 and 4 of them (libata's SCSI
# translation); udev's ata_id reads all.
ATA_MODEL_MAX = 40
WWN_RE = re.compile(r"^0x[0-9a-f]{16}$")
ATA_FIRMWARE_MAX = 8
# What SCSI INQUIRY holds, and QEMU's scsi-hd keeps (it cuts longer strings silently): 8
# characters of vendor, 16 of product, 4 of revision; real SAS drives use the same fields.
SCSI_VENDOR_MAX = 8
SCSI_PRODUCT_MAX = 16
SCSI_REVISION_MAX = 4
QMP_TIMEOUT = 60
POWEROFF_TIMEOUT = 180
KVM_PROBE_SECONDS = 30
# QEMU options and default memory (MiB) per image variant. Ceph's erasure-code plugins die with
# SIGILL on QEMU's default qemu64 CPU; a monitor, a manager and OSDs want a second vCPU and more memory.
VARIANT_MACHINES = {
    "plain": ((), 1024),
    "ceph": (("-cpu", "max", "-smp", "2"), 4096),
}
SSH_OPTIONS = (
    "-o", "StrictHostKeyChecking=no",
    "-o", "UserKnownHostsFile=/dev/null",
    "-o", "GlobalKnownHostsFile=/dev/null",
    "-o", "LogLevel=ERROR",
    "-o", "IdentitiesOnly=yes",
    # A rebooting guest closes no connection through QEMU's user-mode network: notice it.
    "-o", "ServerAliveInterval=5",
    "-o", "ServerAliveCountMax=6",
    "-o", "BatchMode=yes",
)


@dataclasses.dataclass(frozen=True)
class Disk:
    """One drive of the zoo; `kind` decides how QEMU attaches it."""

    name: str
    kind: str  # "sata", "scsi", "nvme" or "virtio"
    serial: str
    model: str = ""  # the SCSI product for kind "scsi"
    firmware: str = ""
    vendor: str = ""  # SCSI only: ATA and NVMe identify data have no vendor field QEMU sets
    rotation_rate: int = 0
    write_iops: int = 0  # limit on write requests a second; reads stay unthrottled
    base: str = ""  # kind of base image (labimage.BASE_KINDS) it starts from; blank when empty
    wwn: str = ""  # World Wide Name in ATA IDENTIFY (QEMU's ide-hd wwn=), as udev's ID_WWN shows it

    def __post_init__(self) -> None:
        if self.wwn and (self.kind != "sata" or not WWN_RE.match(self.wwn)):
            raise ValueError(f"{self.name}: a WWN is 0x and 16 hex digits, on a SATA drive: {self.wwn!r}")
        if self.kind == "sata" and (len(self.model) > ATA_MODEL_MAX or len(self.firmware) > ATA_FIRMWARE_MAX):
            raise ValueError(f"{self.name}: ATA keeps {ATA_MODEL_MAX} characters of a model and "
                             f"{ATA_FIRMWARE_MAX} of a firmware: {self.model!r}, {self.firmware!r}")
        if self.kind == "scsi" and (len(self.vendor) > SCSI_VENDOR_MAX or len(self.model) > SCSI_PRODUCT_MAX
                                    or len(self.firmware) > SCSI_REVISION_MAX):
            raise ValueError(f"{self.name}: SCSI keeps {SCSI_VENDOR_MAX} characters of a vendor, "
                             f"{SCSI_PRODUCT_MAX} of a product and {SCSI_REVISION_MAX} of a revision: "
                             f"{self.vendor!r}, {self.model!r}, {self.firmware!r}")


# SATA drives carry names of real length: the fast and the slow SSD share their first 16
# characters (all the guest's sysfs shows), and their firmware its last 4 (sysfs shows those).
ZOO = (
    Disk("ssd", "sata", "CEPHOPS-SSD-0001", "CEPHOPS SATA SSD 870 PRO 3840GB WITH PLP", "CPRO2B6Q", rotation_rate=1),
    Disk("hdd", "sata", "CEPHOPS-HDD-0001", "CEPHOPS SATA HDD 7200RPM 8TB", "CHDD0001", rotation_rate=7200),
    # Slow at sync writes, fast at reads, like a consumer SSD. Its cap sits far below what the
    # fast SSD reaches on a loaded host (54-66 with two VMs beside the other stages), so the
    # gate's lab floors can sit between with room on both sides (molecule/shared/group_vars/osds/lab.yml).
    Disk("slow", "sata", "CEPHOPS-SLOW-0001", "CEPHOPS SATA SSD 870 EVO 500GB", "CEVO2B6Q", rotation_rate=1,
         write_iops=10),
    Disk("data", "sata", "CEPHOPS-DATA-0001", "CEPHOPS DATA SSD 1TB WITH FILES", "CDAT0001", rotation_rate=1,
         base="data"),
    # Data without any signature: nothing but reading it tells that it is not blank.
    Disk("random", "sata", "CEPHOPS-RAND-0001", "CEPHOPS RANDOM CONTENT SSD 1TB", "CRND0001", rotation_rate=1,
         base="random"),
    Disk("nvme", "nvme", "CEPHOPS-NVME-0001"),
    Disk("virtio", "virtio", "CEPHOPS-VIRTIO-0001"),
    # Spares that tests may format or partition, so the disks above stay blank for the gate.
    # (virtio-blk keeps at most 20 bytes of a serial.)
    # The one disk with a WWN (NAA 5), so a rule by WWN can be proven at boot; no test finds
    # a disk by it otherwise.
    Disk("opssd", "sata", "CEPHOPS-OPSSD-0001", "CEPHOPS SPARE SSD 256GB", "CSPR0001", rotation_rate=1,
         wwn="0x5000c0ffee000001"),
    # A SCSI (SAS-like) SSD whose write cache sdparm switches through the caching mode page.
    Disk("opscsi", "scsi", "CEPHOPS-OPSCSI-0001", "SPARE SAS SSD 1T", "C4S1", vendor="CEPHOPS",
         rotation_rate=1),
    Disk("opvirtio", "virtio", "CEPHOPS-OPVIRT-0001"),
    Disk("fs", "virtio", "CEPHOPS-FS-0001"),
)


# Drives of one model for the fleet view (the fleet scenario): what a host buys by the dozen.
# The last one runs another firmware, so the model shows mixed firmware; the others, over
# several hosts, are enough disks of one model and firmware for the fleet view to judge.
SIBLING_MODEL = "CEPHOPS SATA SSD 883 DCT 960GB FLEET SIB"
SIBLING_FIRMWARE, SIBLING_OLD_FIRMWARE = "CDCT104Q", "CDCT103Q"


def siblings(count: int) -> tuple[Disk, ...]:
    """``count`` blank SATA SSDs of one model (sib1...), the last on the older firmware."""
    return tuple(Disk(f"sib{index}", "sata", f"CEPHOPS-SIB-{index:04d}", SIBLING_MODEL,
                      SIBLING_OLD_FIRMWARE if index == count else SIBLING_FIRMWARE, rotation_rate=1)
                 for index in range(1, count + 1))


def blank_zoo(count: int) -> tuple[Disk, ...]:
    """``count`` blank virtio disks and nothing else: for measuring how costs grow with disks."""
    return tuple(Disk(f"blank{index}", "virtio", f"CEPHOPS-BLANK-{index:04d}") for index in range(1, count + 1))


class LabError(Exception):
    pass


class Qmp:
    """A QEMU monitor connection: one command at a time, events skipped."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(QMP_TIMEOUT)
        try:
            self.sock.connect(str(path))
        except OSError as error:
            self.sock.close()
            raise LabError(f"no QEMU monitor at {path}: {error}") from error
        self.replies = self.sock.makefile("r", encoding="utf-8")
        self.replies.readline()  # the greeting
        self.execute("qmp_capabilities")

    def execute(self, command: str, **arguments) -> dict:
        self.sock.sendall(json.dumps({"execute": command, "arguments": arguments}).encode() + b"\n")
        while True:
            line = self.replies.readline()
            if not line:
                raise LabError(f"QEMU monitor closed during {command}")
            reply = json.loads(line)
            if "error" in reply:
                raise LabError(f"QEMU monitor: {command}: {reply['error'].get('desc')}")
            if "return" in reply:
                return reply["return"]

    def close(self) -> None:
        self.replies.close()
        self.sock.close()


def with_write_cache(argv: list[str], write_cache: dict[str, str]) -> list[str]:
    """QEMU's command line with the volatile write cache of the drives in ``write_cache``
    ({zoo disk: "on" or "off"}) set at power-up (the write-cache property of their device)."""
    argv, found = list(argv), set()
    for index, word in enumerate(argv):
        for disk, setting in write_cache.items():
            if argv[index - 1] == "-device" and f",drive={disk}," in f",{word},":
                argv[index] = f"{word},write-cache={setting}"
                found.add(disk)
    if found != set(write_cache):
        raise LabError(f"no drive named {', '.join(sorted(set(write_cache) - found))} in this VM")
    return argv


def qemu_opt(value: str) -> str:
    """Escape a value for QEMU's comma-separated option syntax."""
    return value.replace(",", ",,")


def free_port(preferred: int | None = None) -> int:
    """A free port on the loopback address: `preferred` if it is free, else any."""
    for port in (preferred, 0) if preferred else (0,):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return sock.getsockname()[1]
    raise LabError("no free port on 127.0.0.1")


def kvm_usable(os_image: Path) -> bool:
    """LAB_ACCEL=kvm|tcg forces the choice; auto (the default) probes KVM.

    Nested KVM can open /dev/kvm and even run the firmware, then hang once the
    kernel starts, so the probe boots the lab image and waits for the kernel's
    first console line. The answer is kept until the host reboots. In CI (CI=true) the
    probe is not run: CI's machines are known to hang there, and the probe would cost its
    30 s on every fresh boot; a probe's answer of this boot still counts.
    """
    choice = os.environ.get("LAB_ACCEL", "auto")
    if choice in ("kvm", "tcg"):
        return choice == "kvm"
    if choice != "auto":
        raise LabError(f"LAB_ACCEL must be kvm, tcg or auto, not {choice!r}")
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False
    boot_id = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    cached = labimage.cache_dir() / "kvm-probe.json"
    if cached.exists():
        result = json.loads(cached.read_text())
        if result.get("boot_id") == boot_id:
            return result["kvm"]
    if os.environ.get("CI") == "true":
        log("CI: KVM not probed, using TCG (LAB_ACCEL=kvm uses KVM)")
        return False
    log("probing whether KVM can boot the lab kernel")
    probe_dir = Path(tempfile.mkdtemp(prefix="kvm-probe-", dir=labimage.cache_dir()))
    overlay, console = probe_dir / "root.qcow2", probe_dir / "console.log"
    labimage.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", str(os_image), str(overlay)])
    console.write_bytes(b"")
    argv = [QEMU, "-nodefaults", "-display", "none", "-accel", "kvm", "-m", "512",
            "-chardev", f"file,id=console,path={qemu_opt(str(console))}", "-serial", "chardev:console",
            "-drive", f"if=virtio,format=qcow2,cache=unsafe,file={qemu_opt(str(overlay))}"]
    works = False
    with subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL) as qemu:
        deadline = time.monotonic() + KVM_PROBE_SECONDS
        while time.monotonic() < deadline and qemu.poll() is None:
            if b"Linux version" in console.read_bytes():
                works = True
                break
            time.sleep(0.5)
        qemu.kill()
    shutil.rmtree(probe_dir)
    log(f"KVM {'works' if works else 'does not boot the kernel; using TCG'}")
    cached.write_text(json.dumps({"boot_id": boot_id, "kvm": works}) + "\n")
    return works


class Lab:
    def __init__(self, state_dir: Path, suite: str, variant: str = "plain") -> None:
        self.state_dir = state_dir.resolve()
        self.suite = suite
        self.variant = variant
        self.key = self.state_dir / "id_ed25519"
        self.inventory = self.state_dir / "inventory.yml"

    # --- per-VM files -------------------------------------------------------
    def vm_dir(self, name: str) -> Path:
        return self.state_dir / "vms" / name

    def pidfile(self, name: str) -> Path:
        return self.vm_dir(name) / "qemu.pid"

    def console_log(self, name: str) -> Path:
        return self.vm_dir(name) / "console.log"

    def qmp_socket(self, name: str) -> Path:
        return self.vm_dir(name) / "qmp.sock"

    def meta(self, name: str) -> dict:
        path = self.vm_dir(name) / "vm.json"
        return json.loads(path.read_text()) if path.exists() else {}

    def names(self) -> list[str]:
        vms = self.state_dir / "vms"
        return sorted(p.name for p in vms.iterdir() if (p / "vm.json").exists()) if vms.is_dir() else []

    def pid(self, name: str) -> int | None:
        """The VM's QEMU pid, only if that process is still this VM's QEMU."""
        try:
            pid = int(self.pidfile(name).read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            return None
        return pid if str(self.pidfile(name)).encode() in cmdline else None

    def console_tail(self, name: str, lines: int = 40) -> str:
        try:
            text = self.console_log(name).read_text(errors="replace")
        except OSError:
            return "(no console log)"
        if not text.strip():
            # GRUB writes to the serial console only once it has read grub.cfg.
            return "(the console stayed empty: the VM never got past its boot loader; is the image's grub.cfg there?)"
        return "\n".join(text.replace("\r", "").splitlines()[-lines:])

    # --- lifecycle ----------------------------------------------------------
    def ensure_key(self) -> None:
        if not self.key.exists():
            self.state_dir.mkdir(parents=True, exist_ok=True)
            labimage.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "cephops-lab", "-f", str(self.key)])

    def create_disks(self, name: str, os_image: Path, bases: dict[str, Path], zoo: tuple[Disk, ...],
                     saved: Path | None = None) -> dict[str, str]:
        """Fresh overlays for the root disk and the disks on a base image, blank sparse qcow2 for the rest;
        or copies of the disks `save` kept of this VM in `saved`."""
        vm_dir = self.vm_dir(name)
        for old in vm_dir.glob("*.qcow2"):
            old.unlink()
        paths = {"root": str(vm_dir / "root.qcow2")}
        if saved is not None:
            wanted = {"root", *(disk.name for disk in zoo)}
            found = {path.stem for path in (saved / name).glob("*.qcow2")}
            if found != wanted:
                raise LabError(f"{saved / name} holds the disks {sorted(found)}, not this zoo's {sorted(wanted)}")
            for disk in sorted(wanted):
                paths[disk] = str(vm_dir / f"{disk}.qcow2")
                shutil.copyfile(saved / name / f"{disk}.qcow2", paths[disk])
            return paths
        labimage.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", str(os_image), paths["root"]])
        for disk in zoo:
            path = str(vm_dir / f"{disk.name}.qcow2")
            if disk.base:
                labimage.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", str(bases[disk.base]),
                              path])
            else:
                labimage.run(["qemu-img", "create", "-q", "-f", "qcow2", path, SCRATCH_DISK_SIZE])
            paths[disk.name] = path
        return paths

    def qemu_argv(self, name: str, port: int, accel: str, disks: dict[str, str], zoo: tuple[Disk, ...]) -> list[str]:
        machine, memory = VARIANT_MACHINES[self.variant]
        argv = [
            QEMU, "-name", name, "-nodefaults", "-display", "none",
            "-accel", accel, *machine,
            "-m", os.environ.get("LAB_MEMORY", str(memory)),
            "-daemonize", "-pidfile", str(self.pidfile(name)),
            "-chardev", f"file,id=console,path={qemu_opt(str(self.console_log(name)))}",
            "-serial", "chardev:console",
            "-chardev", f"socket,id=qmp,path={qemu_opt(str(self.qmp_socket(name)))},server=on,wait=off",
            "-mon", "chardev=qmp,mode=control",
            "-netdev", f"user,id=net0,restrict=on,hostfwd=tcp:127.0.0.1:{port}-:22",
            "-device", "virtio-net-pci,netdev=net0",
            "-fw_cfg", f"name=opt/cephops/authorized_keys,file={qemu_opt(str(self.key))}.pub",
            "-fw_cfg", f"name=opt/cephops/hostname,string={name}",
            # Overlays are thrown away with the VM, so host-side flushes buy nothing.
            "-drive", f"if=none,id=root,format=qcow2,cache=unsafe,file={qemu_opt(disks['root'])}",
            "-device", "virtio-blk-pci,drive=root,bootindex=0",
        ]
        sata_disks = sum(1 for disk in zoo if disk.kind == "sata")
        for controller in range(-(-sata_disks // AHCI_PORTS)):
            argv += ["-device", f"ahci,id=ahci{controller}"]
        if any(disk.kind == "scsi" for disk in zoo):
            argv += ["-device", "virtio-scsi-pci,id=scsi0"]
        sata_port = 0
        for disk in zoo:
            drive = f"if=none,id={disk.name},format=qcow2,cache=unsafe,file={qemu_opt(disks[disk.name])}"
            if disk.write_iops:
                drive += f",throttling.iops-write={disk.write_iops}"
            if disk.rotation_rate != 7200:
                drive += ",discard=unmap"  # flash TRIMs; a spinning disk does not
            argv += ["-drive", drive]
            if disk.kind == "sata":
                bus = f"ahci{sata_port // AHCI_PORTS}.{sata_port % AHCI_PORTS}"
                argv += ["-device", f"ide-hd,bus={bus},drive={disk.name},serial={disk.serial},"
                                    f"model={qemu_opt(disk.model)},ver={qemu_opt(disk.firmware)},"
                                    f"rotation_rate={disk.rotation_rate}" + (f",wwn={disk.wwn}" if disk.wwn else "")]
                sata_port += 1
            elif disk.kind == "scsi":
                argv += ["-device", f"scsi-hd,bus=scsi0.0,drive={disk.name},serial={disk.serial},"
                                    f"vendor={qemu_opt(disk.vendor)},product={qemu_opt(disk.model)},"
                                    f"ver={qemu_opt(disk.firmware)},rotation_rate={disk.rotation_rate}"]
            elif disk.kind == "nvme":
                # 2 MiB transfers (mdts 9): above the kernel's 1280 KiB default for max_sectors_kb,
                # so a value clamped to max_hw_sectors_kb differs from what the kernel would give.
                argv += ["-device", f"nvme,drive={disk.name},serial={disk.serial},mdts=9"]
            else:
                argv += ["-device", f"virtio-blk-pci,drive={disk.name},serial={disk.serial}"]
        return argv

    def ssh_argv(self, name: str, *command: str, connect_timeout: int = 10) -> list[str]:
        port = self.meta(name).get("port")
        if port is None:
            raise LabError(f"no VM named {name} in {self.state_dir}")
        return ["ssh", *SSH_OPTIONS, "-o", f"ConnectTimeout={connect_timeout}", "-i", str(self.key),
                "-p", str(port), "root@127.0.0.1", *command]

    def wait_for_ssh(self, name: str, deadline: float) -> None:
        while time.monotonic() < deadline:
            if self.pid(name) is None:
                raise LabError(f"{name}: QEMU exited during boot")
            try:
                probe = subprocess.run(self.ssh_argv(name, "true", connect_timeout=5), stdin=subprocess.DEVNULL,
                                       capture_output=True, timeout=30, check=False)
                if probe.returncode == 0:
                    return
            except subprocess.TimeoutExpired:
                pass
            time.sleep(2)
        raise LabError(f"{name}: no SSH within {SSH_TIMEOUT} s")

    def boot(self, name: str, os_image: Path, bases: dict[str, Path], accel: str, zoo: tuple[Disk, ...],
             saved: Path | None = None) -> float:
        """Boot once and wait for SSH; returns seconds to SSH. A VM booted from saved disks keeps the
        port it had, so what connects to it (molecule's instance config) still does, and the write
        limits it was given, as a reboot keeps them."""
        vm_dir = self.vm_dir(name)
        vm_dir.mkdir(parents=True, exist_ok=True)
        disks = self.create_disks(name, os_image, bases, zoo, saved)
        port = free_port(self.meta(name).get("port") if saved else None)
        meta = {"name": name, "port": port, "accel": accel, "suite": self.suite, "variant": self.variant,
                "os_image": str(os_image), "qemu": self.qemu_argv(name, port, accel, disks, zoo),
                "disks": disks, "bases": {disk.name: str(bases[disk.base]) for disk in zoo if disk.base}}
        if "data" in bases:
            meta["data_manifest"] = str(labimage.data_manifest_path(bases["data"]))
        if saved is not None:
            meta["throttles"] = json.loads((saved / name / "throttles.json").read_text())
        (vm_dir / "vm.json").write_text(json.dumps(meta, indent=2) + "\n")
        return self.start(name)

    def start(self, name: str, write_cache: dict[str, str] | None = None) -> float:
        """Start the VM's QEMU as its metadata says, with the write limits set since it was made,
        and wait for SSH; returns seconds to SSH. ``write_cache`` ({zoo disk: "on" or "off"}) has
        those drives power up with their volatile write cache so, for this boot only."""
        meta = self.meta(name)
        self.console_log(name).write_bytes(b"")
        started = time.monotonic()
        qemu = subprocess.run(with_write_cache(meta["qemu"], write_cache or {}), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, check=False)
        if qemu.returncode != 0:
            raise LabError(f"{name}: QEMU failed to start: {qemu.stderr.strip()}")
        for disk, limits in meta.get("throttles", {}).items():
            self.throttle(name, disk, **limits)
        self.wait_for_ssh(name, started + SSH_TIMEOUT)
        return time.monotonic() - started

    def up(self, name: str, os_image: Path, bases: dict[str, Path], accel: str, zoo: tuple[Disk, ...],
           saved: Path | None = None) -> None:
        """Boot with one retry; a VM that is already up and reachable is kept, if it runs the image asked for."""
        if self.pid(name) is not None:
            running = self.meta(name)
            if (running.get("suite"), running.get("variant")) != (self.suite, self.variant):
                # Kept, it would make a run meant for one release test another.
                raise LabError(f"{name} is already up on {running.get('suite')}/{running.get('variant')}, "
                               f"not {self.suite}/{self.variant}: take it down first")
            self.wait_for_ssh(name, time.monotonic() + 60)
            log(f"{name}: already running on port {running['port']}")
            return
        failures = []
        for attempt in (1, 2):
            log(f"{name}: booting ({accel}, attempt {attempt})")
            try:
                seconds = self.boot(name, os_image, bases, accel, zoo, saved)
            except LabError as error:
                failures.append(f"{error}\n--- console tail ---\n{self.console_tail(name)}")
                self.stop(name)
                continue
            log(f"{name}: SSH up after {seconds:.0f} s on port {self.meta(name)['port']}")
            return
        raise LabError("\n\n".join(failures))

    def stop(self, name: str) -> None:
        """Stop the VM's QEMU by its own pidfile: SIGTERM, then SIGKILL."""
        pid = self.pid(name)
        if pid is None:
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.pid(name) is None:
                return
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)
        while Path(f"/proc/{pid}").exists():
            time.sleep(0.1)

    def power_off(self, name: str) -> None:
        """Shut the guest down cleanly and wait for its QEMU to exit."""
        if self.pid(name) is None:
            raise LabError(f"{name} is not running")
        subprocess.run(self.ssh_argv(name, "systemctl", "poweroff"), stdin=subprocess.DEVNULL,
                       capture_output=True, check=False)
        deadline = time.monotonic() + POWEROFF_TIMEOUT
        while self.pid(name) is not None:
            if time.monotonic() > deadline:
                raise LabError(f"{name}: still running {POWEROFF_TIMEOUT} s after poweroff\n{self.console_tail(name)}")
            time.sleep(1)

    def power_cycle(self, name: str, write_cache: dict[str, str] | None = None) -> float:
        """A clean poweroff and a cold boot through grub of the same disks, on the same port, with
        the same write limits; returns seconds to SSH. It proves what a reboot does, without
        Ansible's reboot waiting out a connection QEMU's user-mode network never closes.
        ``write_cache``: as for start, as a drive powers up with its own default whatever the host
        set before (QEMU's drives otherwise keep what the guest set across its reboot)."""
        self.power_off(name)
        return self.start(name, write_cache)

    def save(self, names: list[str], target: Path) -> None:
        """Shut the guests down cleanly (at once) and keep a copy of each one's disks and write
        limits in `target`/NAME, and of the reports the scenario's plays left on the controller
        (REPORTS_DIR) in `target`/REPORTS_DIR: the state the scenario's tests read. Written beside
        `target`, then renamed, so a target that exists is whole. Saved states beside it named alike
        up to the last dash (NAME-KEY) are removed: a new key replaces the old one."""
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(names)) as pool:
            for future in [pool.submit(self.power_off, name) for name in names]:
                future.result()
        partial = target.with_name(target.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        for name in names:
            (partial / name).mkdir()
            for disk in self.vm_dir(name).glob("*.qcow2"):
                shutil.copyfile(disk, partial / name / disk.name)
            (partial / name / "throttles.json").write_text(json.dumps(self.meta(name).get("throttles", {})) + "\n")
        if (self.state_dir / REPORTS_DIR).is_dir():
            shutil.copytree(self.state_dir / REPORTS_DIR, partial / REPORTS_DIR)
        shutil.rmtree(target, ignore_errors=True)
        partial.rename(target)
        for other in target.parent.glob(target.name.rsplit("-", 1)[0] + "-*"):
            if other != target:
                shutil.rmtree(other, ignore_errors=True)

    def restore_reports(self, saved: Path) -> None:
        """The reports a saved state kept, back where the scenario's tests read them."""
        shutil.rmtree(self.state_dir / REPORTS_DIR, ignore_errors=True)
        if (saved / REPORTS_DIR).is_dir():
            shutil.copytree(saved / REPORTS_DIR, self.state_dir / REPORTS_DIR)

    @contextlib.contextmanager
    def paused(self, name: str):
        """The VM paused: stopping makes QEMU write the image metadata it caches to the files (with
        cache=unsafe too), and a paused guest cannot write while they are read."""
        with contextlib.closing(Qmp(self.qmp_socket(name))) as qmp:
            was_running = qmp.execute("query-status")["running"]
            qmp.execute("stop")
            try:
                yield
            finally:
                if was_running:
                    qmp.execute("cont")

    def throttle(self, name: str, disk: str, writes: int | None = None, reads: int | None = None) -> None:
        """Limit a running VM's zoo disk to `writes` write and `reads` read requests a second (0:
        no limit; None: the limit set before stays), as `Disk.write_iops` does at boot."""
        meta = self.meta(name)
        limits = dict(meta.get("throttles", {}).get(disk, {"writes": 0, "reads": 0}))
        limits.update((key, value) for key, value in (("writes", writes), ("reads", reads)) if value is not None)
        with contextlib.closing(Qmp(self.qmp_socket(name))) as qmp:
            qmp.execute("block_set_io_throttle", device=disk, iops_wr=limits["writes"], iops_rd=limits["reads"],
                        **dict.fromkeys(("bps", "bps_rd", "bps_wr", "iops"), 0))
        if meta.get("throttles", {}).get(disk) != limits:  # kept for a power cycle, as a reboot keeps it
            meta.setdefault("throttles", {})[disk] = limits
            (self.vm_dir(name) / "vm.json").write_text(json.dumps(meta, indent=2) + "\n")

    def base_checks(self, name: str) -> list[dict]:
        """Per disk on a base image: the bytes written to its overlay and, only if any were,
        whether its content differs from the base. Works on a running VM (paused meanwhile)."""
        meta = self.meta(name)
        overlays = {disk: (meta["disks"][disk], base) for disk, base in meta.get("bases", {}).items()
                    if Path(meta["disks"][disk]).exists()}
        in_use = bool(overlays) and self.pid(name) is not None
        with self.paused(name) if in_use else contextlib.nullcontext():
            return [dict(vm=name, disk=disk, overlay=overlay, base=base, **base_check(overlay, base, in_use))
                    for disk, (overlay, base) in overlays.items()]

    def write_inventory(self) -> None:
        """Ansible inventory of the running VMs, group osds. JSON strings are valid YAML scalars."""
        lines = ["# Written by labctl; rewritten on every up/down.", "all:", "  children:", "    osds:",
                 "      hosts:"]
        running = [name for name in self.names() if self.pid(name) is not None]
        if not running:
            lines[-1] += " {}"
        ssh_args = " ".join(SSH_OPTIONS[:-2])
        for name in running:
            meta = self.meta(name)
            host_vars = {
                "ansible_host": "127.0.0.1",
                "ansible_port": meta["port"],
                "ansible_user": "root",
                "ansible_ssh_private_key_file": str(self.key),
                "ansible_ssh_common_args": ssh_args,
                "ansible_python_interpreter": "/usr/bin/python3",
            }
            if "data_manifest" in meta:
                host_vars["cephops_lab_data_manifest"] = meta["data_manifest"]
            lines.append(f"        {name}:")
            lines += [f"          {key}: {json.dumps(value)}" for key, value in host_vars.items()]
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.inventory.write_text("\n".join(lines) + "\n")


def base_check(overlay: str, base: str, in_use: bool) -> dict:
    """An overlay with no extent of its own holds no write; only then is the expensive
    byte-by-byte compare with its base skipped. Over a backing file every extent at depth 0 is
    the overlay's own (a zero cluster too, which hides the base's data); a blank disk has no
    backing file, and there only extents holding data were written."""
    share = ["--force-share"] if in_use else []  # QEMU holds the image's write lock
    info = json.loads(labimage.run(["qemu-img", "info", "--output=json", *share, overlay], capture=True))
    backed = "backing-filename" in info
    extents = json.loads(labimage.run(["qemu-img", "map", "--output=json", *share, overlay], capture=True))
    written = sum(extent["length"] for extent in extents if extent["depth"] == 0 and (backed or extent["data"]))
    differs = None
    if written:
        compare = subprocess.run(["qemu-img", "compare", "-q", *share, "-f", "qcow2", "-F", "qcow2", overlay, base],
                                 stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False)
        if compare.returncode not in (0, 1):
            raise LabError(f"qemu-img compare failed: {compare.stderr.strip()}")
        differs = compare.returncode == 1
    return {"written_bytes": written, "differs": differs}


def describe_check(check: dict) -> str:
    if not check["written_bytes"]:
        return "nothing written"
    content = "content differs from" if check["differs"] else "same content as"
    return f"CHANGED: {check['written_bytes']} bytes written, {content} the base image"


# --- commands ---------------------------------------------------------------
def cmd_throttle(lab: Lab, args: argparse.Namespace) -> int:
    lab.throttle(args.vm, args.disk, **{"reads" if args.reads else "writes": args.iops})
    return 0


def cmd_image(lab: Lab, _args: argparse.Namespace) -> int:
    os_image, bases = labimage.ensure_images(lab.suite, variant=lab.variant)
    for image in (os_image, *bases.values()):
        print(image)
    return 0


def cmd_up(lab: Lab, args: argparse.Namespace) -> int:
    names = list(dict.fromkeys(args.name))
    for name in names:
        if not NAME_RE.match(name):
            raise LabError(f"invalid VM name {name!r}: use lowercase letters, digits and dashes")
    zoo = blank_zoo(args.blank_disks) if args.blank_disks else ZOO + siblings(args.siblings)
    os_image, bases = labimage.ensure_images(lab.suite, tuple(sorted({disk.base for disk in zoo if disk.base})),
                                             lab.variant)
    lab.ensure_key()
    accel = "kvm" if kvm_usable(os_image) else "tcg"
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(names)) as pool:
        futures = [pool.submit(lab.up, name, os_image, bases, accel, zoo, args.saved) for name in names]
    errors = [str(f.exception()) for f in futures if f.exception() is not None]
    lab.write_inventory()
    if args.saved is not None:
        lab.restore_reports(args.saved)
    if errors:
        raise LabError("\n\n".join(errors))
    print(lab.inventory)
    return 0


def write_cache_arg(text: str) -> tuple[str, str]:
    disk, _sep, setting = text.partition("=")
    if not disk or setting not in ("on", "off"):
        raise argparse.ArgumentTypeError(f"{text!r}: DISK=on or DISK=off")
    return disk, setting


def cmd_power_cycle(lab: Lab, args: argparse.Namespace) -> int:
    names = list(dict.fromkeys(args.name))
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(names)) as pool:
        futures = {name: pool.submit(lab.power_cycle, name, dict(args.write_cache)) for name in names}
    errors = [str(f.exception()) for f in futures.values() if f.exception() is not None]
    if errors:
        raise LabError("\n\n".join(errors))
    for name, future in futures.items():
        log(f"{name}: SSH up after {future.result():.0f} s on port {lab.meta(name)['port']}")
    return 0


def cmd_save(lab: Lab, args: argparse.Namespace) -> int:
    lab.save(args.name or lab.names(), args.to)
    print(args.to)
    return 0


def cmd_down(lab: Lab, args: argparse.Namespace) -> int:
    status = 0
    for name in args.name or lab.names():
        lab.stop(name)
        checks = lab.base_checks(name)
        changed = [check for check in checks if check["written_bytes"]]
        for check in changed:
            print(f"{name}: {check['disk']} disk {describe_check(check)}", file=sys.stderr)
        if changed:
            # The overlays stay for inspection.
            status = 1
            continue
        if checks:
            print(f"{name}: stopped; nothing written to {', '.join(check['disk'] for check in checks)}")
        if not args.keep_disks:
            for disk in lab.vm_dir(name).glob("*.qcow2"):
                disk.unlink()
    lab.write_inventory()
    return status


def cmd_check_bases(lab: Lab, args: argparse.Namespace) -> int:
    names = args.name or lab.names()
    unknown = sorted(set(names) - set(lab.names()))
    if unknown:
        raise LabError(f"no VM named {', '.join(unknown)} in {lab.state_dir}")
    checks = [check for name in names for check in lab.base_checks(name)]
    if args.json:
        print(json.dumps(checks, indent=2))
    else:
        for check in checks:
            print(f"{check['vm']}: {check['disk']} disk: {describe_check(check)}")
    return 1 if any(check["written_bytes"] for check in checks) else 0


def cmd_status(lab: Lab, args: argparse.Namespace) -> int:
    # The JSON rows double as molecule's instance config (instance/address/user/port/identity_file).
    rows = []
    for name in lab.names():
        meta, pid = lab.meta(name), lab.pid(name)
        rows.append({"instance": name, "address": "127.0.0.1", "user": "root", "port": meta.get("port"),
                     "identity_file": str(lab.key), "running": pid is not None, "pid": pid,
                     "accel": meta.get("accel"), "suite": meta.get("suite"),
                     "console": str(lab.console_log(name))})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        state = f"running pid {row['pid']}" if row["running"] else "stopped"
        print(f"{row['instance']:<12} {state:<20} port {row['port']}  {row['accel']}/{row['suite']}  {row['console']}")
    print(f"inventory: {lab.inventory}")
    return 0


def cmd_ssh(lab: Lab, args: argparse.Namespace) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    argv = lab.ssh_argv(args.vm, *command)
    os.execvp(argv[0], argv)


def cmd_console(lab: Lab, args: argparse.Namespace) -> int:
    if args.vm not in lab.names():
        raise LabError(f"no VM named {args.vm} in {lab.state_dir}")
    print(lab.console_tail(args.vm, args.lines))
    return 0


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state-dir", type=Path, default=REPO_ROOT / ".lab",
                        help="directory for overlays, pidfiles, logs, key and inventory (default: %(default)s)")
    parser.add_argument("--suite", choices=labimage.SUITES, default=os.environ.get("CEPHOPS_LAB_SUITE"),
                        help="Debian release of the VMs (env CEPHOPS_LAB_SUITE; default: the variant's first, "
                             f"{labimage.DEFAULT_SUITE} for plain)")
    parser.add_argument("--variant", choices=tuple(labimage.VARIANTS),
                        default=os.environ.get("CEPHOPS_LAB_VARIANT", "plain"),
                        help="OS image variant: plain, or ceph with Ceph's daemons on Debian 13 "
                             "(env CEPHOPS_LAB_VARIANT; default: %(default)s)")
    sub = parser.add_subparsers(dest="command_name", required=True)
    sub.add_parser("image", help="build the OS image and the base images of the pre-filled disks, or reuse the "
                                 "cached ones").set_defaults(func=cmd_image)
    up = sub.add_parser("up", help="boot VMs in parallel, wait for SSH, write the inventory")
    up.add_argument("--name", action="append", required=True, help="VM name; repeat for several VMs")
    up.add_argument("--blank-disks", type=int, default=0, metavar="N",
                    help="instead of the drive zoo, give each VM N blank virtio disks (for benchmarks)")
    up.add_argument("--siblings", type=int, default=int(os.environ.get("CEPHOPS_LAB_SIBLINGS", "0")), metavar="N",
                    help="add N blank SATA SSDs of one model to the zoo, the last on another firmware (for the fleet "
                         "view; env CEPHOPS_LAB_SIBLINGS)")
    up.add_argument("--saved", type=Path, metavar="DIR",
                    help="boot copies of the disks `save` kept in DIR (each VM its own; it keeps its port and write "
                         "limits) instead of fresh ones, and put back the reports kept with them")
    up.set_defaults(func=cmd_up)
    save = sub.add_parser("save", help="shut VMs (default: all) down cleanly and keep a copy of their disks, write "
                                       "limits and the state directory's reports in a directory (for up --saved); "
                                       "saved states beside it named NAME-OTHERKEY are removed")
    save.add_argument("--name", action="append", help="only this VM; repeatable")
    save.add_argument("--to", type=Path, required=True, metavar="DIR")
    save.set_defaults(func=cmd_save)
    cycle = sub.add_parser("power-cycle", help="shut VMs down cleanly and boot them again on the same disks, port "
                                               "and write limits, in parallel, and wait for SSH")
    cycle.add_argument("--name", action="append", required=True, help="VM name; repeat for several VMs")
    cycle.add_argument("--write-cache", action="append", default=[], type=write_cache_arg, metavar="DISK=on|off",
                       help="the zoo disk powers up with its volatile write cache on or off, as a drive comes up "
                            "with its own default; repeatable")
    cycle.set_defaults(func=cmd_power_cycle)
    down = sub.add_parser("down", help="stop VMs (default: all) and check nothing was written to their pre-filled "
                                       "disks")
    down.add_argument("--name", action="append", help="only this VM; repeatable")
    down.add_argument("--keep-disks", action="store_true", help="keep the overlays for inspection")
    down.set_defaults(func=cmd_down)
    check = sub.add_parser("check-bases", help="check nothing was written to the pre-filled disks of VMs (default: "
                                               "all), running ones paused meanwhile; exit 1 if anything was")
    check.add_argument("--name", action="append", help="only this VM; repeatable")
    check.add_argument("--json", action="store_true")
    check.set_defaults(func=cmd_check_bases)
    throttle = sub.add_parser("throttle", help="limit a running VM's zoo disk to N write (or read) requests a second "
                                               "(0: no limit)")
    throttle.add_argument("vm")
    throttle.add_argument("disk", help="zoo disk name (ssd, hdd, virtio, ...)")
    throttle.add_argument("iops", type=int)
    throttle.add_argument("--reads", action="store_true", help="limit read requests instead of write requests")
    throttle.set_defaults(func=cmd_throttle)
    status = sub.add_parser("status", help="list the lab's VMs")
    status.add_argument("--json", action="store_true")
    status.set_defaults(func=cmd_status)
    ssh = sub.add_parser("ssh", help="run a command in a VM (or open a shell)")
    ssh.add_argument("vm")
    ssh.add_argument("command", nargs=argparse.REMAINDER)
    ssh.set_defaults(func=cmd_ssh)
    console = sub.add_parser("console", help="print the tail of a VM's serial console log")
    console.add_argument("vm")
    console.add_argument("--lines", type=int, default=60)
    console.set_defaults(func=cmd_console)
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    # SIGTERM unwinds like Ctrl-C so image builds unmount and detach loop devices.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    args = parse_args(argv)
    lab = Lab(args.state_dir, args.suite or labimage.VARIANTS[args.variant].suites[0], args.variant)
    try:
        return args.func(lab, args)
    except (LabError, subprocess.CalledProcessError, ValueError) as error:
        print(f"labctl: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
