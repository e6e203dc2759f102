#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: disk_facts
short_description: Inventory the whole disks of a host and tell which can take a Ceph OSD
version_added: 0.1.0
description:
  - Returns every whole disk of the host in one call, with its identity (device node and
    every C(/dev/disk/by-*) link, WWN, vendor, model, serial, firmware, transport, size,
    sector sizes, rotation rate), its class for the queue roles and the disk gate, its block
    queue settings (rotational, scheduler and whether it can be changed, max_sectors_kb, write cache,
    discard) and what uses it (partitions, holders, mounts, swap, on-disk signatures, root
    filesystem).
  - Tells for each disk whether it is C(available) for a new OSD, and if not, why, using
    ceph-volume's wording where ceph-volume has one (C(Has GPT headers), C(LVM detected),
    C(Has BlueStore device label), ...) plus C(mounted), C(has holders), C(root disk),
    C(swap), C(md RAID member) and C(signatures unreadable) (fail closed).
  - Reads sysfs, the udev database, C(/proc) and the signatures libblkid finds
    (one C(wipefs --no-act) call for all disks and partitions, which also sees a lone backup
    GPT header at the end of a disk). It never writes to any device.
  - A disk that nothing of the above refuses is checked for content no signature at its
    start shows. A sample of 64 MiB is read with O_DIRECT (the first 4 MiB, the last 4 MiB
    and 56 MiB spread evenly in between); MiB that are not zero mean data
    (C(Has data without a signature)). The partition entries of an MBR (bytes 446-509) and of
    the primary and backup GPT entry arrays are read even when the table's signature was
    wiped (C(Has partition entries without a table signature)). Where a partition starts,
    at the usual first-partition offsets (sector 63, 1 MiB, 2 MiB) and at BlueStore's label
    copies (1, 10, 100 and 1000 GiB), C(blkid --probe --offset) looks for signatures, only
    where the first 128 KiB are not zero (C(Has a FileSystem at offset 1048576 (ext4)),
    C(LVM detected at offset ...), ...). A blank disk costs the sample and no process.
  - These content reasons are listed in RV(disks[].data_reasons) too; they are the only ones
    an explicit C(overwrite_data) of a module that writes the whole disk may override.
  - Every other module of this collection applies the same checks before it writes, so
    what this module calls available is what they accept.
  - No module of ansible.builtin or community.general reports signatures, holders and Ceph
    suitability per disk; C(ansible_facts.devices) from setup lacks most of them.
