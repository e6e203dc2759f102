"""playbooks/validate_hardware.yml on loop devices: its refusals change no byte, the paths that
apply to a loop disk (write cache through the kernel's view, partition over-provisioning) run
and restore the disk, and the report names why HPA, NVMe and the controller do not apply.

The paths only real drives take run against stand-in drives (tests/integration/standins): a
loop disk that a private mount namespace shows as a SATA SSD, an NVMe namespace or a RAID
virtual drive, with stand-in hdparm, nvme, sdparm and storcli64 that replay captured outputs.
The HPA path's two runs with a power cycle between them, the NVMe namespace made smaller and
given its size back, the controller's report naming the drive, and an NVMe drive without a
volatile write cache, to which the write cache path does not apply, run there, through the
unchanged playbook and modules.

The module records and the probe journal go to tmp_path, the reports too.
"""

import hashlib
import json
import os

from conftest import hide_binaries
from modulerun import json_env, run_playbook
from standins import Drive
from test_disk_facts import make_data_mid_disk, make_xfs

PLAYBOOK = os.path.join(os.path.dirname(__file__), "..", "..", "playbooks", "validate_hardware.yml")


def backing_file(disk):
    with open("/sys/block/%s/loop/backing_file" % disk.name) as handle:
        return handle.read().strip()


def validate(tmp_path, disk, check=False, prefix=(), env=None, **extra):
    """(rc, the play's failure messages, report or None) of one run against ``disk``; ``prefix`` runs
    ansible-playbook under another command (a mount namespace), ``env`` adds variables."""
    extra_vars = dict(cephops_validate_hosts="localhost", cephops_report_dir=str(tmp_path / "reports"),
                      cephops_validate_device=disk.path, cephops_validate_probe_seconds=1,
                      cephops_validate_record_dir=str(tmp_path / "records"))
    extra_vars.update(extra)
    argv = list(prefix) + ["ansible-playbook", "--inventory", "localhost,", "--connection", "local",
                           "--extra-vars", json.dumps(extra_vars), os.path.abspath(PLAYBOOK)]
    argv += ["--check"] if check else []
    rc, report = run_playbook(argv, json_env(**(env or {})))
    # The play's own refusals and verdict; a path's failed module call is ignored there and
    # goes into the report.
    failures = [host["msg"] for play in report["plays"] for task in play["tasks"]
                for host in task["hosts"].values() if host.get("failed") and host.get("action") == "ansible.builtin.assert"]
    path = tmp_path / "reports" / "validate-hardware-localhost.json"
    return rc, failures, json.loads(path.read_text()) if path.exists() else None


# LoopDisk.checksum() of a disk that holds zeros only: zero chunks add nothing to the digest.
BLANK_CHECKSUM = hashlib.sha256().hexdigest()


def by_path(report):
    return dict((p["path"], p) for p in report["paths"])


def test_refused_without_the_confirmation(loop_disks, tmp_path):
    disk = loop_disks()
    before = disk.checksum()
    rc, failures, report = validate(tmp_path, disk)
    assert rc != 0 and report is None
    assert len(failures) == 1 and failures[0].startswith("refused by the confirmation check: %s" % disk.path)
    assert failures[0].endswith("is validated only when cephops_validate_confirm equals its WWN or serial as "
                                "disk_facts reports it; nothing was run")
    rc, failures, report = validate(tmp_path, disk, cephops_validate_confirm="/some/other/file.img")
    assert rc != 0 and failures[0].startswith("refused by the confirmation check") and report is None
    assert disk.checksum() == before
    assert not (tmp_path / "records").exists()


def test_a_disk_holding_data_is_refused_unless_named_for_overwriting(loop_disks, tmp_path):
    disk = loop_disks()
    make_data_mid_disk(disk)
    before = disk.checksum()
    rc, failures, report = validate(tmp_path, disk, cephops_validate_confirm=backing_file(disk))
    assert rc != 0 and report is None
    assert failures[0].startswith("refused by the data check: %s is not blank (Has data without a signature (" % disk.path)
    assert "name it in cephops_validate_overwrite_data" in failures[0]
    assert disk.checksum() == before
    # Naming another disk for overwriting lifts nothing.
    rc, failures, report = validate(tmp_path, disk, cephops_validate_confirm=backing_file(disk),
                                    cephops_validate_overwrite_data="/dev/sdz")
    assert failures[0].startswith("refused by the overwrite check: cephops_validate_overwrite_data names /dev/sdz")
    assert disk.checksum() == before


