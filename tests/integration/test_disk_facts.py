"""disk_facts on real loop devices: each kind of non-blank disk is refused with its reason."""

import os
import random
import subprocess

import pytest

from ansible_collections.cephops.osd_tuning.plugins.module_utils import blankness, blockdev
from modulerun import ansible_module
from loopdisk import GIB, delete_partitions, run
from ondisk import md_v1_0_superblock, md_v1_2_superblock

MIB = 1024 ** 2
DISK_BYTES = 8 * GIB  # what loop_disks() attaches
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


# --------------------------------------------------------------------------- no signature at the start

def write_random(disk, offset, length):
    """Random-looking bytes over ``length`` from ``offset``: a random MiB, each copy made unique
    by its offset, so no MiB is zero or repeats."""
    block = random.Random(offset).randbytes(MIB)
    fd = os.open(disk.path, os.O_WRONLY)
    try:
        for pos in range(offset, offset + length, MIB):
            os.pwrite(fd, (b"%016x" % pos) + block[16:], pos)
        os.fsync(fd)
    finally:
        os.close(fd)


def data_reason(regions, writers=False):
    """The reason for data in ``regions`` (offset, length), counted the way the documented
    layout sees an 8 GiB disk: the inventory's sample, or the whole-disk writers' check."""
    layout = blankness.sample_chunks(DISK_BYTES, blankness.WRITER_EDGE_MIB, blankness.writer_stride(DISK_BYTES)) \
        if writers else blankness.sample_chunks(DISK_BYTES)
    seen = [c for c in layout if any(c * MIB < start + length and (c + 1) * MIB > start for start, length in regions)]
    assert seen, "the data must be where the sample looks"
    return "Has data without a signature (%d of %d sampled MiB not zero)" % (len(seen), len(layout))


# Longer than the gap between two samples (8 GiB / 57), so the sample sees it wherever it lies.
DATA_RUN = 160 * MIB


