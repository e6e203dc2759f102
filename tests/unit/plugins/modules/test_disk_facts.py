"""disk_facts module entry point: argument handling and errors."""

from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev
from ansible_collections.cephops.osd_tuning.plugins.modules import disk_facts


def test_unknown_device_fails_naming_it(run_module):
    result = run_module(disk_facts.main, {"devices": ["/dev/cephops-missing", "cephops-gone"]})
    assert result["failed"] is True
    assert result["msg"] == "/dev/cephops-missing: no such device; cephops-gone: no such device"


def test_empty_device_list_inventories_nothing(run_module):
    result = run_module(disk_facts.main, {"devices": [], "_ansible_check_mode": True})
    assert result["changed"] is False
    assert result["disks"] == []


def test_unknown_option_is_refused(run_module):
    result = run_module(disk_facts.main, {"device": "sda"})
    assert result["failed"] is True
    assert "Unsupported parameters" in result["msg"]


def test_the_result_names_the_identity_keys_of_a_disk(run_module):
    result = run_module(disk_facts.main, {"devices": [], "_ansible_check_mode": True})
    assert result["identity_keys"] == list(blockdev.IDENTITY_KEYS)
