"""kernel_cmdline on an EL host: what the module does with grubby's boot entries.

No EL host can run here, so `grubby` is a script that answers `--info=ALL` with the output of
a real EL host and records every other call, one argument a line. The captures, of a RHEL 8.6
and a Rocky Linux 9.1 host, and where they were published are listed in
tests/unit/fixtures/grub/README.md. The grub defaults file here is not captured: it holds the
entries' own arguments in GRUB_CMDLINE_LINUX, as anaconda writes them.
"""

import os
import re

import pytest

from ansible_collections.cephops.osd_tuning.plugins.modules import kernel_cmdline

# (capture of `grubby --info=ALL`, the arguments anaconda put in GRUB_CMDLINE_LINUX there)
EL_HOSTS = {
    "rhel86": ("grub/rhel86_grubby_info_all.txt",
               "crashkernel=auto resume=/dev/mapper/rhel-swap rd.lvm.lv=rhel/root rd.lvm.lv=rhel/swap rhgb quiet"),
    "rocky91": ("grub/rocky91_grubby_info_all.txt",
                "crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M rd.lvm.lv=rl_devmaster1/root net.ifnames=0"),
}


@pytest.fixture(params=sorted(EL_HOSTS))
def el_host(request, tmp_path, monkeypatch, fixture_text):
    """(defaults file, grubby's boot entries, log of grubby's other calls, GRUB_CMDLINE_LINUX) of an EL host."""
    capture, entry_args = EL_HOSTS[request.param]
    entries = tmp_path / "info_all.txt"
    entries.write_text(fixture_text(capture))
    log = tmp_path / "grubby.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    grubby = bin_dir / "grubby"
    grubby.write_text('#!/bin/sh\nif [ "$*" = --info=ALL ]; then exec cat "%s"; fi\nprintf "%%s\\n" "$@" "" >>"%s"\n'
                      % (entries, log))
    grubby.chmod(0o755)
    monkeypatch.setenv("PATH", "%s:%s" % (bin_dir, os.environ["PATH"]))
    defaults = tmp_path / "grub"
    defaults.write_text('GRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX="%s"\nGRUB_ENABLE_BLSCFG=true\n' % entry_args)
    return defaults, entries, log, entry_args


def grubby_calls(log):
    """The argument lists grubby was called with, other than --info=ALL."""
    return [call.split("\n") for call in log.read_text().split("\n\n") if call] if log.exists() else []


def run(run_module, defaults, **args):
    return run_module(kernel_cmdline.main, dict(dict(defaults_file=str(defaults), update=False), **args))


def test_entries_without_elevator_are_left_alone(run_module, el_host):
    defaults, _entries, log, _args = el_host
    result = run(run_module, defaults, absent=["elevator"])
    assert (result["changed"], result["grubby_entries_updated"]) == (False, False)
    assert grubby_calls(log) == []


def test_elevator_in_one_entry_is_removed_from_every_entry(run_module, el_host):
    defaults, entries, log, _args = el_host
    # The capture with elevator=noop added to the first entry's arguments.
    text = entries.read_text()
    entries.write_text(re.sub(r'^(args=".*)"$', r'\1 elevator=noop"', text, count=1, flags=re.M))
    check = run(run_module, defaults, absent=["elevator"], _ansible_check_mode=True)
    assert (check["changed"], check["grubby_entries_updated"]) == (True, False) and grubby_calls(log) == []
    result = run(run_module, defaults, absent=["elevator"])
    assert (result["changed"], result["grubby_entries_updated"]) == (True, True)
    assert grubby_calls(log) == [["--update-kernel=ALL", "--remove-args=elevator"]]
    assert result["files"] == {}  # the grub defaults held no elevator=


def test_setting_elevator_updates_every_entry_and_the_defaults(run_module, el_host):
    defaults, _entries, log, entry_args = el_host
    result = run(run_module, defaults, present={"elevator": "deadline"})
    assert (result["changed"], result["grubby_entries_updated"]) == (True, True)
    assert grubby_calls(log) == [["--update-kernel=ALL", "--args=elevator=deadline"]]
    assert 'GRUB_CMDLINE_LINUX="%s elevator=deadline"\n' % entry_args in defaults.read_text()


def test_one_grubby_call_takes_each_list_as_one_argument(run_module, el_host):
    """grubby reads --remove-args and --args as one space-separated list each."""
    defaults, _entries, log, _args = el_host
    result = run(run_module, defaults, absent=["elevator", "scsi_mod.use_blk_mq"],
                 present={"nvme_core.io_timeout": "4294967295", "dm_mod.use_blk_mq": "y"})
    assert (result["changed"], result["grubby_entries_updated"]) == (True, True)
    assert grubby_calls(log) == [["--update-kernel=ALL", "--remove-args=elevator scsi_mod.use_blk_mq",
                                  "--args=dm_mod.use_blk_mq=y nvme_core.io_timeout=4294967295"]]
