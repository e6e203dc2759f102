"""Before/after read figures of the queue roles on loop disks, run by site.yml: every disk whose
scheduler or max_sectors_kb changes gets the median of 5 reads with its spread before and after,
in the play's summary and in the tuning report site.yml writes to cephops_report_dir, and those
reads are reads of that disk (its read counter grows by what they report); a disk that does not
change gets no figure and no read. And the roles' device lists set in group_vars limit them
under site.yml, which hands them its whole inventory."""

import json
import os

import pytest

from modulerun import ansible_module, json_env, run_playbook

SITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "playbooks", "site.yml")
MIB = 1024 ** 2


def queue(disk, attribute):
    with open("/sys/block/%s/queue/%s" % (disk.name, attribute)) as handle:
        return handle.read().strip()


def set_queue(disk, attribute, value):
    with open("/sys/block/%s/queue/%s" % (disk.name, attribute), "w") as handle:
        handle.write(value)


def mib_read(disk):
    with open("/sys/block/%s/stat" % disk.name) as handle:
        return int(handle.read().split()[2]) * 512 / float(MIB)


@pytest.fixture
def queues_restored():
    """Loop devices keep their queue settings after detach: put back the values the test changed."""
    saved = []

    def save(disk):
        saved.append((disk, dict((attribute, queue(disk, attribute).split("[")[-1].split("]")[0])
                                 for attribute in ("scheduler", "max_sectors_kb"))))
    yield save
    for disk, values in saved:
        for attribute, value in values.items():
            set_queue(disk, attribute, value)


def hdd(disk):
    """Loop disks have no class: the test hands site.yml's roles disk_facts records that say HDD."""
    facts = ansible_module("disk_facts", dict(devices=[disk.path], include_loop=True))
    found = [d for d in facts["disks"] if d["name"] == disk.name]
    assert found, facts
    return dict(found[0], **{"class": "hdd"})


def test_changed_disks_get_figures_from_their_own_reads(loop_disks, queues_restored, tmp_path):
    first, second, settled = loop_disks(), loop_disks(), loop_disks()
    disks = (first, second, settled)
    for disk in disks:
        queues_restored(disk)
    for disk in (first, second):
        set_queue(disk, "scheduler", "none")
        set_queue(disk, "max_sectors_kb", "128")
    set_queue(settled, "scheduler", "mq-deadline")
    set_queue(settled, "max_sectors_kb", "64")
    records = [hdd(d) for d in disks]
    reports = tmp_path / "reports"
    # Only the two queue roles (and site.yml's always-tagged inventory, summary and reports), on
    # the loop disks alone; nothing persistent: no udev rules, no kernel command line.
    extra = dict(cephops_osd_hosts="all", cephops_report_dir=str(reports),
                 io_scheduler_disks=records, io_scheduler_hdd="mq-deadline", io_scheduler_udev_enabled=False,
                 io_scheduler_grub_enabled=False, io_scheduler_report_runtime=1,
                 io_scheduler_record_dir=str(tmp_path / "records"),
                 max_sectors_kb_disks=records, max_sectors_kb_hdd=64, max_sectors_kb_udev_enabled=False,
                 max_sectors_kb_report_runtime=1, max_sectors_kb_record_dir=str(tmp_path / "records"))
    argv = ["ansible-playbook", "--inventory", "localhost,", "--connection", "local", "--extra-vars", json.dumps(extra),
            "--tags", "io_scheduler,max_sectors_kb", SITE]
    read_before = dict((d.name, mib_read(d)) for d in disks)
    rc, played = run_playbook(argv, json_env())
    assert rc == 0, json.dumps(played)[-3000:]
    read = dict((d.name, mib_read(d) - read_before[d.name]) for d in disks)

    report = json.loads((reports / "tuning.json").read_text())
    host, = report["hosts"]
    assert (host["host"], host["status"], host["roles"]) == ("localhost", "tuned", ["max_sectors_kb", "scheduler"])
    assert [disk["device"] for disk in host["disks"]] == sorted([first.name, second.name]), host
    assert report["summary"] == {"hosts": 1, "hosts_tuned": 1, "changes": 4}
    reported = dict((d.name, 0.0) for d in disks)
    lines = []
    for disk in host["disks"]:
        assert [(c["setting"], c["value"], c["source"]) for c in disk["changes"]] == [
            ("scheduler", "mq-deadline", "class hdd"), ("max_sectors_kb", 64, "class hdd")], disk
        for change in disk["changes"]:
            figure = change["read"]
            for side in (figure["before"], figure["after"]):
                assert side["error"] is None and len(side["runs"]) == 5, figure
                assert side["read_mib_s"] == sorted(side["runs"])[2]
                assert (side["min_mib_s"], side["max_mib_s"]) == (min(side["runs"]), max(side["runs"]))
                assert side["min_mib_s"] > 0
                reported[disk["device"]] += sum(side["runs"])  # 1 s each
            assert figure["line"].startswith("%s: %s %s, sequential read " % (disk["device"], change["setting"],
                                                                              change["value"]))
            lines.append(figure["line"])
    summary = [task for task in played["plays"][0]["tasks"] if task["task"]["name"] == "Summary of this host"]
    assert sorted(summary[0]["hosts"]["localhost"]["msg"]["read_speed"]) == sorted(lines)
    assert "[mq-deadline]" in queue(first, "scheduler") and queue(first, "max_sectors_kb") == "64"
    # fio's MiB/s of 1 s runs against the kernel's count of what was read from each disk: the
    # 20 runs read the changed disk, and little else did (disk_facts samples 64 MiB).
    for disk in (first, second):
        assert 0.8 * reported[disk.name] <= read[disk.name] <= 1.25 * reported[disk.name] + 128, (reported, read)
    # The settled disk was only inventoried (disk_facts samples its start), never measured.
    assert read[settled.name] < 0.05 * reported[first.name], (reported, read)


