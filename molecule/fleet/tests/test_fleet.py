"""Two hosts after site.yml, a ceph-ansible-shaped OSD play, qualify.yml, rollback.yml and a reboot."""

import json
import os
import subprocess
import sys
from xml.etree import ElementTree
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "default" / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "lab"))

import labctl  # noqa: E402
import test_lab  # noqa: E402
from test_lab import whole_disk_by_serial  # noqa: E402

testinfra_hosts = ["ansible://osds"]

FAST = "/dev/disk/by-id/ata-CEPHOPS_SATA_SSD_870_PRO_3840GB_WITH_PLP_CEPHOPS-SSD-0001"
VIRTIO = "/dev/disk/by-id/virtio-CEPHOPS-VIRTIO-0001"
FAST_SERIAL, SLOW_SERIAL, VIRTIO_SERIAL = "CEPHOPS-SSD-0001", "CEPHOPS-SLOW-0001", "CEPHOPS-VIRTIO-0001"
PRO = "CEPHOPS SATA SSD 870 PRO 3840GB WITH PLP"
# The siblings (labctl --siblings 4) and the one side_effect.yml slows on fleet2.
SIBLING, SIBLING_FIRMWARE, SIBLING_OLD_FIRMWARE = labctl.SIBLING_MODEL, labctl.SIBLING_FIRMWARE, labctl.SIBLING_OLD_FIRMWARE
SLOWED_SIBLING = "CEPHOPS-SIB-0003"
# A host in qualify.yml's inventory that refuses connections.
GHOST = "ghost"
# qualify.yml's reports from side_effect.yml, kept with the lab's state.
REPORTS = Path(os.environ.get("CEPHOPS_LAB_STATE_DIR", "/nonexistent")) / labctl.REPORTS_DIR
# disk_gate_async_dir's default, where each probe job's status file is kept until the gate reads it.
ASYNC_DIR = "/var/lib/cephops-osd-tuning/async"
RECORDS = ("/var/lib/cephops-osd-tuning/io_scheduler-queues.json",
           "/var/lib/cephops-osd-tuning/max_sectors_kb-queues.json",
           "/var/lib/cephops-osd-tuning/io_scheduler-udev.json",
           "/var/lib/cephops-osd-tuning/max_sectors_kb-udev.json",
           "/var/lib/cephops-osd-tuning/mount_options.json",
           "/var/lib/cephops-osd-tuning/overprovision-hpa.json",
           "/var/lib/cephops-osd-tuning/overprovision-partition.json",
           "/var/lib/cephops-osd-tuning/overprovision-nvme_namespace.json",
           "/var/lib/cephops-osd-tuning/io_scheduler-modules.json")
# The udev rules and the modules-load.d file that loads bfq (the lab puts one disk on bfq).
RULES = ("/etc/udev/rules.d/61-cephops-io-scheduler.rules", "/etc/udev/rules.d/61-cephops-max-sectors-kb.rules",
         "/etc/modules-load.d/cephops-io-scheduler.conf")


# By serial, read when the play ran: the kernel names of the SATA and SCSI disks can change at
# the reboot before verify (the AHCI ports and the virtio-scsi disk are probed in parallel).
def test_exclude_hands_ceph_osd_only_the_approved_disks(host):
    devices = json.loads(host.file("/root/ceph-osd-devices.json").content_string)
    serials = json.loads(host.file("/root/ceph-osd-device-serials.json").content_string)
    assert len(devices) == len(serials) == 2
    assert sorted(serials) == [FAST_SERIAL, VIRTIO_SERIAL]


def test_block_stops_the_osd_play(host):
    assert not host.file("/root/ceph-osd-deployed").exists
    reason = host.file("/root/ceph-osd-blocked.txt").content_string
    assert "not approved" in reason
    assert json.loads(host.file("/root/ceph-osd-blocked-serials.json").content_string) == [SLOW_SERIAL]


