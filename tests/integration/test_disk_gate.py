"""The disk_gate role on loop devices with real fio, run with ansible-playbook as a site would.

Loop devices report rotational here, so they are the HDD class: the tests set the flash and
the HDD thresholds alike. The cache and the reports go to tmp_path; the reports are written
only in the runs whose test reads them (``reports=True``), as each costs seconds of templating.
"""

import json
import os
import re
import tempfile
import xml.etree.ElementTree as ET

import pytest
import yaml

from conftest import FioWatch
from loopdisk import attach, detach, only_these_disks
from modulerun import json_env, run_playbook
from test_disk_facts import make_gpt_partitions

# Ceph's own spec code judges the file the gate wrote, as it judges the renderer's output.
import ceph_spec
import rook_crd

PLAYBOOK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "playbooks", "disk_gate.yml")
ROLLBACK = os.path.join(os.path.dirname(PLAYBOOK), "disk_gate_rollback.yml")
EASY = dict(min_iops=2, marginal_min_iops=1, max_p99_sync_latency_ms=10000.0, marginal_max_p99_sync_latency_ms=20000.0)
IMPOSSIBLE = dict(min_iops=10 ** 9, marginal_min_iops=10 ** 8, max_p99_sync_latency_ms=0.000001,
                  marginal_max_p99_sync_latency_ms=0.000002)


def thresholds(limits):
    found = {}
    for key, value in limits.items():
        found["disk_gate_" + key] = value
        found["disk_gate_hdd_" + key] = value
    return found


class Gate:
    def __init__(self, tmp_path):
        self.report_dir = tmp_path / "report"
        self.cache_dir = tmp_path / "cache"
        # The role probes in async jobs; their status files stay with the test.
        self.async_dir = tmp_path / "async"

    def command(self, disks, limits=None, check=False, inventory=None, playbook=PLAYBOOK, become=False, home=None,
                reports=False, **extra):
        """The subprocess arguments (argv, environment, directory) of one ansible-playbook run of the gate
        (or of its rollback), on this host alone or on the hosts of an inventory file (each with its own
        connection); ``home`` is the controller's HOME, ``reports`` whether the report files are written."""
        extra_vars = dict(disk_gate_devices=[d.path for d in disks], disk_gate_include_loop=True, disk_gate_runtime=2,
                          disk_gate_plp_runtime=0, disk_gate_poll_interval=1, disk_gate_cache_max_age=0,
                          disk_gate_cache_dir=str(self.cache_dir), disk_gate_report_dir=str(self.report_dir),
                          disk_gate_report_enabled=reports, disk_gate_async_dir=str(self.async_dir))
        extra_vars.update(thresholds(limits or EASY))
        extra_vars.update(extra)
        env = json_env(**(dict(HOME=home) if home else {}))
        hosts = ["--inventory", inventory] if inventory else ["--inventory", "localhost,", "--connection", "local"]
        argv = ["ansible-playbook"] + hosts + ["--extra-vars", json.dumps(extra_vars), playbook] + (
            ["--check"] if check else []) + (["--become"] if become else [])
        return dict(args=argv, env=env, cwd=tempfile.gettempdir())

    def play(self, disks, limits=None, check=False, inventory=None, playbook=PLAYBOOK, become=False, home=None,
             reports=False, prefix=(), **extra):
        """One run of ``command``; ``prefix`` runs it under another command (a mount namespace)."""
        command = self.command(disks, limits, check, inventory, playbook, become, home, reports, **extra)
        return Run(*run_playbook(list(prefix) + command["args"], command["env"]))

    def report(self, name):
        with open(str(self.report_dir / name)) as handle:
            return handle.read()


class Run:
    def __init__(self, rc, report):
        self.rc = rc
        # Role tasks are named "cephops.osd_tuning.disk_gate : <name>".
        self.tasks = dict((task["task"]["name"].split(" : ")[-1], task["hosts"].get("localhost", {}))
                          for play in report["plays"] for task in play["tasks"])

    def task(self, prefix):
        found = [result for name, result in self.tasks.items() if name.startswith(prefix)]
        assert found, "no task %r in %s" % (prefix, sorted(self.tasks))
        return found[0]

    @property
    def record(self):
        return self.task("Decide per disk")["ansible_facts"]["disk_gate_result"]

    def disk(self, path):
        return [d for d in self.record["disks"] if d["device"] == path][0]

    @property
    def failures(self):
        return [result["msg"] for result in self.tasks.values() if result.get("failed")]


