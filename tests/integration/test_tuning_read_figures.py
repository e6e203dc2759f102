"""Before/after read figures of the queue roles on loop disks, run by site.yml: every disk whose
scheduler or max_sectors_kb changes gets the median of 5 reads with its spread before and after,
in the play's summary and in the tuning report site.yml writes to cephops_report_dir, and those
reads are reads of that disk (its read counter grows by what they report); a disk that does not
change gets no figure and no read. A change that makes a disk slower (a blkio cgroup limits its
read requests per second, so smaller requests read less; or bfq told to dispatch one request at a
time cuts its random reads) is measured worse and put back unless the user keeps it; one that
does not is kept. And the roles' device lists set in group_vars limit
them under site.yml, which hands them its whole inventory."""

import json
import os
import shutil
import subprocess

import pytest

from loopdisk import Throttle, offers_scheduler
from modulerun import ansible_module, json_env, run_playbook

SITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "playbooks", "site.yml")
MIB = 1024 ** 2


def queue(disk, attribute):
    with open("/sys/block/%s/queue/%s" % (disk.name, attribute)) as handle:
        return handle.read().strip()


def set_queue(disk, attribute, value):
    with open("/sys/block/%s/queue/%s" % (disk.name, attribute), "w") as handle:
        handle.write(value)


def reads_done(disk):
    """(MiB read, read requests completed) of ``disk`` so far, as the kernel counts them."""
    with open("/sys/block/%s/stat" % disk.name) as handle:
        fields = handle.read().split()
    return int(fields[2]) * 512 / float(MIB), int(fields[0])


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


def hdd(disk, model=None):
    """Loop disks have no class or model: the test hands site.yml's roles disk_facts records that
    say HDD, and the model given."""
    facts = ansible_module("disk_facts", dict(devices=[disk.path], include_loop=True))
    found = [d for d in facts["disks"] if d["name"] == disk.name]
    assert found, facts
    return dict(found[0], **{"class": "hdd", "model": model or found[0].get("model")})


def play_queue_roles(records, tmp_path, throttle=None, check=False, **variables):
    """(rc, JSON report, tuning.json or None where none was written) of site.yml's two queue roles
    (and its always-tagged inventory, summary and reports) on the disks of ``records``, 1 s reads,
    nothing persistent: no udev rules, no kernel command line, no modules-load.d file in /etc.
    With ``throttle``, the play runs in its cgroup; with ``check``, in check mode."""
    reports = tmp_path / "reports"
    # A bfq rule loads bfq at boot too: its modules-load.d file goes below the test's directory,
    # not the test host's /etc, which the scheduler tests on the other worker read.
    (tmp_path / "modules-load.d").mkdir(exist_ok=True)
    extra = dict(cephops_osd_hosts="all", cephops_report_dir=str(reports),
                 io_scheduler_disks=records, io_scheduler_hdd="mq-deadline", io_scheduler_udev_enabled=False,
                 io_scheduler_grub_enabled=False, io_scheduler_report_runtime=1,
                 io_scheduler_modules_load_file=str(tmp_path / "modules-load.d" / "cephops-io-scheduler.conf"),
                 io_scheduler_record_dir=str(tmp_path / "records"),
                 max_sectors_kb_disks=records, max_sectors_kb_hdd=64, max_sectors_kb_udev_enabled=False,
                 max_sectors_kb_report_runtime=1, max_sectors_kb_record_dir=str(tmp_path / "records"), **variables)
    argv = ["ansible-playbook", "--inventory", "localhost,", "--connection", "local", "--extra-vars", json.dumps(extra),
            "--tags", "io_scheduler,max_sectors_kb", SITE] + (["--check"] if check else [])
    rc, played = run_playbook(argv, json_env(), preexec_fn=throttle.enter if throttle else None)
    report = json.loads((reports / "tuning.json").read_text()) if (reports / "tuning.json").exists() else None
    return rc, played, report


def task_results(played, name):
    """The results of every task called ``name`` (in a role or not), skipped ones included."""
    return [task["hosts"]["localhost"] for task in played["plays"][0]["tasks"]
            if task["task"]["name"].split(" : ")[-1] == name]


