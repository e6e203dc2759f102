"""controller_cache on storcli output from a public repository (fixtures/controller_cache/README.md)."""

import json
import os

from ansible_collections.cephops.osd_tuning.plugins.module_utils import controller_cache

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "controller_cache", "storcli_vall_show_all.json")


def drives():
    with open(FIXTURE) as handle:
        return controller_cache.parse_storcli(json.load(handle))


def test_every_virtual_drive_with_its_write_policy():
    found = drives()
    assert [(d["virtual_drive"], d["cache"], d["write_policy"], d["os_drive"]) for d in found] == [
        (0, "RWBD", "write back", "/dev/sda"), (1, "RWBD", "write back", "/dev/sdb"),
        (2, "NRWTD", "write through", "/dev/sdc"), (3, "NRWTD", "write through", "/dev/sdd"),
        (4, "NRWTD", "write through", "/dev/sde"), (5, "NRWTD", "write through", "/dev/sdf"),
        (6, "NRWTD", "write through", "/dev/sdg")]
    assert found[0]["initial_write_cache"] == "WriteBack"
    assert found[0]["raid"] == "RAID1"


def test_always_write_back_is_told_apart():
    assert controller_cache.write_policy("RAWBD") == "always write back"
    assert controller_cache.write_policy("-") is None


def test_summary_lines():
    assert controller_cache.summary([]) == "no RAID controller tool found (storcli, perccli, ssacli)"
    tool = {"name": "storcli", "parsed": True, "error": None, "virtual_drives": drives()[:3]}
    assert controller_cache.summary([tool]) == (
        "storcli: c0/v0 write back (/dev/sda), c0/v1 write back (/dev/sdb), c0/v2 write through (/dev/sdc)")
    ssacli = {"name": "ssacli", "parsed": False, "error": None, "virtual_drives": []}
    assert controller_cache.summary([ssacli]) == "ssacli: tool present, output not parsed"
