"""Every zoo disk of a lab VM compared with what it held when the VM was made: the pre-filled
disks with their base images, the blank ones with an empty image of their size. Taken with the
VM paused, so the guest cannot write while its disks are read. CEPHOPS_LAB_STATE_DIR names
the lab (the ceph variant).
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lab"))

import labctl  # noqa: E402


def zoo_checks(name: str, disks: list[str]) -> dict:
    """{zoo disk name: {written_bytes, differs}} for the named zoo disks of VM `name`."""
    lab = labctl.Lab(Path(os.environ["CEPHOPS_LAB_STATE_DIR"]), "trixie", "ceph")
    overlays = lab.meta(name)["disks"]
    bases = lab.meta(name).get("bases", {})
    with tempfile.TemporaryDirectory() as scratch, lab.paused(name):
        blank = os.path.join(scratch, "blank.qcow2")
        subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", blank, labctl.SCRATCH_DISK_SIZE], check=True)
        return {disk: labctl.base_check(overlays[disk], bases.get(disk, blank), in_use=True) for disk in disks}