def task_msg(played, name):
    """The message of the one task called ``name`` (in a role or not) that ran."""
    found = [result for result in task_results(played, name) if not result.get("skipped")]
    assert len(found) == 1, (name, found)
    return found[0]["msg"]


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
    read_before = dict((d.name, reads_done(d)) for d in disks)
    # Kept whatever their verdict, which this test does not choose: it proves where the figures come from.
    rc, played, report = play_queue_roles(records, tmp_path, io_scheduler_keep_worse=True, max_sectors_kb_keep_worse=True)
    assert rc == 0, json.dumps(played)[-3000:]
    read = dict((d.name, reads_done(d)[0] - read_before[d.name][0]) for d in disks)
    requests = dict((d.name, reads_done(d)[1] - read_before[d.name][1]) for d in disks)

    host, = report["hosts"]
    assert (host["host"], host["status"], host["roles"]) == ("localhost", "tuned", ["max_sectors_kb", "scheduler"])
    assert [disk["device"] for disk in host["disks"]] == sorted([first.name, second.name]), host
    assert report["summary"] == {"hosts": 1, "hosts_tuned": 1, "changes": 4, "undone": 0, "kept_off": 0}
    reported, reported_random = dict((d.name, 0.0) for d in disks), dict((d.name, 0.0) for d in disks)
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
                assert side["random_error"] is None and len(side["random_runs"]) == 5, figure
                assert side["random_iops"] == sorted(side["random_runs"])[2]
                assert (side["random_min_iops"], side["random_max_iops"]) == (min(side["random_runs"]),
                                                                              max(side["random_runs"]))
                # 32 requests in flight: the mean latency is about 32 over the IOPS.
                assert 0.5 * 32e3 / side["random_iops"] <= side["random_lat_ms"] <= 2 * 32e3 / side["random_iops"], side
                reported[disk["device"]] += sum(side["runs"]) + sum(side["random_runs"]) * 4 / 1024.0  # 1 s each
                reported_random[disk["device"]] += sum(side["random_runs"])
            assert figure["line"].startswith("%s: %s %s, sequential read " % (disk["device"], change["setting"],
                                                                              change["value"]))
            assert "; 4 KiB random read (QD32) " in figure["line"] and "random_change_percent" in figure
            assert figure["line"].endswith(": %s, %s" % (figure["verdict"], figure["why"]))
            assert figure["verdict"] in ("better", "same", "worse") and change["undone"] is False
            lines.append(figure["line"])
    summary = task_msg(played, "Summary of this host")
    assert sorted(summary["read_speed"]) == sorted(lines)
    # Each disk as the play found it (before the scheduler) and as it leaves it (after max_sectors_kb).
    for disk in host["disks"]:
        scheduler, max_sectors = disk["changes"]
        assert (disk["whole"]["found"], disk["whole"]["left"]) == (scheduler["read"]["before"], max_sectors["read"]["after"])
    assert sorted(summary["whole"]) == sorted(disk["whole"]["line"] for disk in host["disks"])
    assert summary["undone"] == {"scheduler": [], "max_sectors_kb": []}
    assert "[mq-deadline]" in queue(first, "scheduler") and queue(first, "max_sectors_kb") == "64"
    # fio's figures of 1 s runs against the kernel's counts of what was read from each disk: the
    # 20 sequential and 20 random runs read the changed disk, and little else did (disk_facts
    # samples 64 MiB). The random runs' 4 KiB requests are most of the requests; the sequential
    # runs add one per max_sectors_kb (64 KiB or more) read.
    for disk in (first, second):
        assert 0.8 * reported[disk.name] <= read[disk.name] <= 1.25 * reported[disk.name] + 128, (reported, read)
        assert 0.8 * reported_random[disk.name] <= requests[disk.name], (reported_random, requests)
        assert requests[disk.name] <= 1.25 * reported_random[disk.name] + read[disk.name] * 16 + 2048, (
            reported_random, requests, read)
    # The settled disk was only inventoried (disk_facts samples its start), never measured.
    assert read[settled.name] < 0.05 * reported[first.name], (reported, read)


# The queue roles on every release the collection supports, in the cores stage.
@pytest.mark.cores
def test_check_mode_says_it_would_measure_cannot_predict_and_reads_nothing(loop_disks, queues_restored, tmp_path):
    disk = loop_disks()
    queues_restored(disk)
    set_queue(disk, "scheduler", "none")
    set_queue(disk, "max_sectors_kb", "128")
    records = [hdd(disk)]
    rc, played, report = play_queue_roles(records, tmp_path, check=True)
    assert rc == 0, json.dumps(played)[-3000:]
    said = [result["msg"] for result in task_results(played, "Say what a real run would measure, which check mode cannot")
            if not result.get("skipped")]
    assert said == ["%s: a real run reads each disk before and after the change and puts back a change measured "
                    "worse; check mode cannot predict the verdict" % disk.name] * 2, said
    assert report is None
    assert "[none]" in queue(disk, "scheduler") and queue(disk, "max_sectors_kb") == "128"
    # No reads before or after: both roles' four read tasks skipped.
    reads = (task_results(played, "Read speed of the disks about to change, before (median of 5)")
             + task_results(played, "Read speed of the changed disks, after (median of 5)"))
    assert len(reads) == 4 and all(result.get("skipped") for result in reads), reads


