"""qualify.yml and site.yml as an operator runs them: by their FQCN, with an inventory and
group_vars of the user's kind, on loop disks. qualify.yml's gate fails closed: a typo'd disk, a
partition named as a disk and a host without a candidate each fail the run. In both playbooks
the role variables set in group_vars reach the role (no playbook default shadows them),
disk_gate_include_loop included.
"""

import json

import yaml

from modulerun import json_env, run_playbook
from test_ceph_volume_inventory import only_these_disks
from test_disk_facts import make_gpt_partitions

TYPO = "/dev/sdzz"
EASY = dict(min_iops=2, marginal_min_iops=1, max_p99_sync_latency_ms=10000.0, marginal_max_p99_sync_latency_ms=20000.0)


class Site:
    """An inventory directory with group_vars, as a user keeps them, and the reports directory."""

    def __init__(self, tmp_path, **group_vars):
        self.path, self.reports = tmp_path / "inventory", tmp_path / "reports"
        (self.path / "group_vars").mkdir(parents=True)
        (self.path / "hosts.yml").write_text(yaml.safe_dump(
            {"osds": {"hosts": {"localhost": {"ansible_connection": "local"}}}}))
        settings = dict(disk_gate_runtime=2, disk_gate_plp_runtime=0, disk_gate_poll_interval=1,
                        disk_gate_cache_max_age=0, disk_gate_cache_dir=str(tmp_path / "cache"),
                        disk_gate_async_dir=str(tmp_path / "async"), disk_gate_health_enabled=False)
        for key, value in EASY.items():
            settings["disk_gate_" + key] = settings["disk_gate_hdd_" + key] = value
        settings.update(group_vars)
        (self.path / "group_vars" / "osds.yml").write_text(yaml.safe_dump(settings))

    def qualify(self, prefix=(), playbook="qualify", args=(), **extra):
        """(rc, failure messages, the gate's JSON report or None) of one run of the playbook."""
        argv = list(prefix) + ["ansible-playbook", "--inventory", str(self.path), "cephops.osd_tuning." + playbook,
                               "--extra-vars", json.dumps(dict(cephops_report_dir=str(self.reports), **extra))]
        argv += list(args)
        rc, report = run_playbook(argv, json_env())
        failures = [host["msg"] for play in report["plays"] for task in play["tasks"]
                    for host in task["hosts"].values() if host.get("failed")]
        path = self.reports / "disk_gate.json"
        return rc, failures, json.loads(path.read_text()) if path.exists() else None


def disks_of(document):
    return dict((d["device"], d) for d in document["hosts"][0]["disks"])


def test_a_typo_and_a_partition_in_group_vars_fail_qualify_and_the_named_disk_is_probed(loop_disks, tmp_path):
    disk, partitioned = loop_disks(), loop_disks()
    make_gpt_partitions(partitioned)
    partition = partitioned.path + "p1"
    site = Site(tmp_path, disk_gate_devices=[disk.path, TYPO, partition], disk_gate_include_loop=True)
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


def test_cephops_gate_devices_on_the_command_line_overrides_group_vars(loop_disks, tmp_path):
    disk = loop_disks()
    site = Site(tmp_path, disk_gate_devices=[TYPO], disk_gate_include_loop=True)
    rc, failures, document = site.qualify(cephops_gate_devices=[disk.path])
    assert rc == 0, failures
    assert list(disks_of(document)) == [disk.path] and document["hosts"][0]["passed"] is True


def test_a_host_without_a_candidate_fails_qualify_before_any_probe(mount_ns, tmp_path):
    only_these_disks(mount_ns, [], tmp_path)
    rc, failures, document = Site(tmp_path).qualify(prefix=mount_ns)
    assert rc != 0 and document is None
    assert failures == ["refused by the candidate check: no disk of localhost is a candidate (none is named in "
                        "disk_gate_devices or ceph-ansible's variables, and disk_facts calls none available), so "
                        "nothing can be qualified; name the disks to gate in disk_gate_devices"]


def test_site_yml_takes_the_gates_policy_and_disks_from_group_vars(loop_disks, tmp_path):
    """site.yml warns and skips an absent disk by default; group_vars that ask for block, absent
    disks blocked and a loop disk get them (the gate's steps only: --tags disk_gate)."""
    disk = loop_disks()
    site = Site(tmp_path, disk_gate_devices=[disk.path, TYPO], disk_gate_include_loop=True, disk_gate_policy="block",
                disk_gate_absent_policy="block")
    rc, failures, document = site.qualify(playbook="site", args=["--tags", "disk_gate"])
    assert rc != 0 and len(failures) == 1 and "not approved on localhost (policy block" in failures[0], failures
    found = disks_of(document)
    assert (found[disk.path]["decision"], found[TYPO]["decision"]) == ("approved", "blocked")
