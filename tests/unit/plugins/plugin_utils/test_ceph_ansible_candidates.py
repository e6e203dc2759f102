"""ceph_ansible.candidates: the disks ceph-ansible would deploy, from each of its variables."""

from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import ceph_ansible


def disk(name, rotational=False, links=(), **changes):
    """A disk as disk_facts reports it, with the fields the gate reads."""
    record = {"name": name, "path": "/dev/" + name, "links": ["/dev/" + name] + list(links), "removable": False,
              "size_bytes": 960 * 10 ** 9, "partitions": [], "holders": [], "mountpoints": [], "rotational": rotational,
              "gate_class": "hdd" if rotational else "flash"}
    record.update(changes)
    return record


INVENTORY = [
    disk("sda", partitions=["sda1", "sda2"], mountpoints=["/"]),  # the system disk
    disk("sdb", links=["/dev/disk/by-id/wwn-0x5002538e40a1b2c3", "/dev/disk/by-path/pci-0000:00:1f.2-ata-2"]),
    disk("sdc"), disk("sdd", rotational=True),
    disk("sde", removable=True),  # a USB stick
    disk("sdf", holders=["dm-0"]),  # an LVM PV
    disk("sdg", size_bytes=0),  # an empty card reader slot
    disk("nvme0n1"), disk("md0"), disk("mmcblk0"), disk("dm-3"), disk("loop0"), disk("rbd0"),
]


def devices_of(found):
    return [(c["device"], c["sources"], c["roles"]) for c in found]


def test_devices_dedicated_and_wal_devices_in_ceph_ansible_order():
    found = ceph_ansible.candidates(INVENTORY, {"devices": ["/dev/sdb", "sdc"], "dedicated_devices": ["/dev/nvme0n1"],
                                                "bluestore_wal_devices": ["/dev/sdd"]})
    assert devices_of(found) == [("/dev/sdb", ["devices"], ["data"]), ("/dev/sdc", ["devices"], ["data"]),
                                 ("/dev/nvme0n1", ["dedicated_devices"], ["db"]),
                                 ("/dev/sdd", ["bluestore_wal_devices"], ["wal"])]
    assert [c["rotational"] for c in found] == [False, False, False, True]
    assert [c["gate_class"] for c in found] == ["flash", "flash", "flash", "hdd"]


def test_lvm_volumes_raw_data_db_and_wal_are_probed_lvs_and_partitions_are_not():
    lvm_volumes = [
        {"data": "/dev/sdb"},  # raw device: ceph-volume creates the LV
        {"data": "data-lv1", "data_vg": "data-vg1"},  # an LV that exists already
        {"data": "/dev/sdc", "db": "db-lv1", "db_vg": "db-vg1", "wal": "/dev/nvme0n1"},
        {"data": "data-lv2", "data_vg": "vg2", "db": "/dev/sda1"},
    ]
    found = ceph_ansible.candidates(INVENTORY, {"lvm_volumes": lvm_volumes})
    assert [(c["device"], c["roles"], c["slots"], c["probe"]) for c in found] == [
        ("/dev/sdb", ["data"], [["lvm_volumes", 0, "data"]], True),
        ("data-vg1/data-lv1", ["data"], [["lvm_volumes", 1, "data"]], False),
        ("/dev/sdc", ["data"], [["lvm_volumes", 2, "data"]], True),
        ("db-vg1/db-lv1", ["db"], [["lvm_volumes", 2, "db"]], False),
        ("/dev/nvme0n1", ["wal"], [["lvm_volumes", 2, "wal"]], True),
        ("vg2/data-lv2", ["data"], [["lvm_volumes", 3, "data"]], False),
        ("/dev/sda1", ["db"], [["lvm_volumes", 3, "db"]], False)]
    assert found[1]["reasons"] == ["an LV (data-vg1/data-lv1), not a disk the probe may write: not probed"]
    assert found[6]["reasons"] == ["a partition of /dev/sda; the probe writes only whole disks: not probed"]
    assert {c["presence"] for c in found} == {"present"}


def test_a_name_no_disk_has_is_absent_and_not_probed():
    found = ceph_ansible.candidates(INVENTORY, {"devices": ["/dev/sdz", "/dev/sdb"]})
    assert [(c["device"], c["presence"], c["probe"], c["reasons"]) for c in found] == [
        ("/dev/sdz", "absent", False, ["no disk of the host has this name (not present)"]),
        ("/dev/sdb", "present", True, [])]


def test_db_and_wal_disks_get_their_own_class_only_with_thresholds_of_their_own():
    variables = {"devices": ["/dev/sdb"], "dedicated_devices": ["/dev/nvme0n1"], "bluestore_wal_devices": ["/dev/sdd"]}
    assert [c["thresholds_class"] for c in ceph_ansible.candidates(INVENTORY, variables)] == ["flash", "flash", "hdd"]
    assert [c["thresholds_class"] for c in ceph_ansible.candidates(INVENTORY, variables, None, ["db", "wal"])] == [
        "flash", "db", "wal"]


