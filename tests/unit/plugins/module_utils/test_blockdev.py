"""blockdev: parsing and disk records, fed with outputs captured on real hosts."""

import pytest

from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev

MIB = 1024 * 1024

# Captured on a Debian 12 test host (kernel 6.x) with loop devices prepared like the
# integration tests do; the map says what each loop device held.
HOST_ZOO = {
    "loop0": [],                                                # blank
    "loop1": ["Has GPT headers", "Has partitions"],             # GPT + 2 partitions
    "loop2": ["Has GPT headers"],                               # lone backup GPT at the end
    "loop3": ["Has a FileSystem"],                              # XFS, no partition table
    "loop4": ["LVM detected"],                                  # pvcreate
    "loop5": ["md RAID member"],                                # md v1.0 superblock at the end
    "loop6": ["Has BlueStore device label"],                    # raw BlueStore label
    "loop7": ["swap"],                                          # mkswap
    "loop8": ["Insufficient space (<5GB)"],                     # 1 GiB
    "loop9": ["read-only"],                                     # blockdev --setro
    "loop10": ["locked", "Has a FileSystem", "mounted"],        # XFS mounted
    "loop11": ["locked", "swap"],                               # swapon
    # The root disk, whose signatures this sandboxed host refused to let wipefs read.
    "vda": ["signatures unreadable", "mounted", "root disk"],
}


@pytest.fixture
def host_zoo(snapshot):
    return {d["name"]: d for d in blockdev.build_disks(snapshot("host_loop_zoo"))}


@pytest.mark.parametrize("name", sorted(HOST_ZOO))
def test_reject_reasons_of_each_kind(host_zoo, name):
    assert host_zoo[name]["reject_reasons"] == HOST_ZOO[name]
    assert host_zoo[name]["available"] is (HOST_ZOO[name] == [])


def test_lone_backup_gpt_is_seen_at_the_end(host_zoo):
    sigs = host_zoo["loop2"]["signatures"]
    assert [(s["type"], s["offset"]) for s in sigs] == [("gpt", "0x1fffffe00")]


def test_partitions_and_mounts(host_zoo):
    assert host_zoo["loop1"]["partitions"] == ["loop1p1", "loop1p2"]
    assert host_zoo["loop10"]["mountpoints"] == ["/tmp/cap-mnt"]
    assert host_zoo["vda"]["mountpoints"] == ["/"]
    assert host_zoo["vda"]["root_disk"] is True
    assert host_zoo["loop10"]["root_disk"] is False


def test_swap_and_bluestore_flags(host_zoo):
    assert host_zoo["loop11"]["swap"] is True
    assert host_zoo["loop7"]["swap"] is False  # a signature only: not active swap
    assert host_zoo["loop6"]["bluestore_label"] is True
    assert [s["type"] for s in host_zoo["loop6"]["signatures"]] == ["ceph_bluestore"]


def test_identity_and_queue_of_a_virtio_disk(host_zoo):
    vda = host_zoo["vda"]
    assert vda["transport"] == "virtio"
    assert vda["size_bytes"] == 256 * 1024 ** 3
    assert vda["serial"] == "overlayblk"
    assert vda["scheduler"] == "mq-deadline"
    assert vda["schedulers"] == ["none", "mq-deadline", "kyber", "bfq"]
    assert vda["scheduler_changeable"] is True
    assert vda["probe_errors"] == ["vda: wipefs: error: /dev/vda: probing initialization failed: Operation not permitted"]


def test_queue_fields_of_a_loop_disk(host_zoo):
    loop = host_zoo["loop0"]
    assert loop["transport"] == "loop"
    assert loop["size_bytes"] == 8 * 1024 ** 3
    assert (loop["logical_sector_size"], loop["physical_sector_size"]) == (512, 512)
    assert (loop["max_sectors_kb"], loop["max_hw_sectors_kb"]) == (1280, 1280)
    assert loop["read_ahead_kb"] == 2560
    assert loop["nr_requests"] == 128
    assert loop["write_cache"] == "write back"
    assert loop["discard"] is True
    assert loop["rotational"] is True


