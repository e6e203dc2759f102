"""The lab's image variants: what QEMU gets for each, and which image each boots; what labctl
asks a running QEMU through its monitor."""

import json
import socket
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "lab"))

import labctl  # noqa: E402
import labimage  # noqa: E402

DISKS = {"root": "/nonexistent/root.qcow2"}


def machine(argv):
    """The -cpu, -smp and -m options of a QEMU command line."""
    return {opt: argv[i + 1] for i, opt in enumerate(argv) if opt in ("-cpu", "-smp", "-m")}


def test_ceph_vm_gets_a_cpu_ceph_can_run_on(tmp_path, monkeypatch):
    monkeypatch.delenv("LAB_MEMORY", raising=False)
    argv = labctl.Lab(tmp_path, "trixie", "ceph").qemu_argv("ceph1", 2222, "tcg", DISKS, ())
    assert machine(argv) == {"-cpu": "max", "-smp": "2", "-m": "4096"}


def test_plain_vm_keeps_qemus_defaults(tmp_path, monkeypatch):
    monkeypatch.delenv("LAB_MEMORY", raising=False)
    argv = labctl.Lab(tmp_path, "bookworm").qemu_argv("node1", 2222, "tcg", DISKS, ())
    assert machine(argv) == {"-m": "1024"}


def test_ceph_image_is_a_trixie_image_of_its_own():
    plain, ceph = labimage.os_image_path("trixie"), labimage.os_image_path("trixie", "ceph")
    assert plain.name.startswith("debian-trixie-") and ceph.name.startswith("debian-trixie-ceph-")
    assert plain.name.rsplit("-", 1)[1] != ceph.name.rsplit("-", 1)[1]
    assert set(labimage.os_packages("ceph")) - set(labimage.os_packages("plain")) == {
        "ceph-common", "ceph-mgr", "ceph-mgr-cephadm", "ceph-mon", "ceph-osd", "ceph-volume"}


@pytest.mark.parametrize("suite", ["bookworm", "bullseye"])
def test_no_ceph_image_of_releases_without_reef(suite):
    with pytest.raises(ValueError, match=f"no ceph image of '{suite}'"):
        labimage.ensure_images(suite, variant="ceph")


def test_each_release_has_a_plain_image_of_its_own():
    assert labimage.VARIANTS["plain"].suites == labimage.SUITES
    assert set(labimage.SUITES) == {"bullseye", "bookworm", "trixie"}
    names = [labimage.os_image_path(suite).name for suite in labimage.SUITES]
    assert [name.split("-")[1] for name in names] == list(labimage.SUITES)
    assert len({name.rsplit("-", 1)[1] for name in names}) == len(names)


def test_release_chosen_by_option_or_environment(monkeypatch):
    monkeypatch.setenv("CEPHOPS_LAB_SUITE", "bullseye")
    assert labctl.parse_args(["status"]).suite == "bullseye"
    assert labctl.parse_args(["--suite", "trixie", "status"]).suite == "trixie"
    with pytest.raises(ValueError, match="no plain image of 'buster'"):
        labimage.ensure_images("buster")


def running_vm(tmp_path, monkeypatch, suite, variant="plain"):
    """A lab whose VM node1 runs `suite`, as far as labctl can tell (its vm.json, a live pid)."""
    lab = labctl.Lab(tmp_path, suite, variant)
    lab.vm_dir("node1").mkdir(parents=True)
    (lab.vm_dir("node1") / "vm.json").write_text(json.dumps({"port": 2222, "suite": suite, "variant": variant}))
    monkeypatch.setattr(labctl.Lab, "pid", lambda self, name: 4242)
    monkeypatch.setattr(labctl.Lab, "wait_for_ssh", lambda self, name, deadline: None)
    monkeypatch.setattr(labctl.Lab, "boot", lambda *args: pytest.fail("a running VM was booted again"))
    return lab


def test_running_vm_of_the_same_release_is_kept(tmp_path, monkeypatch):
    running_vm(tmp_path, monkeypatch, "bullseye")
    labctl.Lab(tmp_path, "bullseye").up("node1", Path("/nonexistent"), {}, "tcg", ())


@pytest.mark.parametrize("suite,variant", [("trixie", "plain"), ("bullseye", "ceph")])
def test_running_vm_of_another_image_is_refused(tmp_path, monkeypatch, suite, variant):
    running_vm(tmp_path, monkeypatch, "bullseye")
    with pytest.raises(labctl.LabError, match="node1 is already up on bullseye/plain, not %s/%s" % (suite, variant)):
        labctl.Lab(tmp_path, suite, variant).up("node1", Path("/nonexistent"), {}, "tcg", ())


def test_default_suite_follows_the_variant(monkeypatch):
    monkeypatch.delenv("CEPHOPS_LAB_SUITE", raising=False)
    assert labctl.parse_args(["--variant", "ceph", "status"]).suite is None
    assert labimage.VARIANTS["ceph"].suites[0] == "trixie"
    assert labimage.VARIANTS["plain"].suites[0] == labimage.DEFAULT_SUITE


