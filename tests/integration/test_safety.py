"""Safety suite: every module that writes, against bad input, missing tools, odd files and
interruptions, with proof that no data changed.

Each case names a module, what it meets, and what must happen (a refusal with its reason, the
documented fallback, the cleanup); the disks the case touches are checksummed before and
after. The run ends with a summary (cases, cases with the expected outcome, disks whose data
changed), printed by conftest."""

import concurrent.futures
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from ansible_collections.cephops.osd_tuning.plugins.module_utils import blankness, probe_region
from ansible_collections.cephops.osd_tuning.plugins.module_utils.fio_job import ALLOWED_OPTIONS

from conftest import SAFETY_LOG, FioWatch, fio_pids, fio_started, hide_binaries, parent_of, replace_binary, stopped_mid_fio
from loopdisk import GIB, attach, detach, run
from modulerun import ansible_module, ansible_module_cases
from test_disk_facts import (HIDDEN_DATA, MIB, NON_BLANK, WIPED_TABLES, make_data_mid_disk, make_gpt_partitions, make_xfs,
                             write_random, writers_reasons)
from test_disk_gate import Gate
from test_mount_options import Host, Role as MountRole, mountinfo, uuid_of
from test_overprovision import Role
from test_sync_write_probe import REGION, by_device, fio_known_options, probe

EASY = dict(min_iops=2, marginal_min_iops=1, max_p99_sync_latency_ms=10000.0, marginal_max_p99_sync_latency_ms=20000.0)


# Disks that libblkid calls blank at their start: data with no signature at several offsets,
# and wiped tables whose partitions are live.
HIDDEN_KINDS = HIDDEN_DATA + WIPED_TABLES


class Zoo:
    """The disks of the suite: blank, partitioned, each non-blank kind and each kind whose
    content only the content checks find."""

    def __init__(self, loop_disks, tmp_path):
        self.blank = loop_disks()
        self.parted = loop_disks()
        make_gpt_partitions(self.parted)
        self.kinds = {}
        for kind, prepare, reasons in NON_BLANK + HIDDEN_KINDS:
            disk = loop_disks()
            prepare(disk)
            self.kinds[kind] = (disk, reasons)
        self.partition = "/dev/%sp1" % self.parted.name
        self.partition_link = tmp_path / "by-id-link-to-a-partition"
        self.partition_link.symlink_to(self.partition)

    def disks(self):
        return [self.blank, self.parted] + [disk for disk, _reasons in self.kinds.values()]


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("safety")
    created = []

    def new_disk(size_gib=8):
        disk = attach(tmp / ("disk%d.img" % len(created)), size_gib)
        created.append(disk)
        return disk

    try:  # a preparation that fails must not leave the disks made before it attached
        yield Zoo(new_disk, tmp)
    finally:
        for disk in reversed(created):
            detach(disk)


def check_case(disks, case, module, judge, expected, act):
    """One case of the suite: checksum ``disks``, ``act()``, judge what it returned, checksum
    again, and log the case for the summary."""
    before = checksums(disks)
    shown = judge(act())
    log_case(case, module, shown, expected, changed_disks(disks, before))


def checksums(disks):
    return dict((disk.name, disk.checksum()) for disk in disks)


def changed_disks(disks, before):
    return [disk.name for disk in disks if disk.checksum() != before[disk.name]]


def log_case(case, module, shown, expected, changed):
    """Log a case for the summary; it holds when ``shown`` holds ``expected`` and no disk changed."""
    SAFETY_LOG.append(dict(case=case, module=module, shown=shown, expected=expected in shown, changed=changed))
    assert expected in shown, shown
    assert changed == []


def failure(result):
    assert result.get("failed") is True, result
    return result["msg"]


def refusal(result):
    """The probe refuses per disk (others are still probed): the reasons of the first result."""
    found = result["results"][0]
    assert found["verdict"] == "refused", found
    return "; ".join(found["reasons"])


def fallback(result):
    """What the probe says it did on a disk it wrote to: method, verdict and cleanup."""
    assert not result.get("failed"), result.get("msg")
    found = result["results"][0]
    cleanup = "zeroed" if found["zeroed"] else "not zeroed"
    return "method %s, verdict %s, region %s" % (found["method"], found["verdict"], cleanup)


SHELL = "/dev/loop0; touch /tmp/cephops-pwned"


def overprovision(device, **args):
    """Arguments of overprovision_partition and nvme_namespace for one disk. A refusal never
    writes the record, so /dev/null stands for it."""
    return dict(dict(disks=[dict(device=device)], erase=True, record=os.devnull), **args)


