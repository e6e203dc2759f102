"""write_cache: the tool per transport, parsers fed with output captured from hdparm, sdparm and
nvme-cli, switch commands that never save, and the kernel's view."""

import pytest

from ansible_collections.cephops.osd_tuning.plugins.module_utils import write_cache


def test_write_cache_tool_per_transport():
    assert [write_cache.tool_for(t) for t in ("sata", "nvme", "sas", "loop", "virtio")] == [
        "hdparm", "nvme", "sdparm", "sysfs", "sysfs"]


def test_hdparm_write_cache(fixture_text):
    assert write_cache.parse_hdparm(fixture_text("fio/write_cache/hdparm_W_on.txt")) is True
    assert write_cache.parse_hdparm(fixture_text("fio/write_cache/hdparm_W_off.txt")) is False
    # hdparm -W on a device without the ATA ioctl (captured on a loop device) says nothing.
    assert write_cache.parse_hdparm(fixture_text("fio/write_cache/hdparm_W_loop.txt")) is None


def test_sdparm_write_cache(fixture_text):
    assert write_cache.parse_sdparm(fixture_text("fio/write_cache/sdparm_wce_on.txt")) is True
    assert write_cache.parse_sdparm(fixture_text("fio/write_cache/sdparm_wce_off.txt")) is False
    assert write_cache.parse_sdparm("") is None


def test_nvme_write_cache(fixture_text):
    assert write_cache.parse_nvme(fixture_text("fio/write_cache/nvme_get_feature_6.txt")) is True
    # Captured from QEMU's NVMe with the cache off: nvme-cli's "%#x" prints zero without 0x.
    assert write_cache.parse_nvme(fixture_text("fio/write_cache/nvme_get_feature_6_off.txt")) is False
    assert write_cache.parse_nvme_vwc('{"vid": 5197, "vwc": 7}') is True
    assert write_cache.parse_nvme_vwc('{"vid": 5197, "vwc": 0}') is False
    assert write_cache.parse_nvme_vwc("identify controller: Invalid argument") is None


# sdparm's -S/--save and nvme's -s/--save would write the setting into the drive's saved
# pages, where it outlives the power cycle the restore relies on.
SAVE_FLAGS = {"--save", "-S", "-s"}


@pytest.mark.parametrize("tool, enabled, expected", [
    ("hdparm", True, ["hdparm", "-W1", "/dev/x"]),
    ("hdparm", False, ["hdparm", "-W0", "/dev/x"]),
    ("nvme", True, ["nvme", "set-feature", "/dev/x", "--namespace-id=4294967295", "--feature-id=6", "--value=1"]),
    ("nvme", False, ["nvme", "set-feature", "/dev/x", "--namespace-id=4294967295", "--feature-id=6", "--value=0"]),
    ("sdparm", True, ["sdparm", "--set=WCE", "--quiet", "/dev/x"]),
    ("sdparm", False, ["sdparm", "--clear=WCE", "--quiet", "/dev/x"]),
])
def test_switch_commands_do_not_save_to_the_drive(tool, enabled, expected):
    argv = write_cache.set_command(tool, "/dev/x", enabled)
    assert argv == expected
    assert not SAVE_FLAGS.intersection(argv)


def test_sysfs_write_cache():
    assert write_cache.sysfs_state("write back\n") is True
    assert write_cache.sysfs_state("write through") is False


def test_read_asks_the_drive_and_keeps_the_kernel_view(fixture_text):
    calls = []

    def run(argv):
        calls.append(argv)
        if argv[1] == "get-feature":
            return 0, fixture_text("fio/write_cache/nvme_get_feature_6.txt"), ""
        return 0, fixture_text("nvme/id_ctrl_qemu.json"), ""

    nvme = {"name": "nvme0n1", "path": "/dev/nvme0n1", "transport": "nvme", "write_cache": "write back"}
    assert write_cache.read(run, nvme) == {"tool": "nvme", "present": True, "enabled": True, "volatile": True,
                                           "kernel_view": "write back"}
    assert calls == [["nvme", "id-ctrl", "/dev/nvme0n1", "--output-format=json"],
                     ["nvme", "get-feature", "/dev/nvme0n1", "--feature-id=6"]]
    loop = {"name": "loop0", "path": "/dev/loop0", "transport": None, "write_cache": "write through\n"}
    assert write_cache.read(None, loop) == {"tool": "sysfs", "present": None, "enabled": False, "volatile": False,
                                            "kernel_view": "write through\n"}


class NoVolatileCache:
    """An NVMe controller without a volatile write cache (vwc 0, the PM9A3's identify data), which
    aborts the feature as nvme-cli reports it (fixtures/nvme/README.md); ``identify`` False
    makes id-ctrl fail too."""

    def __init__(self, fixture_text, identify=True):
        self.text, self.identify, self.calls = fixture_text, identify, []

    def __call__(self, argv):
        self.calls.append(argv)
        if argv[1] == "id-ctrl" and self.identify:
            return 0, self.text("nvme/id_ctrl_ns_management.json"), ""
        if argv[1] == "get-feature":
            return 1, "", self.text("nvme/get_feature_6_invalid_field.stderr")
        return 1, "", "identify controller: Invalid argument\n"


NVME = {"name": "nvme0n1", "path": "/dev/nvme0n1", "transport": "nvme", "write_cache": "write through"}


def test_a_drive_without_a_volatile_cache_is_not_asked_for_its_setting(fixture_text):
    drive = NoVolatileCache(fixture_text)
    cache = write_cache.read(drive, NVME)
    assert cache == {"tool": "nvme", "present": False, "enabled": False, "volatile": False,
                     "kernel_view": "write through"}
    assert write_cache.state(cache) == "absent"
    assert drive.calls == [["nvme", "id-ctrl", "/dev/nvme0n1", "--output-format=json"]]


def test_a_cache_the_drive_neither_identifies_nor_reports_is_unknown(fixture_text):
    # The feature's refusal alone does not tell a drive without a cache from one that fails.
    drive = NoVolatileCache(fixture_text, identify=False)
    cache = write_cache.read(drive, NVME)
    assert (cache["present"], cache["enabled"], cache["volatile"]) == (None, None, None)
    assert write_cache.state(cache) == "unknown"
    assert [argv[1] for argv in drive.calls] == ["id-ctrl", "get-feature"]


def test_a_failed_switch_says_which_tool_and_why():
    sata = {"name": "sda", "path": "/dev/sda", "transport": "sata"}
    assert write_cache.switch(lambda argv: (0, "", ""), sata, "hdparm", False) is None
    assert write_cache.switch(lambda argv: (5, "", " SG_IO: bad/missing sense data\n"), sata, "hdparm", True) == (
        "hdparm failed (rc=5): SG_IO: bad/missing sense data")
