"""mount_options on real XFS and ext4 loop filesystems mounted in a private mount namespace.

Every test edits an fstab copy under tmp_path and reads the live options back from
/proc/self/mountinfo inside the namespace, so the test host is never touched.
"""

import json
import os
import re
import stat

import pytest

from modulerun import ansible_module, failed, json_env, run_playbook
from loopdisk import run
from test_disk_facts import make_data_mid_disk, make_mbr_ext4_wiped, writers_reasons

FSTAB_HEAD = "# static file system information\n#\n"


def mountinfo(mount_ns):
    """{mount point: per-mount options} as the kernel shows them inside the namespace."""
    table = {}
    for line in run(mount_ns + ["cat", "/proc/self/mountinfo"]).stdout.splitlines():
        fields = line.split(" ")
        target = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
        table[target] = fields[5]
    return table


def uuid_of(device):
    return run(["blkid", "--probe", "--match-tag", "UUID", "--output", "value", device]).stdout.strip()


class Host:
    """Loop filesystems mounted in the namespace below a Ceph directory, and an fstab copy."""

    def __init__(self, loop_disks, mount_ns, tmp_path):
        self.loop_disks, self.ns, self.tmp = loop_disks, mount_ns, tmp_path
        self.ceph_dir = tmp_path / "ceph"
        self.fstab = tmp_path / "fstab"

    def filesystem(self, fstype, name, mount_options="defaults"):
        disk = self.loop_disks()
        run(["mkfs.xfs", "-q", disk.path] if fstype == "xfs" else ["mkfs.ext4", "-q", disk.path])
        target = self.ceph_dir / name
        target.mkdir(parents=True)
        run(self.ns + ["mount", "-o", mount_options, disk.path, str(target)])
        return disk, str(target)

    def write_fstab(self, text):
        self.fstab.write_text(text)
        return self.fstab.read_bytes()

    def module(self, check=False, **args):
        args.setdefault("fstab", str(self.fstab))
        args.setdefault("ceph_dir", str(self.ceph_dir))
        return ansible_module("mount_options", args, check=check, prefix=self.ns)


@pytest.fixture
def host(loop_disks, mount_ns, tmp_path):
    return Host(loop_disks, mount_ns, tmp_path)


@pytest.fixture
def two_osds(host):
    """XFS by UUID with aligned columns, ext4 by path with tabs, a space in its mount point
    (written \\040) and nosuid, which a remount must keep."""
    xfs, xfs_dir = host.filesystem("xfs", "osd-a")
    ext4, ext4_dir = host.filesystem("ext4", "mon b", "nosuid")
    text = (FSTAB_HEAD
            + "UUID=%s  %s  xfs  defaults  0  0\n" % (uuid_of(xfs.path), xfs_dir)
            + "\n"
            + "%s\t%s\text4\tnosuid,relatime\t0\t2\n" % (ext4.path, ext4_dir.replace(" ", "\\040"))
            + "tmpfs /run/unrelated tmpfs size=1m 0 0\n")
    return xfs_dir, ext4_dir, text


@pytest.mark.pythons
def test_noatime_is_written_in_place_applied_live_and_idempotent(host, two_osds):
    xfs_dir, ext4_dir, text = two_osds
    old = host.write_fstab(text)
    host.fstab.chmod(0o640)  # not the usual 0644: the new fstab must keep the file's own mode and owner

    result = host.module()
    assert not result.get("failed"), result.get("msg")
    assert result["changed"] is True
    info = host.fstab.stat()
    assert (stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid) == (0o640, 0, 0)
    assert host.fstab.read_text() == text.replace("  defaults  ", "  noatime  ").replace(
        "\tnosuid,relatime\t", "\tnosuid,noatime\t")
    live = mountinfo(host.ns)
    assert live[xfs_dir] == "rw,noatime"
    assert live[ext4_dir] == "rw,nosuid,noatime"
    assert open(result["backup_file"], "rb").read() == old
    assert [(m["mountpoint"], m["remounted"]) for m in result["mounts"]] == [(ext4_dir, True), (xfs_dir, True)]

    again = host.module()
    assert again["changed"] is False, again
    assert all(m["remount_options"] is None and not m["fstab_changed"] for m in again["mounts"])


def test_check_mode_shows_the_diff_and_changes_nothing(host, two_osds):
    xfs_dir, ext4_dir, text = two_osds
    old = host.write_fstab(text)
    live_before = mountinfo(host.ns)

    result = host.module(check=True)
    assert result["changed"] is True
    assert result["diff"]["before"] == text
    assert "  noatime  " in result["diff"]["after"]
    assert host.fstab.read_bytes() == old
    assert mountinfo(host.ns) == live_before
    assert not [name for name in os.listdir(host.tmp) if name.startswith("fstab.")]  # no backup


