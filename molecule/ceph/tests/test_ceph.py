"""After ceph-ansible's osds play with the gate and policy exclude: OSDs on exactly the disks the
gate approved, each OSD's mClock capacity seeded from its disk's deep-queue figure within the
bounds Ceph 18.2 reports (and put back by the undo), and not a byte changed on any other disk
of the zoo. (That policy block stops
the same play at the gate, before ceph-osd, is proven on both ceph-ansible branches by
tests/integration/test_ceph_ansible.py.)

The expected sets are the lab's disks as they are built (lab/labctl.py): the fast SSD, the
"HDD" and the virtio disk are fast, the slow SSD is throttled to 10 writes a second, the random
disk holds data without a signature and the data disk a GPT with XFS.
"""

import json
import os
import sys
import time
from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO_ROOT / "lab"))
sys.path.insert(0, str(REPO_ROOT / "molecule" / "default" / "tests"))
sys.path.insert(0, str(REPO_ROOT / "molecule" / "ceph"))

import disk_checks  # noqa: E402
import labctl  # noqa: E402
from labhost import whole_disk_by_serial  # noqa: E402

testinfra_hosts = ["ansible://osds"]

CLUSTER = "ceph"
# Verify runs on the guest booted again from the kept state (scripts/test.sh): its OSDs start
# with it, each once the monitor is up, within this many seconds under TCG.
OSDS_UP_TIMEOUT = 600
# The gate's reports, kept with the lab's state (labctl.REPORTS_DIR), and converge.yml's work directory.
REPORTS = Path(os.environ["CEPHOPS_LAB_STATE_DIR"]) / labctl.REPORTS_DIR
WORK_DIR = Path(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]) / "ceph-ansible"
# Zoo disk name (labctl.ZOO) by serial.
APPROVED = {"CEPHOPS-SSD-0001": "ssd", "CEPHOPS-HDD-0001": "hdd", "CEPHOPS-VIRTIO-0001": "virtio"}
REFUSED = {"CEPHOPS-SLOW-0001": "slow", "CEPHOPS-RAND-0001": "random", "CEPHOPS-DATA-0001": "data"}
# Zoo disks no variable names: nothing may touch them either.
UNNAMED = {"CEPHOPS-NVME-0001": "nvme", "CEPHOPS-OPSSD-0001": "opssd", "CEPHOPS-OPSCSI-0001": "opscsi",
           "CEPHOPS-OPVIRT-0001": "opvirtio", "CEPHOPS-FS-0001": "fs"}


def ceph_json(host, *args):
    return json.loads(host.check_output("ceph --cluster %s %s --format json" % (CLUSTER, " ".join(args))))


def gate_report():
    return json.loads((REPORTS / "disk_gate.json").read_text())


def osd_volumes(host):
    """{(OSD id, LV type): the whole disk under the LV}, from ceph-volume's own records."""
    listed = json.loads(host.check_output("LC_ALL=C ceph-volume lvm list --format json"))
    found = {}
    for osd_id, volumes in listed.items():
        for volume in volumes:
            assert len(volume["devices"]) == 1, volume
            found[(int(osd_id), volume["type"])] = volume["devices"][0]
    return found


def test_gate_approved_exactly_the_fast_disks(host):
    entries = [disk for entry in gate_report()["hosts"] for disk in entry["disks"]]
    decisions = {disk["serial"]: disk["decision"] for disk in entries}
    assert {serial for serial, decision in decisions.items() if decision == "approved"} == set(APPROVED), decisions
    # The random disk is refused before any probe (data without a signature), the slow one on its figures.
    assert decisions.get("CEPHOPS-SLOW-0001") == "blocked", decisions


def test_osds_on_exactly_the_approved_disks(host):
    volumes = osd_volumes(host)
    approved = {whole_disk_by_serial(host, serial) for serial in APPROVED}
    # Given rotational and non-rotational disks together, ceph-volume's batch (ceph-osd's
    # lvm-batch scenario) makes an OSD on each rotational one and puts their block.db on the
    # others: every approved disk carries an OSD's data or DB, and no other disk does.
    assert set(volumes.values()) == approved, volumes
    disks = {osd: disk for (osd, kind), disk in volumes.items() if kind == "block"}

    deadline = time.monotonic() + OSDS_UP_TIMEOUT
    while True:
        tree = ceph_json(host, "osd", "tree")
        osds = {node["id"]: node for node in tree["nodes"] if node["type"] == "osd"}
        if all(node["status"] == "up" for node in osds.values()) or time.monotonic() > deadline:
            break
        time.sleep(5)
    assert sorted(osds) == sorted(disks), (osds, disks)
    assert all(node["status"] == "up" for node in osds.values()), osds


def test_no_lvm_on_the_refused_or_unnamed_disks(host):
    for serial in (*REFUSED, *UNNAMED):
        disk = whole_disk_by_serial(host, serial)
        holders = host.check_output("ls -1 /sys/class/block/%s/holders", Path(disk).name)
        assert holders == "", (serial, holders)
        assert "LVM2_member" not in host.check_output("LC_ALL=C lsblk --noheadings --output FSTYPE %s", disk), serial


# What `ceph orch apply -i SPEC --dry-run` does with an OSD spec, by Ceph's own code on the
# host: validate it, let DriveSelection pick its devices from ceph-volume's inventory, and
# translate the selection into the ceph-volume commands cephadm would run.
SPEC_SELECTION = """
import json, sys
from ceph.deployment.drive_selection.selector import DriveSelection
from ceph.deployment.inventory import Devices
from ceph.deployment.service_spec import ServiceSpec
from ceph.deployment.translate import to_ceph_volume
docs, inventory = json.loads(sys.argv[1])
for doc in docs:
    spec = ServiceSpec.from_json(doc)
    spec.validate()
    selection = DriveSelection(spec, Devices.from_json(inventory))
    commands = to_ceph_volume(selection).run()
    print(json.dumps(dict(data=[device.path for device in selection.data_devices()],
                          commands=commands if isinstance(commands, list) else [commands])))
"""