CASES = [
    # (case, module, args from the zoo, judge, text the refusal must hold)
    ("nonexistent device", "disk_facts", lambda z: dict(devices=["/dev/cephops-none"]), failure, "no such device"),
    ("nonexistent device", "block_queue", lambda z: dict(devices=["/dev/cephops-none"], attributes={"scheduler": "none"}),
     failure, "no such device"),
    ("nonexistent device", "sync_write_probe", lambda z: dict(devices=["/dev/cephops-none"], runtime=1, **EASY),
     refusal, "no such device"),
    ("nonexistent device", "ata_hpa", lambda z: dict(disks=[dict(device="/dev/cephops-none", reserve_percent=10)], erase=True),
     failure, "no such device"),
    ("nonexistent device", "seq_read_probe", lambda z: dict(devices=["/dev/cephops-none"]), failure, "no such device"),
    ("partition instead of disk", "sync_write_probe", lambda z: dict(devices=[z.partition], runtime=1, **EASY),
     refusal, "is a partition"),
    ("partition instead of disk", "block_queue", lambda z: dict(devices=[z.partition], attributes={"scheduler": "none"}),
     failure, "is a partition"),
    ("partition instead of disk", "ata_hpa", lambda z: dict(disks=[dict(device=z.partition, reserve_percent=10)], erase=True),
     failure, "is a partition"),
    ("nonexistent device", "overprovision_partition", lambda z: overprovision("/dev/cephops-none"), failure,
     "no such device"),
    ("partition instead of disk", "overprovision_partition", lambda z: overprovision(z.partition), failure,
     "is a partition"),
    ("by-id link to a partition", "nvme_namespace", lambda z: overprovision(str(z.partition_link)), failure,
     "is a partition"),
    ("huge reserve", "overprovision_partition", lambda z: overprovision(z.blank.path, reserve_percent=90.0), failure,
     "reserve_percent 90.0 is outside 1-50; nothing was read or written"),
    ("not an NVMe namespace", "nvme_namespace", lambda z: overprovision(z.blank.path), failure,
     "not an NVMe namespace (transport loop); refused, nvme was not run"),
    ("by-id link to a partition", "sync_write_probe", lambda z: dict(devices=[str(z.partition_link)], runtime=1, **EASY),
     refusal, "is a partition"),
    ("by-id link to a partition", "mkfs_check", lambda z: dict(
        fstab=os.devnull, filesystems=[dict(device=str(z.partition_link), mountpoint="/mnt/x")]),
     failure, "is a partition"),
    ("shell metacharacters", "disk_facts", lambda z: dict(devices=[SHELL]), failure, "no such device"),
    ("shell metacharacters", "sync_write_probe", lambda z: dict(devices=[SHELL], runtime=1, **EASY),
     refusal, "no such device"),
    ("scheduler the kernel lacks", "block_queue", lambda z: dict(devices=[z.blank.path], attributes={"scheduler": "cfq"}),
     failure, "is not available; choices"),
    ("negative number", "block_queue", lambda z: dict(devices=[z.blank.path], attributes={"read_ahead_kb": -1}),
     failure, "is negative"),
    ("zero", "block_queue", lambda z: dict(devices=[z.blank.path], attributes={"max_sectors_kb": 0}),
     failure, "below the page size"),
    ("huge number", "block_queue", lambda z: dict(devices=[z.blank.path], attributes={"max_sectors_kb": 10 ** 12}),
     failure, "above max_hw_sectors_kb"),
    ("zero runtime", "sync_write_probe", lambda z: dict(devices=[z.blank.path], runtime=0, **EASY),
     failure, "runtime must be at least 1"),
    ("negative runtime", "seq_read_probe", lambda z: dict(devices=[z.blank.path], runtime=-5),
     failure, "runtime must be at least 1"),
    ("huge reserve", "ata_hpa", lambda z: dict(disks=[dict(device=z.blank.path, reserve_percent=1000)], erase=True),
     failure, "reserve_percent 1000.0 is outside 0-90; nothing was read or written"),
    ("not an ATA disk", "ata_hpa", lambda z: dict(disks=[dict(device=z.blank.path, reserve_percent=10)], erase=True),
     failure, "ATA"),
    ("udev rule injection", "udev_queue_rules", lambda z: dict(
        path=os.devnull + ".rules", reload=False,
        rules=[dict(match={"ENV{ID_MODEL}": 'x", RUN+="/bin/sh'}, attributes={"scheduler": "none"})]),
     failure, "holds a quote"),
    ("kernel argument with a space", "kernel_cmdline", lambda z: dict(present={"elevator": "a b"}, update=False),
     failure, "not a kernel argument name or value"),
    ("fio option abbreviation", "sync_write_probe", lambda z: dict(
        devices=[z.blank.path], runtime=1, fio_options={"fileoff": 0}, **EASY),
     failure, "fileoff: fio has no option or alias of exactly this name (abbreviations are refused"),
    ("mkfs -n size=64k", "mkfs_check", lambda z: dict(
        fstab=os.devnull, filesystems=[dict(device=z.blank.path, mountpoint="/mnt/x",
                                            mkfs_options=["-f", "-n", "size=64k"])]),
     failure, "refused mkfs.xfs option"),
]
for _kind, _prepare, _reasons in NON_BLANK + HIDDEN_KINDS:
    CASES += [
        (_kind, "sync_write_probe", lambda z, k=_kind: dict(devices=[z.kinds[k][0].path], runtime=1, **EASY),
         refusal, _reasons[0]),
        (_kind, "ata_hpa", lambda z, k=_kind: dict(disks=[dict(device=z.kinds[k][0].path, reserve_percent=10)], erase=True),
         failure, writers_reasons(_kind, _reasons)[0]),
        (_kind, "mkfs_check", lambda z, k=_kind: dict(
            fstab=os.devnull, filesystems=[dict(device=z.kinds[k][0].path, mountpoint="/mnt/x")]),
         failure, writers_reasons(_kind, _reasons)[0]),
        (_kind, "overprovision_partition", lambda z, k=_kind: overprovision(z.kinds[k][0].path), failure,
         "refused, the disk is not blank: " + writers_reasons(_kind, _reasons)[0]),
    ]