def test_a_signature_is_refused_even_when_named_for_overwriting(loop_disks, tmp_path):
    disk = loop_disks()
    make_xfs(disk)
    before = disk.checksum()
    rc, failures, report = validate(tmp_path, disk, cephops_validate_confirm=backing_file(disk),
                                    cephops_validate_overwrite_data=disk.path)
    assert failures == ["refused by the data check: %s is not blank (Has a FileSystem); nothing was run" % disk.path]
    assert disk.checksum() == before


def test_the_loop_paths_run_and_restore_the_disk(loop_disks, tmp_path):
    disk = loop_disks()
    before = disk.checksum()
    kernel_view = open("/sys/block/%s/queue/write_cache" % disk.name).read().strip()
    rc, failures, report = validate(tmp_path, disk, cephops_validate_confirm=backing_file(disk))
    assert rc == 0, failures
    paths = by_path(report)
    assert [p["path"] for p in report["paths"]] == ["controller_cache", "write_cache", "partition", "nvme_namespace", "ata_hpa"]
    assert paths["partition"]["status"] == "passed", paths["partition"]
    made = paths["partition"]["details"]["apply"][0]
    assert made["discarded"] is True and made["end_bytes"] == int(disk.size * 0.8) // 2 ** 20 * 2 ** 20
    assert paths["write_cache"]["status"] == "passed", paths["write_cache"]
    cache = paths["write_cache"]["details"]
    assert cache["before"]["tool"] == "sysfs" and cache["comparison"]["restored"] is True
    assert cache["after"]["kernel_view"] == cache["before"]["kernel_view"] == kernel_view
    assert (paths["nvme_namespace"]["status"], paths["nvme_namespace"]["message"]) == \
        ("not applicable", "not an NVMe disk (transport loop)")
    assert (paths["ata_hpa"]["status"], paths["ata_hpa"]["message"]) == \
        ("not applicable", "not an ATA disk (transport loop)")
    assert paths["controller_cache"]["status"] == "not applicable"
    assert paths["controller_cache"]["message"] == "no storcli/perccli/ssacli on the host"
    assert report["restored"] is True and report["verify"]["differences"] == []
    assert report["drive"]["path"] == disk.path and report["overwrite_data"] is False
    markdown = (tmp_path / "reports" / "validate-hardware-localhost.md").read_text()
    assert "| partition | passed | made %sp1 (" % disk.path in markdown
    assert "| ata_hpa | not applicable | not an ATA disk (transport loop) |" in markdown
    assert "Restore: size, partition table, signatures, write cache and availability read back as before." in markdown
    # A blank disk is blank again, byte for byte: the probe region and the GPT areas are zeros.
    assert disk.checksum() == before
    assert open("/sys/block/%s/queue/write_cache" % disk.name).read().strip() == kernel_view
    assert disk.partitions() == []
    assert not any(name.endswith(".json") for name in os.listdir(str(tmp_path / "records")))


def test_data_named_for_overwriting_is_destroyed_and_the_report_says_so(loop_disks, tmp_path):
    disk = loop_disks()
    make_data_mid_disk(disk)
    rc, failures, report = validate(tmp_path, disk, cephops_validate_confirm=backing_file(disk),
                                    cephops_validate_overwrite_data=disk.path)
    assert rc == 0, failures
    assert report["overwrite_data"] is True and by_path(report)["partition"]["status"] == "passed"
    # The discard removed the data on purpose: the comparison leaves the content reasons out.
    assert report["restored"] is True and report["verify"]["differences"] == []
    assert disk.checksum() == BLANK_CHECKSUM
    markdown = (tmp_path / "reports" / "validate-hardware-localhost.md").read_text()
    assert "data the content checks found on it was destroyed" in markdown


def test_check_mode_plans_only(loop_disks, tmp_path):
    disk = loop_disks()
    before = disk.checksum()
    rc, failures, report = validate(tmp_path, disk, check=True, cephops_validate_confirm=backing_file(disk))
    assert rc == 0, failures
    paths = by_path(report)
    assert paths["partition"]["status"] == "planned" and "sgdisk" in paths["partition"]["message"]
    assert paths["write_cache"]["status"] == "planned"
    assert report["check_mode"] is True
    assert disk.checksum() == before
    assert not any(name.endswith(".json") for name in os.listdir(str(tmp_path / "records"))) \
        if (tmp_path / "records").exists() else True


def test_a_failing_path_is_reported_with_the_modules_message_and_fails_the_play(loop_disks, tmp_path, mount_ns):
    disk = loop_disks()
    hide_binaries(mount_ns, ["sgdisk"])
    before = disk.checksum()
    rc, failures, report = validate(tmp_path, disk, prefix=mount_ns, cephops_validate_confirm=backing_file(disk))
    assert rc != 0 and report is not None, failures
    partition = by_path(report)["partition"]
    assert partition["status"] == "failed" and "sgdisk" in partition["message"], partition
    assert by_path(report)["write_cache"]["status"] == "passed"
    assert failures == ["partition failed; the drive reads back as before; see %s/reports/validate-hardware-localhost.md"
                        % tmp_path]
    assert "| partition | failed | " in (tmp_path / "reports" / "validate-hardware-localhost.md").read_text()
    assert disk.checksum() == before


