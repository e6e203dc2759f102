"""On-disk metadata the test host's kernel cannot create itself.

The test host kernel has no md driver, so ``mdadm --create`` cannot run there; this
writes the md superblocks mdadm would write - v1.0 at the end of the device, which is what
makes such members easy to miss, and v1.2 4 KiB from its start - in the layout of the
kernel's ``struct mdp_superblock_1``, with the checksum libblkid verifies.
"""

import struct
import uuid

MD_SB_MAGIC = 0xA92B4EFC
SB_BYTES = 256  # fixed part of struct mdp_superblock_1, before dev_roles[max_dev]


def _md_checksum(sb):
    total = sum(struct.unpack_from("<%dI" % (len(sb) // 4), sb))
    total -= struct.unpack_from("<I", sb, 216)[0]  # sb_csum itself counts as zero
    return ((total & 0xFFFFFFFF) + (total >> 32)) & 0xFFFFFFFF


def _md_v1_superblock(sb_sector, data_offset, data_size, raid_disks, level, name):
    """struct mdp_superblock_1 (fixed part and dev_roles); sectors count from the member's start."""
    max_dev = raid_disks
    sb = bytearray(SB_BYTES + 2 * max_dev)
    struct.pack_into("<III", sb, 0, MD_SB_MAGIC, 1, 0)
    sb[16:32] = uuid.uuid4().bytes
    sb[32:32 + len(name)] = name
    struct.pack_into("<I", sb, 72, level)
    struct.pack_into("<Q", sb, 80, data_size)             # size (sectors)
    struct.pack_into("<I", sb, 92, raid_disks)
    struct.pack_into("<QQQ", sb, 128, data_offset, data_size, sb_sector)  # data_offset, data_size, super_offset
    sb[168:184] = uuid.uuid4().bytes                       # device_uuid
    struct.pack_into("<Q", sb, 200, 1)                    # events
    struct.pack_into("<I", sb, 220, max_dev)
    for role in range(max_dev):
        struct.pack_into("<H", sb, SB_BYTES + 2 * role, role)
    struct.pack_into("<I", sb, 216, _md_checksum(sb))
    return sb_sector * 512, bytes(sb)


def md_v1_0_superblock(device_bytes, raid_disks=2, level=1, name=b"cephops:test"):
    """(offset, bytes) of an md v1.0 superblock for a member of ``device_bytes``."""
    sb_sector = (device_bytes // 512 - 16) & ~7  # mdadm: 8 KiB before the end, 4 KiB aligned
    return _md_v1_superblock(sb_sector, 0, sb_sector - 16, raid_disks, level, name)


def md_v1_2_superblock(device_bytes, raid_disks=2, level=1, name=b"cephops:test"):
    """(offset, bytes) of an md v1.2 superblock (mdadm's default: 4 KiB from the start, data
    from 1 MiB) for a member of ``device_bytes``."""
    data_offset = 2048
    return _md_v1_superblock(8, data_offset, device_bytes // 512 - data_offset, raid_disks, level, name)