def test_class_gate_class_and_links_of_the_captured_host(host_zoo):
    # A virtio disk that reports rotational, as QEMU's do: its own class, the HDD thresholds.
    assert (host_zoo["vda"]["class"], host_zoo["vda"]["gate_class"]) == ("virtio", "hdd")
    # Loop devices: no class the queue roles tune; rotational here, so HDDs to the gate.
    assert set((d["class"], d["gate_class"]) for name, d in host_zoo.items() if name != "vda") == {(None, "hdd")}
    # No udev on this host: a disk's only name is its device node.
    assert all(d["links"] == [d["path"]] and d["by_id"] == [] for d in host_zoo.values())


def test_links_gather_every_by_link_of_the_disk_from_the_directories_and_udev(snapshot):
    found = snapshot("host_loop_zoo")
    vda = found["blocks"]["vda"]
    vda["links"] = ["/dev/disk/by-path/pci-0000:00:02.0", "/dev/disk/by-diskseq/1"]
    vda["udev"] = ("S:disk/by-id/virtio-overlayblk\nS:disk/by-path/pci-0000:00:02.0\nS:vda-alias\n"
                   "E:ID_SERIAL=overlayblk\n")
    disk = dict((d["name"], d) for d in blockdev.build_disks(found))["vda"]
    assert disk["links"] == ["/dev/vda", "/dev/disk/by-diskseq/1", "/dev/disk/by-id/virtio-overlayblk",
                             "/dev/disk/by-path/pci-0000:00:02.0"]
    assert disk["by_id"] == ["/dev/disk/by-id/virtio-overlayblk"]


def test_disk_links_are_read_from_every_by_directory(tmp_path, monkeypatch):
    for kind, link, target in (("by-id", "wwn-0x5000c500a1b2c3d4", "../../sdb"),
                               ("by-id", "wwn-0x5000c500a1b2c3d4-part1", "../../sdb1"),
                               ("by-path", "pci-0000:00:1f.2-ata-2", "../../sdb"),
                               ("by-diskseq", "7", "../../nvme0n1")):
        (tmp_path / kind).mkdir(exist_ok=True)
        (tmp_path / kind / link).symlink_to(target)
    (tmp_path / "not-a-link-dir").mkdir()
    monkeypatch.setattr(blockdev, "DISK_LINKS_DIR", str(tmp_path))
    found = blockdev._disk_links()
    assert sorted(found["sdb"]) == [str(tmp_path / "by-id" / "wwn-0x5000c500a1b2c3d4"),
                                    str(tmp_path / "by-path" / "pci-0000:00:1f.2-ata-2")]
    assert found["nvme0n1"] == [str(tmp_path / "by-diskseq" / "7")]
    assert sorted(found) == ["nvme0n1", "sdb", "sdb1"]


@pytest.mark.parametrize("name,transport,rotational,expected", [
    ("sda", "sata", False, "ssd"),
    ("sdb", "sata", True, "hdd"),
    ("sdc", "sas", True, "hdd"),
    ("sdd", "iscsi", False, "ssd"),
    ("sde", "usb", False, None),
    ("nvme0n1", "nvme", False, "nvme"),
    ("vdb", "virtio", True, "virtio"),
    ("loop0", "loop", False, None),
    ("dm-0", "virtual", False, None),
])
def test_disk_class(name, transport, rotational, expected):
    assert blockdev.disk_class(name, transport, rotational) == expected
    assert blockdev.gate_class(rotational) == ("hdd" if rotational else "flash")


def test_custom_minimum_size_names_its_bytes(snapshot):
    disks = {d["name"]: d for d in blockdev.build_disks(snapshot("host_loop_zoo"), min_size_bytes=16 * 1024 ** 3)}
    assert disks["loop0"]["reject_reasons"] == ["Insufficient space (<17179869184 bytes)"]


