"""SMART and NVMe health read from the zoo's emulated drives: QEMU's SATA (ide-hd) and NVMe
disks report SMART data, a virtio disk does not. Disks are picked by serial."""

import json

import pytest

from test_lab import whole_disk_by_serial

testinfra_hosts = ["ansible://osds"]

SATA, NVME, VIRTIO = "CEPHOPS-SSD-0001", "CEPHOPS-NVME-0001", "CEPHOPS-VIRTIO-0001"


def health(host, serials):
    paths = dict((serial, whole_disk_by_serial(host, serial)) for serial in serials)
    result = host.ansible("cephops.osd_tuning.disk_health", json.dumps({"devices": sorted(paths.values())}),
                          check=False, become=True)
    return dict((serial, result["health"][path]) for serial, path in paths.items())


def assert_read_from_the_drive(found, kind):
    """Passed, with the values the drive's kind reports (proof the values came from the drive)."""
    assert found["status"] == "passed", found
    values = found["values"]
    assert values["smart_passed"] is True and values["power_on_hours"] is not None, values
    if kind == "sata":
        assert values["reallocated_sectors"] == 0, values
    else:
        assert (values["critical_warning"], values["media_errors"]) == (0, 0), values
        assert values["percentage_used"] is not None, values


def test_emulated_sata_and_nvme_drives_report_health_and_virtio_does_not(host):
    found = health(host, (SATA, NVME, VIRTIO))
    assert_read_from_the_drive(found[SATA], "sata")
    assert_read_from_the_drive(found[NVME], "nvme")
    assert found[VIRTIO]["status"] == "unknown" and found[VIRTIO]["reasons"][0].startswith("no SMART data"), found


@pytest.mark.lab_self
def test_the_lab_has_no_raid_controller_tool(host):
    result = host.ansible("cephops.osd_tuning.controller_cache", "", check=False, become=True)
    assert result["summary"] == "no RAID controller tool found (storcli, perccli, ssacli)", result