def test_xfs_nobarrier_is_refused_and_nothing_changes(host, two_osds):
    xfs_dir, ext4_dir, text = two_osds
    old = host.write_fstab(text)
    live_before = mountinfo(host.ns)

    result = host.module(options=["noatime", "nobarrier"])
    assert result["failed"] is True
    assert result["msg"].startswith("%s: nobarrier: XFS removed this option in Linux 4.19" % xfs_dir)
    assert host.fstab.read_bytes() == old
    assert mountinfo(host.ns) == live_before


def test_option_the_filesystem_rejects_is_named_and_rolled_back(host, two_osds):
    # inode64 is an XFS option: XFS takes it on the remount, ext4 refuses it. The XFS mount,
    # remounted first, must get its old flags back and the fstab must stay as it was.
    xfs_dir, ext4_dir, text = two_osds
    old = host.write_fstab(text)
    live_before = mountinfo(host.ns)

    result = host.module(mounts=[xfs_dir, ext4_dir], options=["noatime", "inode64"])
    assert result["failed"] is True
    assert result["msg"].startswith("%s: the ext4 filesystem refused inode64 on a test remount" % ext4_dir)
    assert host.fstab.read_bytes() == old
    assert mountinfo(host.ns) == live_before
    assert live_before[xfs_dir] == "rw,relatime"


def test_mount_missing_from_fstab_is_reported_and_left_alone(host, two_osds):
    xfs_dir, ext4_dir, text = two_osds
    lines = text.splitlines(True)
    host.write_fstab("".join(line for line in lines if ext4_dir.replace(" ", "\\040") not in line))

    result = host.module()
    assert result["changed"] is True
    assert result["unmanaged"] == [{
        "mountpoint": ext4_dir, "source": result["unmanaged"][0]["source"],
        "reason": "mounted but not in fstab: nothing would keep the options after a reboot"}]
    assert any(ext4_dir in warning for warning in result["warnings"])
    assert mountinfo(host.ns)[ext4_dir] == "rw,nosuid,relatime"
    assert [m["mountpoint"] for m in result["mounts"]] == [xfs_dir]


def test_noatime_removed_again_goes_back_to_relatime(host, two_osds):
    xfs_dir, ext4_dir, text = two_osds
    host.write_fstab(text.replace("  defaults  ", "  noatime  "))
    run(host.ns + ["mount", "-o", "remount,noatime", xfs_dir])

    result = host.module(mounts=[xfs_dir], options=[], absent_options=["noatime"])
    assert result["changed"] is True
    assert "  defaults  " in host.fstab.read_text()
    assert mountinfo(host.ns)[xfs_dir] == "rw,relatime"


# --------------------------------------------------------------------------- new XFS filesystems

def test_new_mount_of_an_xfs_disk_by_uuid_and_again(host):
    disk = host.loop_disks()
    run(["mkfs.xfs", "-q", disk.path])
    target = str(host.tmp / "osd-new")
    old = host.write_fstab(FSTAB_HEAD)
    spec = {"new_mounts": [{"device": disk.path, "mountpoint": target}], "mounts": []}

    result = host.module(**spec)
    assert not result.get("failed"), result.get("msg")
    line = "UUID=%s %s xfs noatime 0 0" % (uuid_of(disk.path), target)
    assert [a["line"] for a in result["added"]] == [line]
    assert host.fstab.read_text() == FSTAB_HEAD + line + "\n"
    assert open(result["backup_file"], "rb").read() == old
    assert mountinfo(host.ns)[target] == "rw,noatime"

    again = host.module(**spec)
    assert again["changed"] is False, again
    assert host.fstab.read_text() == FSTAB_HEAD + line + "\n"


@pytest.mark.parametrize("check", [False, True], ids=["run", "check_mode"])
def test_new_mount_without_xfs_is_refused(host, check):
    disk = host.loop_disks()
    run(["mkfs.ext4", "-q", disk.path])
    old = host.write_fstab(FSTAB_HEAD)
    result = host.module(check=check, mounts=[], new_mounts=[{"device": disk.path, "mountpoint": str(host.tmp / "x")}])
    assert result["failed"] is True
    assert result["msg"] == "%s: holds ext4, not an XFS filesystem" % disk.path
    assert host.fstab.read_bytes() == old


ROLE_PLAY = """- name: The mount_options role
  hosts: localhost
  gather_facts: false
  roles:
    - cephops.osd_tuning.mount_options
"""


