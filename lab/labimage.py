"""Build and cache the lab's Debian OS image and the base images of its pre-filled disks.

Every image is keyed by a hash of everything that shapes it (suite, package
list, this file and the guest files under image/), built in a temporary
directory and renamed into place only when complete, so an interrupted build
never leaves a half-made image behind. An OS image comes in variants (VARIANTS):
``plain``, and ``ceph`` with Ceph's own daemons added. Base images come in kinds (BASE_KINDS):
``data``, a GPT partition with XFS and files, and ``random``, pseudo-random
bytes with no signature any tool recognises.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LAB_DIR = Path(__file__).resolve().parent
GUEST_TREE = LAB_DIR / "image" / "rootfs"
ESSENTIAL_HOOK = LAB_DIR / "image" / "essential-hook"

# Debian 11 (kernel 5.10, systemd 247, Python 3.9), 12 (6.1, 252, 3.11) and 13 (6.12, 257, 3.13);
# `make test` runs the lab on 12, `make lab-releases` on the other two.
SUITES = ("bookworm", "bullseye", "trixie")
DEFAULT_SUITE = "bookworm"
MIRROR = os.environ.get("CEPHOPS_LAB_MIRROR", "http://deb.debian.org/debian")
PACKAGES = (
    "dbus",
    "e2fsprogs",
    "fio",
    "gdisk",
    "grub-pc",
    "hdparm",
    "iproute2",
    "kmod",
    "linux-image-amd64",
    "lvm2",
    "nvme-cli",
    "openssh-server",
    "openssh-sftp-server",
    "parted",
    "procps",
    "python3",
    "python3-apt",
    "sdparm",
    "smartmontools",
    "sudo",
    "systemd-sysv",
    "udev",
    "util-linux",
    "xfsprogs",
)


@dataclasses.dataclass(frozen=True)
class Variant:
    """Packages on top of PACKAGES, and the suites that have them (the first is the default)."""

    packages: tuple[str, ...]
    suites: tuple[str, ...]


VARIANTS = {
    "plain": Variant((), SUITES),
    # Ceph 18.2 (Reef), the release ceph-ansible stable-8.0 deploys: Debian 13 packages it, Debian 12
    # only 16.2. The monitor and manager are there to bootstrap a cluster for the OSDs to join;
    # ceph-mgr-cephadm to see whether the cephadm orchestrator can judge the gate's spec here.
    "ceph": Variant(("ceph-common", "ceph-mgr", "ceph-mgr-cephadm", "ceph-mon", "ceph-osd", "ceph-volume"),
                    ("trixie",)),
}
OS_IMAGE_SIZE = "8G"
ROOT_LABEL = "cephops-root"
KERNEL_CONSOLE = "console=ttyS0,115200"
BOOT_UNITS_MASKED = (
    "e2scrub_reap.service",
    "nvmf-autoconnect.service",
    "systemd-networkd-wait-online.service",
)

DATA_DISK_SIZE = "10G"
DATA_LABEL = "cephops-data"
# Above ceph-volume's 5 GB minimum, so its size alone does not make a tool refuse it.
RANDOM_DISK_SIZE = 6 << 30
# Pseudo-random bytes can hold a weak signature by chance; the build refuses such a seed.
RANDOM_SEED = 1
RANDOM_CHUNK = 64 << 20


def log(message: str) -> None:
    print(f"[lab {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run(argv: list[str], *, capture: bool = False) -> str:
    """Run argv; on any interruption stop the child first so cleanup can unmount."""
    with subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE if capture else sys.stderr,
        text=True,
    ) as proc:
        try:
            out = proc.communicate()[0]
        except BaseException:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
            raise
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, argv)
    return out or ""


def cache_dir() -> Path:
    base = os.environ.get("CEPHOPS_CACHE")
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        base = str(Path(xdg) / "cephops-osd-tuning")
    return Path(base) / "lab"


def _hash_inputs(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\0")
    digest.update(Path(__file__).read_bytes())
    for path in sorted(p for p in (LAB_DIR / "image").rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(LAB_DIR)).encode())
        # Only the executable bit matters: the rest of the mode depends on the umask of the checkout.
        digest.update(b"\0x\0" if os.access(path, os.X_OK) else b"\0-\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def os_packages(variant: str) -> tuple[str, ...]:
    return PACKAGES + VARIANTS[variant].packages


def os_image_path(suite: str, variant: str = "plain") -> Path:
    name = suite if variant == "plain" else f"{suite}-{variant}"
    return cache_dir() / f"debian-{name}-{_hash_inputs('os', suite, *os_packages(variant))}.qcow2"


def base_image_path(kind: str) -> Path:
    return cache_dir() / f"{kind}-{_hash_inputs(kind)}.qcow2"


def data_manifest_path(image: Path) -> Path:
    return image.with_suffix(".manifest.json")


@contextlib.contextmanager
def _build_lock():
    """Serialise builds so parallel lab runs share one build instead of racing."""
    cache_dir().mkdir(parents=True, exist_ok=True)
    with open(cache_dir() / ".build.lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@contextlib.contextmanager
def _workdir(final: Path):
    """A scratch directory next to the final image, removed whatever happens."""
    work = Path(tempfile.mkdtemp(prefix=f".build-{final.stem}-", dir=final.parent))
    try:
        yield work
    finally:
        with _signals_held():
            shutil.rmtree(work, ignore_errors=True)


@contextlib.contextmanager
def _signals_held():
    """Hold SIGINT/SIGTERM during cleanup: an interrupted cleanup would leak loop devices or mounts."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _cleanup(argv: list[str], attempts: int = 1) -> bool:
    """Best-effort cleanup command, retried while a device settles; True on success."""
    for attempt in range(attempts):
        if attempt:
            time.sleep(1)
        if subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, check=False).returncode == 0:
            return True
    return False


