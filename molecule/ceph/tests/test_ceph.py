"""After ceph-ansible's osds play with the gate (policy exclude): OSDs on exactly the disks the
gate approved, and not a byte changed on any other disk of the zoo.

The expected sets are the lab's disks as they are built (lab/labctl.py): the fast SSD, the
"HDD" and the virtio disk are fast, the slow SSD is throttled to 50 writes a second, the random
disk holds data without a signature and the data disk a GPT with XFS.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO_ROOT / "lab"))
sys.path.insert(0, str(REPO_ROOT / "molecule" / "default" / "tests"))

import labctl  # noqa: E402
from test_lab import whole_disk_by_serial  # noqa: E402

testinfra_hosts = ["ansible://osds"]

CLUSTER = "ceph"
# Zoo disk name (labctl.ZOO) by serial.
APPROVED = {"CEPHOPS-SSD-0001": "ssd", "CEPHOPS-HDD-0001": "hdd", "CEPHOPS-VIRTIO-0001": "virtio"}
REFUSED = {"CEPHOPS-SLOW-0001": "slow", "CEPHOPS-RAND-0001": "random", "CEPHOPS-DATA-0001": "data"}
# Zoo disks no variable names: nothing may touch them either.
UNNAMED = {"CEPHOPS-NVME-0001": "nvme", "CEPHOPS-OPSSD-0001": "opssd", "CEPHOPS-OPVIRT-0001": "opvirtio",
           "CEPHOPS-FS-0001": "fs"}


def ceph_json(host, *args):
    return json.loads(host.check_output("ceph --cluster %s %s --format json" % (CLUSTER, " ".join(args))))


def gate_report():
    path = Path(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]) / "ceph-ansible" / "report" / "disk_gate.json"
    return json.loads(path.read_text())


def osd_disks(host):
    """{OSD id: the whole disk its block LV sits on}, from ceph-volume's own records."""
    listed = json.loads(host.check_output("LC_ALL=C ceph-volume lvm list --format json"))
    found = {}
    for osd_id, volumes in listed.items():
        blocks = [volume for volume in volumes if volume["type"] == "block"]
        assert len(blocks) == 1 and len(blocks[0]["devices"]) == 1, volumes
        found[int(osd_id)] = blocks[0]["devices"][0]
    return found


def test_gate_approved_exactly_the_fast_disks(host):
    entries = [disk for entry in gate_report()["hosts"] for disk in entry["disks"]]
    decisions = {disk["serial"]: disk["decision"] for disk in entries}
    assert {serial for serial, decision in decisions.items() if decision == "approved"} == set(APPROVED), decisions
    # The data disk and the random one are no candidates at all: the gate refuses them before any probe.
    assert decisions.get("CEPHOPS-SLOW-0001") == "blocked", decisions


def test_osds_on_exactly_the_approved_disks(host):
    disks = osd_disks(host)
    approved = {whole_disk_by_serial(host, serial) for serial in APPROVED}
    assert sorted(disks.values()) == sorted(approved), disks

    tree = ceph_json(host, "osd", "tree")
    osds = {node["id"]: node for node in tree["nodes"] if node["type"] == "osd"}
    assert sorted(osds) == sorted(disks), (osds, disks)
    assert all(node["status"] == "up" for node in osds.values()), osds


def test_no_lvm_on_the_refused_or_unnamed_disks(host):
    for serial in (*REFUSED, *UNNAMED):
        disk = whole_disk_by_serial(host, serial)
        holders = host.check_output("ls -1 /sys/class/block/%s/holders", Path(disk).name)
        assert holders == "", (serial, holders)
        assert "LVM2_member" not in host.check_output("LC_ALL=C lsblk --noheadings --output FSTYPE %s", disk), serial


@pytest.fixture(scope="module")
def overlays(host):
    """{zoo disk name: its overlay's check on the host}, taken with the VM paused: the pre-filled
    disks against their base images, the blank ones against an empty image of their size."""
    name = host.backend.get_hostname()
    lab = labctl.Lab(Path(os.environ["CEPHOPS_LAB_STATE_DIR"]), "trixie", "ceph")
    checks = {check["disk"]: check for check in lab.base_checks(name)}
    disks = lab.meta(name)["disks"]
    with tempfile.TemporaryDirectory() as scratch, lab.paused(name):
        blank = os.path.join(scratch, "blank.qcow2")
        subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", blank, labctl.SCRATCH_DISK_SIZE], check=True)
        for disk in [*REFUSED.values(), *UNNAMED.values()]:
            if disk not in checks:
                checks[disk] = labctl.base_check(disks[disk], blank, in_use=True)
    return checks


@pytest.mark.parametrize("disk", [*REFUSED.values(), *UNNAMED.values()])
def test_disk_byte_identical(overlays, disk):
    check = overlays[disk]
    # The probe writes a region of the slow disk and restores it: written, but the same bytes.
    assert not check["differs"], labctl.describe_check(check)
    if disk != "slow":
        assert check["written_bytes"] == 0, labctl.describe_check(check)
