"""disk_facts on real loop devices: each kind of non-blank disk is refused with its reason."""

import pytest

from modulerun import ansible_module
from loopdisk import run
from ondisk import md_v1_0_superblock

BLUESTORE_HEAD = b"bluestore block device\n"


def facts(devices, **kwargs):
    args = dict(devices=[d.path for d in devices], include_loop=True)
    args.update(kwargs.pop("args", {}))
    result = ansible_module("disk_facts", args, **kwargs)
    assert not result.get("failed"), result.get("msg")
    return {d["name"]: d for d in result["disks"]}


def make_gpt_partitions(disk):
    run(["sgdisk", "--new=1:1MiB:+400MiB", "--new=2:0:+400MiB", disk.path])
    run(["partx", "--add", disk.path])


def make_backup_gpt_only(disk):
    run(["sgdisk", "--new=1:1MiB:+100MiB", disk.path])
    disk.write(0, b"\0" * 512 * 34)  # protective MBR, primary header and entries gone


def make_xfs(disk):
    run(["mkfs.xfs", "-q", disk.path])


def make_lvm_pv(disk):
    run(["pvcreate", "--quiet", "--force", disk.path])


def make_md_member(disk):
    offset, superblock = md_v1_0_superblock(disk.size)
    disk.write(offset, superblock)


def make_bluestore(disk):
    disk.write(0, BLUESTORE_HEAD)


def make_swap_signature(disk):
    run(["mkswap", disk.path])


NON_BLANK = [
    ("gpt_with_partitions", make_gpt_partitions, ["Has GPT headers", "Has partitions"]),
    ("backup_gpt_only", make_backup_gpt_only, ["Has GPT headers"]),
    ("xfs_no_partition_table", make_xfs, ["Has a FileSystem"]),
    ("lvm_pv", make_lvm_pv, ["LVM detected"]),
    ("md_member_metadata_1_0", make_md_member, ["md RAID member"]),
    ("bluestore_label", make_bluestore, ["Has BlueStore device label"]),
    ("swap_signature", make_swap_signature, ["swap"]),
]


def test_blank_disk_is_available(loop_disks):
    disk = loop_disks()
    found = facts([disk])[disk.name]
    assert found["available"] is True
    assert found["reject_reasons"] == []
    assert found["signatures"] == [] and found["partitions"] == []
    assert found["size_bytes"] == 8 * 1024 ** 3
    assert found["transport"] == "loop"
    assert found["scheduler"] in found["schedulers"]
    assert found["max_sectors_kb"] <= found["max_hw_sectors_kb"]


@pytest.mark.parametrize("kind,prepare,reasons", NON_BLANK, ids=[case[0] for case in NON_BLANK])
def test_non_blank_disk_is_refused_and_left_unchanged(loop_disks, kind, prepare, reasons):
    blank, disk = loop_disks(), loop_disks()
    prepare(disk)
    before = disk.checksum()
    found = facts([blank, disk])
    assert found[blank.name]["available"] is True
    assert found[disk.name]["available"] is False
    assert found[disk.name]["reject_reasons"] == reasons
    assert disk.checksum() == before


def test_md_member_signature_sits_at_the_end(loop_disks):
    disk = loop_disks()
    make_md_member(disk)
    sig = facts([disk])[disk.name]["signatures"]
    assert [s["type"] for s in sig] == ["linux_raid_member"]
    assert int(sig[0]["offset"], 16) > disk.size - 16 * 1024


def test_partitions_and_their_signatures_are_listed(loop_disks):
    disk = loop_disks()
    make_gpt_partitions(disk)
    run(["mkfs.xfs", "-q", "/dev/%sp1" % disk.name])
    found = facts([disk])[disk.name]
    assert found["partitions"] == [disk.name + "p1", disk.name + "p2"]
    assert {"device": disk.name + "p1", "type": "xfs"}.items() <= found["signatures"][-1].items()


