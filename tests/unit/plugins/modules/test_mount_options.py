"""mount_options module entry point on fstab files under tmp_path whose mounts are not mounted:
argument errors, refusals, check mode and the install path without any remount."""

import pytest

from ansible_collections.cephops.osd_tuning.plugins.modules import mount_options

FSTAB = (
    "# OSD data\n"
    "LABEL=osd7\t/cephops-test/osd-7\txfs\tdefaults,nofail\t0 0\n"
    "/dev/cephops-missing /cephops-test/journal ext4 relatime 0 2\n"
)


@pytest.fixture
def fstab_file(tmp_path):
    path = tmp_path / "fstab"
    path.write_text(FSTAB)
    return path


def args(fstab_file, **extra):
    extra.setdefault("mounts", ["/cephops-test/osd-7", "/cephops-test/journal"])
    return dict(extra, fstab=str(fstab_file))


def test_check_mode_plans_the_edit_and_writes_nothing(run_module, fstab_file):
    result = run_module(mount_options.main, args(fstab_file, _ansible_check_mode=True))
    assert result["changed"] is True
    assert fstab_file.read_text() == FSTAB
    assert result["diff"]["after"] == FSTAB.replace("defaults,nofail", "nofail,noatime").replace(
        "ext4 relatime", "ext4 noatime")
    assert [(m["mountpoint"], m["mounted"], m["remounted"]) for m in result["mounts"]] == [
        ("/cephops-test/osd-7", False, False), ("/cephops-test/journal", False, False)]


def test_unmounted_lines_are_edited_with_a_backup(run_module, fstab_file):
    result = run_module(mount_options.main, args(fstab_file))
    assert result["changed"] is True, result
    assert fstab_file.read_text() == result["diff"]["after"]
    with open(result["backup_file"]) as handle:
        assert handle.read() == FSTAB
    again = run_module(mount_options.main, args(fstab_file))
    assert again["changed"] is False


@pytest.mark.parametrize("extra,message", [
    ({"options": ["noatime", "strictatime"]}, "options noatime and strictatime contradict each other"),
    ({"options": ["noatime", "nobarrier"]}, "/cephops-test/osd-7: nobarrier: XFS removed this option in Linux 4.19"),
    ({"mounts": ["/cephops-test/nowhere"]}, "/cephops-test/nowhere: not mounted and not in fstab"),
    ({"mounts": ["osds"]}, "osds: not a mount point (absolute path) nor a selector (ceph, local)"),
])
def test_refusals_leave_the_fstab_alone(run_module, fstab_file, extra, message):
    result = run_module(mount_options.main, args(fstab_file, **extra))
    assert result["failed"] is True
    assert result["msg"].startswith(message)
    assert fstab_file.read_text() == FSTAB


def test_missing_fstab_is_an_error(run_module, tmp_path):
    result = run_module(mount_options.main, {"fstab": str(tmp_path / "none")})
    assert result["failed"] is True
    assert result["msg"].startswith("cannot read %s" % (tmp_path / "none"))
