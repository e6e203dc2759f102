"""Refusals on a lab host that must leave it as it was: the disk and the whole host compared."""

from pathlib import Path

from test_check_mode import playbook, snapshot
from test_lab import whole_disk_by_serial

testinfra_hosts = ["ansible://osds"]

NVME_SERIAL = "CEPHOPS-NVME-0001"


def test_nvme_namespace_method_fails_cleanly_without_namespace_management(host):
    # QEMU's NVMe controller advertises namespace management (OACS bit 3) and then rejects
    # Namespace Management commands: the role must stop at the delete and say nothing changed.
    disk = whole_disk_by_serial(host, NVME_SERIAL)
    before = (host.check_output("nvme id-ns %s --output-format=json", disk), snapshot(host))
    returncode, output = playbook(host, Path(__file__).parent / "overprovision_nvme.yml")
    assert returncode != 0
    assert "the controller refused to delete namespace 1" in output, output[-3000:]
    assert "so nothing changed on %s" % disk in output and "use the partition method" in output
    assert (host.check_output("nvme id-ns %s --output-format=json", disk), snapshot(host)) == before


def test_the_root_disk_is_refused_for_real(host):
    # Not check mode: on a disposable VM a regression would break this host, and every test after it.
    source = host.check_output("findmnt --noheadings --output SOURCE /")
    parent = host.check_output("lsblk --noheadings --nodeps --output PKNAME %s", source)
    root = "/dev/" + parent if parent else source
    result = host.ansible("cephops.osd_tuning.sync_write_probe", f"devices={root} runtime=2",
                          check=False, become=True)["results"][0]
    assert (result["verdict"], result["written"]) == ("refused", False), result
    assert "root disk" in result["reasons"] and "mounted" in result["reasons"]
