"""queue_plan on disks as disk_facts reports them."""

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev
from ansible_collections.cephops.osd_tuning.plugins.modules import udev_queue_rules
from ansible_collections.cephops.osd_tuning.plugins.filter import queue_plan


def disk(name, transport, rotational=False, model="", serial=None, wwn=None, schedulers=None):
    """A disk as disk_facts reports it, class included."""
    return dict(name=name, transport=transport, rotational=rotational, model=model, serial=serial, wwn=wwn,
                schedulers=schedulers or ["mq-deadline", "kyber", "bfq", "none"],
                **{"class": blockdev.disk_class(name, transport, rotational)})


ZOO = [
    disk("sda", "sata", model="CEPHOPS FAST SSD", serial="CEPHOPS-SSD-0001"),
    disk("sdb", "sata", rotational=True, model="CEPHOPS HDD", serial="CEPHOPS-HDD-0001"),
    disk("nvme0n1", "nvme", model="CEPHOPS NVME", serial="CEPHOPS-NVME-0001"),
    disk("vdb", "virtio", rotational=True, serial="CEPHOPS-VIRTIO-0001"),
    disk("loop0", "loop"),
]
CLASSES = {"ssd": "none", "hdd": "mq-deadline", "nvme": "none", "virtio": None}


def test_disk_classes():
    assert [d["class"] for d in ZOO] == ["ssd", "hdd", "nvme", "virtio", None]


def test_the_class_disk_facts_gives_decides():
    # A disk whose class says virtio is tuned as virtio, whatever its name or transport.
    odd = dict(disk("sdz", "sata"), **{"class": "virtio"})
    assert queue_plan.plan([odd], "scheduler", {"ssd": "none", "virtio": "mq-deadline"})["chosen"] == {
        "sdz": {"value": "mq-deadline", "source": "class virtio", "keep_worse": False}}


def test_classes_group_disks_and_skip_unmanaged():
    result = queue_plan.plan(ZOO, "scheduler", CLASSES)
    assert result["queues"] == [
        {"devices": ["nvme0n1", "sda"], "attributes": {"scheduler": "none"}},
        {"devices": ["sdb"], "attributes": {"scheduler": "mq-deadline"}},
    ]
    assert result["chosen"]["sdb"] == {"value": "mq-deadline", "source": "class hdd", "keep_worse": False}
    assert "vdb" not in result["chosen"] and "loop0" not in result["chosen"]


def test_most_specific_choice_wins():
    models = [{"model": "CEPHOPS*", "scheduler": "kyber"}]
    overrides = [{"serial": "CEPHOPS-SSD-0001", "scheduler": "bfq"}]
    chosen = queue_plan.plan(ZOO, "scheduler", CLASSES, models, overrides)["chosen"]
    assert chosen["sda"] == {"value": "bfq", "source": "disk CEPHOPS-SSD-0001", "keep_worse": False}
    assert chosen["sdb"] == {"value": "kyber", "source": "model CEPHOPS*", "keep_worse": False}
    assert "vdb" not in chosen  # no model, and the virtio class is not managed


def test_keep_worse_goes_with_the_rule_that_wins():
    models = [{"model": "CEPHOPS*", "scheduler": "kyber", "keep_worse": True}]
    overrides = [{"serial": "CEPHOPS-SSD-0001", "scheduler": "bfq"}]
    chosen = queue_plan.plan(ZOO, "scheduler", CLASSES, models, overrides)["chosen"]
    assert chosen["sda"] == {"value": "bfq", "source": "disk CEPHOPS-SSD-0001", "keep_worse": False}
    assert chosen["sdb"] == {"value": "kyber", "source": "model CEPHOPS*", "keep_worse": True}
    overrides[0]["keep_worse"] = True
    assert queue_plan.plan(ZOO, "scheduler", CLASSES, [], overrides)["chosen"]["sda"]["keep_worse"] is True


def test_wwn_override():
    disks = [disk("sdc", "sas", wwn="0x5000c500a1b2c3d4")]
    result = queue_plan.plan(disks, "max_sectors_kb", {}, overrides=[{"wwn": "0x5000c500a1b2c3d4", "max_sectors_kb": 64}])
    assert result["queues"] == [{"devices": ["sdc"], "attributes": {"max_sectors_kb": 64}}]
    assert result["rules"] == [{"comment": "disk 0x5000c500a1b2c3d4", "match": {"ENV{ID_WWN}": "0x5000c500a1b2c3d4"},
                                "attributes": {"max_sectors_kb": 64}}]