# overwrite_data lifts the content checks' reasons alone; a signature still refuses.
CASES += [
    ("overwrite_data on a filesystem", "mkfs_check", lambda z: dict(
        fstab=os.devnull, filesystems=[dict(device=z.kinds["xfs_no_partition_table"][0].path,
                                            mountpoint="/mnt/x", overwrite_data=True)]),
     failure, "not blank: Has a FileSystem"),
    ("overwrite_data on a GPT", "overprovision_partition", lambda z: overprovision(
        z.kinds["gpt_with_partitions"][0].path, disks=[dict(device=z.kinds["gpt_with_partitions"][0].path,
                                                            overwrite_data=True)]),
     failure, "not blank: Has GPT headers, Has partitions"),
    ("overwrite_data on a GPT", "ata_hpa", lambda z: dict(disks=[dict(device=z.kinds["gpt_with_partitions"][0].path,
                                                                      reserve_percent=10, overwrite_data=True)],
                                                          erase=True),
     failure, "not blank: Has GPT headers, Has partitions"),
]


class Batches:
    """The results of CASES, run on first use in one playbook per module (a task a case), with the
    zoo disks whose content changed over that playbook: every disk of the zoo is checksummed
    before and after each module's cases, so a byte changed by any case fails every case of its
    module."""

    def __init__(self, zoo):
        self.zoo = zoo
        self.done = {}

    def result(self, number):
        module = CASES[number][1]
        if module not in self.done:
            numbers = [n for n, case in enumerate(CASES) if case[1] == module]
            disks = self.zoo.disks()
            before = checksums(disks)
            results = ansible_module_cases(module, [CASES[n][2](self.zoo) for n in numbers])
            self.done[module] = (dict(zip(numbers, results)), changed_disks(disks, before))
        results, changed = self.done[module]
        return results[number], changed


@pytest.fixture(scope="module")
def batches(zoo):
    return Batches(zoo)


@pytest.mark.parametrize("number", range(len(CASES)),
                         ids=["%s-%s" % (case[1], case[0].replace(" ", "_")) for case in CASES])
def test_bad_input_is_refused_and_no_byte_changes(batches, number):
    case, module, _args, judge, expected = CASES[number]
    result, changed = batches.result(number)
    log_case(case, module, judge(result), expected, changed)
    assert not os.path.exists("/tmp/cephops-pwned")


def role_failures(outcome):
    stats, failures = outcome
    assert failures, "the role did not refuse"
    return "; ".join(failures)


@pytest.mark.parametrize("kind,reasons", [(k, r) for k, _p, r in HIDDEN_KINDS], ids=[k[0] for k in HIDDEN_KINDS])
def test_overprovision_refuses_content_the_inventory_finds(zoo, tmp_path, kind, reasons):
    role = Role(tmp_path)
    disk = zoo.kinds[kind][0]
    check_case(zoo.disks(), kind, "overprovision (role)", role_failures,
               "%s: refused, the disk is not blank: %s" % (disk.path, ", ".join(writers_reasons(kind, reasons))),
               lambda: role.play([{"device": disk.path, "method": "partition"}]))


def test_overwrite_data_lets_mkfs_destroy_data_without_a_signature(loop_disks, mount_ns, tmp_path):
    """The one case here that changes data, by design: the entry says the disk's data may be
    destroyed. Not a case of the summary, whose count of changed disks must stay 0."""
    host = Host(loop_disks, mount_ns, tmp_path)
    host.write_fstab("")
    disk = loop_disks()
    make_data_mid_disk(disk)
    before = disk.checksum()
    target = str(tmp_path / "osd-reused")
    made = MountRole(host).play([dict(device=disk.path, mountpoint=target, overwrite_data=True)])
    assert made.failures == []
    assert "Make the new XFS filesystems" in made.changed
    assert any("overwrite_data is set, mkfs.xfs destroys what the content checks found: Has data without a "
               "signature" in w for w in made.warnings)
    assert disk.checksum() != before
    assert mountinfo(mount_ns)[target] == "rw,noatime"


# A tool the module needs is really missing: hidden in a private mount namespace.
MISSING_TOOLS = [
    # (case, module, args from the zoo, programs hidden, judge, text the result must hold)
    # The documented fallback: method auto probes with dd when fio is not installed.
    ("missing fio", "sync_write_probe", lambda z: dict(devices=[z.blank.path], runtime=1, **EASY), ["fio"],
     fallback, "method dd, verdict suitable, region zeroed"),
    ("missing fio, fio_options given", "sync_write_probe", lambda z: dict(
        devices=[z.blank.path], runtime=1, fio_options={"bs": "8k"}, **EASY), ["fio"],
     failure, "fio_options refused: fio is not installed, so the probe writes with dd, which takes no fio options (bs)"),
    ("missing hdparm", "ata_hpa", lambda z: dict(disks=[dict(device=z.blank.path, reserve_percent=10)], erase=True), ["hdparm"],
     failure, 'Failed to find required executable "hdparm"'),
]


@pytest.mark.parametrize("case,module,args,hidden,judge,expected", MISSING_TOOLS,
                         ids=["%s-%s" % (case[1], case[0].replace(" ", "_")) for case in MISSING_TOOLS])
