"""blankness: the sample layout, partition entries without their table signature, blkid
output, and the read itself on sparse files (O_DIRECT, as on a disk)."""

import random
import struct
import uuid

import pytest

from ansible_collections.cephops.osd_tuning.plugins.module_utils import blankness

MIB = 1024 * 1024
GIB = 1024 * MIB
LINUX_FS = uuid.UUID("0fc63daf-8483-4772-8e79-3d69d8477de4").bytes_le


def mbr(*entries, **kwargs):
    """Sector 0 with (status, type, start, count) entries; the 0x55AA magic unless magic=False."""
    sector = bytearray(512)
    for number, (status, ptype, start, count) in enumerate(entries):
        struct.pack_into("<B3xB3xII", sector, 446 + 16 * number, status, ptype, start, count)
    if kwargs.get("magic", True):
        sector[510:512] = b"\x55\xaa"
    return bytes(sector)


def gpt_array(*partitions, **kwargs):
    """A GPT entry array of (first LBA, last LBA) partitions."""
    count, size = kwargs.get("count", 128), kwargs.get("entry_size", 128)
    array = bytearray(count * size)
    for number, (first, last) in enumerate(partitions):
        array[number * size:number * size + 16] = LINUX_FS
        struct.pack_into("<QQ", array, number * size + 32, first, last)
    return bytes(array)


def gpt_header(entry_lba, count=128, entry_size=128):
    header = bytearray(92)
    header[:8] = b"EFI PART"
    struct.pack_into("<QII", header, 72, entry_lba, count, entry_size)
    return bytes(header)


def gpt_disk(size_bytes, sector, partitions, primary_header=True, backup_header=True):
    """(head, tail) of a disk with a GPT: the first and last 4 MiB."""
    lbas = size_bytes // sector
    head = bytearray(4 * MIB)
    tail = bytearray(4 * MIB)
    head[sector:2 * sector] = gpt_header(2).ljust(sector, b"\0") if primary_header else bytes(sector)
    array = gpt_array(*partitions)
    head[2 * sector:2 * sector + len(array)] = array
    backup_lba = lbas - 1 - len(array) // sector
    start = backup_lba * sector - (size_bytes - len(tail))
    tail[start:start + len(array)] = array
    tail[-sector:] = gpt_header(backup_lba).ljust(sector, b"\0") if backup_header else bytes(sector)
    return bytes(head), bytes(tail)


# --------------------------------------------------------------------------- the sample layout