def test_class_tunables_go_with_the_class_value():
    result = queue_plan.plan(ZOO, "scheduler", CLASSES, extra={"hdd": {"fifo_batch": 8}})
    assert {"devices": ["sdb"], "attributes": {"scheduler": "mq-deadline", "iosched/fifo_batch": 8}} in result["queues"]
    assert {"devices": ["nvme0n1", "sda"], "attributes": {"scheduler": "none"}} in result["queues"]
    hdd_rule = [r for r in result["rules"] if r["comment"] == "class hdd"][0]
    assert hdd_rule == {"comment": "class hdd", "match": {"KERNEL": "sd*", "ATTR{queue/rotational}": "1"},
                        "attributes": {"scheduler": "mq-deadline", "iosched/fifo_batch": 8}}


def test_a_model_that_keeps_the_scheduler_adds_to_the_class_tunables():
    # At boot the class rule runs, then the model rule: the scheduler stays, so both sets hold.
    models = [{"model": "CEPHOPS HDD", "scheduler": "mq-deadline", "tunables": {"read_expire": 250, "fifo_batch": 4}}]
    result = queue_plan.plan(ZOO, "scheduler", CLASSES, models, extra={"hdd": {"fifo_batch": 8, "writes_starved": 3}})
    assert result["queues"][-1] == {"devices": ["sdb"], "attributes": {
        "scheduler": "mq-deadline", "iosched/fifo_batch": 4, "iosched/read_expire": 250, "iosched/writes_starved": 3}}
    assert result["chosen"]["sdb"] == {"value": "mq-deadline", "source": "model CEPHOPS HDD", "keep_worse": False}


def test_a_model_that_changes_the_scheduler_drops_the_class_tunables():
    # Switching the scheduler at boot resets its tunables: the class's must not be expected.
    models = [{"model": "CEPHOPS HDD", "scheduler": "bfq", "tunables": {"slice_idle": 0}}]
    result = queue_plan.plan(ZOO, "scheduler", CLASSES, models, extra={"hdd": {"fifo_batch": 8}})
    assert {"devices": ["sdb"], "attributes": {"scheduler": "bfq", "iosched/slice_idle": 0}} in result["queues"]


def test_disk_tunables_win_over_model_and_class():
    models = [{"model": "CEPHOPS*", "scheduler": "mq-deadline", "tunables": {"fifo_batch": 4}}]
    overrides = [{"serial": "CEPHOPS-HDD-0001", "scheduler": "mq-deadline", "tunables": {"fifo_batch": 2}}]
    result = queue_plan.plan(ZOO, "scheduler", CLASSES, models, overrides, extra={"hdd": {"fifo_batch": 8}})
    assert {"devices": ["sdb"], "attributes": {"scheduler": "mq-deadline", "iosched/fifo_batch": 2}} in result["queues"]
    # A model gives an sd* and an nvme* rule, a serial one by ID_SERIAL_SHORT and one for virtio.
    assert [r["attributes"].get("iosched/fifo_batch") for r in result["rules"]] == [None, 8, None, 4, 4, 2, 2]


def test_tunables_are_per_class_and_only_for_managed_classes():
    with pytest.raises(ValueError, match=r"tunables are set per disk class \(ssd, hdd, nvme, virtio\), not for 'mq-deadline'"):
        queue_plan.plan(ZOO, "scheduler", CLASSES, extra={"mq-deadline": {"fifo_batch": 1}})
    with pytest.raises(ValueError, match="tunables for class virtio, which is left alone"):
        queue_plan.plan(ZOO, "scheduler", CLASSES, extra={"virtio": {"fifo_batch": 1}})
    assert queue_plan.plan(ZOO, "scheduler", CLASSES, extra={"virtio": {}})["queues"]


def test_the_first_matching_entry_wins_now_and_at_boot():
    # choose() takes the first matching entry; udev applies every matching rule and the last
    # one wins, so rules are written from the last entry to the first.
    models = [{"model": "CEPHOPS HDD", "scheduler": "bfq"}, {"model": "CEPHOPS*", "scheduler": "kyber"}]
    overrides = [{"serial": "CEPHOPS-HDD-0001", "scheduler": "none"}, {"wwn": "0x5000c500a1b2c3d4", "scheduler": "bfq"}]
    sdb = dict(ZOO[1], wwn="0x5000c500a1b2c3d4")
    result = queue_plan.plan([sdb], "scheduler", CLASSES, models)
    assert result["chosen"]["sdb"]["value"] == "bfq"
    # Each model gives two rules (sd* and nvme*), which never match the same disk.
    assert [r["comment"] for r in result["rules"]][-4:] == ["model CEPHOPS*"] * 2 + ["model CEPHOPS HDD"] * 2
    result = queue_plan.plan([sdb], "scheduler", CLASSES, models, overrides)
    assert result["chosen"]["sdb"] == {"value": "none", "source": "disk CEPHOPS-HDD-0001", "keep_worse": False}
    assert [r["comment"] for r in result["rules"]][-3:] == ["disk 0x5000c500a1b2c3d4"] + ["disk CEPHOPS-HDD-0001"] * 2


