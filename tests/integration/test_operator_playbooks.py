"""qualify.yml, site.yml and rollback.yml as an operator runs them: from the tarball built and
installed with `ansible-galaxy collection install` into a fresh collections path (not from this
checkout), by their FQCN, with an inventory and group_vars of the user's kind, on loop disks.
qualify.yml's gate fails closed: a typo'd disk, a partition named as a disk and a host without a
candidate each fail the run; site.yml's does not fail closed, and skips a typo as absent. In
both playbooks the role variables set in group_vars reach the role (no playbook default shadows
them), disk_gate_include_loop and disk_gate_report_dir included. site.yml runs its gate only
(--tags disk_gate): its tuning roles would change this test host's own disks and /etc, and run
in full in the lab. rollback.yml runs in full, with every place the roles keep state moved
under the test's directory.
"""

import json

import pytest
import yaml

from loopdisk import only_these_disks, run
from modulerun import json_env, run_playbook
from test_collection_build import user_environment
from test_disk_facts import make_gpt_partitions

TYPO = "/dev/sdzz"
EASY = dict(min_iops=2, marginal_min_iops=1, max_p99_sync_latency_ms=10000.0, marginal_max_p99_sync_latency_ms=20000.0)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    return user_environment(tmp_path_factory)


class Site:
    """An inventory directory with group_vars, as a user keeps them, and the reports directory,
    run with the installed collection. The reports directory is named on the command line
    (cephops_report_dir), or with ``reports_in_group_vars`` in group_vars (disk_gate_report_dir)."""

    def __init__(self, tmp_path, installed, reports_in_group_vars=False, **group_vars):
        self.env = json_env(ANSIBLE_COLLECTIONS_PATH=installed["ANSIBLE_COLLECTIONS_PATH"])
        self.env.pop("PYTHONPATH", None)  # the checkout's tree: the install alone must serve
        self.path, self.reports = tmp_path / "inventory", tmp_path / "reports"
        self.command_line = {} if reports_in_group_vars else dict(cephops_report_dir=str(self.reports))
        if reports_in_group_vars:
            group_vars["disk_gate_report_dir"] = str(self.reports)
        (self.path / "group_vars").mkdir(parents=True)
        (self.path / "hosts.yml").write_text(yaml.safe_dump(
            {"osds": {"hosts": {"localhost": {"ansible_connection": "local"}}}}))
        settings = dict(disk_gate_runtime=2, disk_gate_plp_runtime=0, disk_gate_poll_interval=1,
                        disk_gate_cache_max_age=0, disk_gate_cache_dir=str(tmp_path / "cache"),
                        disk_gate_async_dir=str(tmp_path / "async"), disk_gate_health_enabled=False)
        for key, value in EASY.items():
            settings["disk_gate_" + key] = settings["disk_gate_hdd_" + key] = value
        settings.update(group_vars)
        # None leaves the role's default: one the test does not move.
        settings = dict((key, value) for key, value in settings.items() if value is not None)
        (self.path / "group_vars" / "osds.yml").write_text(yaml.safe_dump(settings))

    def play(self, playbook, prefix=(), args=(), **extra):
        """(rc, JSON report) of one run of the playbook by its FQCN."""
        argv = list(prefix) + ["ansible-playbook", "--inventory", str(self.path), "cephops.osd_tuning." + playbook,
                               "--extra-vars", json.dumps(dict(self.command_line, **extra))]
        return run_playbook(argv + list(args), self.env)

    def qualify(self, prefix=(), playbook="qualify", args=(), **extra):
        """(rc, failure messages, the gate's JSON report or None) of one run of the playbook."""
        rc, report = self.play(playbook, prefix, args, **extra)
        failures = [host["msg"] for play in report["plays"] for task in play["tasks"]
                    for host in task["hosts"].values() if host.get("failed")]
        path = self.reports / "disk_gate.json"
        return rc, failures, json.loads(path.read_text()) if path.exists() else None


def failed_messages(report):
    return [(task["task"]["name"], host.get("msg")) for play in report["plays"] for task in play["tasks"]
            for host in task["hosts"].values() if host.get("failed")]


def changed_tasks(report):
    return [task["task"]["name"] for play in report["plays"] for task in play["tasks"]
            if any(host.get("changed") for host in task["hosts"].values())]