def test_missing_tool_is_handled_as_documented_and_no_byte_changes(
        zoo, mount_ns, case, module, args, hidden, judge, expected):
    hide_binaries(mount_ns, hidden)
    check_case(zoo.disks(), case, module, judge, expected, lambda: ansible_module(module, args(zoo), prefix=mount_ns))


def test_mounted_and_read_only_disks_are_refused_by_the_probe(loop_disks, mount_ns, tmp_path):
    mounted, read_only = loop_disks(), loop_disks()
    make_xfs(mounted)
    (tmp_path / "mnt").mkdir()
    run(mount_ns + ["mount", mounted.path, str(tmp_path / "mnt")])
    run(["blockdev", "--setro", read_only.path])
    try:
        before = (mounted.checksum(), read_only.checksum())
        result = ansible_module("sync_write_probe", dict(devices=[mounted.path, read_only.path], runtime=1, **EASY),
                                prefix=mount_ns)
    finally:
        run(["blockdev", "--setrw", read_only.path])
    verdicts = dict((r["device"], (r["verdict"], r["reasons"])) for r in result["results"])
    for disk, reason in ((mounted, "mounted"), (read_only, "read-only")):
        verdict, reasons = verdicts[disk.path]
        SAFETY_LOG.append(dict(case=reason + " disk", module="sync_write_probe", shown="; ".join(reasons),
                               expected=verdict == "refused" and reason in reasons, changed=[]))
        assert verdict == "refused" and reason in reasons
    assert (mounted.checksum(), read_only.checksum()) == before


# Options per module call: a few calls cover every name, each message must name all of its batch.
FIO_OPTION_BATCH = 60


def test_every_fio_option_and_alias_the_probe_does_not_allow_is_refused(loop_disks):
    """Family "every fio alias": every option name and alias the installed fio knows whose
    option is not on the allow-list, each refused by name (an alias with the option it stands
    for) while nothing runs: no fio writes to the disk, and a marker in the probe region, which
    a probe's zeroing would erase, stays."""
    disk = loop_disks()
    disk.write(REGION[0], b"\xa5" * 4096)
    known = fio_known_options()
    refused = sorted(key for key, option in known.items() if option not in ALLOWED_OPTIONS)
    assert len(refused) > 100, refused
    logged = []
    for start in range(0, len(refused), FIO_OPTION_BATCH):
        batch = refused[start:start + FIO_OPTION_BATCH]
        before = disk.checksum()
        with FioWatch(disk.path) as watch:
            result = ansible_module("sync_write_probe", dict(
                devices=[disk.path], runtime=1, fio_options=dict((key, "0") for key in batch), **EASY))
        changed = [disk.name] if disk.checksum() != before else []
        message = result.get("msg", "") if result.get("failed") else ""
        for key in batch:
            wanted = "%s: not allowed" % key if known[key] == key else \
                "%s: alias of %s, which is not allowed" % (key, known[key])
            # The part of this call's message about this option, as the module worded it.
            shown = next((part for part in re.split(r"(?:\. |; )", message) if part.startswith(key + ": ")),
                         "not named in: " + (message or "the probe ran (%s)" % result.get("results")))
            case = dict(case="every fio alias: " + key, module="sync_write_probe", shown=shown,
                        expected=shown == wanted and not watch.pids, changed=changed)
            SAFETY_LOG.append(case)
            logged.append(case)
        assert not watch.pids, "fio wrote to the disk"
    assert [c["shown"] for c in logged if not c["expected"]] == []
    assert [c for c in logged if c["changed"]] == []


def root_disk():
    """The whole disk that holds / on this host."""
    source = run(["findmnt", "--noheadings", "--output", "SOURCE", "/"]).stdout.strip()
    parent = run(["lsblk", "--noheadings", "--nodeps", "--output", "PKNAME", source]).stdout.strip()
    return "/dev/" + parent if parent else source


ROOT_DISK_CASES = [
    ("sync_write_probe", lambda root: dict(devices=[root], runtime=1, **EASY), refusal),
    ("ata_hpa", lambda root: dict(disks=[dict(device=root, reserve_percent=10)], erase=True), failure),
    ("overprovision_partition", overprovision, failure),
    ("nvme_namespace", overprovision, failure),
    ("mkfs_check", lambda root: dict(fstab=os.devnull, filesystems=[dict(device=root, mountpoint="/mnt/x")]), failure),
]


# Programs that change a disk through ioctls on a descriptor opened read-only, which the
# open flags alone would not show.
IOCTL_WRITERS = ("hdparm", "nvme", "sg_format", "sg_sanitize")


def root_disk_touches(trace, root):
    """What the traced run did to the disk ``root`` or a partition of it: every open for
    writing and every start of an ioctl writer naming it, from strace's lines."""
    name = os.path.basename(root)
    nodes = set([root] + ["/dev/" + part for part in os.listdir("/sys/block/" + name) if part.startswith(name)])
    touches = []
    for line in trace.splitlines():
        opened = re.search(r'open(?:at)?\((?:AT_FDCWD, )?"(/dev/[^"]+)", ([A-Z_|]+)', line)
        if opened and os.path.realpath(opened.group(1)) in nodes and re.search(r"O_WRONLY|O_RDWR", opened.group(2)):
            touches.append(line)
        started = re.search(r'execve\("([^"]+)", \[(.*?)\]', line)
        if started and os.path.basename(started.group(1)) in IOCTL_WRITERS and any(
                os.path.realpath(arg) in nodes for arg in re.findall(r'"(/dev/[^"]+)"', started.group(2))):
            touches.append(line)
    return touches