def test_rendered_rule_sets_the_scheduler_then_its_tunables():
    models = [{"model": "CEPHOPS SLOW SSD", "scheduler": "mq-deadline", "tunables": {"fifo_batch": 1}}]
    rules = queue_plan.plan(ZOO, "scheduler", CLASSES, models, extra={"hdd": {"fifo_batch": 8}})["rules"]
    lines = [line for line in udev_queue_rules.render(rules, "test").splitlines() if line.startswith("ACTION")]
    hdd = [line for line in lines if 'ATTR{queue/rotational}=="1"' in line][0]
    assert hdd.endswith('ATTR{queue/scheduler}="mq-deadline", ATTR{queue/iosched/fifo_batch}="8"')
    for line in lines[-2:]:  # the model's sd* and nvme* rules
        assert "CEPHOPS_SLOW_SSD" in line or 'ATTRS{model}=="CEPHOPS SLOW SSD*"' in line
        assert line.endswith('ATTR{queue/scheduler}="mq-deadline", ATTR{queue/iosched/fifo_batch}="1"')


def test_rules_cover_classes_models_and_disks_in_that_order():
    rules = queue_plan.plan(ZOO, "scheduler", CLASSES, [{"model": "CEPHOPS HDD", "scheduler": "bfq"}],
                            [{"serial": "CEPHOPS-NVME-0001", "scheduler": "mq-deadline"}])["rules"]
    assert [r["comment"] for r in rules] == ["class ssd", "class hdd", "class nvme", "model CEPHOPS HDD",
                                             "model CEPHOPS HDD", "disk CEPHOPS-NVME-0001", "disk CEPHOPS-NVME-0001"]
    assert rules[3]["match"] == {"KERNEL": "sd*", "ENV{ID_MODEL}": "CEPHOPS_HDD"}
    assert rules[4]["match"] == {"KERNEL": "nvme*", "ATTRS{model}": "CEPHOPS HDD*"}
    assert rules[5]["match"] == {"ENV{ID_SERIAL_SHORT}": "CEPHOPS-NVME-0001"}
    # udev gives a virtio disk's serial as ID_SERIAL only: without this rule a serial rule never
    # reached a virtio disk at boot or at a change event.
    assert rules[6]["match"] == {"KERNEL": "vd*", "ENV{ID_SERIAL}": "CEPHOPS-NVME-0001"}


# Two ATA models whose first 16 characters, all that sysfs keeps of them, are the same.
PRO = "Samsung SSD 850 PRO 256GB"
EVO = "Samsung SSD 850 EVO 250GB"


def test_a_model_choice_tells_apart_models_with_the_same_first_16_characters():
    disks = [disk("sda", "sata", model=PRO), disk("sdb", "sata", model=EVO)]
    result = queue_plan.plan(disks, "max_sectors_kb", {"ssd": 256}, [{"model": PRO, "max_sectors_kb": 64}])
    assert result["chosen"] == {"sda": {"value": 64, "source": "model " + PRO, "keep_worse": False},
                                "sdb": {"value": 256, "source": "class ssd", "keep_worse": False}}
    # udev's ID_MODEL holds the whole ATA model, whitespace made "_"; ATTRS{model} only 16 characters.
    assert [r["match"] for r in result["rules"] if r["comment"].startswith("model")] == [
        {"KERNEL": "sd*", "ENV{ID_MODEL}": "Samsung_SSD_850_PRO_256GB"},
        {"KERNEL": "nvme*", "ATTRS{model}": PRO + "*"}]


