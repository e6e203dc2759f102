"""The drive's write cache switched by sync_write_probe on the emulated drives, one per tool: the
SATA spare (hdparm; QEMU's ide-hd takes SET FEATURES 02h/82h), the SCSI spare (sdparm; scsi-hd
takes the caching mode page) and the NVMe disk (nvme-cli; feature 6). None is a gate disk.

What the drive reported during each measurement comes from the module, which reads the drive
back after each switch; what it reports afterwards is read here with the drive's own tool.
"""

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.cephops.osd_tuning.plugins.module_utils import write_cache
from test_lab import SATA_SPARE, blank_sata_spare, whole_disk_by_serial
from test_site_defaults import LABCTL, MEASURED, modulerun, nvme_trouble, probe_one

testinfra_hosts = ["ansible://osds"]
pytestmark = pytest.mark.drives

TOOLS = {SATA_SPARE: "hdparm", "CEPHOPS-OPSCSI-0001": "sdparm", "CEPHOPS-NVME-0001": "nvme"}
# Their names in the lab's zoo (lab/labctl.py).
ZOO_NAMES = {SATA_SPARE: "opssd", "CEPHOPS-OPSCSI-0001": "opscsi", "CEPHOPS-NVME-0001": "nvme"}
# The tool's own read of the cache, and the figure in its output that says on (1) or off (0).
READS = {
    "hdparm": ("hdparm -W %s", r"write-caching\s*=\s*(\d)"),
    "sdparm": ("sdparm --get=WCE --quiet %s", r"^\s*WCE\s+(\d)"),
    # Hex, printed with "%#x": no 0x when the value is 0 ("Current value:00000000").
    "nvme": ("nvme get-feature %s --feature-id=6", r"Current value:\s*(?:0x)?0*(\d)"),
}
# Short: QEMU's NVMe controller has stopped completing I/O under long fio load on a starved host
# (molecule/shared/group_vars/osds/lab.yml). No run without fsync: it would only add load.
PROBE = {"runtime": 2, "plp_runtime": 0, "region_size_mib": 16}


def cache_on(host, tool, disk):
    """The drive's write cache as its tool reads it: "on" or "off"."""
    command, pattern = READS[tool]
    result = host.run(command, disk)
    # sdparm exits 5 after printing the current value when the drive keeps no saved values.
    assert result.rc in ((0, 5) if tool == "sdparm" else (0,)), result
    found = re.search(pattern, result.stdout, re.M)
    assert found, f"{tool} did not say whether the write cache of {disk} is on"
    return "on" if found.group(1) == "1" else "off"


def kernel_view(host, disk):
    return host.file(f"/sys/block/{Path(disk).name}/queue/write_cache").content_string.strip()


def probe(host, disk, **args):
    return probe_one(host, disk, **dict(PROBE, **args))


@pytest.fixture(scope="module")
def spares(host):
    """{serial: disk}, the SATA spare blank for these tests (test_lab.blank_sata_spare)."""
    with blank_sata_spare(host):
        yield dict((serial, whole_disk_by_serial(host, serial)) for serial in TOOLS)


@pytest.mark.parametrize("serial", sorted(TOOLS))
def test_probe_with_the_cache_disabled_measures_it_off_and_switches_it_back(host, spares, serial):
    disk, tool = spares[serial], TOOLS[serial]
    before, view = cache_on(host, tool, disk), kernel_view(host, disk)
    assert before == "on", f"QEMU's drives start with their cache on (cache=unsafe): {disk} is {before}"
    trouble = nvme_trouble(host)
    result = probe(host, disk, write_cache="disabled")
    record = result["write_cache_disabled"]
    assert result["verdict"] in MEASURED and result["write_iops"] > 0, result
    assert result["write_cache"]["tool"] == tool, result["write_cache"]
    assert record["during"] == "off", record
    assert (record["original"], record["after"], record["restored"], record["error"]) == ("on", "on", True, None), record
    assert result["zeroed"] is True, result
    # Read here, not by the module: the drive's cache and the kernel's view (which decides
    # whether fsync sends flushes) are back as they were.
    assert (cache_on(host, tool, disk), kernel_view(host, disk)) == (before, view)
    assert nvme_trouble(host) == trouble


PERSIST = Path(__file__).parent / "persist_write_cache.yml"
PERSIST_RULES = "/etc/udev/rules.d/62-cephops-write-cache-test.rules"
PERSIST_RECORD = "/var/lib/cephops-write-cache-test/disk_gate-write-cache.json"