def test_qualify_wrote_one_fleet_report_across_hosts():
    report = json.loads((REPORTS / "disk_gate.json").read_text())
    assert sorted(h["host"] for h in report["hosts"]) == ["fleet1", "fleet2"]
    suites = ElementTree.parse(REPORTS / "disk_gate.junit.xml").getroot()
    cases = suites.findall(".//testcase")
    assert len(cases) == 4 and not suites.findall(".//failure")
    assert "<svg" in (REPORTS / "disk_gate.html").read_text()
    assert data_paths(REPORTS) == {"fleet1": 2, "fleet2": 2}


def data_paths(reports):
    """{host: data disks} of the cephadm spec, whatever specs a host's disks take: one per
    device class where its data disks differ (the emulated disks' measured class varies)."""
    found = {}
    for spec in yaml.safe_load_all((reports / "disk_gate.cephadm.yml").read_text()):
        host = spec["placement"]["hosts"][0]
        found[host] = found.get(host, 0) + len(spec["spec"]["data_devices"]["paths"])
    return found


@pytest.fixture(scope="module")
def siblings_qualified(tmp_path_factory):
    """(exit status, report directory) of qualify.yml on both hosts' fast SSD, virtio disk and
    four siblings, one disk at a time (six at once would share a host's one emulated CPU six
    ways). fleet2's third sibling was slowed to 10 writes a second by side_effect.yml. A third
    host that refuses connections (GHOST) is in the same run: one qualify.yml run of the fleet
    proves the per-model view and that an unreachable host hides no other result."""
    reports = tmp_path_factory.mktemp("siblings")
    ghost = tmp_path_factory.mktemp("ghost") / "ghost.yml"
    ghost.write_text(yaml.safe_dump({"osds": {"hosts": {GHOST: {"ansible_host": "127.0.0.1", "ansible_port": 9}}}}))
    devices = [FAST, VIRTIO] + ["/dev/disk/by-id/ata-%s_%s" % ("_".join(SIBLING.split()), "CEPHOPS-SIB-%04d" % index)
                                for index in range(1, 5)]
    argv = ["ansible-playbook", "-i", os.environ["MOLECULE_INVENTORY_FILE"], "-i", str(ghost),
            str(Path(__file__).resolve().parents[3] / "playbooks" / "qualify.yml"),
            "-e", json.dumps({"cephops_report_dir": str(reports), "cephops_gate_devices": devices,
                              "disk_gate_parallel": False})]
    done = subprocess.run(argv, capture_output=True, text=True, check=False,
                          env=dict(os.environ, ANSIBLE_FORCE_COLOR="0", ANSIBLE_NOCOLOR="1"))
    assert (reports / "disk_gate.json").exists(), done.stdout[-3000:] + done.stderr[-2000:]
    return done.returncode, reports


def test_qualify_fails_the_host_of_the_slowed_sibling_and_reports_it_alone(siblings_qualified):
    rc, reports = siblings_qualified
    # Per host the fast SSD, the virtio disk and the four siblings; fleet2's slowed sibling falls
    # below the lab's thresholds too, so it is the one failed disk (the ghost's one case is its
    # host), qualify.yml fails, and its host gets no spec (qualify.yml's policy is block: a host
    # with a blocked disk gets no OSD).
    assert rc != 0
    suites = ElementTree.parse(reports / "disk_gate.junit.xml").getroot()
    cases = suites.findall(".//testcase")
    failed = {case.get("classname"): case for case in cases if case.find("failure") is not None}
    assert len(cases) == 13 and sorted(failed) == ["disk_gate.fleet2", "disk_gate.ghost"], \
        [case.attrib for case in failed.values()]
    assert failed["disk_gate.ghost"].find("failure").get("type") == "no_result"
    assert data_paths(reports) == {"fleet1": 6}