@pytest.mark.parametrize("pattern,udev", [
    ("Samsung SSD 850*", "Samsung_SSD_850*"),
    ("  INTEL  SSDSC2KB480G8 ", "INTEL_SSDSC2KB480G8"),
    ("WDC WD80EFAX-68KNBN0", "WDC_WD80EFAX-68KNBN0"),
    ("HGST HUS726T4TALA6L4 (x)", "HGST_HUS726T4TALA6L4__x_"),
    ("Micron_5300_MTFDDAK480TDS", "Micron_5300_MTFDDAK480TDS"),
    ("ST4000NM0035-1V4107 [AB]?", "ST4000NM0035-1V4107_[AB]?"),
])
def test_model_pattern_in_udevs_id_model_spelling(pattern, udev):
    assert queue_plan.model_matches(pattern)[0]["ENV{ID_MODEL}"] == udev


def test_model_rules_pass_the_udev_rules_check():
    rules = queue_plan.plan([], "scheduler", {}, [{"model": 'Odd "quoted" model', "scheduler": "none"}])["rules"]
    # The ENV{ID_MODEL} rule is safe whatever the pattern; the sysfs one holds the quote and is refused.
    assert udev_queue_rules.check(rules[:1]) == []
    assert udev_queue_rules.check(rules[1:])


def test_legacy_kernel_gets_legacy_names():
    legacy = [disk("sda", "sata", schedulers=["noop", "deadline", "cfq"]),
              disk("sdb", "sata", rotational=True, schedulers=["noop", "deadline", "cfq"])]
    result = queue_plan.plan(legacy, "scheduler", CLASSES, extra={"hdd": {"fifo_batch": 1}})
    assert result["legacy"] is True
    assert result["queues"] == [
        {"devices": ["sda"], "attributes": {"scheduler": "noop"}},
        {"devices": ["sdb"], "attributes": {"scheduler": "deadline", "iosched/fifo_batch": 1}},
    ]
    assert [r["attributes"]["scheduler"] for r in result["rules"]] == ["noop", "deadline", "noop"]


def test_no_translation_for_other_attributes():
    legacy = [disk("sda", "sata", schedulers=["noop", "deadline", "cfq"])]
    assert queue_plan.plan(legacy, "max_sectors_kb", {"ssd": 64})["legacy"] is False


def test_max_sectors_clamped_per_disk_with_an_identity_rule():
    disks = [dict(disk("sda", "sata", serial="SSD-A"), max_hw_sectors_kb=128),
             dict(disk("sdb", "sata", serial="SSD-B"), max_hw_sectors_kb=32767)]
    result = queue_plan.plan(disks, "max_sectors_kb", {"ssd": 1024})
    assert result["chosen"] == {"sda": {"value": 128, "source": "class ssd", "keep_worse": False},
                                "sdb": {"value": 1024, "source": "class ssd", "keep_worse": False}}
    assert result["warnings"] == ["sda: max_sectors_kb 1024 clamped to its max_hw_sectors_kb 128"]
    assert result["rules"][-1] == {"comment": "disk sda, clamped to its max_hw_sectors_kb",
                                   "match": {"ENV{ID_SERIAL_SHORT}": "SSD-A"}, "attributes": {"max_sectors_kb": 128}}


def test_clamp_without_identity_is_said():
    disks = [dict(disk("sda", "sata"), max_hw_sectors_kb=128)]
    result = queue_plan.plan(disks, "max_sectors_kb", {"ssd": 512})
    assert result["warnings"][-1].startswith("sda: no serial or WWN, so its udev rule cannot be clamped")


def test_a_kept_disk_goes_back_to_its_value_and_a_rule_of_its_own_keeps_it_at_boot():
    disks = [dict(disk("sda", "sata", serial="SSD-A"), max_sectors_kb=512, max_hw_sectors_kb=32767),
             dict(disk("sdb", "sata", serial="SSD-B"), max_sectors_kb=512, max_hw_sectors_kb=32767),
             dict(disk("sdc", "sata"), max_sectors_kb=256, max_hw_sectors_kb=32767)]
    why = "measured worse"
    result = queue_plan.plan(disks, "max_sectors_kb", {"ssd": 64}, kept={"sda": why, "sdc": why})
    assert result["chosen"] == {"sda": {"value": 512, "source": "kept: measured worse", "keep_worse": False},
                                "sdb": {"value": 64, "source": "class ssd", "keep_worse": False},
                                "sdc": {"value": 256, "source": "kept: measured worse", "keep_worse": False}}
    assert result["queues"] == [{"devices": ["sda"], "attributes": {"max_sectors_kb": 512}},
                                {"devices": ["sdb"], "attributes": {"max_sectors_kb": 64}},
                                {"devices": ["sdc"], "attributes": {"max_sectors_kb": 256}}]
    assert result["changing"] == ["sdb"]
    # The class rule still covers every SSD; the kept disk's own rule comes after it and wins.
    assert result["rules"] == [
        {"comment": "class ssd", "match": queue_plan.CLASS_RULES["ssd"], "attributes": {"max_sectors_kb": 64}},
        {"comment": "disk sda, kept at 512: a change measured worse", "match": {"ENV{ID_SERIAL_SHORT}": "SSD-A"},
         "attributes": {"max_sectors_kb": 512}}]
    assert result["warnings"] == ["sdc: no serial or WWN, so no udev rule keeps it at 256 at boot (measured worse)"]