def test_throttle_asks_qemu_for_write_and_read_limits_and_keeps_them_for_a_power_cycle(tmp_path, monkeypatch):
    """A QEMU monitor stand-in on a Unix socket records the commands labctl sends."""
    path = tmp_path / "qmp.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    received = []

    def serve():
        for _connection in range(2):  # one a throttle call
            connection, _address = server.accept()
            with connection, connection.makefile("rw") as stream:
                stream.write('{"QMP": {}}\n')
                stream.flush()
                for line in stream:
                    received.append(json.loads(line))
                    stream.write('{"return": {}}\n')
                    stream.flush()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    lab = labctl.Lab(tmp_path, "trixie", "ceph")
    monkeypatch.setattr(lab, "qmp_socket", lambda name: path)
    lab.vm_dir("ceph1").mkdir(parents=True)
    (lab.vm_dir("ceph1") / "vm.json").write_text('{"name": "ceph1"}')
    lab.throttle("ceph1", "hdd", writes=150)
    lab.throttle("ceph1", "hdd", reads=200)  # the write limit stays
    thread.join(timeout=10)
    server.close()
    assert [command["execute"] for command in received] == ["qmp_capabilities", "block_set_io_throttle"] * 2
    assert received[1]["arguments"] == {"device": "hdd", "iops_wr": 150, "iops": 0, "iops_rd": 0, "bps": 0,
                                        "bps_rd": 0, "bps_wr": 0}
    assert received[3]["arguments"] == dict(received[1]["arguments"], iops_rd=200)
    # power-cycle (Lab.start) sets them again on the new QEMU, as a reboot keeps them.
    assert lab.meta("ceph1")["throttles"] == {"hdd": {"writes": 150, "reads": 200}}


def test_the_spare_ssd_alone_gets_a_wwn_and_only_sata_takes_one(tmp_path):
    disks = dict(DISKS, **{disk.name: "/nonexistent/%s.qcow2" % disk.name for disk in labctl.ZOO})
    argv = labctl.Lab(tmp_path, "bookworm").qemu_argv("node1", 2222, "tcg", disks, labctl.ZOO)
    devices = [argv[i + 1] for i, opt in enumerate(argv) if opt == "-device"]
    assert [d for d in devices if "wwn=" in d] == [
        d for d in devices if d.startswith("ide-hd,") and "serial=CEPHOPS-OPSSD-0001," in d]
    assert any(d.endswith(",wwn=0x5000c0ffee000001") for d in devices)
    with pytest.raises(ValueError, match="a WWN is 0x and 16 hex digits, on a SATA drive"):
        labctl.Disk("v", "virtio", "S", wwn="0x5000c0ffee000001")
    with pytest.raises(ValueError, match="a WWN is 0x and 16 hex digits"):
        labctl.Disk("s", "sata", "S", wwn="5000C0FFEE000001")


def devices(argv, driver):
    """The -device values of a QEMU command line for one driver, each as {property: value}."""
    found = []
    for i, opt in enumerate(argv):
        if opt == "-device" and argv[i + 1].split(",", 1)[0] == driver:
            found.append(dict(part.split("=", 1) for part in argv[i + 1].split(",")[1:]))
    return found


def test_the_scsi_spare_hangs_off_one_virtio_scsi_controller_with_its_identity(tmp_path):
    paths = dict(DISKS, **{disk.name: "/nonexistent/%s.qcow2" % disk.name for disk in labctl.ZOO})
    argv = labctl.Lab(tmp_path, "bookworm").qemu_argv("node1", 2222, "tcg", paths, labctl.ZOO)
    assert devices(argv, "virtio-scsi-pci") == [{"id": "scsi0"}]
    assert devices(argv, "scsi-hd") == [{"bus": "scsi0.0", "drive": "opscsi", "serial": "CEPHOPS-OPSCSI-0001",
                                         "vendor": "CEPHOPS", "product": "SPARE SAS SSD 1T", "ver": "C4S1",
                                         "rotation_rate": "1"}]
    # Its drive like every other: a throwaway overlay that TRIMs as flash does.
    assert "if=none,id=opscsi,format=qcow2,cache=unsafe,file=/nonexistent/opscsi.qcow2,discard=unmap" in argv


def test_no_scsi_controller_without_a_scsi_disk(tmp_path):
    sata = tuple(disk for disk in labctl.ZOO if disk.kind == "sata")
    paths = dict(DISKS, **{disk.name: "/nonexistent/%s.qcow2" % disk.name for disk in sata})
    argv = labctl.Lab(tmp_path, "bookworm").qemu_argv("node1", 2222, "tcg", paths, sata)
    assert devices(argv, "virtio-scsi-pci") == [] and devices(argv, "scsi-hd") == []