@pytest.mark.parametrize("text,expected", [
    ("[mq-deadline] kyber bfq none", ("mq-deadline", ["mq-deadline", "kyber", "bfq", "none"], True)),
    ("[none] mq-deadline kyber bfq", ("none", ["none", "mq-deadline", "kyber", "bfq"], True)),
    ("noop deadline [cfq]", ("cfq", ["noop", "deadline", "cfq"], True)),  # legacy single-queue kernel
    ("[noop] deadline cfq", ("noop", ["noop", "deadline", "cfq"], True)),
    ("none", ("none", ["none"], False)),  # bare none: no elevator support, cannot change
    ("[none]", ("none", ["none"], False)),
    ("", (None, [], False)),
])
def test_parse_scheduler(text, expected):
    assert blockdev.parse_scheduler(text) == expected


def test_parse_wipefs_json_lists_every_device(fixture_text):
    sigs = blockdev.parse_wipefs_json(fixture_text("wipefs/two_devices.json"))
    assert [(s["device"], s["type"]) for s in sigs] == [("loop0", "gpt"), ("loop0", "gpt"), ("loop0", "PMBR"), ("loop1", "xfs")]


def test_parse_wipefs_json_empty(fixture_text):
    assert blockdev.parse_wipefs_json(fixture_text("wipefs/blank.json")) == []
    assert blockdev.parse_wipefs_json("") == []


@pytest.mark.parametrize("name,path,props,expected", [
    ("sda", "/sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda", {}, "sata"),
    ("sda", "/sys/devices/pci0000:00/0000:00:1f.1/ata1/host0/target0:0:0/0:0:0:0/block/sda",
     {"ID_ATA_SATA": "0"}, "ata"),
    ("nvme0n1", "/sys/devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1", {}, "nvme"),
    ("vdb", "/sys/devices/pci0000:00/0000:00:05.0/virtio2/block/vdb", {}, "virtio"),
    ("sda", "/sys/devices/pci0000:00/0000:00:06.0/virtio3/host2/target2:0:0/2:0:0:0/block/sda", {}, "scsi"),
    ("sdb", "/sys/devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block/sdb", {}, "usb"),
    ("sdc", "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/host7/port-7:0/expander-7:0/port-7:0:3/"
            "end_device-7:0:3/target7:0:3/7:0:3:0/block/sdc", {}, "sas"),
    ("sdd", "/sys/devices/platform/host8/session1/target8:0:0/8:0:0:1/block/sdd", {}, "iscsi"),
    ("sde", "/sys/devices/pci0000:00/0000:00:03.0/0000:05:00.0/host9/rport-9:0-2/target9:0:1/9:0:1:0/block/sde",
     {}, "fc"),
    ("loop0", "/sys/devices/virtual/block/loop0", {}, "loop"),
    ("dm-0", "/sys/devices/virtual/block/dm-0", {}, "virtual"),
])
def test_detect_transport(name, path, props, expected):
    assert blockdev.detect_transport(name, path, props) == expected


def test_wanted_kernel_names():
    assert blockdev.wanted_kernel_name("sda")
    assert blockdev.wanted_kernel_name("nvme0n1")
    assert not blockdev.wanted_kernel_name("sr0")
    assert not blockdev.wanted_kernel_name("loop0")
    assert blockdev.wanted_kernel_name("loop0", include_loop=True)
    assert not blockdev.wanted_kernel_name("zram0")
    assert blockdev.wanted_kernel_name("dm-3", include_virtual=True)


def test_resolve_disk_errors_name_the_device(tmp_path):
    with pytest.raises(blockdev.DeviceError, match="^/dev/cephops-missing: no such device$"):
        blockdev.resolve_disk("/dev/cephops-missing")
    regular = tmp_path / "file"
    regular.write_text("x")
    with pytest.raises(blockdev.DeviceError, match="not a block device"):
        blockdev.resolve_disk(str(regular))
    with pytest.raises(blockdev.DeviceError, match="empty device name"):
        blockdev.resolve_disk("")


def test_resolve_disks_reports_every_bad_name():
    with pytest.raises(blockdev.DeviceError) as err:
        blockdev.resolve_disks(["/dev/cephops-a", "/dev/cephops-b"])
    assert str(err.value) == "/dev/cephops-a: no such device; /dev/cephops-b: no such device"


# --------------------------------------------------------------------------- content checks

def blank_content(**changes):
    content = dict(sampled_mib=64, nonzero_mib=0, nonzero_offsets=[], partition_entries=[], signatures=[],
                   probed_offsets=[], errors=[])
    content.update(changes)
    return content