def test_fleet_report_groups_the_disks_per_model_and_firmware(siblings_qualified):
    _rc, reports = siblings_qualified
    report = json.loads((reports / "disk_gate.json").read_text())
    hosts_of = {}
    for entry in report["hosts"]:
        for disk in entry["disks"]:
            if disk["model"]:
                hosts_of.setdefault((disk["model"], disk["firmware"]), []).append(entry["host"])
    # Full models and firmware, as the drives report them: sysfs would show 16 and 4 characters.
    assert sorted(hosts_of) == sorted([(PRO, "CPRO2B6Q"), (SIBLING, SIBLING_FIRMWARE), (SIBLING, SIBLING_OLD_FIRMWARE)])
    models = report["models"]
    groups = {(g["model"], g["firmware"]): g for g in models["groups"]}
    assert sorted(groups) == sorted(hosts_of)
    for key, group in groups.items():
        assert group["hosts"] == len(set(hosts_of[key])) == 2 and group["disks"] == len(hosts_of[key])
    # Three siblings on each host, on the current firmware: enough to judge, and fleet2's slowed
    # one is the one flagged on the worse side, fewer sync IOPS or a longer p99 latency. Which
    # figure flags it depends on the spread of the fast ones: emulated disks probed on a busy
    # 2-core machine spread widely (seen: 210-583 sync writes a second), which widens the IOPS
    # band past a slowed one's 51 (only its p99 was flagged then, when it was capped at 50) and may flag a fast one on
    # the better side. The rule itself is unit-tested on known figures
    # (tests/unit/plugins/plugin_utils/test_gate_decision_fleet_models.py).
    siblings = groups[(SIBLING, SIBLING_FIRMWARE)]
    assert siblings["judged"] and siblings["measured"] == 6, siblings
    worse = [o for o in siblings["outliers"]
             if (o["figure"], o["direction"]) in (("write_iops", "below"), ("p99_sync_latency_ms", "above"))]
    # The slowed one is flagged; a fast one may be flagged too, on its p99 latency alone, which
    # the load of the whole run moves (seen 2026-11-28: fleet1's second sibling, p99 over the
    # band's 16.3 ms), never on fewer sync IOPS than the band allows.
    assert ("fleet2", SLOWED_SIBLING) in {(o["host"], o["serial"]) for o in worse}, siblings["outliers"]
    assert all(o["figure"] == "p99_sync_latency_ms" for o in worse if o["serial"] != SLOWED_SIBLING), worse
    # Two disks each: too few to judge.
    for key in ((PRO, "CPRO2B6Q"), (SIBLING, SIBLING_OLD_FIRMWARE)):
        assert not groups[key]["judged"] and groups[key]["outliers"] == [], groups[key]
    assert models["outliers"] == len(siblings["outliers"]) >= 1
    # The siblings' model runs two firmwares, on both hosts.
    mixed, = models["mixed_firmware"]
    assert mixed["model"] == SIBLING, mixed
    assert sorted((f["firmware"], f["disks"], f["hosts"]) for f in mixed["firmware"]) == sorted(
        [(SIBLING_FIRMWARE, 6, ["fleet1", "fleet2"]), (SIBLING_OLD_FIRMWARE, 2, ["fleet1", "fleet2"])])
    markdown = (reports / "disk_gate.md").read_text()
    assert "## Per model and firmware" in markdown and all(model in markdown for model, _firmware in groups)
    # The slowed sibling's line, wherever a fast sibling flagged on p99 sorts before it; it is
    # flagged on one figure or on both (fewer sync IOPS and a longer p99), one device either way.
    slowed = {o["device"] for o in worse if (o["host"], o["serial"]) == ("fleet2", SLOWED_SIBLING)}
    assert len(slowed) == 1, worse
    assert "- Outlier: fleet2 %s (%s, %s)" % (slowed.pop(), SIBLING, SIBLING_FIRMWARE) in markdown
    assert SIBLING_OLD_FIRMWARE in markdown
    assert 'id="per-model"' in (reports / "disk_gate.html").read_text()