def test_a_change_measured_worse_is_put_back_remembered_and_kept_off_and_one_that_is_not_stays(
        loop_disks, queues_restored, tmp_path):
    # max_sectors_kb 512 -> 64 splits each read into eight times the requests: under a limit of
    # requests per second the slowed disk reads an eighth; under a limit of bytes per second the
    # steady one reads the same, and so does its scheduler change (none -> mq-deadline). The
    # slowed disk already runs the HDD scheduler: 1 s runs of 100 requests a second are too coarse
    # for a scheduler's verdict on a busy host (one measured -7.5 % in a CI run), so its
    # max_sectors_kb is the only change it gets.
    # On the third disk a model rule sets bfq with strict_guarantees, which dispatches one request
    # at a time: its QD32 random reads fall by half to two thirds (119k -> 40k IOPS in a run here),
    # while a byte limit above the random reads' bytes sets the pace of its sequential ones.
    # The fourth disk, request-limited too, starts at the value chosen for it, so it has no change
    # until a later run sets it back to 512: then its change is measured worse beside a disk kept
    # off by its remembered verdict, and the put back must leave that one as it is.
    slowed, steady, one_at_a_time, slowed_later = loop_disks(), loop_disks(), loop_disks(), loop_disks()
    for disk in (slowed, steady, one_at_a_time, slowed_later):
        queues_restored(disk)

    def records_now():
        return [hdd(slowed), hdd(steady), hdd(one_at_a_time, model="ONE AT A TIME"), hdd(slowed_later)]

    # A kernel without bfq (built without modules, as some test hosts' are) offers no scheduler that
    # slows a loop disk's reads: there the third disk starts on the HDD scheduler and gets no change,
    # and a scheduler's put back is left to hosts whose kernel has bfq.
    bfq_here = offers_scheduler(one_at_a_time, "bfq")
    bfq_rule = dict(io_scheduler_models=[dict(model="ONE AT A TIME", scheduler="bfq", tunables=dict(strict_guarantees=1))]
                    if bfq_here else [])
    on_hdd_scheduler = (slowed, slowed_later) if bfq_here else (slowed, slowed_later, one_at_a_time)
    throttle = Throttle([("read_iops_device", slowed, 100), ("read_bps_device", steady, 20 * MIB),
                         ("read_bps_device", one_at_a_time, 768 * MIB), ("read_iops_device", slowed_later, 100)])
    try:
        # The bfq disk's reads are bound by the CPU alone: one run slowed by other work on a busy
        # host (144k -> 67k random IOPS in one run before the change) makes the spreads overlap,
        # and the rule rightly says same. Only that outcome is tried again, from the start, at
        # most three times; any other verdict stands.
        for _attempt in range(3):
            for disk in (slowed, steady, one_at_a_time, slowed_later):
                set_queue(disk, "scheduler", "mq-deadline" if disk in on_hdd_scheduler else "none")
                set_queue(disk, "max_sectors_kb", "64" if disk in (one_at_a_time, slowed_later) else "512")
            shutil.rmtree(tmp_path / "records", ignore_errors=True)
            records = records_now()
            rc, played, report = play_queue_roles(records, tmp_path, throttle, **bfq_rule)
            assert rc == 0, json.dumps(played)[-3000:]
            changes = dict(((disk["device"], change["setting"]), change) for disk in report["hosts"][0]["disks"]
                           for change in disk["changes"])
            one_by_one = changes.get((one_at_a_time.name, "scheduler"))
            if not (bfq_here and one_by_one["read"]["verdict"] == "same"
                    and "4 KiB random read same: the runs before and after overlap" in one_by_one["read"]["why"]):
                break
        worse = changes[(slowed.name, "max_sectors_kb")]
        assert (worse["value"], worse["read"]["verdict"], worse["undone"]) == (64, "worse", True), worse["read"]["line"]
        assert worse["read"]["after"]["max_mib_s"] < worse["read"]["before"]["min_mib_s"]
        # A change that does nothing under a byte limit, which sets the disk's pace: same, and kept.
        steady_change = changes[(steady.name, "max_sectors_kb")]
        assert (steady_change["read"]["verdict"], steady_change["undone"]) == ("same", False), steady_change["read"]["line"]
        # A scheduler change that does nothing under the byte limit: not worse (`same`, or `better`
        # where other work slowed the runs before it), and kept.
        scheduler_change = changes[(steady.name, "scheduler")]
        assert scheduler_change["read"]["verdict"] in ("same", "better"), scheduler_change["read"]["line"]
        assert not scheduler_change["undone"], scheduler_change["read"]["line"]
        # The disk already on the HDD scheduler was left on it, unmeasured.
        assert (slowed.name, "scheduler") not in changes, sorted(changes)
        # A scheduler measured worse on its random reads: put back, and its own max_sectors_kb untouched.
        if bfq_here:
            assert (one_by_one["value"], one_by_one["read"]["verdict"], one_by_one["undone"]) == ("bfq", "worse", True), one_by_one["read"]["line"]
            assert one_by_one["read"]["after"]["random_max_iops"] < one_by_one["read"]["before"]["random_min_iops"], one_by_one["read"]["line"]
            assert "4 KiB random read" in one_by_one["read"]["why"], one_by_one["read"]["why"]
        else:
            assert one_by_one is None, one_by_one
        assert (one_at_a_time.name, "max_sectors_kb") not in changes
        assert not [key for key in changes if key[0] == slowed_later.name], sorted(changes)
        scheduler_undone = [one_at_a_time.name] if bfq_here else []
        assert report["summary"]["undone"] == 1 + len(scheduler_undone)
        assert task_msg(played, "Summary of this host")["undone"] == {"scheduler": scheduler_undone,
                                                                      "max_sectors_kb": [slowed.name]}
        put_back = [["undone, " + worse["read"]["line"],
                     "%s: no serial or WWN, so no udev rule keeps it at 512 at boot (measured worse: %s)" % (
                         slowed.name, worse["read"]["why"])]]
        if bfq_here:
            put_back.insert(0, ["undone, " + one_by_one["read"]["line"],
                                "%s: no serial or WWN, so no udev rule keeps it at none at boot (measured worse: %s)" % (
                                    one_at_a_time.name, one_by_one["read"]["why"])])
        assert [result["msg"] for result in task_results(played, "Show the changes put back")
                if not result.get("skipped")] == put_back
        assert queue(slowed, "max_sectors_kb") == "512" and queue(steady, "max_sectors_kb") == "64"
        assert ("[none]" if bfq_here else "[mq-deadline]") in queue(one_at_a_time, "scheduler")
        assert "[mq-deadline]" in queue(slowed, "scheduler") and "[mq-deadline]" in queue(steady, "scheduler")
        memory = tmp_path / "records" / "max_sectors_kb-verdicts.json"
        remembered, = json.loads(memory.read_text())["verdicts"]
        assert (remembered["identity"], remembered["value"], remembered["why"], remembered["kernel"]) == (
            "name " + slowed.name, 64, worse["read"]["why"], os.uname().release)
        scheduler_memory = tmp_path / "records" / "io_scheduler-verdicts.json"
        remembered_scheduler = json.loads(scheduler_memory.read_text())["verdicts"] if scheduler_memory.exists() else []
        assert [(entry["identity"], entry["value"]) for entry in remembered_scheduler] == [
            ("name " + one_at_a_time.name, "bfq")] * bfq_here

        # The next run keeps the change off without trying or measuring it, and changes nothing.
        records = records_now()
        rc, played, report = play_queue_roles(records, tmp_path, throttle, **bfq_rule)
        assert rc == 0, json.dumps(played)[-3000:]
        why = "max_sectors_kb 64 measured worse on %s with the same firmware and kernel: %s" % (
            remembered["date"], worse["read"]["why"])
        scheduler_kept_off = {}
        if bfq_here:
            scheduler_kept_off[one_at_a_time.name] = "scheduler bfq measured worse on %s with the same firmware and kernel: %s" % (
                remembered_scheduler[0]["date"], one_by_one["read"]["why"])
        assert report["hosts"][0]["kept_off"] == [dict(device=device, setting="scheduler", why=why_scheduler)
                                                  for device, why_scheduler in scheduler_kept_off.items()] + [
            dict(device=slowed.name, setting="max_sectors_kb", why=why)]
        assert report["hosts"][0]["disks"] == []
        assert [task["task"]["name"] for task in played["plays"][0]["tasks"]  # the report has a new date
                if task["hosts"]["localhost"].get("changed")] == [
            "Write the tuning report, with the read figures before and after each change"]
        assert task_msg(played, "Show the changes kept off") == ["%s: kept off, %s" % (slowed.name, why)]
        assert task_msg(played, "Summary of this host")["kept_off"] == {"scheduler": scheduler_kept_off,
                                                                        "max_sectors_kb": {slowed.name: why}}
        assert queue(slowed, "max_sectors_kb") == "512"
        assert ("[none]" if bfq_here else "[mq-deadline]") in queue(one_at_a_time, "scheduler")

        # A change measured worse in a run that keeps another off: the put back sets every disk of
        # the plan again, and the one kept off stays pinned at its value before, now and in the
        # plan's udev rules (here the warning that no rule can match a disk without an identity).
        set_queue(slowed_later, "max_sectors_kb", "512")
        rc, played, report = play_queue_roles(records_now(), tmp_path, throttle, **bfq_rule)
        assert rc == 0, json.dumps(played)[-3000:]
        later, = [change for disk in report["hosts"][0]["disks"] for change in disk["changes"]]
        assert (later["setting"], later["read"]["verdict"], later["undone"]) == ("max_sectors_kb", "worse", True), later
        assert [entry["device"] for entry in report["hosts"][0]["kept_off"]] == list(scheduler_kept_off) + [slowed.name]
        assert queue(slowed_later, "max_sectors_kb") == "512"
        assert queue(slowed, "max_sectors_kb") == "512", "the disk kept off was set to the value measured worse"
        assert [result["msg"] for result in task_results(played, "Show the changes put back")
                if not result.get("skipped")] == [[
                    "undone, " + later["read"]["line"],
                    "%s: no serial or WWN, so no udev rule keeps it at 512 at boot (%s)" % (slowed.name, why),
                    "%s: no serial or WWN, so no udev rule keeps it at 512 at boot (measured worse: %s)" % (
                        slowed_later.name, later["read"]["why"])]]
        set_queue(slowed_later, "max_sectors_kb", "64")  # as chosen: no change in the runs below

        # Asked to measure again: tried, worse again, put back again.
        rc, played, report = play_queue_roles(records, tmp_path, throttle, max_sectors_kb_remeasure=True, **bfq_rule)
        assert rc == 0, json.dumps(played)[-3000:]
        assert [entry["setting"] for entry in report["hosts"][0]["kept_off"]] == ["scheduler"] * bfq_here
        assert report["summary"]["undone"] == 1
        assert queue(slowed, "max_sectors_kb") == "512"

        # Kept on purpose: measured worse again, and left as chosen.
        rc, played, report = play_queue_roles(records, tmp_path, throttle, max_sectors_kb_keep_worse=True, **bfq_rule)
        assert rc == 0, json.dumps(played)[-3000:]
        kept, = [change for disk in report["hosts"][0]["disks"] for change in disk["changes"]
                 if disk["device"] == slowed.name and change["setting"] == "max_sectors_kb"]
        assert (kept["read"]["verdict"], kept["undone"]) == ("worse", False), kept["read"]["line"]
        assert queue(slowed, "max_sectors_kb") == "64"

        # Kept on purpose by its rule alone (keep_worse in a model rule), though remembered worse.
        set_queue(slowed, "max_sectors_kb", "512")
        records = [hdd(slowed, model="SLOWED LOOP")]
        rc, played, report = play_queue_roles(records, tmp_path, throttle, max_sectors_kb_models=[
            dict(model="SLOWED LOOP", max_sectors_kb=64, keep_worse=True)])
        assert rc == 0, json.dumps(played)[-3000:]
        assert report["hosts"][0]["kept_off"] == []
        kept, = [change for disk in report["hosts"][0]["disks"] for change in disk["changes"]
                 if change["setting"] == "max_sectors_kb"]
        assert (kept["source"], kept["read"]["verdict"], kept["undone"]) == ("model SLOWED LOOP", "worse", False)
        assert queue(slowed, "max_sectors_kb") == "64"
    finally:
        throttle.remove()

    # The rollback entry point forgets the verdicts.
    rollback = ["ansible", "localhost", "--connection", "local", "--module-name", "ansible.builtin.include_role",
                "--args", "name=cephops.osd_tuning.max_sectors_kb tasks_from=rollback",
                "--extra-vars", json.dumps(dict(max_sectors_kb_record_dir=str(tmp_path / "records")))]
    done = subprocess.run(rollback, capture_output=True, text=True, env=json_env(), check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert not memory.exists()


# The queue roles on every release the collection supports, in the cores stage.
@pytest.mark.cores
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
