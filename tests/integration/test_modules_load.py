"""modules_load writes, keeps a record of and restores its modules-load.d file, on a real file.

The test host's kernel has no loadable modules (no /proc/modules): what it offers is built in,
so nothing is loaded here; the lab's Debian kernel loads bfq as a module."""

import os

import pytest

from modulerun import ansible_module

HEADER = "# Managed by test. Local changes are overwritten.\n"


def modules_load(path, record, check=False, **options):
    args = dict(path=str(path), record=str(record), owner="test")
    args.update(options)
    return ansible_module("modules_load", args, check=check)


@pytest.mark.pythons
def test_writes_once_records_and_restore_removes_it(tmp_path):
    path, record = tmp_path / "cephops.conf", tmp_path / "records" / "modules.json"
    assert modules_load(path, record, check=True, modules=["bfq"])["changed"] is True
    assert not path.exists()
    first = modules_load(path, record, modules=["bfq", "kyber-iosched"])
    assert first["changed"] is True, first
    assert path.read_text() == HEADER + "bfq\nkyber-iosched\n"
    if not os.path.exists("/proc/modules"):
        assert first["loaded"] == []
    assert modules_load(path, record, modules=["bfq", "kyber-iosched"])["changed"] is False
    assert modules_load(path, record, restore=True)["changed"] is True
    assert not path.exists() and not record.exists()
    assert modules_load(path, record, restore=True)["changed"] is False


def test_restore_puts_back_the_file_it_replaced(tmp_path):
    path, record = tmp_path / "bfq.conf", tmp_path / "modules.json"
    path.write_text("# the administrator's\nbfq\n")
    replaced = modules_load(path, record, modules=["bfq"])
    assert replaced["changed"] is True and path.read_text() == HEADER + "bfq\n"
    with open(replaced["backup_file"]) as handle:
        assert handle.read() == "# the administrator's\nbfq\n"
    modules_load(path, record, state="absent")
    assert not path.exists()
    modules_load(path, record, restore=True)
    assert path.read_text() == "# the administrator's\nbfq\n"


def test_a_name_that_is_no_module_name_is_refused_and_nothing_written(tmp_path):
    path = tmp_path / "cephops.conf"
    result = modules_load(path, tmp_path / "modules.json", modules=["bfq\nevil"])
    assert result.get("failed") and "not kernel module names" in result["msg"]
    assert not path.exists()