def validate_standin(tmp_path, drive, mount_ns):
    """validate() against a stand-in drive, confirmed by its serial, else its WWN."""
    return validate(tmp_path, drive, prefix=mount_ns, env=drive.env,
                    cephops_validate_confirm=drive.serial or drive.wwn)


def test_hpa_takes_two_runs_with_a_power_cycle_between_and_gives_the_drive_back(loop_disks, mount_ns, tmp_path):
    disk = loop_disks()
    size = disk.size
    drive = Drive("sata", disk, mount_ns, tmp_path / "drive")
    native = size // 512
    hidden = native - native * 4 // 5 // 2048 * 2048  # 20 %, the rest in whole MiB
    record = tmp_path / "records" / ("hpa-%s.json" % drive.serial)
    original = drive.state()["hdparm"]

    rc, failures, report = validate_standin(tmp_path, drive, mount_ns)
    assert rc == 0, failures
    paths = by_path(report)
    hpa = paths["ata_hpa"]
    assert (hpa["status"], hpa["details"]["phase"]) == ("restore pending", "apply"), hpa
    assert hpa["message"] == (
        "hid %d of %d sectors (read back: %d visible, was %d); a drive takes one change per power cycle: power the "
        "host off and on, then run this playbook again to restore the native max"
        % (hidden, native, native - hidden, native))
    # The drive took the change; the kernel keeps the old size until the power cycle.
    assert drive.state()["hdparm"] == dict(native=native, visible=native - hidden, changed_since_power_on=True,
                                           write_cache=True)
    assert disk.size == size
    assert json.loads(record.read_text())["disks"]["serial:" + drive.serial]["visible_sectors_before"] == native
    assert paths["write_cache"]["status"] == "passed" and paths["write_cache"]["details"]["before"]["tool"] == "hdparm"
    assert paths["partition"]["status"] == "passed", paths["partition"]
    assert (paths["nvme_namespace"]["status"], paths["nvme_namespace"]["message"]) == \
        ("not applicable", "not an NVMe disk (transport sata)")
    assert (paths["controller_cache"]["status"], paths["controller_cache"]["message"]) == \
        ("not applicable", "the drive is no virtual drive of the controllers storcli report")
    assert report["restored"] is True

    drive.power_cycle()
    assert disk.size == (native - hidden) * 512
    rc, failures, report = validate_standin(tmp_path, drive, mount_ns)
    assert rc == 0, failures
    hpa = by_path(report)["ata_hpa"]
    assert (hpa["status"], hpa["details"]["phase"]) == ("passed", "restore"), hpa
    assert hpa["message"] == ("restored: %d of %d sectors visible (read back); the kernel shows the full size after "
                              "the next power cycle" % (native, native))
    assert drive.state()["hdparm"]["visible"] == native and not record.exists()
    markdown = (tmp_path / "reports" / "validate-hardware-localhost.md").read_text()
    assert "| ata_hpa | passed | restored: %d of %d sectors visible" % (native, native) in markdown

    drive.power_cycle()
    assert drive.state()["hdparm"] == original and disk.size == size and disk.checksum() == BLANK_CHECKSUM


def test_a_drive_that_refuses_set_max_fails_the_hpa_path_and_keeps_its_size(loop_disks, mount_ns, tmp_path):
    disk = loop_disks()
    drive = Drive("sata", disk, mount_ns, tmp_path / "drive")
    native = disk.size // 512
    # Someone set the drive's maximum by hand since it was powered on: it takes no other change now.
    drive.run(["hdparm", "--yes-i-know-what-i-am-doing", "-N", "p%d" % native, drive.path])
    rc, failures, report = validate_standin(tmp_path, drive, mount_ns)
    assert rc != 0 and failures == ["ata_hpa failed; the drive reads back as before; see %s/reports/"
                                    "validate-hardware-localhost.md" % tmp_path]
    hpa = by_path(report)["ata_hpa"]
    assert hpa["status"] == "failed"
    assert hpa["message"] == ("%s: the drive rejected SET MAX ADDRESS (SET_MAX_ADDRESS(_EXT) failed: Input/output "
                              "error): the HPA is unchanged, %d of %d sectors visible; the blank disk was discarded"
                              % (drive.path, native, native))
    assert drive.state()["hdparm"]["visible"] == native
    assert not (tmp_path / "records" / ("hpa-%s.json" % drive.serial)).exists()