@pytest.mark.parametrize("module,args,judge", ROOT_DISK_CASES, ids=[case[0] for case in ROOT_DISK_CASES])
def test_the_root_disk_is_refused(tmp_path, module, args, judge):
    """In check mode, which runs every refusal check: a regression shows as a wrong answer here,
    never as writes to this machine's own root disk. The lab refuses it for real. The case
    touches the root disk alone, which no checksum can follow while the host runs: strace
    follows the module instead, and no open of the disk for writing, nor an ioctl writer
    started on it, may appear."""
    root, trace = root_disk(), tmp_path / "strace.log"
    strace = ["strace", "--follow-forks", "--seccomp-bpf", "--quiet=all", "--trace=open,openat,execve",
              "--string-limit=256", "--output", str(trace), "--"]
    result = ansible_module(module, args(root), check=True, prefix=strace)
    assert root_disk_touches(trace.read_text(), root) == []
    log_case("the root disk (check mode)", module, judge(result), "root disk", [])


def probe_error(found):
    assert (found["verdict"], found["zeroed"]) == ("error", True), found
    return "; ".join(found["reasons"])


def probe_stopped(disk, stop):
    """The probe's result on ``disk`` when ``stop(fio's pids)`` runs a second into fio's writes."""
    def stop_while_writing(pids):
        time.sleep(1)  # let it write into the region first
        stop(pids)

    outcome = stopped_mid_fio(lambda: probe([disk], runtime=30, **EASY), disk.path, stop_while_writing, 90)
    return by_device(outcome)[disk.path]


def terminate(pids):
    for pid in pids:
        os.kill(pid, signal.SIGTERM)


def test_fio_killed_mid_run_gives_error_and_zeroes_the_region(loop_disks):
    disk = loop_disks()
    check_case([disk], "fio killed mid-run", "sync_write_probe", probe_error, "fio exited with rc=",
               lambda: probe_stopped(disk, terminate))


def test_the_probe_terminated_mid_run_stops_fio_and_zeroes_the_region(loop_disks):
    """SIGTERM to the module itself (what a stopped run or a service manager sends): its
    cleanup must still run, fio must not outlive it, and the region must be zero again."""
    disk = loop_disks()
    check_case([disk], "module terminated mid-run", "sync_write_probe", probe_error, "interrupted by signal 15",
               lambda: probe_stopped(disk, lambda pids: terminate([parent_of(pids[0])])))


def changed_lines(before, after):
    """Numbers of the lines that differ between two files, compared line by line as bytes."""
    before, after = before.splitlines(True), after.splitlines(True)
    assert len(before) == len(after), (before, after)
    return [number for number, (old, new) in enumerate(zip(before, after), 1) if old != new]


def test_fstab_with_odd_but_valid_lines_changes_only_the_managed_options(loop_disks, mount_ns, tmp_path):
    host = Host(loop_disks, mount_ns, tmp_path)
    disk, target = host.filesystem("xfs", "osd a")
    managed = "UUID=%s \t%s\txfs   defaults,nofail   0 2   # OSD data, not yet noatime\n" % (
        uuid_of(disk.path), target.replace(" ", "\\040"))
    lines = [
        "# /etc/fstab: static file system information.\n",
        "#\n",
        "# <file system>\t<mount point>\t<type>\t<options>\t<dump>\t<pass>\n",
        "\n",
        " \t \n",
        "   # an indented comment\n",
        "UUID=0a1b2c3d-1111-2222-3333-444455556666 /               ext4    errors=remount-ro 0       1\n",
        "LABEL=boot\t/boot\text4\tdefaults\t0\t2\n",
        "PARTUUID=5e6f7a8b-01  /boot/efi  vfat  umask=0077  0  1   # the ESP\n",
        "/dev/mapper/vg-swap none swap sw 0 0\n",
        "\n",
        managed,
        "/srv/export\t/srv/nfs\\040share  none  bind  0  0\n",
        "/srv/a   /srv/b   none   bind,nofail\n",
        "tmpfs /run/odd tmpfs defaults\n",
        "none  /proc/sys/fs/binfmt_misc  binfmt_misc  defaults  0  0\n",
        "/dev/sr0 /media/cd\\040rom iso9660 ro,user,noauto 0 0  # trailing comment\n",
    ]
    old = host.write_fstab("".join(lines))
    number = lines.index(managed) + 1

    def edit():
        # Flushed first and last, so the checksums see what XFS holds in memory too.
        run(mount_ns + ["sync", "--file-system", target])
        result = host.module()
        run(mount_ns + ["sync", "--file-system", target])
        return result

    def judge(result):
        assert not result.get("failed"), result.get("msg")
        return "fstab lines changed: %s" % changed_lines(old, host.fstab.read_bytes())

    check_case([disk], "fstab with odd but valid lines", "mount_options", judge, "fstab lines changed: [%d]" % number,
               edit)
    assert host.fstab.read_text().splitlines(True)[number - 1] == managed.replace(
        "defaults,nofail", "nofail,noatime")
    assert mountinfo(mount_ns)[target] == "rw,noatime"


