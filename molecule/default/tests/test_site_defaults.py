"""site.yml run as a user runs it with no candidate list: the gate takes every available disk.

Run from the controller against this host, the gate must probe the blank disks and leave both
pre-filled disks alone: the data disk (GPT and XFS) and the random disk (data without any
signature). The overlays of both are then checked on the host: not a byte written to either.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from test_check_mode import PLAYBOOKS
from test_health import NVME, SATA, assert_read_from_the_drive
from test_lab import DATA_SERIAL, RANDOM_SERIAL, whole_disk_by_serial

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "integration"))

import modulerun  # noqa: E402

testinfra_hosts = ["ansible://osds"]

LABCTL = Path(__file__).resolve().parents[3] / "lab" / "labctl.py"
BLANK_SERIALS = ("CEPHOPS-SSD-0001", "CEPHOPS-HDD-0001", "CEPHOPS-SLOW-0001", "CEPHOPS-NVME-0001",
                 "CEPHOPS-VIRTIO-0001")
MEASURED = ("suitable", "marginal", "unsuitable")
# What the kernel logs when QEMU's NVMe controller stops completing I/O.
NVME_TROUBLE = re.compile(r"nvme.*(timeout|reset|abort|I/O error)", re.IGNORECASE)
# An empty list overrides the lab's own, so the candidate rule falls through to the defaults.
# Cache off: converge cached verdicts for some of these disks, which would stand in for a probe.
EXTRA_VARS = {"cephops_gate_devices": [], "disk_gate_cache_max_age": 0}


def site_gate(host):
    """(disk_facts' disks by path, the gate's record) of site.yml's gate on this host."""
    hostname = host.backend.get_hostname()
    argv = ["ansible-playbook", "-i", os.environ["MOLECULE_INVENTORY_FILE"], "--limit", hostname,
            str(PLAYBOOKS / "site.yml"), "--tags", "disk_gate", "-e", json.dumps(EXTRA_VARS)]
    done = subprocess.run(argv, capture_output=True, text=True, env=modulerun.json_env(), check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = [task["hosts"][hostname] for play in json.loads(done.stdout)["plays"] for task in play["tasks"]
               if hostname in task["hosts"]]
    inventory = next(r["disks"] for r in results if r.get("action") == "cephops.osd_tuning.disk_facts" and "disks" in r)
    record = next(r["ansible_facts"]["disk_gate_result"] for r in results
                  if "disk_gate_result" in r.get("ansible_facts", {}))
    return {"/dev/" + disk["name"]: disk for disk in inventory}, record


def probe_one(host, disk, **args):
    """sync_write_probe's result for one disk, called directly with these arguments."""
    result = host.ansible("cephops.osd_tuning.sync_write_probe", json.dumps(dict(args, devices=[disk])),
                          check=False, become=True)
    assert "results" in result, result
    return result["results"][0]


def nvme_trouble(host):
    return [line for line in host.check_output("dmesg").splitlines() if NVME_TROUBLE.search(line)]


def test_site_defaults_probe_the_blank_disks_and_write_no_pre_filled_one(host):
    trouble_before = nvme_trouble(host)
    inventory, record = site_gate(host)
    assert record["chosen_by"] == ["available"], record["chosen_by"]
    gated = {disk["device"]: disk for disk in record["disks"]}
    assert sorted(gated) == sorted(path for path, disk in inventory.items() if disk["available"])

    data = whole_disk_by_serial(host, DATA_SERIAL)
    assert data not in gated and "Has GPT headers" in inventory[data]["reject_reasons"], inventory[data]

    # No signature anywhere: the content sample of disk_facts must refuse it before any probe.
    random_disk = whole_disk_by_serial(host, RANDOM_SERIAL)
    assert random_disk not in gated and not inventory[random_disk]["available"], inventory[random_disk]
    assert any(reason.startswith("Has data without a signature")
               for reason in inventory[random_disk]["reject_reasons"]), inventory[random_disk]

    for serial in BLANK_SERIALS:
        probed = gated[whole_disk_by_serial(host, serial)]
        assert probed["verdict"] in MEASURED and not probed["cached"] and probed["write_iops"] > 0, probed

    # The gate read each drive's health itself: values from the emulated SATA and NVMe drives.
    assert_read_from_the_drive(gated[whole_disk_by_serial(host, SATA)]["health"], "sata")
    assert_read_from_the_drive(gated[whole_disk_by_serial(host, NVME)]["health"], "nvme")

    # Not in the lab's own list, so probed here only: its controller must have kept up.
    assert nvme_trouble(host) == trouble_before, "the NVMe controller had trouble during the probe"

    checks = subprocess.run([sys.executable, str(LABCTL), "--state-dir", os.environ["CEPHOPS_LAB_STATE_DIR"],
                             "check-bases", "--name", host.backend.get_hostname(), "--json"],
                            capture_output=True, text=True, check=False)
    written = {check["disk"]: check["written_bytes"] for check in json.loads(checks.stdout)}
    assert written == {"data": 0, "random": 0}, checks.stdout + checks.stderr
