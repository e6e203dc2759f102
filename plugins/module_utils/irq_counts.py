# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Interrupt counts of a disk, for the interrupt rate a max_sectors_kb value costs (smaller
requests mean more of them, the max_sectors_kb article's other cost).

A disk's interrupts are those of the PCI function that serves it (virtio-blk, NVMe, AHCI, SAS
HBA), found through sysfs and counted in /proc/interrupts. They are shared by every disk of that
function (the ports of one AHCI controller). A disk with no PCI function (loop, device mapper)
has no interrupts of its own: it is counted by the host's total (the first number of the
``intr`` line of /proc/stat), which includes every other interrupt of the host, timers too.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev

HOST = "host"
DEVICE = "device"


def device_irqs(name, sys_root="/sys"):
    """(source, IRQ numbers) of disk ``name``: (DEVICE, [...]) from the nearest ancestor of
    its device with ``msi_irqs`` or a non-zero ``irq``, else (HOST, [])."""
    path = os.path.realpath(os.path.join(sys_root, "block", name, "device"))
    top = os.path.join(sys_root, "devices")
    while path.startswith(top + os.sep):
        msi = os.path.join(path, "msi_irqs")
        if os.path.isdir(msi):
            irqs = sorted(int(entry) for entry in os.listdir(msi) if entry.isdigit())
            if irqs:
                return DEVICE, irqs
        irq = blockdev.read_value(os.path.join(path, "irq"))
        if irq and irq.isdigit() and int(irq) > 0:
            return DEVICE, [int(irq)]
        path = os.path.dirname(path)
    return HOST, []


def parse_interrupts(text):
    """{IRQ number: count summed over CPUs} of /proc/interrupts' numbered lines."""
    lines = text.splitlines()
    cpus = len(lines[0].split()) if lines else 0
    counts = {}
    for line in lines[1:]:
        label, _sep, rest = line.partition(":")
        if not label.strip().isdigit():
            continue
        fields = rest.split()[:cpus]
        counts[int(label)] = sum(int(field) for field in fields if field.isdigit())
    return counts


def parse_stat_total(text):
    """The host's total interrupt count: the first number of /proc/stat's ``intr`` line."""
    for line in text.splitlines():
        if line.startswith("intr "):
            return int(line.split()[1])
    raise ValueError("no intr line in /proc/stat")


def snapshot(proc_root="/proc"):
    """({IRQ: count}, host total) now."""
    with open(os.path.join(proc_root, "interrupts")) as handle:
        per_irq = parse_interrupts(handle.read())
    with open(os.path.join(proc_root, "stat")) as handle:
        total = parse_stat_total(handle.read())
    return per_irq, total


def rate(before, after, source, irqs, seconds):
    """Interrupts per second of one disk between two snapshots."""
    if seconds <= 0:
        return None
    if source == HOST:
        delta = after[1] - before[1]
    else:
        delta = sum(after[0].get(irq, 0) - before[0].get(irq, 0) for irq in irqs)
    return round(delta / float(seconds), 1)
