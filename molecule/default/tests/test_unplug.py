"""A disk that vanishes in the middle of a probe: an error, never a verdict, and no fio left.

Runs last (file order): it takes a disk away and brings it back with a SCSI rescan, as a
replaced disk of the same model arrives; udev tunes it by the model rules alone.
"""

import threading
import time
from pathlib import Path

import pytest

from test_lab import whole_disk_by_serial
from test_tuning import model_entry

testinfra_hosts = ["ansible://osds"]
pytestmark = pytest.mark.drives

SLOW_SERIAL = "CEPHOPS-SLOW-0001"


def wait_for(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "gave up waiting: " + what
        time.sleep(1)


def bring_back(host, name):
    """Rescan every SCSI host until the deleted disk has its by-id link again."""
    wait_for(lambda: not host.file("/sys/block/" + name).exists, 60, name + " to go")

    def rescanned():
        host.check_output("for scan in /sys/class/scsi_host/host*/scan; do echo '- - -' > $scan; done; udevadm settle")
        return host.run("ls /dev/disk/by-id | grep -q -- %s", SLOW_SERIAL).succeeded

    wait_for(rescanned, 120, SLOW_SERIAL + " to come back")


def test_disk_detached_mid_probe_is_an_error_not_a_verdict(host):
    disk = whole_disk_by_serial(host, SLOW_SERIAL)
    probe = {}

    def run_probe():
        probe["result"] = host.ansible("cephops.osd_tuning.sync_write_probe",
                                       f"devices={disk} runtime=30 adaptive=false region_size_mib=16 timeout=120",
                                       check=False, become=True)

    worker = threading.Thread(target=run_probe)
    worker.start()
    try:
        wait_for(lambda: host.run("pgrep -x fio").succeeded or not worker.is_alive(), 120, "fio to start")
        assert worker.is_alive(), probe
        time.sleep(3)
        # What a pulled drive or a dying controller port looks like to the kernel.
        host.check_output("echo 1 > /sys/block/%s/device/delete", Path(disk).name)
        worker.join(300)
        assert not worker.is_alive()
        # Nothing may write to the path once the disk is gone: no regular file in its place.
        assert not host.file(disk).exists
    finally:
        bring_back(host, Path(disk).name)
    result = probe["result"]["results"][0]
    assert result["verdict"] == "error", result
    assert result["zeroed"] is False and "the probe region still holds probe data" in " ".join(result["reasons"])
    assert not host.run("pgrep -x fio").succeeded
    # Back after the rescan, a new device to udev (no database entry), and tuned by the model
    # rules (the class rules would give none and 64), the scheduler first, then its tunables.
    back = Path(whole_disk_by_serial(host, SLOW_SERIAL)).name
    variables = host.ansible.get_variables()
    scheduler = model_entry(host, variables["io_scheduler_models"], SLOW_SERIAL)
    assert f"[{scheduler['scheduler']}]" in host.file(f"/sys/block/{back}/queue/scheduler").content_string
    for tunable, value in scheduler["tunables"].items():
        assert host.file(f"/sys/block/{back}/queue/iosched/{tunable}").content_string.strip() == str(value)
    sectors = model_entry(host, variables["max_sectors_kb_models"], SLOW_SERIAL)
    assert host.file(f"/sys/block/{back}/queue/max_sectors_kb").content_string.strip() == \
        str(sectors["max_sectors_kb"])
    # The probe's journal kept the disk; the next probe of it restores the region first.
    again = host.ansible("cephops.osd_tuning.sync_write_probe",
                         f"devices=/dev/{back} runtime=2 region_size_mib=16 min_iops=1 marginal_min_iops=1",
                         check=False, become=True)["results"][0]
    assert (again["recovered"] or {}).get("action") == "restored", again
    assert again["recovered"]["zeroed_bytes"] > 0 and again["zeroed"] is True
