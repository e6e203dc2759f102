"""The io_scheduler role on loop devices: per-class, per-model and per-disk tunables land in sysfs now.

Loop devices have no class, model or serial: the test hands the role disk_facts records with
those filled in (``io_scheduler_disks``), so the role's own planning chooses by them. udev and
grub are left out here (no udev on the test host); the lab proves the rules at boot. The read
figures before and after a change are off: test_tuning_read_figures.py proves them.
"""

import json
import os

import pytest

from loopdisk import offers_scheduler
from modulerun import ansible_module, json_env, run_playbook

PLAYBOOK = os.path.join(os.path.dirname(__file__), "playbooks", "io_scheduler.yml")


def sysfs(disk, attr):
    with open("/sys/block/%s/queue/%s" % (disk.name, attr)) as handle:
        return handle.read().strip()


def active(disk):
    return sysfs(disk, "scheduler").split("[")[1].split("]")[0]


def fresh(disk):
    """Loop devices keep their queue settings across attach/detach: start from 'none'."""
    with open("/sys/block/%s/queue/scheduler" % disk.name, "w") as handle:
        handle.write("none")
    return disk


def record(disk, cls, model, serial):
    facts = ansible_module("disk_facts", dict(devices=[disk.path], include_loop=True))
    found = [d for d in facts["disks"] if d["name"] == disk.name]
    assert found, facts
    return dict(found[0], model=model, serial=serial, **{"class": cls})


def play(record_dir, disks, entry_point="main", **extra):
    extra_vars = dict(io_scheduler_disks=disks, io_scheduler_udev_enabled=False, io_scheduler_grub_enabled=False,
                      io_scheduler_report_read_speed=False, io_scheduler_record_dir=str(record_dir),
                      entry_point=entry_point, **extra)
    argv = ["ansible-playbook", "--inventory", "localhost,", "--connection", "local",
            "--extra-vars", json.dumps(extra_vars), PLAYBOOK]
    rc, report = run_playbook(argv, json_env())
    assert rc == 0, json.dumps(report)[-3000:]
    return report


def changed(report):
    return [task["task"]["name"] for task in report["plays"][0]["tasks"]
            if task["hosts"]["localhost"].get("changed")]


def test_tunables_by_class_model_and_disk_are_set_now_and_rolled_back(loop_disks, tmp_path):
    hdd, spare, ssd = fresh(loop_disks(1)), fresh(loop_disks(1)), fresh(loop_disks(1))
    disks = [record(hdd, "hdd", "LAB HDD", "LOOP-HDD-1"), record(spare, "hdd", "LAB HDD SPARE", "LOOP-HDD-2"),
             record(ssd, "ssd", "LAB SSD", "LOOP-SSD-1")]
    tuning = dict(
        io_scheduler_tunables={"hdd": {"fifo_batch": 8, "read_expire": 200}},
        # The model keeps the class's scheduler: its tunable is added to the class's.
        io_scheduler_models=[{"model": "LAB HDD SPARE", "scheduler": "mq-deadline", "tunables": {"writes_starved": 3}}],
        # A disk on flash that keeps a deadline scheduler: the SSD optimisation article's fifo_batch 1.
        io_scheduler_overrides=[{"serial": "LOOP-SSD-1", "scheduler": "mq-deadline", "tunables": {"fifo_batch": 1}}])
    first = play(tmp_path / "records", disks, **tuning)
    assert changed(first) == ["cephops.osd_tuning.io_scheduler : Set the scheduler of every chosen disk"]
    assert [active(d) for d in (hdd, spare, ssd)] == ["mq-deadline"] * 3
    assert (sysfs(hdd, "iosched/fifo_batch"), sysfs(hdd, "iosched/read_expire")) == ("8", "200")
    assert sysfs(hdd, "iosched/writes_starved") == "2"  # the kernel's: no entry names it for this disk
    assert [sysfs(spare, "iosched/" + t) for t in ("fifo_batch", "read_expire", "writes_starved")] == ["8", "200", "3"]
    assert (sysfs(ssd, "iosched/fifo_batch"), sysfs(ssd, "iosched/read_expire")) == ("1", "500")

    assert changed(play(tmp_path / "records", disks, **tuning)) == []

    play(tmp_path / "records", disks, entry_point="rollback")
    assert [active(d) for d in (hdd, spare, ssd)] == ["none"] * 3


def test_tunables_in_the_old_per_scheduler_shape_fail_before_any_change(loop_disks, tmp_path):
    hdd = fresh(loop_disks(1))
    extra_vars = dict(io_scheduler_disks=[record(hdd, "hdd", "LAB HDD", "LOOP-HDD-1")], io_scheduler_udev_enabled=False,
                      io_scheduler_grub_enabled=False, io_scheduler_record_dir=str(tmp_path / "records"),
                      io_scheduler_tunables={"mq-deadline": {"fifo_batch": 1}})
    argv = ["ansible-playbook", "--inventory", "localhost,", "--connection", "local",
            "--extra-vars", json.dumps(extra_vars), PLAYBOOK]
    rc, report = run_playbook(argv, json_env())
    assert rc == 2
    assert "tunables are set per disk class (ssd, hdd, nvme, virtio), not for 'mq-deadline'" in json.dumps(report)
    assert active(hdd) == "none"


def test_bfq_is_kept_loaded_at_boot_by_a_file_the_rollback_removes(loop_disks, tmp_path):
    disk = fresh(loop_disks(1))
    if not offers_scheduler(disk, "bfq"):
        pytest.skip("this kernel (%s) offers no bfq, built in or as a module: the lab's test_tuning.py "
                    "proves the file at boot and the fleet scenario its rollback" % os.uname().release)
    disks = [record(disk, "hdd", "LAB HDD", "LOOP-HDD-1")]
    modules_load = tmp_path / "modules-load.d" / "cephops-io-scheduler.conf"
    modules_load.parent.mkdir()
    bfq = dict(io_scheduler_modules_load_file=str(modules_load),
               io_scheduler_overrides=[{"serial": "LOOP-HDD-1", "scheduler": "bfq"}])
    first = play(tmp_path / "records", disks, **bfq)
    assert "cephops.osd_tuning.io_scheduler : Load bfq, which the kernel offers only once its module is loaded, " \
           "now and at every boot" in changed(first)
    assert modules_load.read_text() == "# Managed by role cephops.osd_tuning.io_scheduler. Local changes are overwritten.\nbfq\n"
    assert active(disk) == "bfq"
    assert changed(play(tmp_path / "records", disks, **bfq)) == []

    rollback = play(tmp_path / "records", disks, entry_point="rollback", **bfq)
    assert "cephops.osd_tuning.io_scheduler : Put back what the role's modules-load.d file replaced (no file, as a " \
           "rule); bfq stays loaded" in changed(rollback)
    assert not modules_load.exists() and active(disk) == "none"
    assert not (tmp_path / "records" / "io_scheduler-modules.json").exists()
    assert changed(play(tmp_path / "records", disks, entry_point="rollback", **bfq)) == []