@pytest.fixture
def gate(tmp_path):
    return Gate(tmp_path)


@pytest.mark.cores
def test_block_fails_the_play_with_the_table_and_writes_every_report(loop_disks, gate):
    disks = [loop_disks(), loop_disks()]
    # Polls two minutes apart: the host's own wait, not a poll, must notice the job's end.
    run = gate.play(disks, IMPOSSIBLE, reports=True, disk_gate_poll_interval=120)
    assert run.rc != 0
    job = run.task("Read the probe result")
    assert run.task("Wait on the host for the probe")["path"] == str(gate.async_dir / job["ansible_job_id"])
    assert job["attempts"] == 1
    assert len(run.failures) == 1 and "not approved on localhost (policy block" in run.failures[0]
    table = run.task("Show the disks and their verdicts")["msg"]
    assert table[1].split()[:2] == ["DEVICE", "CLASS"]
    for disk in disks:
        assert any(line.split()[:2] == [disk.path, "hdd"] and line.split()[3] == "unsuitable" and "blocked" in line
                   for line in table)
    assert "Show the devices ceph-osd would deploy" not in run.tasks

    document = json.loads(gate.report("disk_gate.json"))
    assert document["summary"]["blocked"] == 2 and document["hosts"][0]["host"] == "localhost"
    assert all(d["write_iops"] > 0 and d["verdict"] == "unsuitable" for d in document["hosts"][0]["disks"])
    # The power-loss verdict from the probe's own fsync latency (disk_gate_plp_runtime 0 skips only
    # a run without fsync): a loop disk's flushes reach its backing file, so its cost decides.
    for disk in document["hosts"][0]["disks"]:
        cost = float(re.search(r": fsync costs ([0-9.]+) ms \(the mean fsync latency fio reported",
                               disk["plp"]["reasons"][0]).group(1))
        assert (disk["plp"]["verdict"] == "unlikely") == (cost >= 0.5), disk["plp"]
    # Loop devices have no model.
    assert (document["models"]["groups"], document["models"]["measured_without_model"]) == ([], 2)
    junit = ET.fromstring(gate.report("disk_gate.junit.xml").encode("utf-8"))
    assert (junit.get("tests"), junit.get("failures")) == ("2", "2")
    html = gate.report("disk_gate.html")
    assert html.startswith("<!DOCTYPE html>") and html.count("<rect ") == 2
    ET.fromstring(html[html.index("<svg"):html.index("</svg>") + 6])
    assert list(yaml.safe_load_all(gate.report("disk_gate.cephadm.yml"))) == []
    assert "| localhost | %s |" % disks[0].path in gate.report("disk_gate.md")
    # A loop disk has no SMART data: health unknown, which does not block by default.
    assert all(d["health"]["status"] == "unknown" for d in document["hosts"][0]["disks"])
    assert document["hosts"][0]["controllers"] == "no RAID controller tool found (storcli, perccli, ssacli)"
    # The job's status file, which holds the whole probe result, went once read.
    assert gate.async_dir.is_dir() and list(gate.async_dir.iterdir()) == []


def test_health_required_blocks_a_disk_without_smart_data(loop_disks, gate):
    disk = loop_disks()
    run = gate.play([disk], disk_gate_health_required=True, disk_gate_policy="warn")
    assert run.rc == 0, run.failures
    assert run.disk(disk.path)["verdict"] == "unhealthy"
    assert run.disk(disk.path)["reasons"][0].startswith("health unknown (disk_gate_health_required): no SMART data")


@pytest.mark.cores
def test_exclude_keeps_only_approved_disks_in_devices_and_refuses_a_used_disk(loop_disks, gate):
    blank, used = loop_disks(), loop_disks()
    make_gpt_partitions(used)
    before = used.checksum()
    run = gate.play([blank, used], disk_gate_policy="exclude", reports=True)
    assert run.rc == 0, run.failures
    assert run.task("Show the devices ceph-osd would deploy")["msg"] == [blank.path]
    assert (run.disk(blank.path)["verdict"], run.disk(blank.path)["approved"]) == ("suitable", True)
    assert (run.disk(used.path)["verdict"], run.disk(used.path)["approved"]) == ("refused", False)
    assert used.checksum() == before
    assert run.task("Report the disks left out")["msg"] == "disk gate: %s not approved on localhost; left out." % used.path
    specs = list(yaml.safe_load_all(gate.report("disk_gate.cephadm.yml")))
    # A loop disk's flush is its backing file's fsync: about 1 ms here, where measurement may or may not decide.
    assert specs == [{"service_type": "osd", "service_id": "gated-localhost", "placement": {"hosts": ["localhost"]},
                      "spec": {"data_devices": {"paths": [blank.path]},
                               "crush_device_class": run.disk(blank.path)["device_class"]["class"]}}]
    assert ceph_spec.validate(gate.report("disk_gate.cephadm.yml")) == [("DriveGroupSpec", "osd.gated-localhost")]
    junit = ET.fromstring(gate.report("disk_gate.junit.xml").encode("utf-8"))
    assert [c.find("failure") is not None for c in junit.iter("testcase")] == [False, True]