def test_cephadm_spec_selects_the_approved_disks_by_cephs_own_code(host):
    docs = [doc for doc in yaml.safe_load_all((REPORTS / "disk_gate.cephadm.yml").read_text()) if doc]
    inventory = json.loads(host.check_output("LC_ALL=C ceph-volume inventory --format json"))
    selections = [json.loads(line) for line in
                  host.check_output("python3 -c %s %s", SPEC_SELECTION, json.dumps([docs, inventory])).splitlines()]
    WORK_DIR.mkdir(exist_ok=True)
    (WORK_DIR / "cephadm-selection.json").write_text(json.dumps(selections, indent=2) + "\n")  # for the docs
    paths = [path for selection in selections for path in selection["data"]]
    approved = {whole_disk_by_serial(host, serial) for serial in APPROVED}
    assert sorted(host.check_output("readlink -f %s", path) for path in paths) == sorted(approved), paths
    commands = " ".join(command for selection in selections for command in selection["commands"])
    assert all(path in commands for path in paths), selections


@pytest.fixture(scope="module")
def overlays(host):
    """{zoo disk name: its check} after the exclude run."""
    return disk_checks.zoo_checks(host.backend.get_hostname(), [*REFUSED.values(), *UNNAMED.values()])


@pytest.mark.parametrize("disk", [*REFUSED.values(), *UNNAMED.values()])
def test_disk_byte_identical(overlays, disk):
    check = overlays[disk]
    # The probe writes a region of the slow disk and restores it: written, but the same bytes.
    assert not check["differs"], labctl.describe_check(check)
    if disk != "slow":
        assert check["written_bytes"] == 0, labctl.describe_check(check)


MCLOCK_RECORD = "/var/lib/cephops-osd-tuning/mclock_capacity.json"


def config_get(host, osd, option):
    """``ceph config get osd.N option`` as a number, None where this release has no such option."""
    found = host.run("ceph --cluster %s config get osd.%s %s", CLUSTER, str(osd), option)
    if found.rc != 0:
        assert "unrecognized key" in found.stderr, found.stderr
        return None
    return float(found.stdout)


def held(host, osd, option):
    found = [e["value"] for e in ceph_json(host, "config", "dump") if e["section"] == "osd.%d" % osd and e["name"] == option]
    return float(found[0]) if found else None


def expected_seeds(host):
    """{osd: (option, the value its disk's figure gives within the bounds ``ceph config get`` reports)}."""
    report = gate_report()
    by_serial = {disk["serial"]: disk for entry in report["hosts"] for disk in entry["disks"]}
    medians = {(g["model"], g["firmware"]): g["deep_queue_iops"]["median"] for g in report["models"]["groups"]
               if g["deep_queue_iops"]}
    serial_of = {whole_disk_by_serial(host, serial): serial for serial in APPROVED}
    expected = {}
    for (osd, kind), disk in osd_volumes(host).items():
        if kind != "block":
            continue
        gated = by_serial[serial_of[disk]]
        figure = medians.get((gated["model"], gated["firmware"])) or gated["deep_queue"]["write_iops"]
        spins = ceph_json(host, "osd", "metadata", str(osd))["rotational"] == "1"
        option = "osd_mclock_max_capacity_iops_" + ("hdd" if spins else "ssd")
        high = config_get(host, osd, "osd_mclock_iops_capacity_threshold_" + option[-3:])
        low = config_get(host, osd, "osd_mclock_iops_capacity_low_threshold_" + option[-3:])
        value = min(figure, high) if high is not None else figure
        expected[osd] = (option, max(value, low) if low is not None else value, figure)
    return expected


def test_each_osd_holds_its_disk_s_figure_within_the_cluster_s_bounds(host):
    expected = expected_seeds(host)
    assert expected, "no OSD to seed"
    for osd, (option, value, _figure) in expected.items():
        assert held(host, osd, option) == pytest.approx(value, abs=0.1), (osd, option, value)
    record = json.loads(host.file(MCLOCK_RECORD).content_string)
    assert sorted(record["osds"]) == sorted("osd.%d %s" % (osd, option) for osd, (option, _v, _f) in expected.items())
    # For the docs: what the OSD had set itself, and its own bench in the start-up bench's shape.
    shown = dict((osd, dict(option=option, seeded=value, figure=figure,
                            own=record["osds"]["osd.%d %s" % (osd, option)]["before"],
                            bench=ceph_json(host, "tell", "osd.%d" % osd, "bench", "12288000", "4096")["iops"]))
                 for osd, (option, value, figure) in expected.items())
    WORK_DIR.mkdir(exist_ok=True)
    (WORK_DIR / "mclock-seeds.json").write_text(json.dumps(shown, indent=2) + "\n")


def test_the_undo_puts_each_osd_s_own_value_back(host):
    """Last in this file: the undo changes the cluster the tests above read."""
    before = json.loads(host.file(MCLOCK_RECORD).content_string)["osds"]
    result = host.ansible("cephops.osd_tuning.mclock_capacity", "state=absent", check=False, become=True)
    assert not result.get("failed") and result["changed"], result
    for key, kept in before.items():
        section, option = key.split()
        now = held(host, int(section.split(".")[1]), option)
        assert now == (None if kept["before"] is None else pytest.approx(float(kept["before"]), abs=0.001)), (key, now)
    assert not host.file(MCLOCK_RECORD).exists