def test_sample_of_an_8_gib_disk():
    size = 8 * GIB
    chunks = blankness.sample_chunks(size)
    assert len(chunks) == 64
    assert chunks[:4] == [0, 1, 2, 3]
    assert chunks[-4:] == [8188, 8189, 8190, 8191]
    middle = chunks[4:-4]
    assert len(middle) == 56
    # Evenly spaced: no gap between neighbouring samples (head and tail included) is larger
    # than the middle divided by 57, rounded up; a region that long is always seen.
    gaps = [b - a for a, b in zip(chunks[3:-3], chunks[4:-3])]
    assert max(gaps) - min(gaps) <= 1
    assert max(gaps) <= -(-(8192 - 8) // 57)


@pytest.mark.parametrize("size,expected", [
    (1 * MIB, [0]),
    (3 * MIB + 512, [0, 1, 2, 3]),          # the last MiB is partial
    (10 * MIB, list(range(10))),             # head and tail overlap the middle: each MiB once
    (64 * MIB, list(range(64))),
    (65 * MIB, [c for c in range(65) if c != 4]),
])
def test_small_disks_are_clipped_and_counted_once(size, expected):
    assert blankness.sample_chunks(size) == expected


TIB = 1024 * GIB


@pytest.mark.parametrize("size,stride,missable", [
    (8 * GIB, 16, 15),
    (256 * GIB, 16, 15),
    (1 * TIB, 64, 63),
    (4 * TIB, 256, 255),
    (16 * TIB, 1024, 1023),
])
def test_the_writers_check_reads_the_edges_whole_and_bounds_what_it_can_miss(size, stride, missable):
    """The largest run the writers' check misses is the number docs/safety.md gives per size."""
    assert blankness.writer_stride(size) == stride
    chunks = blankness.sample_chunks(size, blankness.WRITER_EDGE_MIB, stride)
    total = size // MIB
    assert chunks[:64] == list(range(64)) and chunks[-64:] == list(range(total - 64, total))
    assert len(chunks) <= 128 + blankness.WRITER_SAMPLES
    assert blankness.largest_missable_mib(size, blankness.WRITER_EDGE_MIB, stride) == missable
    # Any run of missable + 1 MiB, wherever it starts, holds a sampled MiB.
    sampled = set(chunks)
    assert all(any(c in sampled for c in range(start, start + missable + 1)) for start in range(0, 3 * stride))
    assert all(any(c in sampled for c in range(start, start + missable + 1))
               for start in range(total - 64 - 3 * stride, total - missable))


def test_a_large_rotational_disk_gets_the_sample_and_is_not_fully_checked():
    assert blankness.writer_check(blankness.ROTATIONAL_FULL_CHECK_MAX_BYTES, True) == (16, True)
    assert blankness.writer_check(blankness.ROTATIONAL_FULL_CHECK_MAX_BYTES + MIB, True) == (None, False)
    assert blankness.writer_check(16 * TIB, False) == (1024, True)
    # The sample between full edges: 64 MiB at either end, 56 between.
    assert len(blankness.sample_chunks(4 * TIB, blankness.WRITER_EDGE_MIB)) == 128 + 56


def test_the_writers_check_finds_data_the_inventory_misses(tmp_path):
    """32 MiB of data just before the last 4 MiB, and 16 MiB between two samples of the middle."""
    path, size = str(tmp_path / "disk.img"), 8 * GIB
    inventory = set(blankness.sample_chunks(size))
    middle = next(c for c in range(2000, 8000) if not inventory & set(range(c, c + 16)))
    with open(path, "wb") as handle:
        handle.truncate(size)
        for start, length in ((size - 36 * MIB, 32 * MIB), (middle * MIB, 16 * MIB)):
            handle.seek(start)
            handle.write(b"\x5a" * length)
    disk = [(path, size, 512, True)]
    assert blankness.read_contents(Blkid(), disk)[path]["nonzero_mib"] == 0
    full = blankness.read_contents(Blkid(), disk, whole_disk_write=True)[path]
    assert full["fully_checked"] is True and full["largest_missable_mib"] == 15
    assert full["nonzero_mib"] == 32 + 1 and middle * MIB <= full["nonzero_offsets"][0] < (middle + 16) * MIB


# --------------------------------------------------------------------------- MBR entries

def test_mbr_entries_are_found_without_the_magic():
    sector = mbr((0x00, 0x83, 2048, 1048576), magic=False)
    assert blankness.mbr_partitions(sector, 16777216) == [(MIB, 512 * MIB, "MBR")]
    assert blankness.mbr_partitions(mbr((0x80, 0x83, 2048, 1048576)), 16777216) == [(MIB, 512 * MIB, "MBR")]


def test_mbr_entries_of_a_4kn_disk_count_4096_byte_sectors():
    sector = mbr((0x00, 0x83, 256, 131072), magic=False) + bytes(4096 - 512)
    assert blankness.mbr_partitions(sector, 2097152, 4096) == [(MIB, 512 * MIB, "MBR")]


def test_a_dos_partition_at_sector_63_and_a_second_one():
    sector = mbr((0x00, 0x83, 63, 2000), (0x00, 0x82, 4096, 4096), magic=False)
    assert blankness.mbr_partitions(sector, 16777216) == [(63 * 512, 2000 * 512, "MBR"), (2 * MIB, 2 * MIB, "MBR")]


@pytest.mark.parametrize("entry", [
    (0x12, 0x83, 2048, 2048),      # status neither 0x00 nor 0x80
    (0x00, 0x00, 2048, 2048),      # no type
    (0x00, 0x83, 0, 2048),         # starts in the MBR itself
    (0x00, 0x83, 2048, 0),         # empty
    (0x00, 0x83, 16777000, 2048),  # past the end of the disk
])
def test_an_invalid_entry_means_no_table_at_all(entry):
    sector = mbr((0x00, 0x83, 2048, 1048576), entry, magic=False)
    assert blankness.mbr_partitions(sector, 16777216) == []


def test_a_protective_mbr_is_no_partition():
    sector = mbr((0x00, 0xEE, 1, 0xFFFFFFFF), magic=False)
    assert blankness.mbr_partitions(sector, 16777216) == []


def test_random_sectors_are_not_mbr_tables():
    rng = random.Random(13)
    for _trial in range(20000):
        sector = rng.randbytes(512)
        assert blankness.mbr_partitions(sector, 16777216) == []


# --------------------------------------------------------------------------- GPT entries

@pytest.mark.parametrize("sector", [512, 4096])
def test_gpt_entries_with_and_without_headers(sector):
    size = 8 * GIB
    per_mib = MIB // sector
    parts = [(per_mib, 513 * per_mib - 1), (513 * per_mib, 1025 * per_mib - 1)]
    expected = [(MIB, 512 * MIB), (513 * MIB, 512 * MIB)]
    for headers in (True, False):
        head, tail = gpt_disk(size, sector, parts, primary_header=headers, backup_header=headers)
        found = blankness.gpt_partitions(head, tail, size, sector)
        assert found == [p + ("GPT",) for p in expected] + [p + ("backup GPT",) for p in expected]


@pytest.mark.parametrize("sector,backup_lba_from_end", [(512, 33), (4096, 5)])
def test_the_backup_array_alone_sits_before_the_last_lba(sector, backup_lba_from_end):
    size = 8 * GIB
    head, tail = gpt_disk(size, sector, [(MIB // sector, 2 * MIB // sector - 1)], backup_header=False)
    head = bytes(len(head))  # primary zeroed
    found = blankness.gpt_partitions(head, tail, size, sector)
    assert found == [(MIB, MIB, "backup GPT")]
    # Where the standard array starts: LBA -33 (512-byte sectors) or LBA -5 (4096-byte sectors).
    start = len(tail) - backup_lba_from_end * sector
    assert tail[start:start + 16] == LINUX_FS


def test_an_intact_header_says_where_its_array_is():
    size, sector = 8 * GIB, 512
    head = bytearray(4 * MIB)
    head[sector:sector + 92] = gpt_header(10, count=4, entry_size=256)
    array = gpt_array((2048, 4095), count=4, entry_size=256)
    head[10 * sector:10 * sector + len(array)] = array
    assert blankness.gpt_partitions(bytes(head), bytes(4 * MIB), size, sector) == [(MIB, MIB, "GPT")]


@pytest.mark.parametrize("first,last", [(1, 100), (100, 99), (2048, 16777216), (2 ** 63, 2 ** 63 + 1)])
def test_an_invalid_gpt_entry_means_no_array(first, last):
    array = gpt_array((2048, 4095), (first, last))
    assert blankness.gpt_entries(array, 128, 16777216, 512, "GPT") == []


def test_random_data_is_not_a_gpt():
    rng = random.Random(7)
    size = 8 * GIB
    for _trial in range(200):
        head = rng.randbytes(40 * 512)
        tail = rng.randbytes(40 * 512)
        assert blankness.gpt_partitions(head, tail, size, 512) == []


# --------------------------------------------------------------------------- blkid

def test_blkid_argv_probes_from_the_offset():
    assert blankness.blkid_argv("/dev/sdb", 1048576) == [
        "blkid", "--probe", "--offset", "1048576", "--output", "export", "/dev/sdb"]
    assert blankness.blkid_argv("/dev/sdb", 1048576, 536870912)[4:6] == ["--size", "536870912"]


def test_blkid_export_is_parsed_with_escapes():
    text = ("DEVNAME=/dev/loop3\nUUID=0b1e8c52-3c4e-4f0e-9d55-2d6a7c0b8f10\nBLOCK_SIZE=4096\n"
            "LABEL=osd\\ data\nTYPE=ext4\nUSAGE=filesystem\n")
    tags = blankness.parse_blkid_export(text)
    assert tags["LABEL"] == "osd data"
    assert blankness.signature_from_export(1048576, tags) == {
        "offset": 1048576, "type": "ext4", "usage": "filesystem",
        "uuid": "0b1e8c52-3c4e-4f0e-9d55-2d6a7c0b8f10", "label": "osd data"}


def test_a_partition_table_at_an_offset_is_a_signature_too():
    tags = blankness.parse_blkid_export("DEVNAME=/dev/loop3\nPTUUID=abf1bf0f\nPTTYPE=dos\n")
    assert blankness.signature_from_export(MIB, tags) == {
        "offset": MIB, "type": "dos", "usage": "partition table", "uuid": "abf1bf0f", "label": None}
    assert blankness.signature_from_export(MIB, {"DEVNAME": "/dev/loop3"}) is None


# --------------------------------------------------------------------------- reading

class Blkid:
    """A stand-in for run_command: records each call and answers from ``found``."""

    def __init__(self, found=None):
        self.found, self.calls = found or {}, []

    def __call__(self, argv):
        self.calls.append(argv)
        offset = int(argv[argv.index("--offset") + 1])
        return (0, self.found[offset], "") if offset in self.found else (2, "", "")


def image(tmp_path, size, writes=()):
    path = tmp_path / "disk.img"
    with open(str(path), "wb") as handle:
        handle.truncate(size)
        for offset, data in writes:
            handle.seek(offset)
            handle.write(data)
    return str(path)


def test_a_blank_disk_costs_no_process(tmp_path):
    path = image(tmp_path, 8 * GIB)
    blkid = Blkid()
    content = blankness.read_contents(blkid, [(path, 8 * GIB, 512, False)])[path]
    assert blkid.calls == []
    assert content == dict(sampled_mib=64, nonzero_mib=0, nonzero_offsets=[], partition_entries=[],
                           signatures=[], probed_offsets=[], errors=[], fully_checked=None, largest_missable_mib=143)


def test_data_in_the_middle_is_counted_and_located(tmp_path):
    size = 8 * GIB
    # A byte in each MiB of a 200 MiB region, more than the spacing of the samples.
    path = image(tmp_path, size, [(4 * GIB + 300 * MIB + n * MIB + 777, b"\x01") for n in range(200)])
    content = blankness.read_contents(Blkid(), [(path, size, 512, False)])[path]
    seen = [c * MIB for c in blankness.sample_chunks(size) if 4 * GIB + 299 * MIB < c * MIB < 4 * GIB + 500 * MIB]
    assert seen and content["nonzero_offsets"] == seen
    assert content["nonzero_mib"] == len(seen)


def test_leftover_mbr_leads_blkid_to_the_partition(tmp_path):
    size = 8 * GIB
    path = image(tmp_path, size, [(0, mbr((0x00, 0x83, 2048, 1048576), magic=False)),
                                  (MIB + 1024, b"ext4 superblock stand-in")])
    blkid = Blkid({MIB: "DEVNAME=x\nUUID=1234\nTYPE=ext4\nUSAGE=filesystem\n"})
    content = blankness.read_contents(blkid, [(path, size, 512, False)])[path]
    assert content["partition_entries"] == [dict(offset=MIB, size=512 * MIB, source="MBR")]
    # Only where something was written: sector 63 and 2 MiB read as zeros, 1 GiB too.
    assert blkid.calls == [["blkid", "--probe", "--offset", str(MIB), "--size", str(512 * MIB),
                            "--output", "export", path]]
    assert content["signatures"] == [dict(offset=MIB, type="ext4", usage="filesystem", uuid="1234", label=None)]
    assert content["probed_offsets"] == [MIB]


def test_bluestore_label_copies_are_looked_at(tmp_path):
    size = 16 * GIB
    path = image(tmp_path, size, [(10 * GIB, b"bluestore block device\n")])
    blkid = Blkid({10 * GIB: "TYPE=ceph_bluestore\nUSAGE=other\n"})
    content = blankness.read_contents(blkid, [(path, size, 512, False)])[path]
    assert content["probed_offsets"] == [10 * GIB]
    assert content["signatures"][0]["type"] == "ceph_bluestore"


def test_blkid_failures_are_kept(tmp_path):
    size = 8 * GIB
    path = image(tmp_path, size, [(MIB, b"\x01")])
    content = blankness.read_contents(lambda argv: (4, "", "blkid: bad usage\n"), [(path, size, 512, False)])[path]
    assert content["errors"] == [dict(offset=MIB, error="blkid: bad usage")]


def test_an_unreadable_disk_is_an_error_not_blank(tmp_path):
    missing = str(tmp_path / "missing")
    content = blankness.read_contents(Blkid(), [(missing, 8 * GIB, 512, False)])[missing]
    assert content["errors"][0]["offset"] is None
    assert content["errors"][0]["error"].startswith("cannot open %s" % missing)


def test_disks_are_read_in_parallel_and_each_keeps_its_own_result(tmp_path):
    disks = []
    for number in range(12):
        path = str(tmp_path / ("d%d.img" % number))
        with open(path, "wb") as handle:
            handle.truncate(256 * MIB)
            handle.seek(number * MIB)
            handle.write(b"\x01")
        disks.append((path, 256 * MIB, 512, False))
    contents = blankness.read_contents(Blkid(), disks)
    for number, (path, _size, _sector, _rotational) in enumerate(disks):
        first = contents[path]["nonzero_offsets"]
        assert first == ([number * MIB] if number * MIB in [c * MIB for c in blankness.sample_chunks(256 * MIB)] else [])