PROBE_SECONDS = 10


def test_interrupted_playbook_leaves_the_probe_to_finish_and_clean_up(loop_disks, tmp_path):
    disks = [loop_disks(), loop_disks()]
    gate = Gate(tmp_path)

    def interrupt():
        with open(str(tmp_path / "interrupted.log"), "w") as log:
            # Its own process group, which gets SIGINT as a whole, as Ctrl-C sends it.
            play = subprocess.Popen(stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                    # The full-length probe: an adaptive one of these disks ends in 2 s.
                                    **gate.command(disks, disk_gate_runtime=PROBE_SECONDS, disk_gate_adaptive=False))
            try:
                assert fio_started(disks[0].path, lambda: play.poll() is None), \
                    "fio never started: %s" % (tmp_path / "interrupted.log").read_text()
                os.killpg(play.pid, signal.SIGINT)
                rc = play.wait(60)
            finally:
                if play.poll() is None:
                    os.killpg(play.pid, signal.SIGKILL)
                    play.wait()
        # The role probes in an async job, a session of its own that the interrupt does not
        # reach: the probe runs to its end, its deep-queue run after it, and then zeroes its region
        # (a minute of slack: with a lab VM beside the run, 30 s did not always cover the last two).
        deadline = time.monotonic() + PROBE_SECONDS + 60
        while any(fio_pids(d.path) for d in disks) and time.monotonic() < deadline:
            time.sleep(0.5)
        left = [pid for d in disks for pid in fio_pids(d.path)]
        return rc, left, async_result(gate.async_dir, deadline + 60)

    def judge(outcome):
        rc, left, job = outcome
        assert rc != 0, "the interrupted playbook exited 0"
        assert left == [], "fio still running %d s after the interrupt" % (PROBE_SECONDS + 30)
        return "playbook rc %d, no fio left, the async job ended by itself: %s" % (rc, "; ".join(
            "%s %s, %s" % (r["device"], r["verdict"], "zeroed" if r["zeroed"] else "not zeroed")
            for r in job["results"]))

    check_case(disks, "interrupt during a probe", "disk_gate (role)", judge,
               "; ".join("%s suitable, zeroed" % d.path for d in disks), interrupt)
    blank = [d.checksum() for d in disks]
    again = gate.play(disks, disk_gate_runtime=PROBE_SECONDS)
    assert again.rc == 0, again.failures
    assert [again.disk(d.path)["verdict"] for d in disks] == ["suitable", "suitable"]
    assert [d.checksum() for d in disks] == blank


def async_result(async_dir, deadline):
    """The result the one async job in ``async_dir`` wrote once its module ended."""
    while True:
        jobs = [name for name in os.listdir(str(async_dir)) if not name.endswith(".tmp")]
        assert len(jobs) == 1, jobs
        with open(str(async_dir / jobs[0])) as handle:
            job = json.load(handle)
        # async_wrapper writes finished false at the start and the module's own result at the end.
        if job.get("finished", True):
            return job
        assert time.monotonic() < deadline, "the async job did not end: %s" % job
        time.sleep(0.5)


JOURNAL_DIR = "/var/lib/cephops-osd-tuning/probe-journal"  # sync_write_probe's default, which the role keeps


# Async timeouts tried in turn until the kill lands after the probe's first write: on a loaded
# host the steps before it (inventory, region check, journal) can outlast the shorter ones.
KILL_AFTER = (6, 12, 24)


def test_a_probe_killed_by_the_async_timeout_is_restored_by_the_next_gate(loop_disks, tmp_path):
    """Ansible kills an overdue async job with SIGKILL, which no cleanup survives: the journal
    record written before the first write lets the next run of the gate zero the region."""
    disk = loop_disks()
    gate = Gate(tmp_path)
    journal = probe_region.Journal(JOURNAL_DIR)

    def records():
        return [record for record in journal.records() if record["device"] == disk.path]

    def kill_then_gate_again():
        for timeout in KILL_AFTER:
            before = disk.checksum()
            # A 60 s probe, full length: an adaptive one would end before the kill.
            killed = gate.play([disk], disk_gate_runtime=60, disk_gate_adaptive=False, disk_gate_async_timeout=timeout,
                               disk_gate_policy="warn")
            found = killed.disk(disk.path)
            assert found["verdict"] == "error", found
            # SIGKILL ends a process only once its I/O in flight completes, which a loaded host delays.
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and (fio_pids(disk.path) or any(
                    probe_region.owner_alive(record) for record in records())):
                time.sleep(0.5)
            if records():
                break
            # Killed before the journal, so before any write: the disk must be as it was.
            assert disk.checksum() == before, "killed after %d s with no journal record, yet the disk changed" % timeout
        again = gate.play([disk], disk_gate_runtime=2)
        job = again.task("Read the probe result")["results"][0]
        return found, job

    def judge(outcome):
        killed, job = outcome
        return "killed: %s; next run: %s, %s, region %s (%s)" % (
            "; ".join(killed["reasons"]), (job["recovered"] or {}).get("action"), job["verdict"],
            "zeroed" if job["zeroed"] else "not zeroed", "; ".join(job["reasons"]))

    check_case([disk], "async timeout SIGKILL mid-probe", "disk_gate (role)", judge,
               "next run: restored, suitable, region zeroed", kill_then_gate_again)


