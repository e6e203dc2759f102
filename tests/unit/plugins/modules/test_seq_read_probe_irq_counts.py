"""irq_counts: a disk's IRQs from a sysfs tree, /proc/interrupts and /proc/stat parsing, rates."""

import os

from ansible_collections.cephops.osd_tuning.plugins.modules import seq_read_probe

# Two CPUs; IRQ 30 has a trailing device name with digits, NMI and ERR lines are not numbered.
INTERRUPTS = """           CPU0       CPU1
 24:          1          0  IO-APIC   5-edge      ACPI:Ged
 30:        100         50  PCI-MSIX-0000:00:04.0   1-edge      virtio2-req.0
 31:          7          3  PCI-MSIX-0000:00:04.0   2-edge      virtio2-req.1
NMI:          0          0   Non-maskable interrupts
ERR:          0
"""


def test_parse_interrupts_sums_cpus_of_numbered_lines():
    assert seq_read_probe.parse_interrupts(INTERRUPTS) == {24: 1, 30: 150, 31: 10}


def test_parse_stat_total():
    assert seq_read_probe.parse_stat_total("cpu  1 2 3\nintr 62577362 0 0 5\nctxt 9\n") == 62577362


def make_sysfs(root, name, device_dir, msi=(), irq=None):
    pci = root / "devices" / "pci0000:00" / "0000:00:04.0"
    target = pci / device_dir
    target.mkdir(parents=True)
    if msi:
        (pci / "msi_irqs").mkdir()
        for number in msi:
            (pci / "msi_irqs" / str(number)).write_text("msix\n")
    if irq is not None:
        (pci / "irq").write_text("%d\n" % irq)
    (root / "block" / name).mkdir(parents=True)
    os.symlink(str(target), str(root / "block" / name / "device"))


def test_a_virtio_disk_counts_its_pci_function_msi_irqs(tmp_path):
    make_sysfs(tmp_path, "vda", "virtio2", msi=(31, 30), irq=11)
    assert seq_read_probe.device_irqs("vda", str(tmp_path)) == ("device", [30, 31])


def test_a_legacy_irq_counts_when_there_are_no_msi_irqs(tmp_path):
    make_sysfs(tmp_path, "sda", "ata1/host0/target0:0:0/0:0:0:0", irq=19)
    assert seq_read_probe.device_irqs("sda", str(tmp_path)) == ("device", [19])


def test_a_disk_without_a_device_is_counted_by_the_host(tmp_path):
    (tmp_path / "block" / "loop0").mkdir(parents=True)
    assert seq_read_probe.device_irqs("loop0", str(tmp_path)) == ("host", [])


def test_rate_per_source():
    before, after = ({30: 100, 31: 10}, 1000), ({30: 300, 31: 30}, 5000)
    assert seq_read_probe.rate(before, after, "device", [30, 31], 2.0) == 110.0
    assert seq_read_probe.rate(before, after, "host", [], 2.0) == 2000.0
    assert seq_read_probe.rate(before, after, "host", [], 0) is None
