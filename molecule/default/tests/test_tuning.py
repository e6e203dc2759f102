"""What site.yml left on a lab host, checked on the live system after a reboot through grub.

Disks are found by serial, so the checks hold whatever kernel names they got this boot.
"""

import fnmatch
import json
import re
from pathlib import Path

import pytest

from test_lab import DATA_SERIAL, WWN, whole_disk_by_serial

testinfra_hosts = ["ansible://osds"]

HDD_SERIAL = "CEPHOPS-HDD-0001"
SLOW_SERIAL = "CEPHOPS-SLOW-0001"  # tuned by model rules (molecule/shared/group_vars/osds/tests.yml)
NVME_SERIAL = "CEPHOPS-NVME-0001"  # its max_sectors_kb is clamped: an identity rule of its own
SCHEDULERS = {
    "CEPHOPS-SSD-0001": "none",
    SLOW_SERIAL: "mq-deadline",  # its model rule
    DATA_SERIAL: "none",
    "CEPHOPS-OPSSD-0001": "none",
    "CEPHOPS-HDD-0001": "mq-deadline",
    "CEPHOPS-NVME-0001": "bfq",  # its model rule, by the model in sysfs; the guest starts it on mq-deadline
    "CEPHOPS-VIRTIO-0001": "none",
    "CEPHOPS-OPVIRT-0001": "bfq",  # its serial rule: bfq is a module, loaded at boot by the role's file
}
BFQ_SERIAL = "CEPHOPS-OPVIRT-0001"
MODULES_LOAD = "/etc/modules-load.d/cephops-io-scheduler.conf"
WWN_SERIAL, = WWN  # tuned by a disk rule that matches its WWN
# By class, but the two SSD models and the SCSI spare by their model rules (max_sectors_kb_models
# in the lab's group_vars) and the spare SSD by its WWN rule (max_sectors_kb_overrides).
MAX_SECTORS_KB = {"CEPHOPS-SSD-0001": "128", "CEPHOPS-SLOW-0001": "32", DATA_SERIAL: "64", WWN_SERIAL: "16",
                  "CEPHOPS-OPSCSI-0001": "48"}  # the SCSI spare by its model rule
# The kernel's max_sectors_kb for a disk that allows more (BLK_DEF_MAX_SECTORS, 2560 sectors).
KERNEL_DEFAULT_MAX_SECTORS_KB = 1280
RULES = ("/etc/udev/rules.d/61-cephops-io-scheduler.rules", "/etc/udev/rules.d/61-cephops-max-sectors-kb.rules")
GATE_CACHE = "/var/cache/cephops-osd-tuning/gate"


def queue(host, serial, attribute):
    name = Path(whole_disk_by_serial(host, serial)).name
    return host.file(f"/sys/block/{name}/queue/{attribute}").content_string.strip()


def active_scheduler(host, serial):
    return queue(host, serial, "scheduler").split("[")[1].split("]")[0]


@pytest.mark.parametrize("serial", sorted(SCHEDULERS))
def test_scheduler_set_by_udev_at_boot(host, serial):
    assert active_scheduler(host, serial) == SCHEDULERS[serial]


@pytest.mark.parametrize("serial", sorted(MAX_SECTORS_KB))
def test_max_sectors_kb_holds_after_reboot(host, serial):
    assert queue(host, serial, "max_sectors_kb") == MAX_SECTORS_KB[serial]


def model_entry(host, entries, serial):
    """The first entry of a model list that matches this disk's model, as disk_facts reports it."""
    disks = host.ansible("cephops.osd_tuning.disk_facts", check=False, become=True)["disks"]
    model = [d["model"] for d in disks if d["serial"] == serial][0]
    found = [entry for entry in entries if fnmatch.fnmatchcase(model.strip(), entry["model"])]
    assert found, f"no model entry matches {model!r} of {serial}"
    return found[0]


def test_hdd_keeps_mq_deadline_with_class_and_serial_rule_tunables_after_reboot(host):
    variables = host.ansible.get_variables()
    serial_rule = [o for o in variables["io_scheduler_overrides"] if o.get("serial") == HDD_SERIAL][0]
    assert active_scheduler(host, HDD_SERIAL) == "mq-deadline" == serial_rule["scheduler"]
    wanted = dict(variables["io_scheduler_tunables"]["hdd"], **serial_rule["tunables"])
    assert len(wanted) == 2, wanted  # one tunable from each rule, so each rule is seen to act
    for tunable, value in wanted.items():
        assert queue(host, HDD_SERIAL, "iosched/" + tunable) == str(value), tunable