author:
  - cephops maintainers (@cephops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - cephops.osd_tuning.attributes.no_diff
options:
  devices:
    description:
      - Limit the inventory to these disks, given as kernel names (V(sdb)), C(/dev) paths or
        C(/dev/disk/by-id) links. Links are resolved; a name and its link count once.
      - A device that does not exist or is a partition is an error naming it.
      - When omitted, every whole disk of the host is listed.
    type: list
    elements: str
  include_loop:
    description:
      - List attached loop devices as disks too (for tests on loop devices).
    type: bool
    default: false
  include_virtual:
    description:
      - List device-mapper, md, rbd, nbd and zram devices too.
    type: bool
    default: false
  min_size_bytes:
    description:
      - Disks smaller than this are not available. The default is ceph-volume's 5 GiB.
    type: int
    default: 5368709120
notes:
  - Must run as root (C(become=true)) to read signatures and test exclusive opens.
  - Supports check mode; it changes nothing in either mode.
  - The sample does not see everything. Data in the middle of a disk that lies wholly between
    two sampled MiB (about a 57th of the disk apart) is missed, for example a small file
    left by a filesystem whose metadata was zeroed; a region longer than that gap is always
    seen.
seealso:
  - name: ceph-volume device filters
    description: The reasons ceph-volume gives when it refuses a device.
    link: https://docs.ceph.com/en/latest/ceph-volume/
"""

EXAMPLES = r"""
- name: Inventory every whole disk
  cephops.osd_tuning.disk_facts:
  register: inventory

- name: Show the disks that can take an OSD
  ansible.builtin.debug:
    msg: "{{ inventory.disks | selectattr('available') | map(attribute='path') | list }}"

- name: Inventory two disks named by stable links
  cephops.osd_tuning.disk_facts:
    devices:
      - /dev/disk/by-id/wwn-0x5002538e40a1b2c3
      - nvme0n1
  register: inventory
"""

RETURN = r"""
identity_keys:
  description:
    - The keys of a disk entry that make it the same disk tomorrow (model, serial, WWN, firmware
      and size), which every record of a disk outside the inventory copies, for example a probe
      result, a gate decision or a hardware validation report.
  returned: always
  type: list
  elements: str
disks:
  description: One entry per whole disk, sorted by kernel name.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Kernel name.
      type: str
      sample: sdb
    path:
      description: Device node.
      type: str
      sample: /dev/sdb
    devnum:
      description: Major and minor number.
      type: str
      sample: "8:16"
    by_id:
      description: C(/dev/disk/by-id) links that point to the disk (empty without udev).
      type: list
      elements: str
      sample: [/dev/disk/by-id/ata-CEPHOPS_SATA_SSD_870_PRO_3840GB_WITH_PLP_CEPHOPS-SSD-0001]
    links:
      description:
        - Every name of the whole disk, resolved here once for the roles and filters that map
          names to disks; the device node first, then every C(/dev/disk/by-*) link to the disk
          (by-id, by-path, by-diskseq and whatever else udev made), sorted.
        - Only the device node on hosts without udev.
      type: list
      elements: str
      sample: [/dev/sdb, /dev/disk/by-diskseq/2, /dev/disk/by-id/ata-CEPHOPS_SATA_SSD_870_PRO_3840GB_WITH_PLP_CEPHOPS-SSD-0001,
               /dev/disk/by-path/pci-0000:00:1f.2-ata-2]
    wwn:
      description: World wide name from udev or an C(naa.)/C(eui.) wwid in sysfs, else null.
      type: str
      sample: "0x5002538e40a1b2c3"
    model:
      description:
        - The model as the drive reports it. For an ATA disk (SATA, PATA, or USB passing ATA
          through) all 40 characters of its IDENTIFY data, from udev's C(ata_id)
          (C(ID_MODEL_ENC), decoded); sysfs holds only the 16 of libata's SCSI translation, so
          two models that start alike look alike there. The 16 characters only on a host
          without udev data.
        - NVMe and virtio disks from sysfs (complete there); SCSI and SAS disks the 16-character
          product of their INQUIRY data, all SCSI has.
      type: str
      sample: CEPHOPS SATA SSD 870 PRO 3840GB WITH PLP
    vendor:
      description:
        - Vendor from the SCSI INQUIRY data (8 characters). Null for ATA disks, whose identify
          data has no vendor field (libata's C(ATA) in sysfs names the translation; the model
          usually starts with the maker), and for NVMe.
      type: str
      sample: SEAGATE
    serial:
      description: Serial number (udev, NVMe/virtio sysfs, or SCSI VPD page 0x80).
      type: str
      sample: CEPHOPS-SSD-0001
    firmware:
      description:
        - Firmware revision. ATA disks all 8 characters, from udev's C(ID_REVISION) (sysfs
          C(device/rev) keeps 4); NVMe from sysfs C(firmware_rev); SCSI the 4 of INQUIRY.
      type: str
      sample: CPRO2B6Q
    transport:
      description: One of V(sata), V(ata), V(sas), V(nvme), V(virtio), V(usb), V(iscsi), V(fc),
        V(scsi), V(loop), V(virtual), V(unknown).
      type: str
      sample: sata
    class:
      description:
        - The class the queue roles (io_scheduler, max_sectors_kb) choose a value by.
        - V(ssd) or V(hdd) for SATA, SAS, SCSI, FC and iSCSI disks (C(sd*)), by the kernel's
          rotational flag; V(nvme); V(virtio); null for disks no class covers (loop, USB,
          device-mapper and the like).
      type: str
      sample: ssd
    gate_class:
      description:
        - The thresholds the disk gate judges the disk by, V(hdd) when the kernel calls the
          disk rotational (virtio disks often do), else V(flash).
      type: str
      sample: flash
    size_bytes:
      description: Size in bytes.
      type: int
      sample: 8589934592
    logical_sector_size:
      description: Logical sector size in bytes.
      type: int
      sample: 512
    physical_sector_size:
      description: Physical sector size in bytes.
      type: int
      sample: 4096
    rotational:
      description: Whether the kernel treats the disk as rotational.
      type: bool
    rotation_rate_rpm:
      description:
        - Nominal rotation rate the drive reports, in rpm; V(0) for a drive that says it does
          not rotate (solid state). From ATA IDENTIFY word 217 (udev's
          C(ID_ATA_ROTATION_RATE_RPM)) or SCSI VPD page 0xb1.
        - Null when the drive reports none (NVMe, virtio, older ATA and SCSI drives).
      type: int
      sample: 7200
    removable:
      description: Removable media.
      type: bool
    read_only:
      description: The kernel marks the disk read-only.
      type: bool
    scheduler:
      description: Active I/O scheduler.
      type: str
      sample: mq-deadline
    schedulers:
      description: Schedulers the kernel offers for this disk now.
      type: list
      elements: str
      sample: [mq-deadline, kyber, bfq, none]
    scheduler_changeable:
      description: False when the queue shows a bare V(none), which cannot be changed.
      type: bool
    max_sectors_kb:
      description: Largest request the kernel sends, in KiB.
      type: int
      sample: 1280
    max_hw_sectors_kb:
      description: Largest request the hardware accepts, in KiB (upper bound of max_sectors_kb).
      type: int
      sample: 32767
    read_ahead_kb:
      description: Read-ahead in KiB.
      type: int
      sample: 128
    nr_requests:
      description: Queue depth of the block layer.
      type: int
      sample: 64
    write_cache:
      description: Kernel view of the volatile write cache, V(write back) or V(write through).
      type: str
      sample: write back
    discard:
      description: Whether the disk accepts discard (TRIM/UNMAP/deallocate).
      type: bool
    discard_max_bytes:
      description: Largest discard the disk accepts, 0 without discard support.
      type: int
    partitions:
      description: Kernel names of its partitions.
      type: list
      elements: str
      sample: [sdb1]
    holders:
      description: Devices stacked on the disk or its partitions (LVM, md, dm-crypt), recursively.
      type: list
      elements: str
      sample: [dm-0]
    mountpoints:
      description: Where the disk, its partitions or its holders are mounted.
      type: list
      elements: str
      sample: [/var/lib/ceph/osd/ceph-0]
    swap:
      description: The disk, a partition or a holder is active swap.
      type: bool
    signatures:
      description: Signatures libblkid finds on the disk and its partitions.
      type: list
      elements: dict
      sample: [{device: sdb, type: gpt, offset: "0x200", uuid: null, label: null}]
    bluestore_label:
      description: The disk starts with a raw BlueStore label.
      type: bool
    root_disk:
      description: The root filesystem lives on this disk (also through LVM or md).
      type: bool
    locked:
      description: An exclusive open fails with EBUSY (something holds the disk).
      type: bool
    open_by:
      description:
        - The other processes that hold the disk or one of its partitions open, through a file
          descriptor or a memory mapping, read or write (from C(/proc/PID/fd) and
          C(/proc/PID/maps)); any makes the disk unavailable, and no C(overwrite_data) of a
          module that writes lifts that. Not counted are udev's workers, which open a disk for a
          moment after each change, and the module's own processes.
        - Each as C(pid), C(command) (its name in C(/proc/PID/comm)) and C(device) (the
          kernel name of the disk or partition it holds).
      type: list
      elements: dict
      sample: [{pid: 4242, command: qemu-system-x86, device: sdb}]
    ceph_disk_partitions:
      description: Partitions whose GPT name starts with C(ceph) (left by ceph-disk).
      type: list
      elements: str
    probe_errors:
      description: Devices (the disk or a partition) whose signatures could not be read, with
        the error; such a disk is rejected with C(signatures unreadable).
      type: list
      elements: str
    content:
      description:
        - What the content checks read and found; null when they did not run because another
          reason refuses the disk already.
        - C(sampled_mib) and C(nonzero_mib) count the MiB of the sample and those not zero,
          C(nonzero_offsets) gives the byte offsets of the first 8 of them.
        - C(partition_entries) lists the partitions found in MBR or GPT entries left without
          their table signature (C(offset), C(size) in bytes, C(source) V(MBR), V(GPT) or
          V(backup GPT)).
        - C(signatures) lists what blkid found at C(probed_offsets) (C(offset), C(type),
          C(usage), C(uuid), C(label)); C(errors) what could not be read (C(offset) null for
          the sample itself).
      type: dict
      sample:
        sampled_mib: 64
        nonzero_mib: 2
        nonzero_offsets: [0, 1048576]
        partition_entries: [{offset: 1048576, size: 536870912, source: MBR}]
        signatures: [{offset: 1048576, type: ext4, usage: filesystem, uuid: 5b6f1c2e-7a0d-4d57-9a1e-0c3f2b8e9d41, label: null}]
        probed_offsets: [1048576]
        errors: []
    data_reasons:
      description: The reject reasons that come from the content checks, the only ones an
        explicit C(overwrite_data) may override; every other reason always refuses.
      type: list
      elements: str
      sample: [Has partition entries without a table signature (MBR), Has a FileSystem at offset 1048576 (ext4)]
    available:
      description: No reject reason applies; the disk can take a new OSD.
      type: bool
    reject_reasons:
      description: Why the disk cannot take an OSD; empty when available.
      type: list
      elements: str
      sample: [Has GPT headers, Has partitions]
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev


def main():
    module = AnsibleModule(
        argument_spec=dict(
            devices=dict(type="list", elements="str"),
            include_loop=dict(type="bool", default=False),
            include_virtual=dict(type="bool", default=False),
            min_size_bytes=dict(type="int", default=blockdev.CEPH_MIN_SIZE_BYTES),
        ),
        supports_check_mode=True,
    )
    module.run_command_environ_update = {"LC_ALL": "C"}  # output is parsed
    for tool in ("wipefs", "blkid"):
        module.get_bin_path(tool, required=True)

    try:
        names = None
        if module.params["devices"] is not None:
            names = blockdev.resolve_disks(module.params["devices"])
        snapshot = blockdev.take_snapshot(
            module.run_command, names,
            include_loop=module.params["include_loop"],
            include_virtual=module.params["include_virtual"],
        )
    except blockdev.DeviceError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, disks=blockdev.build_disks(snapshot, module.params["min_size_bytes"]),
                     identity_keys=list(blockdev.IDENTITY_KEYS))


if __name__ == "__main__":
    main()
