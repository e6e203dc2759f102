# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r"""
options:
  reserve_percent:
    description: Share of each disk left unused, in percent, for entries that do not set their own.
    type: float
    default: 20
  restore:
    description:
      - Put back what O(record) holds for the disks of O(disks) (every disk in the record
        when O(disks) is empty), then drop them from the record; the file goes once empty.
        A disk is only put back when it is blank again (its partition or namespace holds
        nothing); recorded disks that are not present stay in the record.
    type: bool
    default: false
"""

    # The entries of each method: the same options, and the method's own ones after them (a
    # fragment cannot add suboptions to another fragment's option).

    # The entries of ata_hpa.
    HPA = r"""
options:
  disks:
    description:
      - The disks of this method, each named by exactly one of O(disks[].serial),
        O(disks[].wwn) or O(disks[].device). Every disk is planned and checked before any
        is changed; one refusal changes nothing.
      - With O(restore=true), the disks to put back; empty means every disk in O(record).
    type: list
    elements: dict
    default: []
    suboptions:
      serial:
        description: The disk's serial number, as M(cephops.osd_tuning.disk_facts) reports it.
        type: str
      wwn:
        description: The disk's world wide name, as M(cephops.osd_tuning.disk_facts) reports it (for example V(0x5002538e40a1b2c3)).
        type: str
      device:
        description:
          - The disk as C(/dev) path, kernel name or C(/dev/disk/by-id) link. Partitions and
            virtual devices (device-mapper, md, ...) are refused.
        type: str
      reserve_percent:
        description: Share of the disk left unused, in percent; O(reserve_percent) when not given.
        type: float
      overwrite_data:
        description:
          - The disk may hold data that no tool recognises; it is destroyed.
          - Lifts only the reasons of the content checks of M(cephops.osd_tuning.disk_facts)
            (its C(data_reasons) - data without a signature, partition entries without a table
            signature, signatures away from the start of the disk). Signatures at the start,
            partitions, mounts, holders and the root disk always refuse. A restore never uses it.
        type: bool
        default: false
      visible_sectors:
        description:
          - Visible size in logical sectors, at most the native maximum, instead of
            O(disks[].reserve_percent).
        type: int
"""

    # The entries of overprovision_partition.
    PARTITION = r"""
options:
  disks:
    description:
      - The disks of this method, each named by exactly one of O(disks[].serial),
        O(disks[].wwn) or O(disks[].device). Every disk is planned and checked before any
        is changed; one refusal changes nothing.
      - With O(restore=true), the disks to put back; empty means every disk in O(record).
    type: list
    elements: dict
    default: []
    suboptions:
      serial:
        description: The disk's serial number, as M(cephops.osd_tuning.disk_facts) reports it.
        type: str
      wwn:
        description: The disk's world wide name, as M(cephops.osd_tuning.disk_facts) reports it (for example V(0x5002538e40a1b2c3)).
        type: str
      device:
        description:
          - The disk as C(/dev) path, kernel name or C(/dev/disk/by-id) link. Partitions and
            virtual devices (device-mapper, md, ...) are refused.
        type: str
      reserve_percent:
        description: Share of the disk left unused, in percent; O(reserve_percent) when not given.
        type: float
      overwrite_data:
        description:
          - The disk may hold data that no tool recognises; it is destroyed.
          - Lifts only the reasons of the content checks of M(cephops.osd_tuning.disk_facts)
            (its C(data_reasons) - data without a signature, partition entries without a table
            signature, signatures away from the start of the disk). Signatures at the start,
            partitions, mounts, holders and the root disk always refuse. A restore never uses it.
        type: bool
        default: false
      discard:
        description:
          - Discard the whole disk before it is partitioned, so the unallocated reserve holds
            no data. A disk that cannot discard is refused unless this is false, which is
            right only for a disk that is new or was secure-erased (some RAID controllers do
            not pass discards).
        type: bool
        default: true
"""

    # The entries of nvme_namespace.
    NVME_NAMESPACE = r"""
options:
  disks:
    description:
      - The disks of this method, each named by exactly one of O(disks[].serial),
        O(disks[].wwn) or O(disks[].device). Every disk is planned and checked before any
        is changed; one refusal changes nothing.
      - With O(restore=true), the disks to put back; empty means every disk in O(record).
    type: list
    elements: dict
    default: []
    suboptions:
      serial:
        description: The disk's serial number, as M(cephops.osd_tuning.disk_facts) reports it.
        type: str
      wwn:
        description: The disk's world wide name, as M(cephops.osd_tuning.disk_facts) reports it (for example V(0x5002538e40a1b2c3)).
        type: str
      device:
        description:
          - The disk as C(/dev) path, kernel name or C(/dev/disk/by-id) link. Partitions and
            virtual devices (device-mapper, md, ...) are refused.
        type: str
      reserve_percent:
        description: Share of the disk left unused, in percent; O(reserve_percent) when not given.
        type: float
      overwrite_data:
        description:
          - The disk may hold data that no tool recognises; it is destroyed.
          - Lifts only the reasons of the content checks of M(cephops.osd_tuning.disk_facts)
            (its C(data_reasons) - data without a signature, partition entries without a table
            signature, signatures away from the start of the disk). Signatures at the start,
            partitions, mounts, holders and the root disk always refuse. A restore never uses it.
        type: bool
        default: false
"""