def test_model_rules_tune_the_slow_ssd_after_reboot(host):
    variables = host.ansible.get_variables()
    scheduler = model_entry(host, variables["io_scheduler_models"], SLOW_SERIAL)
    assert active_scheduler(host, SLOW_SERIAL) == scheduler["scheduler"]
    for tunable, value in scheduler["tunables"].items():
        assert queue(host, SLOW_SERIAL, "iosched/" + tunable) == str(value), tunable
    sectors = model_entry(host, variables["max_sectors_kb_models"], SLOW_SERIAL)
    assert queue(host, SLOW_SERIAL, "max_sectors_kb") == str(sectors["max_sectors_kb"]) != "64"


def test_bfq_is_loaded_after_reboot_with_the_roles_modules_load_file(host):
    # A module, not built in: otherwise nothing here would need loading.
    kernel = host.check_output("uname -r")
    assert "/bfq.ko" not in host.file(f"/lib/modules/{kernel}/modules.builtin").content_string
    assert host.check_output("modinfo -F filename bfq").startswith("/lib/modules/")
    loaded = host.file(MODULES_LOAD)
    assert loaded.content_string.startswith("# Managed by role cephops.osd_tuning.io_scheduler")
    assert "bfq" in loaded.content_string.split("\n")
    assert loaded.user == "root" and loaded.mode == 0o644
    # systemd-modules-load ran this boot with the file in place and took it; bfq is loaded.
    # Which loaded it first is not shown: systemd-modules-load and udev's coldplug are not
    # ordered, and this kernel also asks for the module when udev's rule writes "bfq".
    unit = host.check_output("systemctl show -p ActiveState -p Result systemd-modules-load.service").split()
    assert sorted(unit) == ["ActiveState=active", "Result=success"], unit
    assert host.run("/lib/systemd/systemd-modules-load %s", MODULES_LOAD).rc == 0
    assert host.file("/sys/module/bfq").is_directory


def test_bfq_disk_keeps_its_serial_rule_tunable_after_reboot(host):
    rule, = [o for o in host.ansible.get_variables()["io_scheduler_overrides"] if o.get("serial") == BFQ_SERIAL]
    assert active_scheduler(host, BFQ_SERIAL) == rule["scheduler"] == "bfq"
    for tunable, value in rule["tunables"].items():
        assert queue(host, BFQ_SERIAL, "iosched/" + tunable) == str(value), tunable


def test_clamped_nvme_keeps_its_max_hw_sectors_kb_after_reboot(host):
    chosen = host.ansible.get_variables()["max_sectors_kb_nvme"]
    high = int(queue(host, NVME_SERIAL, "max_hw_sectors_kb"))
    assert chosen > high, "the NVMe's max_hw_sectors_kb no longer clamps the lab's value"
    # Without the rule the kernel would give min(max_hw_sectors_kb, 1280): only the rule gives more.
    assert high > KERNEL_DEFAULT_MAX_SECTORS_KB, "the clamped value would be the kernel's own: the test could not fail"
    assert queue(host, NVME_SERIAL, "max_sectors_kb") == str(high)


RULE_KINDS = {
    RULES[0]: ("# class hdd", "# model ", "# disk " + HDD_SERIAL),
    RULES[1]: ("# class ssd", "# model ", "# disk " + WWN[WWN_SERIAL], "clamped to its max_hw_sectors_kb"),
}


def test_wwn_rule_tunes_its_disk_after_reboot(host):
    variables = host.ansible.get_variables()
    entry, = [o for o in variables["max_sectors_kb_overrides"] if o.get("wwn")]
    assert entry["wwn"] == WWN[WWN_SERIAL]
    disk = whole_disk_by_serial(host, WWN_SERIAL)
    # udev's ata_id read the WWN from the drive's IDENTIFY data: the key the rule matches.
    properties = host.check_output("udevadm info --query=property --name=%s", disk).splitlines()
    assert "ID_WWN=" + entry["wwn"] in properties
    assert 'ENV{ID_WWN}=="%s"' % entry["wwn"] in host.file(RULES[1]).content_string
    # The class rule before it says otherwise, and nothing set the value since the reboot.
    assert variables["max_sectors_kb_ssd"] != entry["max_sectors_kb"]
    assert queue(host, WWN_SERIAL, "max_sectors_kb") == str(entry["max_sectors_kb"])


@pytest.mark.parametrize("path", RULES)
def test_every_rule_kind_is_in_the_files(host, path):
    text = host.file(path).content_string
    for kind in RULE_KINDS[path]:
        assert kind in text, kind