def with_content(snapshot, content, name="loop0"):
    """The host zoo with ``content`` as what the sample of ``name`` (a blank disk) found."""
    zoo = snapshot("host_loop_zoo")
    zoo["blocks"][name]["content"] = content
    return dict((d["name"], d) for d in blockdev.build_disks(zoo))[name]


def sig(offset, sig_type):
    return dict(offset=offset, type=sig_type, usage=None, uuid=None, label=None)


def test_snapshots_without_content_still_load(host_zoo):
    """Captured before the content checks: not read, so no content reason."""
    assert host_zoo["loop0"]["content"] is None
    assert all(d["data_reasons"] == [] for d in host_zoo.values())


def test_a_blank_sample_adds_nothing(snapshot):
    disk = with_content(snapshot, blank_content())
    assert disk["available"] is True and disk["data_reasons"] == []
    assert disk["content"]["sampled_mib"] == 64


def test_data_without_a_signature(snapshot):
    disk = with_content(snapshot, blank_content(nonzero_mib=18, nonzero_offsets=[0, MIB]))
    assert disk["reject_reasons"] == disk["data_reasons"] == ["Has data without a signature (18 of 64 sampled MiB not zero)"]
    assert disk["available"] is False


@pytest.mark.parametrize("sig_type,reason", [
    ("ext4", "Has a FileSystem at offset 1048576 (ext4)"),
    ("xfs", "Has a FileSystem at offset 1048576 (xfs)"),
    ("LVM2_member", "LVM detected at offset 1048576"),
    ("linux_raid_member", "md RAID member at offset 1048576"),
    ("crypto_LUKS", "Has a LUKS header at offset 1048576"),
    ("ceph_bluestore", "Has BlueStore device label at offset 1048576"),
    ("swap", "swap at offset 1048576"),
    ("dos", "Has a partition table at offset 1048576"),
])
def test_signatures_at_an_offset_use_the_inventory_words(snapshot, sig_type, reason):
    disk = with_content(snapshot, blank_content(nonzero_mib=1, signatures=[sig(MIB, sig_type)]))
    # The signature explains the data: no generic reason next to it.
    assert disk["data_reasons"] == [reason]


def test_wiped_tables_name_every_source_once(snapshot):
    entries = [dict(offset=MIB, size=512 * MIB, source="GPT"), dict(offset=MIB, size=512 * MIB, source="backup GPT"),
               dict(offset=513 * MIB, size=512 * MIB, source="GPT")]
    disk = with_content(snapshot, blank_content(nonzero_mib=3, partition_entries=entries, signatures=[sig(MIB, "xfs")]))
    assert disk["data_reasons"] == ["Has partition entries without a table signature (GPT, backup GPT)",
                                    "Has a FileSystem at offset 1048576 (xfs)"]


def test_unreadable_content_is_never_blank(snapshot):
    errors = [dict(offset=None, error="reading /dev/loop0: [Errno 5] Input/output error"),
              dict(offset=MIB, error="blkid: ambivalent result")]
    disk = with_content(snapshot, blank_content(errors=errors))
    assert disk["data_reasons"] == ["Data unreadable (reading /dev/loop0: [Errno 5] Input/output error)",
                                    "signatures unreadable at offset 1048576 (blkid: ambivalent result)"]


def test_overwrite_data_lifts_only_the_content_reasons(snapshot):
    disk = with_content(snapshot, blank_content(nonzero_mib=5), name="loop8")  # 1 GiB: too small as well
    assert disk["reject_reasons"] == ["Insufficient space (<5GB)", "Has data without a signature (5 of 64 sampled MiB not zero)"]
    assert blockdev.blocking_reasons(disk) == disk["reject_reasons"]
    assert blockdev.blocking_reasons(disk, overwrite_data=True) == ["Insufficient space (<5GB)"]


def test_overwrite_data_never_lifts_signatures_or_use(host_zoo):
    for name in ("loop1", "loop3", "loop6", "loop10", "vda"):
        assert blockdev.blocking_reasons(host_zoo[name], overwrite_data=True) == host_zoo[name]["reject_reasons"]