# --------------------------------------------------------------------------- the whole-disk paths

# A process that holds a disk as a virtual machine holds its raw disk: no mount, holder or
# signature. It rewrites the same block, so the disk's bytes stay what they were before the case.
HOLDER = r"""
import ctypes, mmap, os, sys, time
path, mode, offset = sys.argv[1], sys.argv[2], int(sys.argv[3])
ctypes.CDLL(None).prctl(15, b"cephops-holder", 0, 0, 0)  # PR_SET_NAME: the name the refusal shows
fd = os.open(path, os.O_RDWR if mode == "write" else os.O_RDONLY)
if mode == "mmap":  # held through the mapping alone
    mapping = mmap.mmap(fd, 4096, prot=mmap.PROT_READ)
    os.close(fd)
block = bytes(range(256)) * 16
print("ready", flush=True)
while True:
    if mode == "write":
        os.pwrite(fd, block, offset)
        os.fsync(fd)
    time.sleep(0.2)
"""


@contextlib.contextmanager
def held(path, mode="write", offset=0):
    """A process holding ``path`` open (``write``: writing one block at ``offset`` again and
    again; ``read``; ``mmap``: mapped, its descriptor closed) for the time of the block."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, path, mode, str(offset)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        time.sleep(0.5)  # the first write is on the disk before the case's checksum
        yield holder.pid
    finally:
        holder.kill()
        holder.wait()


def held_reason(pid, device=None):
    return "open by another process: cephops-holder (pid %d%s)" % (pid, ", on " + device if device else "")


def overprovision_role(tmp_path):
    """The overprovision role's playbook and records apart from the mount_options role's."""
    (tmp_path / "overprovision").mkdir()
    return Role(tmp_path / "overprovision")


def facts_reasons(disk):
    found = ansible_module("disk_facts", dict(devices=[disk.path], include_loop=True))
    assert not found.get("failed"), found.get("msg")
    return "; ".join(found["disks"][0]["reject_reasons"])


# Data only the writers' check reads: 32 MiB ending 4 MiB before the end (past the inventory's
# last middle sample, short of its tail), and 16 MiB between two middle samples of the inventory.
def data_near_the_end(disk):
    write_random(disk, disk.size - 36 * MIB, 32 * MIB)


def data_between_samples(disk):
    sampled = set(blankness.sample_chunks(disk.size))
    start = next(c for c in range(2000, 8000) if not sampled & set(range(c, c + 16)))
    write_random(disk, start * MIB, 16 * MIB)


# Where the process writes: the whole disk outside or inside the probe region, or a partition
# (whose partitions refuse the disk too; the reason must still name the process).
@pytest.mark.parametrize("on_partition,offset", [(False, 4 * GIB), (False, REGION[0] + MIB), (True, 0)],
                         ids=["outside the probe region", "inside the probe region", "on a partition"])
def test_a_disk_another_process_writes_is_refused_on_every_path(loop_disks, mount_ns, tmp_path, on_partition, offset):
    disk = loop_disks()
    case = "a partition held open, writing" if on_partition else "held open, writing at %d MiB" % (offset // MIB)
    if on_partition:
        make_gpt_partitions(disk)
    role, gate, partition_role = MountRole(Host(loop_disks, mount_ns, tmp_path)), Gate(tmp_path), overprovision_role(tmp_path)
    role.host.write_fstab("")
    with held("%sp1" % disk.path if on_partition else disk.path, "write", offset) as pid:
        reason = held_reason(pid, "%sp1" % disk.name if on_partition else None)
        check_case([disk], case, "disk_facts", lambda shown: shown, reason, lambda: facts_reasons(disk))
        check_case([disk], case, "mount_options (role)", lambda run: "; ".join(run.failures), reason,
                   lambda: role.play([dict(device=disk.path, mountpoint=str(tmp_path / "osd"))]))
        check_case([disk], case, "overprovision (role)", role_failures, reason,
                   lambda: partition_role.play([{"device": disk.path, "method": "partition"}]))
        check_case([disk], case, "disk_gate (role)", lambda run: "; ".join(run.disk(disk.path)["reasons"]), reason,
                   lambda: gate.play([disk]))


# mkfs.xfs as the role's module runs it, inside the test's mount namespace: it says that it
# started and waits until the test has a process of its own holding the next disk open (one
# the module did not start: its own children do not count), then runs the real mkfs.xfs.
MKFS_STANDIN = """#!/bin/sh
touch "%(started)s"
for _ in $(seq 600); do [ -e "%(ready)s" ] && break; sleep 0.1; done
exec "%(real)s" "$@"
"""


def test_a_disk_opened_while_the_one_before_it_is_formatted_is_refused_and_stays_as_it_was(
        loop_disks, mount_ns, tmp_path):
    """The open check looks at each disk again right before its own mkfs.xfs, not only at the
    inventory: a process that opens the second disk while the first is formatted keeps it."""
    first, second = loop_disks(), loop_disks()
    real = tmp_path / "mkfs.xfs.real"
    shutil.copy(shutil.which("mkfs.xfs"), real)
    started, ready = tmp_path / "mkfs-started", tmp_path / "holder-ready"
    standin = tmp_path / "mkfs.xfs"
    standin.write_text(MKFS_STANDIN % dict(started=started, ready=ready, real=real))
    standin.chmod(0o755)
    replace_binary(mount_ns, "mkfs.xfs", standin)
    role = MountRole(Host(loop_disks, mount_ns, tmp_path))
    role.host.write_fstab("")
    filesystems = [dict(device=disk.path, mountpoint=str(tmp_path / disk.name)) for disk in (first, second)]
    holder = []

    def format_both_while_the_second_is_opened():
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            play = pool.submit(role.play, filesystems)
            deadline = time.monotonic() + 300
            while not started.exists() and not play.done():
                assert time.monotonic() < deadline, "mkfs.xfs never started"
                time.sleep(0.1)
            # A reader: a writer's block would be data the check must not see before the case.
            with held(second.path, "read") as pid:
                holder.append(pid)
                ready.touch()
                return play.result()

    check_case([second], "opened while the disk before it is formatted", "mount_options (role)",
               lambda run: "; ".join(run.failures), "refused by the open check", format_both_while_the_second_is_opened)
    assert SAFETY_LOG[-1]["shown"] == "%s: refused by the open check: %s since the inventory; no filesystem was " \
        "written to it" % (second.path, held_reason(holder[0]))
    assert run_blkid_type(first.path) == "xfs", "the first disk, checked and not held, gets its filesystem"
    assert run_blkid_type(second.path) == ""


def run_blkid_type(path):
    return subprocess.run(["blkid", "--probe", "--match-tag", "TYPE", "--output", "value", path],
                          capture_output=True, text=True, check=False).stdout.strip()


@pytest.mark.parametrize("mode", ["read", "mmap"])
def test_a_disk_another_process_only_reads_or_maps_is_held_too(loop_disks, mode):
    """The writers share disk_facts' check, which the writing cases above prove on every path."""
    disk = loop_disks()
    with held(disk.path, mode) as pid:
        check_case([disk], "held open (%s)" % mode, "disk_facts", lambda shown: shown, held_reason(pid),
                   lambda: facts_reasons(disk))