def test_figures_put_back_a_change_measured_worse_and_keep_the_disks_kept_before():
    # The plan after the change sets every disk again: from the inventory taken before it, the
    # disk measured worse goes back, the one kept off by an earlier verdict stays, and the one
    # whose rule keeps its value measured worse keeps the change.
    disks = [dict(disk("sda", "sata", serial="SSD-A"), max_sectors_kb=512, max_hw_sectors_kb=32767),
             dict(disk("sdb", "sata", model="KEEP ME", serial="SSD-B"), max_sectors_kb=512, max_hw_sectors_kb=32767),
             dict(disk("sdc", "sata", serial="SSD-C"), max_sectors_kb=512, max_hw_sectors_kb=32767),
             dict(disk("sdd", "sata", serial="SSD-D"), max_sectors_kb=512, max_hw_sectors_kb=32767)]
    models = [{"model": "KEEP ME", "max_sectors_kb": 64, "keep_worse": True}]
    figures = [{"device": "sda", "setting": 64, "verdict": "worse", "why": "-40.1 %"},
               {"device": "sdb", "setting": 64, "verdict": "worse", "why": "-38.0 %"},
               {"device": "sdd", "setting": 64, "verdict": "same", "why": "the ranges overlapped"}]
    kept = {"sdc": "max_sectors_kb 64 measured worse on 2026-12-01 with the same firmware and kernel: -35.2 %"}
    result = queue_plan.plan(disks, "max_sectors_kb", {"ssd": 64}, models, kept=kept, figures=figures)
    assert result["undone"] == ["sda"]
    assert result["chosen"] == {
        "sda": {"value": 512, "source": "kept: measured worse: -40.1 %", "keep_worse": False},
        "sdb": {"value": 64, "source": "model KEEP ME", "keep_worse": True},
        "sdc": {"value": 512, "source": "kept: " + kept["sdc"], "keep_worse": False},
        "sdd": {"value": 64, "source": "class ssd", "keep_worse": False}}
    assert [rule["comment"] for rule in result["rules"] if rule["comment"].startswith("disk")] == [
        "disk sda, kept at 512: a change measured worse", "disk sdc, kept at 512: a change measured worse"]
    # keep_worse keeps every change; the disk kept off by its remembered verdict stays kept.
    kept_all = queue_plan.plan(disks, "max_sectors_kb", {"ssd": 64}, models, kept=kept, figures=figures,
                               keep_worse=True)
    assert kept_all["undone"] == []
    assert [name for name, choice in sorted(kept_all["chosen"].items()) if choice["value"] == 512] == ["sdc"]


def test_a_kept_scheduler_drops_the_class_tunables():
    disks = [dict(disk("sdb", "sata", rotational=True, serial="HDD-B"), scheduler="bfq")]
    result = queue_plan.plan(disks, "scheduler", {"hdd": "mq-deadline"}, extra={"hdd": {"fifo_batch": 16}},
                             kept={"sdb": "measured worse"})
    assert result["queues"] == [{"devices": ["sdb"], "attributes": {"scheduler": "bfq"}}]
    assert result["rules"][-1]["attributes"] == {"scheduler": "bfq"}


def test_zero_leaves_a_class_alone():
    assert queue_plan.plan(ZOO, "max_sectors_kb", {"ssd": 0, "hdd": 64})["chosen"] == {
        "sdb": {"value": 64, "source": "class hdd", "keep_worse": False}}


def test_changing_lists_disks_whose_value_differs():
    disks = [dict(disk("sda", "sata"), max_sectors_kb=128, max_hw_sectors_kb=512),
             dict(disk("sdb", "sata"), max_sectors_kb=64, max_hw_sectors_kb=512)]
    assert queue_plan.plan(disks, "max_sectors_kb", {"ssd": 64})["changing"] == ["sda"]
    schedulers = [dict(disk("sda", "sata"), scheduler="mq-deadline"), dict(disk("nvme0n1", "nvme"), scheduler="none")]
    assert queue_plan.plan(schedulers, "scheduler", CLASSES)["changing"] == ["sda"]


