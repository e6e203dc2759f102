"""kernel_cmdline on an EL host: what the module does with grubby's boot entries.

No EL host can run here, so `grubby` is a script that answers `--info=ALL` with the output of
a RHEL 8.6 host as Red Hat publishes it, and records every other call. The capture,
tests/unit/fixtures/grub/rhel86_grubby_info_all.txt, is the `grubby --info=ALL` example of
Red Hat's "Managing, monitoring and updating the kernel" for RHEL 8, section "Viewing the
GRUB menu entry for a kernel" (docs.redhat.com/.../red_hat_enterprise_linux/8/html/
managing_monitoring_and_updating_the_kernel/proc_viewing-the-grub-2-menu-entry-for-a-kernel_
assembly_making-persistent-changes-to-the-grub-boot-loader), one key per line as grubby
prints it. The grub defaults file here is not captured: it holds the entries' own arguments
in GRUB_CMDLINE_LINUX, as anaconda writes them.
"""

import os

import pytest

from ansible_collections.cephops.osd_tuning.plugins.modules import kernel_cmdline

ENTRY_ARGS = "crashkernel=auto resume=/dev/mapper/rhel-swap rd.lvm.lv=rhel/root rd.lvm.lv=rhel/swap rhgb quiet"


@pytest.fixture
def el_host(tmp_path, monkeypatch, fixture_text):
    """(defaults file, grubby's boot entries, log of grubby's other calls) of an EL 8 host."""
    entries = tmp_path / "info_all.txt"
    entries.write_text(fixture_text("grub/rhel86_grubby_info_all.txt"))
    log = tmp_path / "grubby.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    grubby = bin_dir / "grubby"
    grubby.write_text('#!/bin/sh\nif [ "$*" = --info=ALL ]; then exec cat "%s"; fi\necho "$*" >>"%s"\n' % (entries, log))
    grubby.chmod(0o755)
    monkeypatch.setenv("PATH", "%s:%s" % (bin_dir, os.environ["PATH"]))
    defaults = tmp_path / "grub"
    defaults.write_text('GRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX="%s"\nGRUB_ENABLE_BLSCFG=true\n' % ENTRY_ARGS)
    return defaults, entries, log


def run(run_module, defaults, **args):
    return run_module(kernel_cmdline.main, dict(dict(defaults_file=str(defaults), update=False), **args))


def test_entries_without_elevator_are_left_alone(run_module, el_host):
    defaults, _entries, log = el_host
    result = run(run_module, defaults, absent=["elevator"])
    assert (result["changed"], result["grubby_entries_updated"]) == (False, False)
    assert not log.exists()


def test_elevator_in_one_entry_is_removed_from_every_entry(run_module, el_host):
    defaults, entries, log = el_host
    # The capture with elevator=noop added to the first entry's arguments.
    text = entries.read_text()
    entries.write_text(text.replace("quiet $tuned_params", "quiet elevator=noop $tuned_params", 1))
    check = run(run_module, defaults, absent=["elevator"], _ansible_check_mode=True)
    assert (check["changed"], check["grubby_entries_updated"]) == (True, False) and not log.exists()
    result = run(run_module, defaults, absent=["elevator"])
    assert (result["changed"], result["grubby_entries_updated"]) == (True, True)
    assert log.read_text() == "--update-kernel=ALL --remove-args=elevator\n"
    assert result["files"] == {}  # the grub defaults held no elevator=


def test_setting_elevator_updates_every_entry_and_the_defaults(run_module, el_host):
    defaults, _entries, log = el_host
    result = run(run_module, defaults, present={"elevator": "deadline"})
    assert (result["changed"], result["grubby_entries_updated"]) == (True, True)
    assert log.read_text() == "--update-kernel=ALL --args=elevator=deadline\n"
    assert 'GRUB_CMDLINE_LINUX="%s elevator=deadline"\n' % ENTRY_ARGS in defaults.read_text()