# The open check as udev_queue_rules runs it before it replays the event that switches a kept
# write cache: in a process of its own, as the module's, which its own children do not fool.
HELD_NOW = """
import json, sys
from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev
print(json.dumps(blockdev.held_now(sys.argv[1:])))
"""


def test_the_write_cache_trigger_open_check_names_a_process_on_the_disk_or_its_partition(loop_disks):
    whole, parted = loop_disks(), loop_disks()
    make_gpt_partitions(parted)

    def held_now():
        found = subprocess.run([sys.executable, "-c", HELD_NOW, whole.name, parted.name], capture_output=True,
                               text=True, check=True)
        return json.loads(found.stdout)

    assert held_now() == {}
    with held(whole.path, "read") as on_disk, held("%sp1" % parted.path, "read") as on_partition:
        assert held_now() == {whole.name: held_reason(on_disk), parted.name: held_reason(on_partition, parted.name + "p1")}


@pytest.mark.parametrize("make", [data_near_the_end, data_between_samples], ids=["near the end", "between samples"])
def test_data_the_inventory_sample_misses_stops_every_whole_disk_writer(loop_disks, mount_ns, tmp_path, make):
    disk = loop_disks()
    make(disk)
    assert facts_reasons(disk) == "", "the inventory's sample must miss this data for the case to mean anything"
    role, partition_role = MountRole(Host(loop_disks, mount_ns, tmp_path)), overprovision_role(tmp_path)
    role.host.write_fstab("")
    case = "data only %s" % make.__name__.replace("data_", "").replace("_", " ")
    check_case([disk], case, "mount_options (role)", lambda run: "; ".join(run.failures), "Has data without a signature",
               lambda: role.play([dict(device=disk.path, mountpoint=str(tmp_path / "osd"))]))
    check_case([disk], case, "overprovision (role)", role_failures, "Has data without a signature",
               lambda: partition_role.play([{"device": disk.path, "method": "partition"}]))


def test_a_large_rotational_disk_is_not_fully_checked_unless_the_sample_is_accepted(loop_disks, mount_ns, tmp_path):
    disk = loop_disks(size_gib=300)
    assert open("/sys/block/%s/queue/rotational" % disk.name).read().strip() == "1"
    role = MountRole(Host(loop_disks, mount_ns, tmp_path))
    role.host.write_fstab("")
    filesystems = [dict(device=disk.path, mountpoint=str(tmp_path / "osd"))]
    check_case([disk], "large rotational disk", "mount_options (role)", lambda run: "; ".join(run.failures),
               "content not fully checked", lambda: role.play(filesystems))
    accepted = role.play(filesystems, check=True, mount_options_accept_sampled_content_check=True)
    assert accepted.failures == [] and "Make the new XFS filesystems" in accepted.changed


def test_seq_read_probe_changes_nothing_on_a_disk_another_process_holds(loop_disks):
    disk = loop_disks()
    before = open("/sys/block/%s/queue/max_sectors_kb" % disk.name).read()
    with held(disk.path, "read") as pid:
        check_case([disk], "held open (read)", "seq_read_probe", failure,
                   "refused by the open check: %s: %s; no max_sectors_kb" % (disk.path, held_reason(pid)),
                   lambda: ansible_module("seq_read_probe", dict(devices=[disk.path], max_sectors_kb=[64], runtime=1,
                                                                 repeats=1)))
    assert open("/sys/block/%s/queue/max_sectors_kb" % disk.name).read() == before
