"""write_cache_rules: a udev rule per cleanly compared disk, running its drive's own tool."""

from ansible_collections.cephops.osd_tuning.plugins.filter.queue_plan import RESCAN, write_cache_rules


def disk(device, transport, faster="off", serial="S1", wwn=None, **comparison):
    compared = dict({"on_iops": 400, "off_iops": 900, "faster": faster, "original": "on", "after": "on",
                     "restored": True, "error": None}, **comparison)
    return {"device": device, "name": device.rsplit("/", 1)[-1], "transport": transport, "serial": serial,
            "wwn": wwn, "write_cache_comparison": compared}


def test_each_tool_with_the_faster_setting_matched_by_serial_or_wwn():
    planned = write_cache_rules([
        disk("/dev/sdb", "sata"),
        disk("/dev/sdc", "scsi", faster="on", serial=None, wwn="0x5000c0ffee000002"),
        disk("/dev/nvme0n1", "nvme", serial="NV1"),
    ])
    assert planned["skipped"] == [] and planned["trigger"] == ["sdb", "sdc", "nvme0n1"]
    sata, scsi, nvme = planned["rules"]
    assert sata["match"] == {"ENV{ID_SERIAL_SHORT}": "S1"} and sata["run"] == [["hdparm", "-W0", "$devnode"]]
    # sdparm, then the rescan without which sd keeps its old view of the cache.
    assert scsi["match"] == {"ENV{ID_WWN}": "0x5000c0ffee000002"}
    assert scsi["run"] == [["sdparm", "--set=WCE", "--quiet", "$devnode"], RESCAN]
    assert nvme["run"] == [["nvme", "set-feature", "$devnode", "--namespace-id=4294967295", "--feature-id=6",
                            "--value=0"]]
    assert sata["comment"] == "write cache off: the faster setting in the gate's comparison"
    # When the disk appears only: sdparm's rescan can cause a change event, which must not run it again.
    assert {rule["action"] for rule in planned["rules"]} == {"add"}
    assert [p["write_cache"] for p in planned["persisted"]] == ["off", "on", "off"]
    assert planned["lines"][1] == "/dev/sdc: write cache on (400 sync IOPS on, 900 off), now and at every boot (sdparm)"


def test_disks_without_a_clean_comparison_a_drive_tool_or_an_identity_are_skipped_with_the_reason():
    planned = write_cache_rules([
        disk("/dev/sdb", "sata", error="hdparm failed (rc=1): bad"),
        disk("/dev/sdc", "sata", restored=False, restore_error="the drive reports its write cache off"),
        disk("/dev/vdb", "virtio"),
        disk("/dev/sdd", "sata", serial=None),
        dict(disk("/dev/sde", "sata"), write_cache_comparison=None),  # not compared: not mentioned
    ])
    assert planned["rules"] == [] and planned["trigger"] == [] and planned["persisted"] == []
    reasons = {s["device"]: s["reason"] for s in planned["skipped"]}
    assert sorted(reasons) == ["/dev/sdb", "/dev/sdc", "/dev/sdd", "/dev/vdb"]
    assert reasons["/dev/sdb"].endswith("hdparm failed (rc=1): bad")
    assert reasons["/dev/sdc"].endswith("the drive reports its write cache off")
    assert "only the kernel's view" in reasons["/dev/vdb"] and "virtio" in reasons["/dev/vdb"]
    assert reasons["/dev/sdd"] == "no serial or WWN for a udev rule to match at boot"
    assert len(planned["lines"]) == 4


def test_a_drive_without_a_volatile_cache_is_skipped_as_having_nothing_to_switch():
    # The comparison record sync_write_probe gives such a drive: nothing switched, no faster setting.
    nothing = {"device": "/dev/nvme1n1", "name": "nvme1n1", "transport": "nvme", "serial": "S64FNE0R123456",
               "wwn": None, "write_cache_comparison": {
                   "original": "absent", "error": None,
                   "note": "the drive reports no volatile write cache (NVMe vwc 0): nothing to switch"}}
    planned = write_cache_rules([nothing, disk("/dev/sdb", "sata")])
    assert planned["skipped"] == [{"device": "/dev/nvme1n1", "reason": "the drive reports no volatile write cache "
                                                                       "(NVMe vwc 0): nothing to switch"}]
    assert planned["lines"][0] == ("/dev/nvme1n1: write cache not kept: the drive reports no volatile write cache "
                                   "(NVMe vwc 0): nothing to switch")
    assert planned["trigger"] == ["sdb"] and len(planned["rules"]) == 1