def test_site_yml_tunes_only_the_disks_group_vars_name(loop_disks, queues_restored, tmp_path):
    """io_scheduler_devices and max_sectors_kb_devices in group_vars limit the roles also where
    site.yml hands them its whole inventory."""
    named, other = loop_disks(), loop_disks()
    for disk in (named, other):
        queues_restored(disk)
        set_queue(disk, "scheduler", "none")
        set_queue(disk, "max_sectors_kb", "128")
    inventory = tmp_path / "inventory"
    (inventory / "group_vars").mkdir(parents=True)
    (inventory / "hosts.yml").write_text(json.dumps({"osds": {"hosts": {"localhost": {"ansible_connection": "local"}}}}))
    (inventory / "group_vars" / "osds.yml").write_text(json.dumps(dict(
        io_scheduler_devices=[named.path], max_sectors_kb_devices=[named.path], io_scheduler_hdd="mq-deadline",
        max_sectors_kb_hdd=64, io_scheduler_udev_enabled=False, io_scheduler_grub_enabled=False,
        max_sectors_kb_udev_enabled=False, io_scheduler_report_read_speed=False, max_sectors_kb_report_read_speed=False,
        io_scheduler_record_dir=str(tmp_path / "records"), max_sectors_kb_record_dir=str(tmp_path / "records"))))
    records = [hdd(d) for d in (named, other)]
    argv = ["ansible-playbook", "--inventory", str(inventory), "--extra-vars",
            json.dumps(dict(io_scheduler_disks=records, max_sectors_kb_disks=records)),
            "--tags", "io_scheduler,max_sectors_kb", SITE]
    rc, played = run_playbook(argv, json_env())
    assert rc == 0, json.dumps(played)[-3000:]
    assert "[mq-deadline]" in queue(named, "scheduler") and queue(named, "max_sectors_kb") == "64"
    assert "[none]" in queue(other, "scheduler") and queue(other, "max_sectors_kb") == "128"
