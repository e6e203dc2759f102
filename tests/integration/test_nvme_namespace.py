"""nvme_namespace on loop devices: a disk that is no NVMe namespace is refused before nvme-cli
runs, in check mode too, and every byte stays as it was. The success path needs a controller
that carries namespace management out (QEMU's does not): the module's logic is
unit-tested against nvme-cli's JSON instead."""

import pytest

from modulerun import ansible_module
from test_disk_facts import make_data_mid_disk, make_xfs


def namespace(disk, record, check=False, **entry):
    args = dict(disks=[dict(dict(device=disk.path), **entry)], erase=True, record=str(record))
    return ansible_module("nvme_namespace", args, check=check)


@pytest.mark.pythons
@pytest.mark.parametrize("check", [False, True], ids=["apply", "check_mode"])
def test_a_loop_disk_is_refused_as_no_nvme_namespace(loop_disks, tmp_path, check):
    disk = loop_disks()
    before = disk.checksum()
    result = namespace(disk, tmp_path / "nvme_namespace.json", check=check)
    assert result["failed"] is True and result["changed"] is False and result["actions"] == []
    assert result["msg"] == "%s: not an NVMe namespace (transport loop); refused, nvme was not run" % disk.path
    assert disk.checksum() == before
    assert not (tmp_path / "nvme_namespace.json").exists()


def test_what_a_non_nvme_disk_holds_is_named_too(loop_disks, tmp_path):
    disk = loop_disks()
    make_xfs(disk)
    before = disk.checksum()
    result = namespace(disk, tmp_path / "nvme_namespace.json")
    assert result["disks"][0]["checks"] == ["not an NVMe namespace (transport loop)",
                                            "the namespace is not blank: Has a FileSystem"]
    assert disk.checksum() == before


def test_overwrite_data_lifts_only_the_content_reasons(loop_disks, tmp_path):
    disk = loop_disks()
    make_data_mid_disk(disk)
    before = disk.checksum()
    result = namespace(disk, tmp_path / "nvme_namespace.json", overwrite_data=True)
    assert result["disks"][0]["checks"] == ["not an NVMe namespace (transport loop)"]
    assert disk.checksum() == before