def disks_of(document):
    return dict((d["device"], d) for d in document["hosts"][0]["disks"])


def test_a_typo_and_a_partition_in_group_vars_fail_qualify_and_the_named_disk_is_probed(loop_disks, installed, tmp_path):
    disk, partitioned = loop_disks(), loop_disks()
    make_gpt_partitions(partitioned)
    partition = partitioned.path + "p1"
    site = Site(tmp_path, installed, disk_gate_devices=[disk.path, TYPO, partition], disk_gate_include_loop=True)
    rc, failures, document = site.qualify()
    assert rc != 0 and len(failures) == 1 and "not approved on localhost (policy block" in failures[0], failures
    found = disks_of(document)
    # group_vars reached the role: the loop disk it names was found and probed.
    assert (found[disk.path]["verdict"], found[disk.path]["decision"]) == ("suitable", "approved")
    assert (found[TYPO]["verdict"], found[TYPO]["decision"], found[TYPO]["reasons"]) == (
        "absent", "blocked", ["no disk of the host has this name (not present)"])
    assert (found[partition]["verdict"], found[partition]["decision"]) == ("not_probed", "blocked")
    assert found[partition]["reasons"][0].startswith("a partition of %s" % partitioned.path)
    assert document["summary"]["blocked"] == 2 and document["hosts"][0]["passed"] is False


def test_cephops_gate_devices_on_the_command_line_overrides_group_vars(loop_disks, installed, tmp_path):
    disk = loop_disks()
    site = Site(tmp_path, installed, disk_gate_devices=[TYPO], disk_gate_include_loop=True)
    rc, failures, document = site.qualify(cephops_gate_devices=[disk.path])
    assert rc == 0, failures
    assert list(disks_of(document)) == [disk.path] and document["hosts"][0]["passed"] is True


def test_a_host_without_a_candidate_fails_qualify_before_any_probe(mount_ns, installed, tmp_path):
    only_these_disks(mount_ns, [], tmp_path)
    rc, failures, document = Site(tmp_path, installed).qualify(prefix=mount_ns)
    assert rc != 0 and document is None
    assert failures == ["refused by the candidate check: no disk of localhost is a candidate (none is named in "
                        "disk_gate_devices or ceph-ansible's variables, and disk_facts calls none available), so "
                        "nothing can be qualified; name the disks to gate in disk_gate_devices"]


def test_site_yml_takes_the_gates_policy_and_disks_from_group_vars(loop_disks, installed, tmp_path):
    """site.yml warns and skips an absent disk by default; group_vars that ask for block, absent
    disks blocked and a loop disk get them (the gate's steps only: --tags disk_gate)."""
    disk = loop_disks()
    site = Site(tmp_path, installed, disk_gate_devices=[disk.path, TYPO], disk_gate_include_loop=True, disk_gate_policy="block",
                disk_gate_absent_policy="block")
    rc, failures, document = site.qualify(playbook="site", args=["--tags", "disk_gate"])
    assert rc != 0 and len(failures) == 1 and "not approved on localhost (policy block" in failures[0], failures
    found = disks_of(document)
    assert (found[disk.path]["decision"], found[TYPO]["decision"]) == ("approved", "blocked")


def test_site_yml_fails_on_a_typo_naming_the_check_before_any_probe(loop_disks, installed, tmp_path):
    disk = loop_disks()
    site = Site(tmp_path, installed, disk_gate_devices=[disk.path, TYPO], disk_gate_include_loop=True)
    rc, failures, document = site.qualify(playbook="site", args=["--tags", "disk_gate"])
    assert rc != 0 and document is None
    assert failures == ["refused by the presence check: %s named for localhost, but no disk of the host has that "
                        "name; correct the name, or set disk_gate_absent_policy to skip to skip a disk not fitted yet "
                        "as ceph-ansible does" % TYPO]