def make_data_mid_disk(disk):
    """Data only in the middle: a tool that looks at the head alone sees a blank disk."""
    write_random(disk, DISK_BYTES // 2, DATA_RUN)


def make_zapped_osd(disk, label_copy=False):
    """An old BlueStore OSD after a zap (the first 10 MiB zeroed, as ceph-volume lvm zap does):
    its label is gone, its data is not. With ``label_copy``, the label copy BlueStore (Ceph 19
    onwards) keeps at 1 GiB is there too."""
    disk.write(0, BLUESTORE_HEAD)
    if label_copy:
        disk.write(GIB, BLUESTORE_HEAD)
    write_random(disk, 4 * MIB, 6 * MIB + DATA_RUN)
    disk.write(0, b"\0" * 10 * MIB)


def make_dm_crypt_stand_in(disk):
    """A plain dm-crypt volume shows only random bytes; the test kernel has no device-mapper,
    so random data over the first 2 GiB stands in for one."""
    write_random(disk, 0, 2 * GIB)


# Where the kinds with data alone (no signature) hold it.
DATA_REGIONS = {"data_mid_disk": [(DISK_BYTES // 2, DATA_RUN)], "osd_zapped": [(10 * MIB, DATA_RUN)]}
HIDDEN_DATA = [
    ("data_mid_disk", make_data_mid_disk, [data_reason(DATA_REGIONS["data_mid_disk"])]),
    ("osd_zapped", make_zapped_osd, [data_reason(DATA_REGIONS["osd_zapped"])]),
    ("osd_zapped_with_label_copy", lambda disk: make_zapped_osd(disk, label_copy=True),
     ["Has BlueStore device label at offset %d" % GIB]),
]


def writers_reasons(kind, reasons):
    """A kind's reasons as the whole-disk writers give them: their check counts more MiB of
    the same data."""
    return [data_reason(DATA_REGIONS[kind], writers=True)] if kind in DATA_REGIONS else reasons


def make_mbr_ext4_wiped(disk):
    """MBR and ext4 in a partition at 1 MiB, then wipefs -a on the disk: only the 0x55AA magic
    goes, the partition entry and the filesystem stay."""
    run(["parted", "--script", disk.path, "mklabel", "msdos", "mkpart", "primary", "1MiB", "513MiB"])
    in_partition(disk, lambda part: run(["mkfs.ext4", "-q", part]))
    run(["wipefs", "--all", disk.path])


def make_gpt_xfs_wiped(disk):
    """GPT and XFS in a partition, then wipefs -a: the headers' "EFI PART" and the protective
    MBR go, both entry arrays and the filesystem stay."""
    run(["sgdisk", "--new=1:1MiB:+512MiB", disk.path])
    in_partition(disk, lambda part: run(["mkfs.xfs", "-q", part]))
    run(["wipefs", "--all", disk.path])


def make_backup_gpt_entries_only(disk):
    """The primary GPT zeroed and the backup header wiped: the backup entries remain."""
    sector = int(open("/sys/block/%s/queue/logical_block_size" % disk.name).read())
    run(["sgdisk", "--new=1:1MiB:+100MiB", disk.path])
    disk.write(0, b"\0" * sector * 34)
    run(["wipefs", "--all", disk.path])


def in_partition(disk, make):
    """``make`` the content of partition 1 of the table just written, through a partition
    node that is gone again afterwards."""
    run(["partx", "--update", disk.path])
    try:
        make("/dev/%sp1" % disk.name)
    finally:
        delete_partitions(disk)


WIPED_TABLES = [
    ("mbr_ext4_wiped", make_mbr_ext4_wiped,
     ["Has partition entries without a table signature (MBR)", "Has a FileSystem at offset %d (ext4)" % MIB]),
    ("gpt_xfs_wiped", make_gpt_xfs_wiped,
     ["Has partition entries without a table signature (GPT, backup GPT)", "Has a FileSystem at offset %d (xfs)" % MIB]),
    ("backup_gpt_entries_only", make_backup_gpt_entries_only,
     ["Has partition entries without a table signature (backup GPT)"]),
]


def without_table(start, make):
    """A preparation that makes something in a partition from ``start``, then zeroes the MBR:
    no table at all is left, only what the partition held."""
    def prepare(disk):
        run(["parted", "--script", "--align", "none", disk.path, "mklabel", "msdos",
             "mkpart", "primary", start, "1025MiB"])
        in_partition(disk, make)
        disk.write(0, b"\0" * 512)
    return prepare


def luks_format(part):
    key = "/run/cephops-test-luks.key"
    with open(key, "w") as handle:
        handle.write("not a secret")
    try:
        run(["cryptsetup", "luksFormat", "--batch-mode", "--type", "luks2", "--pbkdf", "pbkdf2",
             "--pbkdf-force-iterations", "1000", "--key-file", key, part])
    finally:
        os.unlink(key)


def write_at(offset_and_data):
    def make(part):
        with open(part, "r+b") as handle:
            handle.seek(offset_and_data[0])
            handle.write(offset_and_data[1])
    return make


AT_OFFSET = [
    ("ext4_at_1mib", without_table("1MiB", lambda part: run(["mkfs.ext4", "-q", part])),
     ["Has a FileSystem at offset %d (ext4)" % MIB]),
    ("xfs_at_1mib", without_table("1MiB", lambda part: run(["mkfs.xfs", "-q", part])),
     ["Has a FileSystem at offset %d (xfs)" % MIB]),
    ("lvm_at_1mib", without_table("1MiB", lambda part: run(["pvcreate", "--quiet", "--force", part])),
     ["LVM detected at offset %d" % MIB]),
    ("luks_at_1mib", without_table("1MiB", luks_format), ["Has a LUKS header at offset %d" % MIB]),
    ("md_1_2_at_1mib", without_table("1MiB", write_at(md_v1_2_superblock(GIB))), ["md RAID member at offset %d" % MIB]),
    ("bluestore_at_1mib", without_table("1MiB", write_at((0, BLUESTORE_HEAD))),
     ["Has BlueStore device label at offset %d" % MIB]),
    ("swap_at_1mib", without_table("1MiB", lambda part: run(["mkswap", part])), ["swap at offset %d" % MIB]),
    ("ext4_at_sector_63", without_table("63s", lambda part: run(["mkfs.ext4", "-q", part])),
     ["Has a FileSystem at offset %d (ext4)" % (63 * 512)]),
]

HIDDEN = HIDDEN_DATA + WIPED_TABLES + AT_OFFSET


@pytest.mark.pythons
def test_blank_disk_is_available(loop_disks):
    disk = loop_disks()
    found = facts([disk])[disk.name]
    assert found["available"] is True
    assert found["reject_reasons"] == []
    assert found["signatures"] == [] and found["partitions"] == []
    assert found["data_reasons"] == [] and found["content"]["probed_offsets"] == []
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


@pytest.mark.parametrize("kind,prepare,reasons", HIDDEN, ids=[case[0] for case in HIDDEN])
def test_content_without_a_signature_at_the_start_is_refused_and_left_unchanged(loop_disks, kind, prepare, reasons):
    disk = loop_disks()
    prepare(disk)
    assert run(["wipefs", "--no-act", disk.path]).stdout.strip() == ""  # blank for libblkid
    before = disk.checksum()
    found = facts([disk])[disk.name]
    assert found["available"] is False
    assert found["reject_reasons"] == found["data_reasons"] == reasons
    assert disk.checksum() == before


def test_random_bytes_of_a_plain_dm_crypt_volume_are_data(loop_disks):
    disk = loop_disks()
    make_dm_crypt_stand_in(disk)
    before = disk.checksum()
    found = facts([disk])[disk.name]
    assert found["reject_reasons"] == [data_reason([(0, 2 * GIB)])]
    content = found["content"]
    # Random bytes are neither a table nor a signature: blkid ran where it looks, found nothing.
    assert content["partition_entries"] == [] and content["signatures"] == []
    assert content["probed_offsets"] == [63 * 512, MIB, 2 * MIB, GIB]
    assert disk.checksum() == before


def test_wiped_gpt_on_a_4kn_disk(loop_disks):
    disk = loop_disks(sector_size=4096)
    make_gpt_xfs_wiped(disk)
    found = facts([disk])[disk.name]
    assert found["logical_sector_size"] == 4096
    assert found["reject_reasons"] == WIPED_TABLES[1][2]
    assert found["content"]["partition_entries"] == [
        dict(offset=MIB, size=512 * MIB, source="GPT"), dict(offset=MIB, size=512 * MIB, source="backup GPT")]
    make_backup_gpt_entries_only(disk)
    assert facts([disk])[disk.name]["reject_reasons"] == [
        "Has partition entries without a table signature (backup GPT)", "Has a FileSystem at offset %d (xfs)" % MIB]


def test_a_blank_disk_costs_the_sample_and_no_process(loop_disks):
    """The inventory in this process, with every command it runs recorded: wipefs alone."""
    disk = loop_disks()
    calls = []

    def recorded(argv):
        calls.append(argv)
        proc = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"), check=False)
        return proc.returncode, proc.stdout, proc.stderr

    found = blockdev.build_disks(blockdev.take_snapshot(recorded, [disk.name], include_loop=True))[0]
    assert [argv[0] for argv in calls] == ["wipefs"]
    assert found["available"] is True
    assert found["content"] == dict(sampled_mib=64, nonzero_mib=0, nonzero_offsets=[], partition_entries=[],
                                    signatures=[], probed_offsets=[], errors=[], fully_checked=None,
                                    largest_missable_mib=143)


def test_a_disk_refused_for_another_reason_is_not_read(loop_disks):
    disk = loop_disks()
    make_xfs(disk)
    found = facts([disk])[disk.name]
    assert found["content"] is None and found["data_reasons"] == []


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


def test_class_gate_class_and_links_of_a_loop_disk(loop_disks):
    disk = loop_disks()
    found = facts([disk])[disk.name]
    with open("/sys/block/%s/queue/rotational" % disk.name) as handle:
        rotational = handle.read().strip() == "1"
    # No queue class covers loop devices; the gate judges them by the kernel's rotational flag.
    assert (found["class"], found["gate_class"]) == (None, "hdd" if rotational else "flash")
    # The device node, then whatever /dev/disk/by-* links udev made (none on a host without udev).
    assert found["links"][0] == disk.path
    assert all(link.startswith("/dev/disk/by-") for link in found["links"][1:])
    assert set(os.path.realpath(link) for link in found["links"]) == {disk.path}


def test_every_returned_field_is_documented(loop_disks):
    """ansible-doc must teach every key a user gets back."""
    import yaml
    from ansible_collections.cephops.osd_tuning.plugins.modules import disk_facts as module

    documented = set(yaml.safe_load(module.RETURN)["disks"]["contains"])
    disk = loop_disks()
    returned = set(facts([disk])[disk.name])
    assert returned == documented