@pytest.mark.parametrize("field,value", [("vendor", "CEPHOPS-X"), ("model", "SPARE SAS SSD 1TB"), ("firmware", "C4S10")])
def test_scsi_identity_longer_than_inquiry_holds_is_refused(field, value):
    # QEMU would cut it silently, and a test would then look for a name the drive does not carry.
    fields = dict(name="x", kind="scsi", serial="S", model="P", firmware="R", vendor="V")
    fields[field] = value
    with pytest.raises(ValueError, match="SCSI keeps 8 characters of a vendor, 16 of a product and 4 of a revision"):
        labctl.Disk(**fields)


def test_siblings_are_one_model_on_two_firmwares_each_on_an_ahci_port(tmp_path):
    zoo = labctl.ZOO + labctl.siblings(4)
    paths = dict(DISKS, **{disk.name: "/nonexistent/%s.qcow2" % disk.name for disk in zoo})
    argv = labctl.Lab(tmp_path, "bookworm").qemu_argv("node1", 2222, "tcg", paths, zoo)
    sibs = [d for d in devices(argv, "ide-hd") if d["serial"].startswith("CEPHOPS-SIB-")]
    assert [d["serial"] for d in sibs] == ["CEPHOPS-SIB-%04d" % i for i in range(1, 5)]
    assert {d["model"] for d in sibs} == {labctl.SIBLING_MODEL} and len(labctl.SIBLING_MODEL) == labctl.ATA_MODEL_MAX
    assert [d["ver"] for d in sibs] == [labctl.SIBLING_FIRMWARE] * 3 + [labctl.SIBLING_OLD_FIRMWARE]
    # Ten SATA disks need a second AHCI controller; each takes a port of its own.
    buses = [d["bus"] for d in devices(argv, "ide-hd")]
    assert len(buses) == 10 and len(set(buses)) == 10 and {b.split(".")[0] for b in buses} == {"ahci0", "ahci1"}
    assert labctl.siblings(0) == ()


def test_a_power_cycle_can_bring_drives_up_with_their_write_cache_on_or_off():
    disks = dict(DISKS, **{disk.name: "/nonexistent/%s.qcow2" % disk.name for disk in labctl.ZOO})
    argv = labctl.Lab(Path("/nonexistent"), "bookworm").qemu_argv("node1", 2222, "tcg", disks, labctl.ZOO)
    changed = labctl.with_write_cache(argv, {"opssd": "off", "nvme": "on"})
    differs = [(before, after) for before, after in zip(argv, changed) if before != after]
    assert [after.split(",")[0] + "," + after.rsplit(",", 1)[1] for _before, after in differs] == [
        "nvme,write-cache=on", "ide-hd,write-cache=off"]
    assert all(after == before + "," + after.rsplit(",", 1)[1] for before, after in differs)
    with pytest.raises(labctl.LabError, match="no drive named sdz in this VM"):
        labctl.with_write_cache(argv, {"sdz": "off"})


def test_a_saved_state_keeps_every_vms_disks_and_write_limits_and_the_reports(tmp_path, monkeypatch):
    lab = labctl.Lab(tmp_path / "run1", "bookworm")
    monkeypatch.setattr(labctl.Lab, "power_off", lambda self, name: None)
    zoo = (labctl.ZOO[0],)
    for name, throttles in (("fleet1", {}), ("fleet2", {"sib3": 10})):
        lab.vm_dir(name).mkdir(parents=True)
        (lab.vm_dir(name) / "vm.json").write_text(json.dumps({"name": name, "throttles": throttles}))
        for disk in ("root", zoo[0].name):
            (lab.vm_dir(name) / f"{disk}.qcow2").write_text(f"{name} {disk}")
    (tmp_path / "run1" / labctl.REPORTS_DIR).mkdir()
    (tmp_path / "run1" / labctl.REPORTS_DIR / "disk_gate.json").write_text("{}")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "converged-fleet-oldkey").mkdir()
    saved = tmp_path / "cache" / "converged-fleet-newkey"
    lab.save(lab.names(), saved)
    # A new key replaces the old one.
    assert sorted(path.name for path in (tmp_path / "cache").iterdir()) == ["converged-fleet-newkey"]

    other = labctl.Lab(tmp_path / "run2", "bookworm")
    other.restore_reports(saved)
    assert (tmp_path / "run2" / labctl.REPORTS_DIR / "disk_gate.json").read_text() == "{}"
    monkeypatch.setattr(labctl.Lab, "start", lambda self, name, write_cache=None: 0.0)
    for name, throttles in (("fleet1", {}), ("fleet2", {"sib3": 10})):
        other.boot(name, Path("/nonexistent/os.qcow2"), {}, "tcg", zoo, saved)
        meta = other.meta(name)
        assert meta["throttles"] == throttles
        assert {disk: Path(path).read_text() for disk, path in meta["disks"].items()} == {
            "root": f"{name} root", zoo[0].name: f"{name} {zoo[0].name}"}