@pytest.mark.parametrize("path", RULES)
def test_the_root_disk_is_left_alone_by_a_rule_first_in_each_file_that_skips_the_rest(host, path):
    """The guest's root disk is virtio without a serial: its skip rule matches its slot. The boot
    tests above show the rules after the skip still act on every other disk."""
    disk = host.check_output("lsblk -no PKNAME $(findmnt -no SOURCE /)")
    slot = host.check_output("udevadm info --query=property --property=ID_PATH --value /dev/%s", disk)
    lines = [line for line in host.file(path).content_string.splitlines() if line and not line.startswith("#")]
    skips = [index for index, line in enumerate(lines) if line.endswith('GOTO="cephops_end"')]
    root = [index for index in skips if lines[index].endswith('ENV{ID_PATH}=="%s", GOTO="cephops_end"' % slot)]
    assert len(root) == 1 and skips == list(range(len(skips))), lines
    assert lines[-1] == 'LABEL="cephops_end"'


def test_max_sectors_kb_left_alone_where_not_chosen(host):
    assert queue(host, "CEPHOPS-HDD-0001", "max_sectors_kb") == queue(host, "CEPHOPS-HDD-0001", "max_hw_sectors_kb")


@pytest.mark.parametrize("path", RULES)
def test_udev_rules_files_are_root_owned_and_readable(host, path):
    rules = host.file(path)
    assert rules.user == "root" and rules.group == "root" and rules.mode == 0o644
    assert rules.content_string.startswith("# Managed by role cephops.osd_tuning.")
    assert 'SUBSYSTEM=="block"' in rules.content_string


@pytest.mark.parametrize("path,validate", [("/etc/fstab", "findmnt --verify --tab-file /etc/fstab"),
                                           ("/etc/default/grub", "sh -n /etc/default/grub")])
def test_etc_files_the_roles_edited_stay_root_owned_readable_and_valid(host, path, validate):
    edited = host.file(path)
    assert edited.user == "root" and edited.group == "root"
    assert edited.mode & 0o444 == 0o444 and edited.mode & 0o022 == 0, oct(edited.mode)
    assert host.run(validate).rc == 0


def test_no_stale_elevator_anywhere(host):
    assert "elevator=" not in host.file("/proc/cmdline").content_string
    assert "elevator=" not in host.file("/etc/default/grub").content_string
    assert "elevator=" not in host.file("/boot/grub/grub.cfg").content_string
    # ... and prepare.yml had put one there: the record of what the role removed says so.
    record = json.loads(host.file("/var/lib/cephops-osd-tuning/io_scheduler-cmdline.json").content_string)
    assert record["removed"] == ["elevator=deadline"]


def test_root_and_ceph_filesystem_mounted_noatime_after_reboot(host):
    assert "noatime" in host.mount_point("/").options
    osd = host.mount_point("/var/lib/ceph/osd/ceph-0")
    assert osd.filesystem == "xfs" and "noatime" in osd.options
    assert "isize=2048" in host.check_output("xfs_info /var/lib/ceph/osd/ceph-0")
    fstab = host.file("/etc/fstab").content_string
    assert any(line.startswith("UUID=") and "/var/lib/ceph/osd/ceph-0" in line and "noatime" in line
               for line in fstab.splitlines())


@pytest.mark.parametrize("serial,reserve", [("CEPHOPS-OPSSD-0001", 20), ("CEPHOPS-OPVIRT-0001", 10)])
def test_partition_overprovisioning_survives_the_reboot(host, serial, reserve):
    disk = Path(whole_disk_by_serial(host, serial)).name
    size = int(host.file(f"/sys/block/{disk}/size").content_string)
    parts = [p for p in host.check_output(f"ls /sys/block/{disk}").split() if p.startswith(disk)]
    assert len(parts) == 1, parts
    start = int(host.file(f"/sys/block/{disk}/{parts[0]}/start").content_string)
    length = int(host.file(f"/sys/block/{disk}/{parts[0]}/size").content_string)
    assert start == 2048  # 1 MiB aligned
    assert (start + length) * 100 <= size * (100 - reserve)
    record = json.loads(host.file("/var/lib/cephops-osd-tuning/overprovision-partition.json").content_string)
    assert any(serial in json.dumps(entry) for entry in record["disks"].values())


def test_hpa_on_the_emulated_sata_ssd_fails_cleanly(host):
    disk = whole_disk_by_serial(host, "CEPHOPS-SSD-0001")
    before = host.check_output("hdparm -N %s", disk)
    # testinfra returns a failed module's result without its "failed" key: judge the result.
    args = {"disks": [{"device": disk, "reserve_percent": 10}], "erase": True}
    result = host.ansible("cephops.osd_tuning.ata_hpa", json.dumps(args), check=False, become=True)
    assert "the drive rejected SET MAX ADDRESS" in result["msg"] and "the HPA is unchanged" in result["msg"]
    found = result["disks"][0]
    assert found["visible_sectors"] == found["native_sectors"] == found["visible_sectors_before"]
    assert host.check_output("hdparm -N %s", disk) == before