def test_site_yml_skips_a_typo_as_absent_where_group_vars_ask_for_ceph_ansibles_way(installed, tmp_path):
    """disk_gate_absent_policy skip in group_vars: a name no disk of the host has is reported
    absent, neither probed nor blocked, and the host does not fail."""
    site = Site(tmp_path, installed, disk_gate_devices=[TYPO], disk_gate_absent_policy="skip")
    rc, failures, document = site.qualify(playbook="site", args=["--tags", "disk_gate"])
    assert rc == 0 and failures == [], failures
    assert (disks_of(document)[TYPO]["verdict"], disks_of(document)[TYPO]["decision"]) == ("absent", "absent")
    assert (document["summary"]["absent"], document["summary"]["blocked"]) == (1, 0)
    assert document["hosts"][0]["passed"] is True


def test_site_yml_refuses_reports_asked_for_in_group_vars_without_a_directory(installed, tmp_path):
    """Reports enabled in group_vars with no directory named stop the run before any probe, naming
    both ways to give one, as qualify.yml does."""
    site = Site(tmp_path, installed, disk_gate_report_enabled=True)
    site.command_line = {}
    rc, failures, document = site.qualify(playbook="site", args=["--tags", "disk_gate"])
    assert rc != 0 and document is None
    assert len(failures) == 1 and "pass -e cephops_report_dir=DIR or set disk_gate_report_dir" in failures[0], failures
    assert not (tmp_path / "async").exists()  # no probe was started


def moved_state(tmp_path):
    """Every place the roles keep state, under tmp_path: rollback.yml's roles find only what a
    test puts there."""
    state = tmp_path / "state"
    state.mkdir()
    (state / "fstab").write_text("")
    moved = dict(("%s_record_dir" % role, str(state))
                 for role in ("disk_gate", "io_scheduler", "max_sectors_kb", "mount_options", "overprovision",
                              "mclock_capacity"))
    moved.update(io_scheduler_udev_rules_file=str(state / "61-io.rules"), io_scheduler_modules_load_file=str(state / "io.conf"),
                 max_sectors_kb_udev_rules_file=str(state / "61-msk.rules"),
                 disk_gate_write_cache_rules_file=str(state / "62-wc.rules"), mount_options_fstab=str(state / "fstab"))
    return state, moved


def test_rollback_yml_removes_the_cache_qualify_left_and_then_has_nothing_to_do(loop_disks, installed, tmp_path):
    """Every place the roles keep state is the user's to move, and so is the reports directory
    (qualify.yml takes disk_gate_report_dir from group_vars when no cephops_report_dir is
    given); here all of it is under tmp_path, so rollback.yml's other roles find no record and
    leave the host alone."""
    disk = loop_disks()
    _state, moved = moved_state(tmp_path)
    site = Site(tmp_path, installed, reports_in_group_vars=True, disk_gate_devices=[disk.path],
                disk_gate_include_loop=True, disk_gate_cache_max_age=3600, **moved)
    rc, failures, document = site.qualify()
    assert rc == 0 and document["hosts"][0]["passed"] is True, failures
    assert list((tmp_path / "cache").iterdir()), "the gate cached no verdict"
    rc, report = site.play("rollback")
    assert rc == 0 and changed_tasks(report) == ["cephops.osd_tuning.disk_gate : Remove the verdict cache"], report
    assert not (tmp_path / "cache").exists()
    rc, report = site.play("rollback")
    assert rc == 0 and changed_tasks(report) == []


def test_rollback_yml_runs_every_role_s_step_when_one_fails_and_fails_at_its_end_naming_it(
        loop_disks, installed, tmp_path):
    """The first role's record is broken: its step fails, every later role's still runs (the
    gate's cache goes), and the play fails at its end naming the step and why."""
    disk = loop_disks()
    state, moved = moved_state(tmp_path)
    site = Site(tmp_path, installed, disk_gate_devices=[disk.path], disk_gate_include_loop=True,
                disk_gate_cache_max_age=3600, **moved)
    assert site.qualify()[0] == 0
    (state / "io_scheduler-queues.json").write_text("{not json")
    rc, report = site.play("rollback")
    assert rc != 0
    assert "cephops.osd_tuning.disk_gate : Remove the verdict cache" in changed_tasks(report)
    assert not (tmp_path / "cache").exists()
    [last] = [msg for _task, msg in failed_messages(report) if msg.startswith("rollback did not finish")]
    assert last.startswith("rollback did not finish: io_scheduler: Set every recorded disk back to its original "
                           "scheduler: %s: not JSON" % (state / "io_scheduler-queues.json")), last
    assert [name for name, _msg in failed_messages(report)][-1] == "Fail with every step that did not finish"