@pytest.fixture
def memory_disk():
    """A loop disk backed by a file in memory (/dev/shm): its flush costs nothing, as flash with
    power-loss protection answers one; sparse, so it costs only what the probe writes."""
    handle, backing = tempfile.mkstemp(prefix="cephops-gate-", suffix=".img", dir="/dev/shm")
    os.close(handle)
    disk = attach(backing)
    try:
        yield disk
    finally:
        detach(disk)
        os.unlink(backing)


def test_a_disk_that_says_it_spins_but_measures_as_flash_is_classed_ssd_and_flagged(memory_disk, gate):
    with open("/sys/block/%s/queue/rotational" % os.path.basename(memory_disk.path), "w") as handle:
        handle.write("1")
    run = gate.play([memory_disk], reports=True, disk_gate_policy="exclude")
    assert run.rc == 0, run.failures
    found = run.disk(memory_disk.path)["device_class"]
    assert (found["class"], found["source"], found["kernel"], found["flagged"]) == ("ssd", "measured", "hdd", True), found
    assert found["durable_write_ms"] <= 1.0
    spec, = yaml.safe_load_all(gate.report("disk_gate.cephadm.yml"))
    assert spec["spec"]["crush_device_class"] == "ssd"
    ceph_spec.validate(gate.report("disk_gate.cephadm.yml"))
    said = "the kernel calls it rotational, but a durable write took %s ms (median)" % found["durable_write_ms"]
    assert said in gate.report("disk_gate.md") and said in gate.report("disk_gate.cephadm.yml")
    storage = rook_crd.validate(gate.report("disk_gate.rook.yml"))
    assert storage["nodes"] == [{"name": "localhost", "devices": [{"name": memory_disk.path,
                                                                   "config": {"deviceClass": "ssd"}}]}]
    assert run.task("Hand ceph-osd only the approved disks")["results"][-1]["ansible_facts"] == {
        "crush_device_class": "ssd"}


def test_warn_reports_and_goes_on(loop_disks, gate):
    disk = loop_disks()
    run = gate.play([disk], IMPOSSIBLE, disk_gate_policy="warn")
    assert run.rc == 0, run.failures
    assert run.record["blocked"] == [disk.path]
    assert "deployment goes on (policy warn)" in run.task("Report the disks left out")["msg"]
    assert run.task("Show the devices ceph-osd would deploy")["msg"] == []


def test_second_run_comes_from_cache_until_the_disk_changes(loop_disks, gate):
    disk = loop_disks()
    first = gate.play([disk], disk_gate_cache_max_age=3600)
    assert (first.disk(disk.path)["verdict"], first.disk(disk.path)["cached"]) == ("suitable", False)
    entries = os.listdir(str(gate.cache_dir))
    assert len(entries) == 1 and entries[0].endswith(".json")

    second = gate.play([disk], disk_gate_cache_max_age=3600)
    cached = second.disk(disk.path)
    assert (cached["verdict"], cached["cached"], cached["write_iops"]) == (
        "suitable", True, first.disk(disk.path)["write_iops"])
    assert 0 <= cached["cache_age_seconds"] < 3600
    job = second.task("Read the probe result")
    assert job["changed"] is False and job["results"][0]["written"] is False

    make_gpt_partitions(disk)
    before = disk.checksum()
    third = gate.play([disk], disk_gate_cache_max_age=3600, disk_gate_policy="warn")
    changed = third.disk(disk.path)
    assert (changed["verdict"], changed["cached"], changed["approved"]) == ("refused", False, False)
    assert disk.checksum() == before