class RoleRun:
    """One ansible-playbook run of the role in the namespace, which printed no warning or
    deprecation: what failed, warned (module warnings, in the report) and changed."""

    def __init__(self, report):
        self.report = report
        # Task names without the "role : " prefix.
        results = [dict(item, task=task["task"]["name"].split(" : ")[-1])
                   for play in report["plays"] for task in play["tasks"]
                   for found in task["hosts"].values() for item in (found.get("results") or [found])]
        self.failures = [r["msg"] for r in results if failed(r)]
        self.warnings = [w for r in results for w in r.get("warnings", [])]
        self.changed = [r["task"] for r in results if r.get("changed")]


class Role:
    """The role on loop disks with the fstab copy of a Host; mounts happen in its namespace."""

    def __init__(self, host):
        self.host = host
        self.playbook = host.tmp / "play.yml"
        self.playbook.write_text(ROLE_PLAY)

    def play(self, filesystems, check=False, mounts=(), diff=False, **extra):
        extra_vars = dict(mount_options_new_filesystems=filesystems, mount_options_mounts=list(mounts),
                          mount_options_ceph_dir=str(self.host.ceph_dir), mount_options_fstab=str(self.host.fstab),
                          mount_options_record_dir=str(self.host.tmp), **extra)
        argv = self.host.ns + ["ansible-playbook", "--inventory", "localhost,", "--connection", "local",
                               "--extra-vars", json.dumps(extra_vars), str(self.playbook)]
        _rc, report = run_playbook(argv + (["--check"] if check else []) + (["--diff"] if diff else []), json_env())
        return RoleRun(report)


@pytest.fixture
def role(host):
    return Role(host)


def test_role_makes_xfs_on_a_blank_disk_adds_it_by_uuid_mounts_it_and_leaves_it_alone_after(role, host):
    disk = host.loop_disks()
    blank = disk.checksum()
    target = str(host.tmp / "osd-new")
    old = host.write_fstab(FSTAB_HEAD)
    wanted = [{"device": disk.path, "mountpoint": target}]

    checked = role.play(wanted, check=True)
    assert checked.failures == []
    assert "Make the new XFS filesystems" in checked.changed
    assert disk.checksum() == blank and host.fstab.read_bytes() == old
    assert target not in mountinfo(host.ns)

    made = role.play(wanted)
    assert made.failures == []
    line = "UUID=%s %s xfs noatime 0 0\n" % (uuid_of(disk.path), target)
    assert host.fstab.read_text() == FSTAB_HEAD + line
    assert mountinfo(host.ns)[target] == "rw,noatime"
    assert re.search(r"isize=2048\b", run(host.ns + ["xfs_info", target]).stdout)

    again = role.play(wanted)
    assert (again.failures, again.changed) == ([], [])
    assert host.fstab.read_text() == FSTAB_HEAD + line


def module_task(run):
    """The role's mount_options task's result in a RoleRun's report."""
    found = [task["hosts"]["localhost"] for play in run.report["plays"] for task in play["tasks"]
             if task["task"]["name"].endswith("Ensure the mount options, in fstab and live")]
    assert len(found) == 1, run.report
    return found[0]


@pytest.mark.cores
def test_role_on_an_osd_host_with_tmpfs_osd_mounts_reports_its_change_and_runs_its_handler(role, host):
    """A host with deployed OSDs as ceph-volume leaves it: a BlueStore OSD's directory is a tmpfs
    under the Ceph directory, beside an OSD on a disk filesystem. The role must report the
    edit as changed, show its diff in check mode and notify its handler, whatever else it
    passes over: a result key Ansible reserves (``skipped``) once made the task look skipped."""
    xfs, xfs_dir = host.filesystem("xfs", "osd/ceph-0")
    tmpfs_dir = host.ceph_dir / "osd" / "ceph-1"
    tmpfs_dir.mkdir()
    run(host.ns + ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(tmpfs_dir)])
    text = FSTAB_HEAD + "UUID=%s %s xfs defaults 0 0\n" % (uuid_of(xfs.path), xfs_dir)
    old = host.write_fstab(text)

    checked = role.play([], check=True, mounts=["ceph"], diff=True)
    task = module_task(checked)
    assert checked.failures == [] and not task.get("skipped"), task
    assert task["changed"] is True and "noatime" in task["diff"]["after"], task
    assert host.fstab.read_bytes() == old
    assert "osd/ceph-1: tmpfs is not a disk filesystem" in json.dumps(checked.report)

    made = role.play([], mounts=["ceph"])
    task = module_task(made)
    assert made.failures == [] and not task.get("skipped") and task["changed"] is True, task
    assert host.fstab.read_text() == text.replace(" defaults ", " noatime ")
    assert mountinfo(host.ns)[xfs_dir] == "rw,noatime"
    assert "Check whether systemd runs this host" in [
        task["task"]["name"].split(" : ")[-1] for play in made.report["plays"] for task in play["tasks"]]