def test_nvme_namespace_is_made_smaller_and_given_its_size_back(loop_disks, mount_ns, tmp_path):
    disk = loop_disks()
    size = disk.size
    drive = Drive("nvme", disk, mount_ns, tmp_path / "drive")
    blocks = size // 512
    smaller = blocks * 4 // 5 // 2048 * 2048
    first = drive.state()["nvme"]["namespaces"]["1"]["eui64"]
    rc, failures, report = validate_standin(tmp_path, drive, mount_ns)
    assert rc == 0, failures
    paths = by_path(report)
    namespace = paths["nvme_namespace"]
    assert namespace["status"] == "passed", namespace
    assert namespace["message"] == "namespace %d -> %d blocks (read back), then %d blocks again (read back)" % (
        blocks, smaller, blocks)
    assert namespace["details"]["apply"][0]["actions"] == [
        "nvme delete-ns /dev/nvme9 --namespace-id=1",
        "nvme create-ns /dev/nvme9 --nsze=%d --ncap=%d --flbas=0 --dps=0 --nmic=0" % (smaller, smaller),
        "nvme attach-ns /dev/nvme9 --namespace-id=NEW --controllers=0", "nvme ns-rescan /dev/nvme9",
        "udevadm settle --timeout=60"]
    assert namespace["details"]["restore"][0]["nsze"] == blocks
    # Made anew twice: the namespace has its size back under a new EUI-64, and so has the kernel.
    nvme = drive.state()["nvme"]
    assert (list(nvme["namespaces"]), nvme["namespaces"]["1"]["nsze"], nvme["attached"]) == (["1"], blocks, 1)
    assert nvme["namespaces"]["1"]["eui64"] != first and disk.size == size
    assert not (tmp_path / "records" / ("nvme_namespace-%s.json" % drive.serial)).exists()
    assert paths["write_cache"]["status"] == "passed" and paths["write_cache"]["details"]["before"]["tool"] == "nvme"
    assert paths["partition"]["status"] == "passed", paths["partition"]
    assert (paths["ata_hpa"]["status"], paths["ata_hpa"]["message"]) == \
        ("not applicable", "not an ATA disk (transport nvme)")
    assert report["restored"] is True and disk.checksum() == BLANK_CHECKSUM


def test_a_raid_virtual_drive_is_found_in_the_controllers_report(loop_disks, mount_ns, tmp_path):
    disk = loop_disks()
    drive = Drive("raid", disk, mount_ns, tmp_path / "drive")
    rc, failures, report = validate_standin(tmp_path, drive, mount_ns)
    assert rc == 0, failures
    paths = by_path(report)
    controller = paths["controller_cache"]
    assert (controller["status"], controller["message"]) == ("passed", "c0/v1: write back"), controller
    assert [vd["os_drive"] for vd in controller["details"]["virtual_drives"]] == ["/dev/sdb"]
    assert paths["write_cache"]["status"] == "passed" and paths["write_cache"]["details"]["before"]["tool"] == "sdparm"
    assert (paths["ata_hpa"]["status"], paths["ata_hpa"]["message"]) == \
        ("not applicable", "not an ATA disk (transport scsi)")
    assert report["drive"]["wwn"] == drive.wwn and report["restored"] is True


def test_an_nvme_drive_without_a_volatile_cache_has_no_write_cache_path(loop_disks, mount_ns, tmp_path):
    disk = loop_disks()
    drive = Drive("nvme_without_cache", disk, mount_ns, tmp_path / "drive")
    said = "the drive reports no volatile write cache (NVMe vwc 0): nothing to switch"
    rc, failures, report = validate_standin(tmp_path, drive, mount_ns)
    assert rc == 0, failures
    paths = by_path(report)
    cache = paths["write_cache"]
    assert (cache["status"], cache["message"]) == ("not applicable", said), cache
    assert cache["details"]["before"]["present"] is False and cache["details"]["after"]["present"] is False
    assert cache["details"]["comparison"] == {"original": "absent", "error": None, "note": said}
    # The drive was measured as it is and never asked to switch (the stand-in has no answer for that).
    assert "write_cache" not in drive.state()["nvme"]
    assert paths["nvme_namespace"]["status"] == "passed", paths["nvme_namespace"]
    assert report["restored"] is True and disk.checksum() == BLANK_CHECKSUM
    markdown = (tmp_path / "reports" / "validate-hardware-localhost.md").read_text()
    assert "| write_cache | not applicable | %s |" % said in markdown
    rc, failures, report = validate(tmp_path, drive, check=True, prefix=mount_ns, env=drive.env,
                                    cephops_validate_confirm=drive.serial)
    assert rc == 0, failures
    assert (by_path(report)["write_cache"]["status"], by_path(report)["write_cache"]["message"]) == \
        ("not applicable", said)