def test_the_rollback_entry_point_removes_the_verdict_cache(loop_disks, gate):
    disk = loop_disks()
    assert gate.play([disk], disk_gate_cache_max_age=3600).rc == 0
    assert os.listdir(str(gate.cache_dir))
    checked = gate.play([], check=True, playbook=ROLLBACK)
    assert checked.rc == 0 and checked.task("Remove the verdict cache")["changed"] is True
    assert os.listdir(str(gate.cache_dir))
    run = gate.play([], playbook=ROLLBACK)
    assert run.rc == 0 and run.task("Remove the verdict cache")["changed"] is True
    assert not gate.cache_dir.exists()


def kernel_write_cache(disk):
    """The kernel's view of the disk's write cache, all a loop disk has."""
    with open("/sys/block/%s/queue/write_cache" % disk.name) as handle:
        return handle.read().strip()


def test_persisting_the_faster_write_cache_writes_no_rule_for_a_disk_only_the_kernel_sees(loop_disks, gate, tmp_path):
    # A loop disk's cache is the kernel's view alone: compared, but never kept off at boot.
    disk, rules = loop_disks(), tmp_path / "62-cephops-write-cache.rules"
    before = kernel_write_cache(disk)
    run = gate.play([disk], disk_gate_compare_write_cache=True, disk_gate_persist_write_cache=True,
                    disk_gate_write_cache_rules_file=str(rules), disk_gate_record_dir=str(tmp_path / "records"))
    assert run.rc == 0, run.failures
    compared = run.disk(disk.path)["write_cache_comparison"]
    assert (compared["error"], compared["restored"]) == (None, True), compared
    assert compared["on_iops"] > 0 and compared["off_iops"] > 0, compared
    # The faster setting is the one that measured more sync IOPS.
    assert compared[compared["faster"] + "_iops"] == max(compared["on_iops"], compared["off_iops"]), compared
    assert kernel_write_cache(disk) == before
    lines = run.task("Say which disks keep a setting")["msg"]
    assert lines == ["%s: write cache not kept: only the kernel's view of its write cache exists (transport loop): "
                     "no drive tool switches it" % disk.path], lines
    assert run.task("Apply the settings now and at every boot")["changed"] is False
    assert not rules.exists()


def test_measuring_with_the_cache_disabled_refuses_a_disk_only_the_kernel_sees(loop_disks, gate):
    # Switching a loop disk's queue/write_cache would stop the flushes, not a drive's cache:
    # the probe refuses it rather than measure something else, and touches nothing.
    disk = loop_disks()
    before, cache = disk.checksum(), kernel_write_cache(disk)
    run = gate.play([disk], disk_gate_write_cache="disabled", disk_gate_policy="warn")
    assert run.rc == 0, run.failures
    found = run.disk(disk.path)
    assert (found["verdict"], found["approved"], found["write_iops"]) == ("refused", False, None)
    assert found["reasons"] == ["write_cache disabled: the drive's own write cache cannot be switched here (transport "
                                "loop); only the kernel's view (queue/write_cache) can, which stops the flushes, not "
                                "the cache"]
    assert found["write_cache_disabled"] is None and run.record["blocked"] == [disk.path]
    job = run.task("Read the probe result")
    assert job["changed"] is False and job["results"][0]["written"] is False
    assert (disk.checksum(), kernel_write_cache(disk)) == (before, cache)


def test_persisting_needs_the_comparison(loop_disks, gate, tmp_path):
    run = gate.play([loop_disks()], disk_gate_persist_write_cache=True,
                    disk_gate_write_cache_rules_file=str(tmp_path / "62-test.rules"))
    assert run.rc != 0 and "set disk_gate_compare_write_cache too" in " ".join(run.failures), run.failures
    assert not (tmp_path / "62-test.rules").exists()


def test_hdd_skip_lets_rotational_disks_through_unprobed(loop_disks, gate):
    disk = loop_disks()
    run = gate.play([disk], IMPOSSIBLE, disk_gate_hdd_policy="skip")
    assert run.rc == 0, run.failures
    found = run.disk(disk.path)
    assert (found["thresholds_class"], found["verdict"], found["approved"], found["gated"]) == ("hdd", "skipped", True, False)
    assert run.task("Start the sync-write probe").get("skipped") is True