@contextlib.contextmanager
def _loop_device(raw: str):
    """Attach raw with its partitions; partx because losetup -P needs udev here."""
    device = run(["losetup", "--find", "--show", str(raw)], capture=True).strip()
    try:
        run(["partx", "--add", device])
        yield device
    finally:
        with _signals_held():
            # Partitions added by partx outlive the loop device unless deleted,
            # and a just-unmounted partition can stay busy for a moment.
            _cleanup(["partx", "--delete", device], attempts=10)
            _cleanup(["losetup", "--detach", device])


@contextlib.contextmanager
def _mounted(device: str, mountpoint: Path, *options: str):
    mountpoint.mkdir(parents=True, exist_ok=True)
    run(["mount", *options, device, str(mountpoint)])
    try:
        yield mountpoint
    finally:
        with _signals_held():
            if not _cleanup(["umount", "--recursive", str(mountpoint)], attempts=10):
                # A lazy detach would leave the filesystem mounted, its journal unreplayed, while the
                # image is copied: GRUB, which reads no journal, then finds no grub.cfg.
                for pid, command in _processes_rooted_in(mountpoint):
                    log(f"{mountpoint} stays busy: stopping process {pid} ({command}) left in the chroot")
                    _cleanup(["kill", "-KILL", str(pid)])
                if not _cleanup(["umount", "--recursive", str(mountpoint)], attempts=10):
                    raise RuntimeError(f"{mountpoint} stays busy; an image copied while it is mounted is not consistent")


def _processes_rooted_in(mountpoint: Path) -> list[tuple[int, str]]:
    """The processes whose root directory or working directory is under ``mountpoint``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            places = [Path(os.readlink(proc / link)) for link in ("root", "cwd")]
            command = (proc / "comm").read_text().strip()
        except OSError:
            continue
        if any(place == mountpoint or mountpoint in place.parents for place in places):
            found.append((int(proc.name), command))
    return found


def _check_clean(device: str) -> None:
    """Refuse an ext4 filesystem left with a journal to replay: the guest's GRUB would not see it."""
    header = run(["env", "LC_ALL=C", "dumpe2fs", "-h", device], capture=True)
    if "needs_recovery" in header or not re.search(r"^Filesystem state:\s+clean$", header, re.MULTILINE):
        raise RuntimeError(f"{device} was not cleanly unmounted: its journal holds changes GRUB cannot read")


def _blkid(device: str, tag: str) -> str:
    return run(["blkid", "--probe", "--match-tag", tag, "--output", "value", device], capture=True).strip()


def _install_guest_tree(root: Path) -> None:
    """Copy image/rootfs into the guest as root-owned files with sane modes."""
    for source in sorted(GUEST_TREE.rglob("*")):
        if not source.is_file():
            continue
        target = root / source.relative_to(GUEST_TREE)
        for parent in reversed(target.relative_to(root).parents):
            directory = root / parent
            if not directory.exists():
                directory.mkdir(mode=0o755)
        target.write_bytes(source.read_bytes())
        target.chmod(0o755 if os.access(source, os.X_OK) else 0o644)