def persist_play(host, spares, rollback=False):
    """This host's results of persist_write_cache.yml's tasks, by task name."""
    hostname = host.backend.get_hostname()
    argv = ["ansible-playbook", "-i", os.environ["MOLECULE_INVENTORY_FILE"], "--limit", hostname,
            "-e", json.dumps({"rollback": rollback, "spares": sorted(spares.values())}), str(PERSIST)]
    done = subprocess.run(argv, capture_output=True, text=True, env=modulerun.json_env(), check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    return dict((task["task"]["name"].split(" : ")[-1], task["hosts"].get(hostname, {}))
                for play in json.loads(done.stdout)["plays"] for task in play["tasks"])


def switch(host, tool, disk, setting):
    """The drive's cache switched by hand with its tool, the kernel's view refreshed for sdparm."""
    argv = write_cache.set_command(tool, disk, setting == "on")
    host.check_output(" ".join(shlex.quote(word) for word in argv))
    if tool == "sdparm":
        host.check_output(f"echo 1 > /sys/block/{Path(disk).name}/device/rescan")
    assert cache_on(host, tool, disk) == setting


def assert_compared_in_the_reported_state_and_switched_back(comparison, before):
    """The module's comparison record: each half measured in the state the drive reported, the
    faster one named by its figures, the drive set back to ``before`` and read back so."""
    assert comparison["observed"] == {"on": "on", "off": "off"}, comparison
    assert comparison["error"] is None and comparison["on_iops"] > 0 and comparison["off_iops"] > 0, comparison
    assert comparison["faster"] == ("on" if comparison["on_iops"] >= comparison["off_iops"] else "off"), comparison
    assert (comparison["original"], comparison["after"], comparison["restored"]) == (before, before, True), comparison


def test_the_faster_setting_is_kept_at_boot_by_the_gates_rules_and_rolled_back(host, spares):
    # The spares start with their cache on (QEMU's cache=unsafe; the tests above leave it so).
    assert all(cache_on(host, TOOLS[serial], disk) == "on" for serial, disk in spares.items())
    trouble = nvme_trouble(host)
    tasks = persist_play(host, spares)
    # The comparison itself, from the gate's record of each spare (one probe each, through the role).
    gated = {disk["device"]: disk for task in tasks.values()
             for disk in task.get("ansible_facts", {}).get("disk_gate_result", {}).get("disks", [])}
    for disk in spares.values():
        assert gated[disk]["verdict"] in MEASURED, gated[disk]
        assert_compared_in_the_reported_state_and_switched_back(gated[disk]["write_cache_comparison"], "on")
    assert nvme_trouble(host) == trouble
    persisted = {p["device"]: p for p in tasks["Plan a udev rule per compared disk"]["ansible_facts"][
        "disk_gate_write_cache_persisted"]["persisted"]}
    assert sorted(persisted) == sorted(spares.values()), tasks["Say which disks keep a setting, and why others do not"]
    text = host.file(PERSIST_RULES).content_string
    assert text.startswith("# Managed by role cephops.osd_tuning.disk_gate.")
    faster = {}
    for serial, disk in spares.items():
        tool, faster[serial] = TOOLS[serial], persisted[disk]["write_cache"]
        assert persisted[disk]["tool"] == tool
        assert 'ENV{ID_SERIAL_SHORT}=="%s"' % serial in text
        # udev ran the rule for the disk when the module replayed its change event.
        assert cache_on(host, tool, disk) == faster[serial], serial

    # A power cycle with each drive coming up with its cache the other way (as a drive powers up
    # with its own default, whatever the host set before), so after it only the rule can have
    # set it: QEMU's drives keep a setting across a guest's own reboot.
    argv = [sys.executable, str(LABCTL), "--state-dir", os.environ["CEPHOPS_LAB_STATE_DIR"], "power-cycle",
            "--name", host.backend.get_hostname()] + [
        "--write-cache=%s=%s" % (ZOO_NAMES[serial], "off" if faster[serial] == "on" else "on") for serial in spares]
    cycled = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert cycled.returncode == 0, cycled.stdout + cycled.stderr
    for serial in spares:
        # Kernel names may differ after a reboot.
        disk, tool = whole_disk_by_serial(host, serial), TOOLS[serial]
        assert cache_on(host, tool, disk) == faster[serial], serial
        if tool != "nvme":  # NVMe's view follows the controller's vwc field, not the feature
            assert kernel_view(host, disk) == ("write back" if faster[serial] == "on" else "write through"), serial

    tasks = persist_play(host, {s: whole_disk_by_serial(host, s) for s in spares}, rollback=True)
    assert tasks["Put back what the write cache rules file replaced (no file, as a rule)"]["changed"] is True
    assert not host.file(PERSIST_RULES).exists and not host.file(PERSIST_RECORD).exists
    # The drives keep the setting until a power cycle: back on by hand, as the lab found them.
    for serial in spares:
        disk = whole_disk_by_serial(host, serial)
        if cache_on(host, TOOLS[serial], disk) == "off":
            switch(host, TOOLS[serial], disk, "on")