def test_each_class_is_judged_by_its_own_thresholds_in_one_job(loop_disks, gate):
    # The data disk (the HDD class: loop devices report rotational) gets easy thresholds, the DB
    # disk of dedicated_devices impossible ones of its own; one job a host probes both.
    data, db = loop_disks(), loop_disks()
    run = gate.play([], disk_gate_devices=[], devices=[data.path], dedicated_devices=[db.path],
                    disk_gate_db_thresholds=IMPOSSIBLE, disk_gate_policy="warn")
    assert run.rc == 0, run.failures
    found = dict((d["device"], (d["thresholds_class"], d["verdict"])) for d in run.record["disks"])
    assert found == {data.path: ("hdd", "suitable"), db.path: ("db", "unsuitable")}, found
    started = run.task("Start the sync-write probe")
    assert started["ansible_job_id"] and "results" not in started, started
    assert sorted(result["device"] for result in run.task("Read the probe result")["results"]) == sorted(
        [data.path, db.path])


@pytest.mark.cores
def test_check_mode_plans_without_probing_caching_or_reporting(loop_disks, gate):
    disk = loop_disks()
    before = disk.checksum()
    run = gate.play([disk], check=True, disk_gate_cache_max_age=3600, reports=True)
    assert run.rc == 0, run.failures
    assert (run.record["pending"], run.disk(disk.path)["verdict"]) == ([disk.path], None)
    assert not gate.cache_dir.exists() and not gate.report_dir.exists()
    assert disk.checksum() == before
    # Nothing shows as changed that the run did not write, the reports included, and the play
    # says once where a real run writes them.
    assert [name for name, result in run.tasks.items() if result.get("changed")] == []
    assert run.task("Say that check mode writes no report")["msg"] == (
        "check mode: no report is written; a real run writes them to %s" % gate.report_dir)


@pytest.mark.cores
def test_an_unreachable_host_is_reported_not_passed_and_hides_no_other_result(loop_disks, gate, tmp_path):
    inventory = tmp_path / "hosts.json"  # JSON is YAML: a host that refuses connections next to this one
    inventory.write_text(json.dumps({"all": {"hosts": {
        "localhost": {"ansible_connection": "local"},
        "ghost": {"ansible_connection": "ssh", "ansible_host": "127.0.0.1", "ansible_port": 9}}}}))
    disk = loop_disks()
    run = gate.play([disk], inventory=str(inventory), reports=True)
    assert run.rc == 4  # ansible-playbook's exit code for an unreachable host
    hosts = dict((entry["host"], entry) for entry in json.loads(gate.report("disk_gate.json"))["hosts"])
    assert sorted(hosts) == ["ghost", "localhost"]
    assert (hosts["ghost"]["status"], hosts["ghost"]["passed"], hosts["ghost"]["disks"]) == ("no_result", False, [])
    assert hosts["localhost"]["passed"] is True and [d["approved"] for d in hosts["localhost"]["disks"]] == [True]
    assert "ghost" not in gate.report("disk_gate.cephadm.yml")


def test_every_host_probes_at_once_even_with_one_fork(loop_disks, gate, tmp_path):
    """With forks 1 a task reaches one host at a time: the hosts' probes still overlap, because
    every job is started before any is waited for. A role that waited in the starting task would
    probe the hosts one after the other, and fio would never write to both disks at once."""
    first, second = loop_disks(), loop_disks()
    inventory = tmp_path / "hosts.json"
    inventory.write_text(json.dumps({"all": {"hosts": {
        "one": {"ansible_connection": "local", "gated": [first.path]},
        "two": {"ansible_connection": "local", "gated": [second.path]}}}}))
    # 6 s probes, full length, long enough for the second host's to start while the first one's runs.
    command = gate.command([], inventory=str(inventory), disk_gate_devices="{{ gated }}", disk_gate_runtime=6,
                           disk_gate_adaptive=False)
    command["env"]["ANSIBLE_FORKS"] = "1"
    with FioWatch(first.path, second.path) as watch:
        rc, _report = run_playbook(command["args"], command["env"])
    assert rc == 0
    # Each disk written, and both at one moment.
    assert watch.together, "fio never wrote to both disks at once (fio runs seen: %s)" % sorted(watch.pids)


def test_a_probe_the_module_refuses_to_start_says_why(loop_disks, gate):
    disk = loop_disks()
    run = gate.play([disk], dict(EASY, marginal_min_iops=1000))
    assert run.rc != 0
    assert run.disk(disk.path)["reasons"] == ["the probe failed: marginal_min_iops must not exceed min_iops"]