def _set_default_cmdline(root: Path) -> None:
    """Put the serial console into GRUB_CMDLINE_LINUX_DEFAULT, leaving GRUB_CMDLINE_LINUX to the roles."""
    grub_default = root / "etc/default/grub"
    text, count = re.subn(
        r'^GRUB_CMDLINE_LINUX_DEFAULT=.*$',
        f'GRUB_CMDLINE_LINUX_DEFAULT="{KERNEL_CONSOLE}"',
        grub_default.read_text(),
        flags=re.MULTILINE,
    )
    if count != 1:
        raise RuntimeError(f"{grub_default}: expected one GRUB_CMDLINE_LINUX_DEFAULT line")
    grub_default.write_text(text)


def _chroot_devices(root: Path, disk: str, uuid: str) -> None:
    """A private /dev for grub-probe: the loop nodes plus the by-uuid link udev would make."""
    dev = root / "dev"
    run(["mount", "-t", "tmpfs", "-o", "mode=0755", "cephops-dev", str(dev)])
    for name in ("null", "zero", "full", "random", "urandom", "tty"):
        st = os.stat(f"/dev/{name}")
        os.mknod(dev / name, st.st_mode, st.st_rdev)
    for node in [disk, *sorted(str(p) for p in Path("/dev").glob(Path(disk).name + "p*"))]:
        st = os.stat(node)
        os.mknod(dev / Path(node).name, st.st_mode, st.st_rdev)
    (dev / "disk/by-uuid").mkdir(parents=True)
    (dev / "disk/by-uuid" / uuid).symlink_to(f"../../{Path(disk).name}p2")


def _build_os_image(suite: str, packages: tuple[str, ...], final: Path) -> None:
    with _workdir(final) as work:
        raw = work / "root.raw"
        run(["qemu-img", "create", "-q", "-f", "raw", str(raw), OS_IMAGE_SIZE])
        # GPT with a BIOS boot partition for grub-pc's core image.
        run(["sgdisk", "--clear",
             "--new=1:2048:+1M", "--typecode=1:ef02", "--change-name=1:bios",
             "--new=2:0:0", "--typecode=2:8300", "--change-name=2:root", str(raw)])
        with _loop_device(str(raw)) as disk:
            root_part = f"{disk}p2"
            run(["mkfs.ext4", "-q", "-L", ROOT_LABEL, root_part])
            uuid = _blkid(root_part, "UUID")
            with _mounted(root_part, work / "mnt") as root:
                (root / "lost+found").rmdir()
                log(f"mmdebstrap {suite} ({len(packages)} packages)")
                run(["mmdebstrap", "--variant=required", "--mode=root",
                     "--include=" + ",".join(packages),
                     "--essential-hook=" + str(ESSENTIAL_HOOK),
                     suite, str(root), MIRROR])
                log("configuring guest")
                _chroot_devices(root, disk, uuid)
                run(["mount", "-t", "proc", "proc", str(root / "proc")])
                run(["mount", "--bind", "/sys", str(root / "sys")])
                _install_guest_tree(root)
                _set_default_cmdline(root)
                (root / "etc/fstab").write_text(f"UUID={uuid} / ext4 errors=remount-ro 0 1\n")
                (root / "etc/hostname").write_text("cephops-lab\n")
                run(["chroot", str(root), "systemctl", "enable",
                     "cephops-fw-cfg.service", "systemd-networkd.service", "ssh.service"])
                # Boot-time jobs the lab never needs; each costs seconds under TCG.
                run(["chroot", str(root), "systemctl", "mask", *BOOT_UNITS_MASKED])
                log("installing grub")
                run(["chroot", str(root), "grub-install", "--target=i386-pc", disk])
                run(["chroot", str(root), "update-grub"])
                grub_cfg = (root / "boot/grub/grub.cfg").read_text()
                if f"root=UUID={uuid}" not in grub_cfg:
                    raise RuntimeError("grub.cfg does not find the root filesystem by UUID")
            _check_clean(root_part)
        log("converting to qcow2")
        image = work / "root.qcow2"
        run(["qemu-img", "convert", "-f", "raw", "-O", "qcow2", str(raw), str(image)])
        image.rename(final)


def _pseudo_random(seed: str, size: int) -> bytes:
    blocks, block = [], hashlib.sha256(seed.encode()).digest()
    while len(blocks) * len(block) < size:
        block = hashlib.sha256(block).digest()
        blocks.append(block)
    return b"".join(blocks)[:size]