def test_fleet_report_gives_every_measured_disk_a_power_loss_protection_verdict_and_no_job_file_is_left(host):
    # The report shows each measured disk's power-loss protection verdict with its reasons. The
    # probe's job status files, which held the same results, are removed as the gate reads them
    # (the gate leaves nothing but its cache, which rollback.yml removed): none is left. Which
    # verdict a flush cost gives is proven on null_blk disks by molecule/default/tests/test_plp.py.
    report = json.loads((REPORTS / "disk_gate.json").read_text())
    [entry] = [entry for entry in report["hosts"] if entry["host"] == host.backend.get_hostname()]
    measured = [disk for disk in entry["disks"] if disk["write_iops"] is not None]
    assert measured, entry
    for disk in measured:
        assert disk["plp"]["verdict"] in ("likely", "unlikely", "unknown") and disk["plp"]["reasons"], disk
    assert not host.file(ASYNC_DIR).exists or host.file(ASYNC_DIR).listdir() == []
    assert "Power-loss protection" in (REPORTS / "disk_gate.md").read_text()


def test_an_unreachable_host_is_never_approved_and_hides_no_other_result(siblings_qualified):
    # The ghost refuses connections, next to the two real hosts, in the same qualify.yml run.
    _rc, reports = siblings_qualified
    report = json.loads((reports / "disk_gate.json").read_text())
    hosts = {entry["host"]: entry for entry in report["hosts"]}
    assert sorted(hosts) == ["fleet1", "fleet2", GHOST]
    assert hosts[GHOST]["status"] == "no_result" and hosts[GHOST]["passed"] is False
    assert hosts[GHOST]["disks"] == []
    # Every real disk keeps its own verdict: all six of fleet1's approved, and on fleet2 all
    # but the slowed sibling.
    assert hosts["fleet1"]["passed"] is True and [d["approved"] for d in hosts["fleet1"]["disks"]] == [True] * 6
    assert hosts["fleet2"]["passed"] is False
    assert sorted((d["serial"], d["approved"]) for d in hosts["fleet2"]["disks"]) == sorted(
        [(FAST_SERIAL, True), (VIRTIO_SERIAL, True)]
        + [("CEPHOPS-SIB-%04d" % index, "CEPHOPS-SIB-%04d" % index != SLOWED_SIBLING) for index in range(1, 5)])
    assert list(data_paths(reports)) == ["fleet1"]


def test_rollback_removed_rules_and_records(host):
    for path in RULES + RECORDS + ("/var/cache/cephops-osd-tuning/gate",):
        assert not host.file(path).exists, path
    # Nothing the collection made stays in /etc: its backups went beside its records.
    left = host.check_output("find /etc -name '*cephops*' -o -name 'fstab.*~' -o -name 'grub.*~'")
    assert left == "", left


def test_rollback_restored_kernel_defaults_after_reboot(host):
    fast = Path(whole_disk_by_serial(host, "CEPHOPS-SSD-0001")).name
    assert "[mq-deadline]" in host.file(f"/sys/block/{fast}/queue/scheduler").content_string
    assert host.file(f"/sys/block/{fast}/queue/max_sectors_kb").content_string.strip() == \
        host.file(f"/sys/block/{fast}/queue/max_hw_sectors_kb").content_string.strip()
    # Nothing loads bfq any more: its disk is back on the kernel's choice.
    assert not host.file("/sys/module/bfq").exists
    spare = Path(whole_disk_by_serial(host, "CEPHOPS-OPVIRT-0001")).name
    assert "[bfq]" not in host.file(f"/sys/block/{spare}/queue/scheduler").content_string


def test_rollback_restored_fstab_and_mounts(host):
    assert "noatime" not in host.mount_point("/").options
    root_line = [line for line in host.file("/etc/fstab").content_string.splitlines() if " / " in line]
    assert root_line and root_line[0].split()[3] == "errors=remount-ro"


def test_rollback_removed_the_overprovisioning_partitions(host):
    for serial in ("CEPHOPS-OPSSD-0001", "CEPHOPS-OPVIRT-0001"):
        disk = Path(whole_disk_by_serial(host, serial)).name
        assert not [p for p in host.check_output(f"ls /sys/block/{disk}").split() if p.startswith(disk)]


def test_data_disk_untouched(host):
    test_lab.test_data_disk_files_unchanged(host)
