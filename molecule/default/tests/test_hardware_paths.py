"""playbooks/validate_hardware.yml on the lab's emulated drives, as an operator runs it on a spare.

QEMU's drives show what the playbook does where a path cannot work: the SATA spare refuses SET
MAX ADDRESS, and QEMU's NVMe controller advertises namespace management but refuses to delete a
namespace; each path fails, says so, and leaves the drive as it was. The paths that can work on them (the
write cache switched with the drive's own tool, over-provisioning by partition) pass, and the
drive reads back as before. The success paths of HPA and namespaces need real drives.
"""

import json
import os
import subprocess
from pathlib import Path

from test_lab import SATA_SPARE, blank_sata_spare, whole_disk_by_serial
from test_site_defaults import modulerun

testinfra_hosts = ["ansible://osds"]

PLAYBOOK = Path(__file__).resolve().parents[3] / "playbooks" / "validate_hardware.yml"
RECORDS = "/var/lib/cephops-validate-test"
NVME = "CEPHOPS-NVME-0001"


def validate(host, disk, serial, reports):
    """(exit status, the host's report) of validate_hardware.yml on ``disk``, confirmed by serial."""
    hostname = host.backend.get_hostname()
    extra = {"cephops_report_dir": str(reports), "cephops_validate_device": disk, "cephops_validate_confirm": serial,
             "cephops_validate_probe_seconds": 2, "cephops_validate_record_dir": RECORDS}
    argv = ["ansible-playbook", "-i", os.environ["MOLECULE_INVENTORY_FILE"], "--limit", hostname,
            "-e", json.dumps(extra), str(PLAYBOOK)]
    done = subprocess.run(argv, capture_output=True, text=True, env=modulerun.json_env(), check=False)
    report = reports / f"validate-hardware-{hostname}.json"
    assert report.exists(), done.stdout[-4000:] + done.stderr[-2000:]
    return done.returncode, json.loads(report.read_text())


def statuses(report):
    return {path["path"]: path["status"] for path in report["paths"]}


def hpa(host, disk):
    """hdparm -N's "max sectors = VISIBLE/NATIVE" of the drive."""
    line, = [line for line in host.check_output("hdparm -N %s", disk).splitlines() if "max sectors" in line]
    return line.split("=", 1)[1].split(",")[0].strip()


def test_on_the_sata_spare_hpa_fails_as_the_drive_refuses_and_the_rest_passes(host, tmp_path):
    with blank_sata_spare(host) as disk:
        max_before, cache_before = hpa(host, disk), host.check_output("hdparm -W %s", disk)
        rc, report = validate(host, disk, SATA_SPARE, tmp_path)
        assert statuses(report) == {"controller_cache": "not applicable", "write_cache": "passed",
                                    "partition": "passed", "nvme_namespace": "not applicable",
                                    "ata_hpa": "failed"}, report["paths"]
        # The playbook fails because a path failed, not because the drive changed.
        assert rc != 0 and report["restored"] is True, report["verify"]
        message = {path["path"]: path["message"] for path in report["paths"]}["ata_hpa"]
        assert message, report["paths"]
        # SET MAX was refused: no record to restore from, the drive's visible size and its write
        # cache as before, and no partition left behind.
        assert not [name for name in host.check_output("ls -A %s", RECORDS).split() if name.startswith("hpa-")]
        assert (hpa(host, disk), host.check_output("hdparm -W %s", disk)) == (max_before, cache_before)
        assert host.check_output("lsblk --noheadings --output NAME %s", disk).split() == [Path(disk).name]
        assert (tmp_path / f"validate-hardware-{host.backend.get_hostname()}.md").exists()
    host.check_output("rm -rf %s", RECORDS)


def test_on_the_nvme_disk_the_namespace_path_fails_as_the_controller_refuses_and_the_rest_passes(host, tmp_path):
    # QEMU's controller advertises namespace management (OACS bit 3) but refuses to delete a
    # namespace: the path must fail on the first command, with the namespace as it was.
    disk = whole_disk_by_serial(host, NVME)
    size = host.check_output("blockdev --getsize64 %s", disk)
    rc, report = validate(host, disk, NVME, tmp_path)
    assert statuses(report) == {"controller_cache": "not applicable", "write_cache": "passed", "partition": "passed",
                                "nvme_namespace": "failed", "ata_hpa": "not applicable"}, report["paths"]
    namespace = [path for path in report["paths"] if path["path"] == "nvme_namespace"][0]
    assert "refused to delete namespace 1" in namespace["message"] and "nothing changed" in namespace["message"], namespace
    assert rc != 0 and report["restored"] is True, report["verify"]
    assert host.check_output("blockdev --getsize64 %s", disk) == size
    assert host.check_output("lsblk --noheadings --output NAME %s", disk).split() == [Path(disk).name]
    host.check_output("rm -rf %s", RECORDS)