def test_a_clamped_virtio_disk_is_matched_by_the_serial_udev_gives_it():
    disks = [dict(disk("vdb", "virtio", serial="VIRT-A"), max_hw_sectors_kb=128)]
    result = queue_plan.plan(disks, "max_sectors_kb", {"virtio": 1024})
    assert result["rules"][-1]["match"] == {"KERNEL": "vd*", "ENV{ID_SERIAL}": "VIRT-A"}


def placed(name, root_disk=False, mountpoints=(), swap=False, serial=None, links=()):
    """A disk as disk_facts gives it, with what the host itself keeps on it."""
    return dict(disk(name, "virtio" if name.startswith("vd") else "sata", serial=serial), path="/dev/" + name,
                links=["/dev/" + name] + list(links), root_disk=root_disk, mountpoints=list(mountpoints), swap=swap)


HOST = [placed("vda", root_disk=True, mountpoints=["/", "/boot"], links=["/dev/disk/by-path/pci-0000:00:04.0",
                                                                         "/dev/disk/by-path/virtio-pci-0000:00:04.0"]),
        placed("sda", serial="OSD-1", links=["/dev/disk/by-id/ata-OSD-1"]),
        placed("sdb", mountpoints=["/boot/efi"], serial="EFI-1"),
        placed("sdc", swap=True, serial="SWAP-1"),
        placed("sdd", mountpoints=["/srv"], serial="DATA-1"),
        placed("sde", serial="OSD-2")]


def test_named_disks_keeps_the_named_in_inventory_order_and_none_the_host_uses_when_none_is_named():
    assert queue_plan.named_disks(HOST, ["/dev/disk/by-id/ata-OSD-1", "sde", "vda"]) == [HOST[0], HOST[1], HOST[5]]
    # A mount elsewhere may be an OSD's own (a filestore OSD's data), and one a run makes stays in.
    assert queue_plan.named_disks(HOST, []) == [HOST[1], HOST[4], HOST[5]]
    assert [queue_plan.host_use(d) for d in HOST] == ["holds /", None, "holds /boot/efi", "holds swap", None, None]


def test_named_disks_refuses_a_name_no_disk_has():
    with pytest.raises(AnsibleFilterError, match="no disk of this host has the name sdz, /dev/disk/by-id/gone"):
        queue_plan.named_disks(HOST, ["sda", "sdz", "/dev/disk/by-id/gone"])


def test_the_disks_left_alone_are_skipped_first_so_that_no_class_rule_sets_them_at_boot():
    scope = queue_plan.named_disks(HOST, [])
    alone = [d for d in HOST if d not in scope] + [placed("vdz")]
    found = queue_plan.plan(scope, "scheduler", {"ssd": "none", "hdd": "mq-deadline", "virtio": "none"}, left_alone=alone)
    assert sorted(found["chosen"]) == ["sda", "sdd", "sde"]
    assert found["left_alone"] == {"vda": "holds /", "sdb": "holds /boot/efi", "sdc": "holds swap", "vdz": "not named"}
    skips = [rule for rule in found["rules"] if rule.get("skip")]
    assert found["rules"][:len(skips)] == skips
    # By serial where the disk has one, else by its slot: the root disk of a VM has no serial.
    assert [rule["match"] for rule in skips] == [{"ENV{ID_PATH}": "pci-0000:00:04.0"}, {"ENV{ID_SERIAL_SHORT}": "EFI-1"},
                                                 {"ENV{ID_SERIAL_SHORT}": "SWAP-1"}]
    assert found["warnings"] == ["vdz: left alone now, but it has no serial, WWN or path for a udev rule to skip it by, "
                                 "so a class or model rule may set it at boot"]
    assert udev_queue_rules.check(found["rules"]) == []
    text = udev_queue_rules.render(found["rules"], "test")
    assert text.index('GOTO="cephops_end"') < text.index("# class ssd") and text.rstrip().endswith('LABEL="cephops_end"')


def test_without_a_rule_that_could_match_them_the_disks_left_alone_need_no_skip():
    found = queue_plan.plan([HOST[1]], "scheduler", {"ssd": None, "hdd": None}, left_alone=[HOST[0], placed("vdz")])
    assert found["rules"] == [] and found["warnings"] == [] and found["left_alone"] == {"vda": "holds /", "vdz": "not named"}
