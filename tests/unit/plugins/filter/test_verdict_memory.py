"""verdict_memory: changes measured worse, remembered per disk, firmware, setting and value."""

from ansible_collections.cephops.osd_tuning.plugins.filter import read_figures, verdict_memory

KERNEL = "6.1.0-41-amd64"
DISKS = [{"name": "sda", "serial": "SSD-A", "wwn": None, "firmware": "FW1"},
         {"name": "sdb", "serial": None, "wwn": "0x5000c0ffee000001", "firmware": "FW1"},
         {"name": "loop3", "serial": None, "wwn": None, "firmware": None}]


def probe(device, runs):
    ordered = sorted(runs)
    return {"device": device, "table": [{"runs": runs, "error": None, "read_mib_s": ordered[2],
                                         "min_mib_s": ordered[0], "max_mib_s": ordered[-1]}]}


def figures(device, before, after, value=64):
    return read_figures.compare([probe(device, before)], [probe(device, after)], {device: {"value": value}},
                                "max_sectors_kb")


def test_a_worse_change_is_remembered_and_kept_off_next_time():
    worse = figures("sda", [50.0, 51.0, 49.0, 50.0, 52.0], [6.0, 6.5, 6.2, 6.1, 6.3])
    same = figures("loop3", [50.0] * 5, [50.0] * 5)
    first = verdict_memory.verdict_memory({}, DISKS, {"sda": {"value": 64}, "loop3": {"value": 64}}, "max_sectors_kb",
                                          worse + same, "2026-11-29", kernel=KERNEL)
    assert first["kept"] == {}
    assert first["memory"] == {"verdicts": [{"identity": "serial SSD-A", "firmware": "FW1", "kernel": KERNEL,
                                             "setting": "max_sectors_kb", "value": 64, "date": "2026-11-29",
                                             "why": worse[0]["why"]}]}
    # The next run: the same value is kept off, another value or setting is tried.
    again = verdict_memory.verdict_memory(first["memory"], DISKS, {"sda": {"value": 64}}, "max_sectors_kb", kernel=KERNEL)
    assert again["kept"] == {"sda": "max_sectors_kb 64 measured worse on 2026-11-29 with the same firmware and kernel: "
                                    + worse[0]["why"]}
    assert again["memory"] == first["memory"]
    for chosen, setting in (({"sda": {"value": 128}}, "max_sectors_kb"), ({"sda": {"value": 64}}, "scheduler"),
                            # A rule that keeps its change measured worse (keep_worse) is applied again.
                            ({"sda": {"value": 64, "keep_worse": True}}, "max_sectors_kb")):
        assert verdict_memory.verdict_memory(first["memory"], DISKS, chosen, setting, kernel=KERNEL)["kept"] == {}
    # A new kernel tries the change again.
    assert verdict_memory.verdict_memory(first["memory"], DISKS, {"sda": {"value": 64}}, "max_sectors_kb",
                                         kernel="6.12.57+deb13-amd64")["kept"] == {}


def test_new_firmware_tries_again_and_the_disk_is_known_by_serial_then_wwn_then_name():
    memory = {"verdicts": [{"identity": "serial SSD-A", "firmware": "FW0", "setting": "max_sectors_kb", "value": 64,
                            "date": "2026-11-01", "why": "w"},
                           {"identity": "wwn 0x5000c0ffee000001", "firmware": "FW1", "setting": "max_sectors_kb",
                            "value": 64, "date": "2026-11-01", "why": "w"},
                           {"identity": "name loop3", "firmware": None, "setting": "max_sectors_kb", "value": 64,
                            "date": "2026-11-01", "why": "w"}]}
    chosen = dict((disk["name"], {"value": 64}) for disk in DISKS)
    # Remembered before verdicts held the kernel: compared by firmware alone.
    assert sorted(verdict_memory.verdict_memory(memory, DISKS, chosen, "max_sectors_kb", kernel=KERNEL)["kept"]) == [
        "loop3", "sdb"]


def test_a_newer_verdict_replaces_the_older_one():
    memory = {"verdicts": [{"identity": "serial SSD-A", "firmware": "FW0", "setting": "max_sectors_kb", "value": 64,
                            "date": "2026-11-01", "why": "old"}]}
    worse = figures("sda", [50.0, 51.0, 49.0, 50.0, 52.0], [6.0, 6.5, 6.2, 6.1, 6.3])
    entry, = verdict_memory.verdict_memory(memory, DISKS, {}, "max_sectors_kb", worse, "2026-11-29")["memory"]["verdicts"]
    assert (entry["firmware"], entry["date"]) == ("FW1", "2026-11-29")