def test_mounted_disk_is_refused(loop_disks, mount_ns, tmp_path):
    disk = loop_disks()
    make_xfs(disk)
    mountpoint = tmp_path / "mnt"
    mountpoint.mkdir()
    run(mount_ns + ["mount", disk.path, str(mountpoint)])
    found = facts([disk], prefix=mount_ns)[disk.name]
    assert found["mountpoints"] == [str(mountpoint)]
    assert "mounted" in found["reject_reasons"]
    assert "locked" in found["reject_reasons"]


def test_mounted_partition_counts_for_its_disk(loop_disks, mount_ns, tmp_path):
    disk = loop_disks()
    make_gpt_partitions(disk)
    run(["mkfs.xfs", "-q", "/dev/%sp2" % disk.name])
    mountpoint = tmp_path / "mnt"
    mountpoint.mkdir()
    run(mount_ns + ["mount", "/dev/%sp2" % disk.name, str(mountpoint)])
    found = facts([disk], prefix=mount_ns)[disk.name]
    assert found["mountpoints"] == [str(mountpoint)]
    assert "mounted" in found["reject_reasons"]


def test_active_swap_is_refused(loop_disks):
    disk = loop_disks(size_gib=6)
    make_swap_signature(disk)
    run(["swapon", disk.path])
    found = facts([disk])[disk.name]
    assert found["swap"] is True
    assert "swap" in found["reject_reasons"]


def test_small_disk_is_refused_with_ceph_volume_wording(loop_disks):
    disk = loop_disks(size_gib=1)
    assert facts([disk])[disk.name]["reject_reasons"] == ["Insufficient space (<5GB)"]
    relaxed = facts([disk], args=dict(min_size_bytes=512 * 1024 ** 2))[disk.name]
    assert relaxed["available"] is True


def test_read_only_disk_is_refused(loop_disks):
    disk = loop_disks()
    run(["blockdev", "--setro", disk.path])
    try:
        found = facts([disk])[disk.name]
    finally:
        run(["blockdev", "--setrw", disk.path])
    assert found["read_only"] is True
    assert found["reject_reasons"] == ["read-only"]


def test_nonexistent_device_is_an_error_naming_it():
    result = ansible_module("disk_facts", dict(devices=["/dev/cephops-no-such-disk"]))
    assert result["failed"] is True
    assert "/dev/cephops-no-such-disk: no such device" in result["msg"]


def test_partition_is_an_error_naming_its_disk(loop_disks):
    disk = loop_disks()
    make_gpt_partitions(disk)
    result = ansible_module("disk_facts", dict(devices=["/dev/%sp1" % disk.name], include_loop=True))
    assert result["failed"] is True
    assert "is a partition (%sp1 of /dev/%s)" % (disk.name, disk.name) in result["msg"]


def test_link_and_name_of_one_disk_count_once(loop_disks, tmp_path):
    disk = loop_disks()
    link = tmp_path / "by-id-link"
    link.symlink_to(disk.path)
    result = ansible_module("disk_facts", dict(devices=[str(link), disk.name], include_loop=True))
    assert [d["name"] for d in result["disks"]] == [disk.name]


def test_check_mode_reports_the_same_and_changes_nothing(loop_disks):
    disk = loop_disks()
    make_gpt_partitions(disk)
    before = disk.checksum()
    normal = facts([disk])
    checked = facts([disk], check=True)
    assert checked == normal
    assert disk.checksum() == before


def test_loop_devices_are_left_out_unless_asked(loop_disks):
    disk = loop_disks()
    result = ansible_module("disk_facts", {})
    assert disk.name not in [d["name"] for d in result["disks"]]


def test_every_returned_field_is_documented(loop_disks):
    """ansible-doc must teach every key a user gets back."""
    import yaml
    from ansible_collections.cephops.osd_tuning.plugins.modules import disk_facts as module

    documented = set(yaml.safe_load(module.RETURN)["disks"]["contains"])
    disk = loop_disks()
    returned = set(facts([disk])[disk.name])
    assert returned == documented
