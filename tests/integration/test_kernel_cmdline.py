"""kernel_cmdline on real files, sourced by the real sh (update-grub runs in the lab)."""

import json
import os
import stat

import pytest

from modulerun import ansible_module

DEBIAN_DEFAULTS = os.path.join(os.path.dirname(__file__), "..", "unit", "fixtures", "grub", "debian12_default_grub")


@pytest.fixture
def defaults(tmp_path):
    with open(DEBIAN_DEFAULTS) as handle:
        text = handle.read().replace('GRUB_CMDLINE_LINUX_DEFAULT="quiet"', 'GRUB_CMDLINE_LINUX_DEFAULT="quiet elevator=noop"')
    path = tmp_path / "grub"
    path.write_text(text)
    (tmp_path / "grub.d").mkdir()
    return path


def cmdline(defaults, check=False, **args):
    return ansible_module("kernel_cmdline", dict(dict(defaults_file=str(defaults), update=False), **args), check=check)


@pytest.mark.pythons
def test_removes_elevator_backs_up_and_is_idempotent(defaults):
    old = defaults.read_text()
    defaults.chmod(0o640)  # not the usual 0644: the edit must keep the file's own mode and owner
    result = cmdline(defaults, absent=["elevator"])
    assert result["changed"] is True, result
    info = defaults.stat()
    assert (stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid) == (0o640, 0, 0)
    assert 'GRUB_CMDLINE_LINUX_DEFAULT="quiet"\n' in defaults.read_text()
    assert result["effective"] == {"GRUB_CMDLINE_LINUX": [], "GRUB_CMDLINE_LINUX_DEFAULT": ["quiet"]}
    with open(result["backups"][0]) as handle:
        assert handle.read() == old
    running = open("/proc/cmdline").read().split()
    assert result["running"] == running
    assert result["reboot_required"] is any(a.startswith("elevator=") for a in running)
    assert cmdline(defaults, absent=["elevator"])["changed"] is False


def test_check_mode_shows_the_diff_and_writes_nothing(defaults):
    old = defaults.read_bytes()
    result = cmdline(defaults, check=True, absent=["elevator"])
    assert result["changed"] is True
    assert result["files"][str(defaults)] == {"before": ["quiet", "elevator=noop"], "after": ["quiet"]}
    assert defaults.read_bytes() == old


def test_grub_d_files_are_edited_too(defaults):
    cfg = defaults.parent / "grub.d" / "50-cloudimg-settings.cfg"
    cfg.write_text('GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX console=ttyS0 elevator=deadline"\n')
    result = cmdline(defaults, present={"elevator": "noop"})
    assert cfg.read_text() == 'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX console=ttyS0 elevator=noop"\n'
    assert 'GRUB_CMDLINE_LINUX_DEFAULT="quiet"\n' in defaults.read_text()
    assert result["effective"]["GRUB_CMDLINE_LINUX"] == ["console=ttyS0", "elevator=noop"]


def test_shell_only_value_is_refused_and_nothing_written(defaults):
    cfg = defaults.parent / "grub.d" / "60-odd.cfg"
    cfg.write_text('GRUB_CMDLINE_LINUX="$(cat /proc/cmdline)"\n')
    before = (defaults.read_bytes(), cfg.read_bytes())
    result = cmdline(defaults, absent=["elevator"])
    assert result["failed"] is True
    assert result["msg"].startswith("nothing written: GRUB_CMDLINE_LINUX=")
    assert (defaults.read_bytes(), cfg.read_bytes()) == before


def test_file_that_does_not_source_is_refused(defaults):
    cfg = defaults.parent / "grub.d" / "70-broken.cfg"
    cfg.write_text("if then\n")
    before = defaults.read_bytes()
    result = cmdline(defaults, absent=["elevator"])
    assert result["failed"] is True
    assert "do not source cleanly, nothing written" in result["msg"]
    assert defaults.read_bytes() == before


@pytest.mark.parametrize("args", [dict(absent=["elevator=noop"]), dict(present={"elevator": "a b"}),
                                  dict(present={"bad name": "x"})])
def test_malformed_arguments_are_refused(defaults, args):
    result = cmdline(defaults, **args)
    assert result["failed"] is True
    assert result["msg"].startswith("not a kernel argument name or value")


def test_host_without_grub_has_nothing_to_remove_but_cannot_set(tmp_path):
    missing = tmp_path / "no-grub"
    assert cmdline(missing, absent=["elevator"])["changed"] is False
    result = cmdline(missing, present={"elevator": "noop"})
    assert result["failed"] is True and "does not exist; cannot set elevator" in result["msg"]


def test_record_and_restore_put_elevator_back(defaults, tmp_path):
    record = tmp_path / "kernel_cmdline.json"
    cmdline(defaults, absent=["elevator"], record=str(record))
    assert "elevator" not in defaults.read_text()
    assert json.loads(record.read_text()) == {"removed": ["elevator=noop"], "replaced": {}}
    result = cmdline(defaults, restore=True, record=str(record))
    assert result["changed"] is True, result
    assert "elevator=noop" in result["effective"]["GRUB_CMDLINE_LINUX"] + result["effective"]["GRUB_CMDLINE_LINUX_DEFAULT"]
    assert not record.exists()
    assert cmdline(defaults, restore=True, record=str(record))["changed"] is False