def _data_files() -> dict[str, bytes]:
    """What the data disk holds; deterministic, so the manifest is reproducible."""
    return {
        "README.txt": b"Pre-existing data. The cephops.osd_tuning collection must never write here.\n",
        "meta/osd-superblock.json": b'{"fsid": "00000000-0000-4000-8000-000000000001", "whoami": 0}\n',
        "objects/0001.bin": _pseudo_random("objects/0001.bin", 1 << 20),
        "objects/0002.bin": _pseudo_random("objects/0002.bin", 4 << 20),
    }


def _build_data_image(final: Path) -> None:
    with _workdir(final) as work:
        raw = work / "data.raw"
        run(["qemu-img", "create", "-q", "-f", "raw", str(raw), DATA_DISK_SIZE])
        run(["sgdisk", "--clear", "--new=1:2048:0", "--typecode=1:8300", "--change-name=1:data", str(raw)])
        manifest = {"label": DATA_LABEL, "files": {}}
        with _loop_device(str(raw)) as disk:
            run(["mkfs.xfs", "-q", "-L", DATA_LABEL, f"{disk}p1"])
            manifest["uuid"] = _blkid(f"{disk}p1", "UUID")
            with _mounted(f"{disk}p1", work / "mnt") as mnt:
                for path, content in _data_files().items():
                    (mnt / path).parent.mkdir(parents=True, exist_ok=True)
                    (mnt / path).write_bytes(content)
                    manifest["files"][path] = hashlib.sha256(content).hexdigest()
        image = work / "data.qcow2"
        run(["qemu-img", "convert", "-f", "raw", "-O", "qcow2", str(raw), str(image)])
        data_manifest_path(final).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        # The image appears last: its presence marks a complete build.
        image.rename(final)


def _signatures(path: Path) -> list[str]:
    """What wipefs and blkid recognise on an image file: filesystems, RAID, LVM, partition tables."""
    listed = run(["wipefs", "--no-act", "--noheadings", "--output", "TYPE,OFFSET", str(path)], capture=True)
    found = [f"wipefs: {' '.join(line.split())}" for line in listed.splitlines() if line.strip()]
    blkid = subprocess.run(["blkid", "--probe", str(path)], stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, check=False)
    if blkid.returncode == 0:
        found.append(f"blkid: {blkid.stdout.strip()}")
    elif blkid.returncode != 2:  # 2: nothing found
        raise RuntimeError(f"blkid --probe {path} failed: {blkid.stderr.strip()}")
    return found


def _build_random_image(final: Path) -> None:
    with _workdir(final) as work:
        raw = work / "random.raw"
        generator = random.Random(RANDOM_SEED)
        with raw.open("wb") as out:
            for offset in range(0, RANDOM_DISK_SIZE, RANDOM_CHUNK):
                out.write(generator.randbytes(min(RANDOM_CHUNK, RANDOM_DISK_SIZE - offset)))
        found = _signatures(raw)
        if found:
            raise RuntimeError(f"the random disk of seed {RANDOM_SEED} holds a signature by chance "
                               f"({'; '.join(found)}): change RANDOM_SEED in {Path(__file__).name}")
        image = work / "random.qcow2"
        run(["qemu-img", "convert", "-f", "raw", "-O", "qcow2", str(raw), str(image)])
        image.rename(final)


BASE_KINDS = {"data": _build_data_image, "random": _build_random_image}


def ensure_images(suite: str, kinds: tuple[str, ...] = tuple(BASE_KINDS),
                  variant: str = "plain") -> tuple[Path, dict[str, Path]]:
    """Return (os_image, {kind: base image}), building whichever is not cached yet."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown image variant {variant!r}; choose from {', '.join(VARIANTS)}")
    if suite not in VARIANTS[variant].suites:
        raise ValueError(f"no {variant} image of {suite!r}; choose from {', '.join(VARIANTS[variant].suites)}")
    os_image, bases = os_image_path(suite, variant), {kind: base_image_path(kind) for kind in kinds}
    with _build_lock():
        if os_image.exists():
            log(f"OS image cached: {os_image}")
        else:
            started = time.monotonic()
            log(f"building OS image {os_image}")
            _build_os_image(suite, os_packages(variant), os_image)
            log(f"OS image built in {time.monotonic() - started:.0f} s")
        for kind, image in bases.items():
            if image.exists():
                log(f"{kind} disk cached: {image}")
                continue
            started = time.monotonic()
            log(f"building {kind} disk {image}")
            BASE_KINDS[kind](image)
            log(f"{kind} disk built in {time.monotonic() - started:.0f} s")
    return os_image, bases