def test_without_a_list_or_ceph_ansible_variables_every_available_disk_is_a_candidate(
        loop_disks, gate, mount_ns, tmp_path):
    # Check mode: the rule picks every available loop device of a host, and none may be written here.
    # The host is a mount namespace that shows these three disks alone: the loop disks other
    # tests attach meanwhile (the integration stage runs two files at once) are not this host's.
    blank, other, used = loop_disks(), loop_disks(), loop_disks()
    make_gpt_partitions(used)
    only_these_disks(mount_ns, [blank, other, used], tmp_path)
    before = [d.checksum() for d in (blank, other, used)]
    run = gate.play([], check=True, disk_gate_devices=[], prefix=mount_ns)
    assert run.rc == 0, run.failures
    candidates = dict((d["device"], d) for d in run.record["disks"])
    assert sorted(candidates) == sorted([blank.path, other.path])
    for disk in (blank, other):
        assert candidates[disk.path]["sources"] == ["available"]
    assert run.record["chosen_by"] == ["available"]
    table = run.task("Show the disks and their verdicts")["msg"]
    # The host's part of the table says which rule chose its disks (the fleet per model follows it).
    assert ("disks chosen by: every disk disk_facts calls available (no explicit list, "
            "no ceph-ansible variable set)") in table
    assert [d.checksum() for d in (blank, other, used)] == before


def test_a_ceph_ansible_variable_set_even_empty_replaces_the_available_disks(loop_disks, gate):
    loop_disks()  # an available disk, which the empty variable keeps out
    run = gate.play([], check=True, disk_gate_devices=[], devices=[])
    assert run.rc == 0, run.failures
    assert run.record["disks"] == [] and run.record["chosen_by"] == []


def test_overwrite_data_is_the_only_way_past_data_in_the_region(loop_disks, gate):
    disk = loop_disks()
    disk.write(1024 ** 3 + 4096, os.urandom(4096))  # inside the probe region, no signature
    before = disk.checksum()
    refused = gate.play([disk], disk_gate_policy="warn")
    assert refused.disk(disk.path)["verdict"] == "refused"
    assert refused.disk(disk.path)["reasons"][0].startswith("region check: 1 of 512 MiB")
    assert disk.checksum() == before
    allowed = gate.play([disk], disk_gate_overwrite_data=[disk.name])
    assert allowed.rc == 0, allowed.failures
    assert allowed.disk(disk.path)["verdict"] == "suitable"
    assert disk.checksum() != before


def test_overwrite_data_may_only_name_a_candidate(loop_disks, gate):
    disk, other = loop_disks(), loop_disks()
    run = gate.play([disk], disk_gate_overwrite_data=[other.path])
    assert run.rc != 0
    assert run.failures == ["disk_gate_overwrite_data names %s, which the gate does not probe on localhost; it may "
                            "only name candidate disks." % other.path]
    assert "Start the sync-write probe" not in run.tasks


def test_a_name_no_disk_of_the_host_has_is_absent_and_skipped_unless_absence_blocks(loop_disks, gate):
    disk = loop_disks()
    missing = "/dev/cephops-no-such-disk"
    run = gate.play([disk], disk_gate_devices=[disk.path, missing])
    assert run.rc == 0, run.failures
    assert (run.disk(disk.path)["verdict"], run.disk(disk.path)["thresholds_class"]) == ("suitable", "hdd")
    found = run.disk(missing)
    assert (found["verdict"], found["decision"], found["reasons"]) == (
        "absent", "absent", ["no disk of the host has this name (not present)"])
    assert run.record["handover"] == dict({"devices": [disk.path]}, crush_device_class=run.disk(disk.path)[
        "device_class"]["class"])
    blocked = gate.play([disk], disk_gate_devices=[disk.path, missing], disk_gate_absent_policy="block")
    assert blocked.rc != 0 and blocked.record["blocked"] == [missing]


@pytest.mark.cores
def test_the_probe_jobs_are_found_whatever_home_the_controller_has(loop_disks, gate, tmp_path):
    # A CI runner with a HOME of its own, local connection and become: the job starts as the
    # become user while async_status expands its directory elsewhere, unless both use the
    # role's absolute disk_gate_async_dir.
    disk = loop_disks()
    home = tmp_path / "home"
    home.mkdir()
    run = gate.play([disk], become=True, home=str(home))
    assert run.rc == 0, run.failures
    assert run.disk(disk.path)["verdict"] == "suitable"
    # The job's status file was in the role's directory, and went from there once read.
    job = run.task("Read the probe result")
    erased = run.task("Remove the status file")["erased"]
    assert erased == str(gate.async_dir / job["ansible_job_id"]) and not os.path.exists(erased)