def test_auto_discovery_leaves_out_what_ceph_facts_leaves_out():
    # ceph-facts compares the names as given: with auto-discovery it resolves no link.
    lvm_volumes = [{"data": "/dev/nvme0n1"}, {"data": "/dev/sdd", "db": "x", "db_vg": "vg"}]
    found = ceph_ansible.candidates(INVENTORY, {"osd_auto_discovery": True, "dedicated_devices": ["/dev/sdc"],
                                                "bluestore_wal_devices": ["/dev/disk/by-id/wwn-0x5002538e40a1b2c3"],
                                                "lvm_volumes": lvm_volumes})
    discovered = [c["device"] for c in found if "osd_auto_discovery" in c["sources"]]
    # sdc is a DB device and nvme0n1 and sdd lvm_volumes data; sdb, named by a link, is not left out.
    assert discovered == ["/dev/sdb"]


def test_auto_discovery_takes_blank_whole_disks_and_honours_the_default_exclude():
    found = ceph_ansible.candidates(INVENTORY, {"osd_auto_discovery": True})
    # md* is a regex matched from the start, so it excludes mmcblk0 too, as in ceph-ansible.
    assert [c["device"] for c in found] == ["/dev/sdb", "/dev/sdc", "/dev/sdd", "/dev/nvme0n1"]
    assert {s for c in found for s in c["sources"]} == {"osd_auto_discovery"}


def test_auto_discovery_with_an_own_exclude_regex():
    found = ceph_ansible.candidates(INVENTORY, {"osd_auto_discovery": True, "osd_auto_discovery_exclude": "nvme|sd[bc]"})
    assert [c["device"] for c in found] == ["/dev/sdd", "/dev/md0", "/dev/mmcblk0", "/dev/dm-3", "/dev/loop0",
                                            "/dev/rbd0"]
    found = ceph_ansible.candidates(INVENTORY, {"osd_auto_discovery": True, "osd_auto_discovery_exclude": ""})
    assert "/dev/loop0" in [c["device"] for c in found]


def test_auto_discovery_off_adds_nothing():
    assert ceph_ansible.candidates(INVENTORY, {"osd_auto_discovery": False, "devices": []}) == []


def test_by_id_links_resolve_and_a_disk_named_twice_is_probed_once():
    link = "/dev/disk/by-id/wwn-0x5002538e40a1b2c3"
    found = ceph_ansible.candidates(INVENTORY, {"devices": [link, "/dev/sdc"], "dedicated_devices": ["/dev/sdb"],
                                                "osd_auto_discovery": True})
    assert dict((key, found[0][key]) for key in ("device", "given", "sources", "slots", "roles", "gate_class")) == {
        "device": "/dev/sdb", "given": [link, "/dev/sdb"], "sources": ["devices", "dedicated_devices"],
        "slots": [["devices", 0, "data"], ["dedicated_devices", 0, "db"]], "roles": ["data", "db"], "gate_class": "flash"}
    assert found[0]["links"] == INVENTORY[1]["links"]
    # /dev/sdb is a DB device as given, so auto-discovery leaves it out, as ceph-facts does.
    assert [c["device"] for c in found] == ["/dev/sdb", "/dev/sdc", "/dev/sdd", "/dev/nvme0n1"]


def test_every_link_of_the_inventory_names_its_disk():
    found = ceph_ansible.candidates(INVENTORY, {}, ["/dev/disk/by-path/pci-0000:00:1f.2-ata-2", "sdb"])
    assert [(c["device"], c["given"]) for c in found] == [
        ("/dev/sdb", ["/dev/disk/by-path/pci-0000:00:1f.2-ata-2", "/dev/sdb"])]


def test_unresolved_link_stays_as_given_with_unknown_class():
    found = ceph_ansible.candidates(INVENTORY, {"devices": ["/dev/disk/by-path/pci-0000:00:1f.2-ata-9"]})
    assert (found[0]["device"], found[0]["rotational"]) == ("/dev/disk/by-path/pci-0000:00:1f.2-ata-9", None)
    # Unknown counts as flash, the stricter thresholds.
    assert found[0]["gate_class"] == "flash"


def test_explicit_list_replaces_the_ceph_ansible_variables():
    found = ceph_ansible.candidates(INVENTORY, {"devices": ["/dev/sdb"], "osd_auto_discovery": True},
                                    explicit=["loop3", "/dev/loop4"])
    assert devices_of(found) == [("/dev/loop3", ["disk_gate_devices"], ["data"]),
                                 ("/dev/loop4", ["disk_gate_devices"], ["data"])]
    assert found[0]["rotational"] is None


def test_without_a_list_or_any_ceph_ansible_variable_every_available_disk_is_a_candidate():
    inventory = [dict(d, available=d["name"] in ("sdb", "nvme0n1")) for d in INVENTORY]
    found = ceph_ansible.candidates(inventory, {"devices": None, "osd_auto_discovery": None,
                                                "osd_auto_discovery_exclude": "dm-*"})
    assert devices_of(found) == [("/dev/sdb", ["available"], ["data"]), ("/dev/nvme0n1", ["available"], ["data"])]
    assert ceph_ansible.candidates(inventory, {"devices": []}) == []
    assert devices_of(ceph_ansible.candidates(inventory, {}, ["sdc"])) == [("/dev/sdc", ["disk_gate_devices"], ["data"])]