GATE_VERDICTS = {
    "CEPHOPS-SSD-0001": "suitable",
    "CEPHOPS-VIRTIO-0001": "suitable",  # virtio reports rotational: HDD class thresholds
    "CEPHOPS-HDD-0001": "suitable",  # HDD class thresholds
    "CEPHOPS-SLOW-0001": "unsuitable",
}


def gate_cache(host):
    entries = {}
    for name in host.file(GATE_CACHE).listdir():
        entry = json.loads(host.file(f"{GATE_CACHE}/{name}").content_string)
        entries[entry["result"].get("serial")] = entry["result"]
    return entries


@pytest.mark.parametrize("serial", sorted(GATE_VERDICTS))
def test_gate_verdicts(host, serial):
    result = gate_cache(host)[serial]
    assert result["verdict"] == GATE_VERDICTS[serial], result["reasons"]


def test_gate_never_probed_the_data_disk(host):
    assert DATA_SERIAL not in gate_cache(host)


def test_disk_facts_on_real_udev(host):
    disks = {d["serial"]: d for d in host.ansible("cephops.osd_tuning.disk_facts", check=False, become=True)["disks"]}
    assert disks[DATA_SERIAL]["available"] is False
    assert disks[DATA_SERIAL]["reject_reasons"][:2] == ["Has GPT headers", "Has partitions"]
    assert disks["CEPHOPS-SSD-0001"]["transport"] == "sata" and disks["CEPHOPS-SSD-0001"]["by_id"]
    assert disks["CEPHOPS-NVME-0001"]["transport"] == "nvme"
    assert disks["CEPHOPS-VIRTIO-0001"]["transport"] == "virtio"
    assert disks["CEPHOPS-HDD-0001"]["rotational"] is True
    assert disks["CEPHOPS-OPSSD-0001"]["reject_reasons"][:2] == ["Has GPT headers", "Has partitions"]
    assert any(d["root_disk"] for d in disks.values())


VERDICT_RULES = "/etc/udev/rules.d/62-cephops-verdict-test.rules"
VERDICT_MEMORY = "/var/lib/cephops-verdict-test/max_sectors_kb-verdicts.json"


# converge.yml runs that play in the default scenario only: the other releases prove the rules at
# boot through the tests above, and the verdict rests on the collection, not on the release.
@pytest.mark.same_on_every_release
def test_a_change_measured_worse_is_undone_and_stays_undone_after_reboot(host):
    """converge.yml's last play: the HDD, limited to 200 read requests a second (labctl), given a
    model rule of 16 KiB by the max_sectors_kb role with read figures on. Eighty times the requests
    read far slower: the role put the value before back, remembered the verdict and wrote a rule
    of the disk's own after the model rule; after the boot the disk holds the value before."""
    rules = host.file(VERDICT_RULES).content_string
    model_rule = 'ENV{ID_MODEL}=="CEPHOPS_SATA_HDD_7200RPM_8TB"'
    assert model_rule in rules and 'ATTR{queue/max_sectors_kb}="16"' in rules, rules
    # The disk's own rule matches its serial; its comment names the disk as the kernel called it
    # when the rule was written, which a later boot may call otherwise (one did in a whole run).
    lines = rules.splitlines()
    own = [index for index, line in enumerate(lines) if 'ENV{ID_SERIAL_SHORT}=="%s"' % HDD_SERIAL in line]
    assert len(own) == 1 and own[0] > 0, rules
    comment, rule = lines[own[0] - 1], lines[own[0]]
    value = rule.split('ATTR{queue/max_sectors_kb}="')[1].rstrip('"')
    assert re.fullmatch(r"# disk sd[a-z]+, kept at %s: a change measured worse" % value, comment), rules
    # The disk's own rule comes after the model rule, so udev leaves the disk at the value before.
    assert rules.index(model_rule) < rules.index(rule), rules
    assert queue(host, HDD_SERIAL, "max_sectors_kb") == value != "16"
    with host.sudo():
        remembered, = json.loads(host.file(VERDICT_MEMORY).content_string)["verdicts"]
    assert (remembered["identity"], remembered["value"]) == ("serial " + HDD_SERIAL, 16), remembered
    assert remembered["kernel"] == host.check_output("uname -r"), remembered
    assert remembered["why"].startswith("sequential read worse: every run slower"), remembered
