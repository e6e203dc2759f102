"""Finding a lab VM's disks, for the tests of every scenario: a module without tests or marks,
so a scenario that imports it (ceph) needs none of the default scenario's conftest."""


def whole_disk_by_serial(host, serial):
    """The /dev/sdX-style node of the whole disk whose serial udev reads as ``serial``
    (ID_SERIAL_SHORT; ID_SERIAL of a virtio disk). Not by a /dev/disk/by-id name: a SCSI
    disk's runs its product and serial together ("scsi-0CEPHOPS_SPARE_SAS_SSD_1TCEPHOPS-OPSCSI-0001").
    One udevadm call for every disk (0.17 s in an idle lab VM), not one per disk (2.8 s)."""
    found = []
    for record in host.check_output("udevadm info --query=all /sys/block/*").split("\n\n"):
        properties = dict(line[3:].split("=", 1) for line in record.splitlines() if line.startswith("E: ") and "=" in line)
        if serial in (properties.get("ID_SERIAL_SHORT"), properties.get("ID_SERIAL")):
            found.append(properties["DEVNAME"])
    assert len(found) == 1, f"{serial}: expected one whole disk with this serial, found {found}"
    return found[0]