def test_role_refuses_data_without_a_signature_naming_the_check(role, host):
    disk = host.loop_disks()
    make_data_mid_disk(disk)
    before = disk.checksum()
    old = host.write_fstab(FSTAB_HEAD)
    refused = role.play([{"device": disk.path, "mountpoint": str(host.tmp / "x")}])
    assert refused.failures == ["%s: refused to create a filesystem, the disk is not blank: %s"
                                % (disk.path, writers_reasons("data_mid_disk", None)[0])]
    assert disk.checksum() == before and host.fstab.read_bytes() == old


def test_role_refuses_64k_directory_blocks(role, host):
    disk = host.loop_disks()
    blank = disk.checksum()
    old = host.write_fstab(FSTAB_HEAD)
    refused = role.play([{"device": disk.path, "mountpoint": str(host.tmp / "x"),
                          "mkfs_options": ["-f", "-n", "size=64k"]}])
    assert len(refused.failures) == 1
    assert refused.failures[0].startswith("%s: refused mkfs.xfs option -n size=64k: a 64 KiB directory block size "
                                          "can cause severe problems on systems under load" % disk.path)
    assert disk.checksum() == blank and host.fstab.read_bytes() == old


@pytest.mark.pythons
def test_new_filesystem_refused_on_a_wiped_table_with_a_live_partition(loop_disks):
    """wipefs -a removed the MBR's magic; mkfs.xfs -f would discard the ext4 behind it."""
    disk = loop_disks()
    make_mbr_ext4_wiped(disk)
    before = disk.checksum()
    result = ansible_module("mkfs_check", dict(fstab=os.devnull, filesystems=[dict(device=disk.path, mountpoint="/mnt/x")]))
    assert result["failed"] is True
    assert result["msg"] == ("%s: refused to create a filesystem, the disk is not blank: Has partition entries "
                             "without a table signature (MBR), Has a FileSystem at offset 1048576 (ext4)" % disk.path)
    assert disk.checksum() == before


def test_record_and_restore_bring_back_the_original_options(host, two_osds, tmp_path):
    xfs_dir, ext4_dir, text = two_osds
    original = host.write_fstab(text)
    record = tmp_path / "mount_options.json"
    host.module(record=str(record))
    assert "noatime" in mountinfo(host.ns)[xfs_dir].split(",")
    kept = json.loads(record.read_text())["mounts"]
    assert dict((target, found["options"]) for target, found in kept.items()) == {
        xfs_dir: ["defaults"], ext4_dir: ["nosuid", "relatime"]}
    assert [kept[xfs_dir]["line"]] == [line for line in text.splitlines() if line.endswith(" 0  0")][:1]
    result = host.module(restore=True, record=str(record))
    assert result["changed"] is True, (result.get("msg"), result.get("exception"))
    live = mountinfo(host.ns)
    assert "noatime" not in live[xfs_dir].split(",") and "relatime" in live[xfs_dir].split(",")
    assert "nosuid" in live[ext4_dir].split(",") and "relatime" in live[ext4_dir].split(",")
    assert host.fstab.read_bytes() == original
    assert not record.exists()
    assert host.module(restore=True, record=str(record))["changed"] is False


@pytest.mark.parametrize("options", ["defaults,relatime", "rw,relatime,defaults"])
def test_the_undo_puts_back_the_very_line_where_nobody_changed_it_since(host, tmp_path, options):
    """Equivalent options are not enough: "defaults,relatime" came back as "relatime" before."""
    _xfs, xfs_dir = host.filesystem("xfs", "osd-c")
    text = FSTAB_HEAD + "UUID=%s  %s  xfs  %s  0  0\n" % (uuid_of(_xfs.path), xfs_dir, options)
    original = host.write_fstab(text)
    record = tmp_path / "mount_options.json"
    assert host.module(record=str(record))["changed"] is True
    assert host.fstab.read_bytes() != original
    assert host.module(restore=True, record=str(record))["changed"] is True
    assert host.fstab.read_bytes() == original and not record.exists()


def test_a_record_of_0_1_0_still_restores_the_options(host, tmp_path):
    """A record that holds the options alone (0.1.0's) gives the options back."""
    _xfs, xfs_dir = host.filesystem("xfs", "osd-d")
    host.write_fstab(FSTAB_HEAD + "UUID=%s  %s  xfs  noatime  0  0\n" % (uuid_of(_xfs.path), xfs_dir))
    record = tmp_path / "mount_options.json"
    record.write_text(json.dumps({"mounts": {xfs_dir: ["defaults"]}}))
    assert host.module(restore=True, record=str(record))["changed"] is True
    assert host.fstab.read_text().endswith("  xfs  defaults  0  0\n"), host.fstab.read_text()
    assert not record.exists()