def test_mclock_capacity_yml_seeds_each_osd_from_the_report_qualify_wrote(
        loop_disks, osd_on, ceph_mon, installed, tmp_path):
    """The cephadm order: qualify.yml gates blank disks, the OSDs are made on the approved ones,
    then mclock_capacity.yml, by its FQCN, sets each OSD's capacity from the report qualify.yml
    wrote (Ceph's own monitor holds it; the OSDs are ceph-volume's own LVs)."""
    disks = [loop_disks(), loop_disks()]
    site = Site(tmp_path, installed, disk_gate_devices=[d.path for d in disks], disk_gate_include_loop=True)
    rc, failures, document = site.qualify()
    assert rc == 0, failures
    figures = dict((d["device"], d["deep_queue"]["write_iops"]) for d in document["hosts"][0]["disks"])
    for osd_id, disk in zip((9101, 9102), disks):
        osd_on(osd_id, disk)
    record_dir = tmp_path / "state"
    rc, report = site.play("mclock_capacity", cephops_gate_report=str(site.reports / "disk_gate.json"),
                           mclock_capacity_ceph=ceph_mon, mclock_capacity_record_dir=str(record_dir))
    assert rc == 0, failed_messages(report)
    for osd_id, disk in zip((9101, 9102), disks):
        # Loop disks have no model: each gets its own figure; ansible renders the float its way.
        held = run(ceph_mon + ["config", "get", "osd.%d" % osd_id, "osd_mclock_max_capacity_iops_hdd"]).stdout
        assert float(held) == pytest.approx(figures[disk.path], abs=0.1), (osd_id, held, figures)
    assert (record_dir / "mclock_capacity.json").exists()
    rc, report = site.play("mclock_capacity", cephops_gate_report=str(site.reports / "disk_gate.json"),
                           mclock_capacity_ceph=ceph_mon, mclock_capacity_record_dir=str(record_dir))
    assert rc == 0 and changed_tasks(report) == [], changed_tasks(report)
    # A host whose ceph CLI reaches no cluster: nothing fails, the lines to run go to the reports.
    rc, report = site.play("mclock_capacity", cephops_gate_report=str(site.reports / "disk_gate.json"),
                           mclock_capacity_ceph=["ceph", "--conf", str(tmp_path / "no-such.conf")],
                           mclock_capacity_record_dir=str(record_dir))
    assert rc == 0, failed_messages(report)
    lines = (site.reports / "mclock_capacity.localhost.txt").read_text().splitlines()
    assert lines[0].startswith("# localhost: the cluster cannot be reached from this host (ceph --conf "), lines
    assert lines[1:] == ["ceph config set osd.%d osd_mclock_max_capacity_iops_hdd %s" % (
        osd_id, ("%f" % round(figures[disk.path], 1)).rstrip("0").rstrip(".")) for osd_id, disk in zip((9101, 9102), disks)]


def test_two_runs_with_their_own_state_folders_on_one_host_do_not_see_each_other(loop_disks, installed, tmp_path):
    """cephops_state_dir moves every record, cache, async file and the probe journal: a run with
    another folder neither serves the first one's cached verdict nor removes it in its rollback."""
    disk = loop_disks()
    first, second = tmp_path / "first", tmp_path / "second"
    site = Site(tmp_path, installed, disk_gate_devices=[disk.path], disk_gate_include_loop=True,
                disk_gate_cache_max_age=3600, disk_gate_cache_dir=None, disk_gate_async_dir=None)
    for state in (first, second):
        rc, failures, document = site.qualify(cephops_state_dir=str(state))
        assert rc == 0, failures
        # Each run probed: the other's cached verdict was not its own.
        assert disks_of(document)[disk.path]["cached"] is False
        assert sorted(p.name for p in state.iterdir()) == ["async", "cache", "probe-journal"]
        assert list((state / "cache").iterdir())
    rc, report = site.play("rollback", cephops_state_dir=str(second))
    assert rc == 0, failed_messages(report)
    assert not (second / "cache").exists() and list((first / "cache").iterdir())
