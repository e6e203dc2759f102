"""ceph-ansible's own osds play (site.yml.sample of stable-8.0 and of stable-9.0, the branch still
receiving changes) with the gate inserted between ceph-config and ceph-osd as
docs/ceph-ansible.md says, on loop devices of this host.

ceph-defaults, ceph-facts, ceph-handler and ceph-config run unmodified, ceph-volume included;
a task put in place of ceph-osd reports the device variables ceph-osd would receive, since
ceph-osd would deploy OSDs. Each shape of ceph-ansible's variables names fast loop disks and
one whose writes a blkio cgroup throttles, which the gate must keep from ceph-osd.

Per branch, an environment variable points at a ceph-ansible checkout and another at the
openstack.config_template collection it needs (BRANCHES); they default to the snapshots in
../shared/peers/ next to the project. Both branches pin ansible-core >=2.15,<2.17 and run on
2.16's venv.
"""

import copy
import json
import os
import subprocess
import time

import pytest
import yaml

from conftest import REPO_ROOT, TABLES
from loopdisk import Throttle, only_these_disks
from modulerun import json_env
from test_disk_gate import EASY, thresholds

PEERS = os.path.join(os.path.dirname(REPO_ROOT), "shared", "peers")


class Branch:
    """A ceph-ansible branch: its checkout and the openstack.config_template its requirements.yml
    pins (stable-9.0's 3.0.1 is a packaging update of 3.0.0)."""

    def __init__(self, name, variable, template, template_variable):
        self.name = name
        self.dir = os.environ.get(variable, os.path.join(PEERS, "ceph-ansible-" + name))
        self.config_template = os.environ.get(template_variable, os.path.join(PEERS, "openstack-config_template-" + template))
        self.missing = "no ceph-ansible %s at %s: set %s to a checkout (and %s to openstack/ansible-config_template %s)" % (
            name, self.dir, variable, template_variable, template)


BRANCHES = [Branch("stable-8.0", "CEPH_ANSIBLE_DIR", "1.2.1", "CONFIG_TEMPLATE_DIR"),
            Branch("stable-9.0", "CEPH_ANSIBLE_9_DIR", "3.0.0", "CONFIG_TEMPLATE_3_DIR")]
# A cluster name of its own: ceph-handler removes stale sockets of the cluster it deploys.
CLUSTER = "cephops-test"
REPORT_TASK = "Device variables ceph-osd would receive"
CEPH_ANSIBLE_VARS = ("devices", "dedicated_devices", "bluestore_wal_devices", "lvm_volumes", "osd_auto_discovery",
                     "crush_device_class")
# Write requests a second the slow disk gets: fio's write+fsync pairs then reach ~25 IOPS,
# against several hundred on a free loop disk; the thresholds sit in between.
SLOW_WRITE_IOPS = 50
LIMITS = dict(EASY, min_iops=100, marginal_min_iops=50)

# By hand a missing snapshot skips these tests; in CI (CI=true), where it must be there, it fails them.
IN_CI = os.environ.get("CI") == "true"


@pytest.fixture(params=BRANCHES, ids=[branch.name for branch in BRANCHES])
def branch(request):
    found = os.path.isfile(os.path.join(request.param.dir, "site.yml.sample"))
    if not found and not IN_CI:
        pytest.skip(request.param.missing)
    assert found, request.param.missing
    return request.param


def site_plays(branch):
    with open(os.path.join(branch.dir, "site.yml.sample")) as handle:
        return yaml.safe_load(handle)


def all_hosts_play(plays):
    return copy.deepcopy(next(p for p in plays if "osds" in p.get("hosts") and "mons" in p.get("hosts")))


def common_play(plays, branch):
    """site.yml's play for every host, on the monitor, as far as it can run here and changes
    nothing: defaults, facts (gathered, and ceph-facts' own, which the osds play reads from the
    monitor) and the handler's checks. Left out: ceph-validate, which fails a host without
    systemd (this test host runs none), and ceph-infra and ceph-common, which install packages
    and configure the host. The OSD hosts only gather facts: the osds play runs ceph-facts and
    ceph-handler on them again, and each run of them costs minutes here."""
    play = all_hosts_play(plays)
    play["hosts"] = "mons"
    roles = [task.get("import_role", {}).get("name") for task in play["tasks"]]
    assert roles[-3:] == ["ceph-validate", "ceph-infra", "ceph-common"], roles
    del play["tasks"][-3:]
    # The playbook is written next to the test's inventory; its import names a file of the checkout.
    for task in play["pre_tasks"]:
        if "import_tasks" in task:
            task["import_tasks"] = os.path.join(branch.dir, task["import_tasks"])
    return play


def osds_play_with_gate(plays, hosts):
    """The osds play of site.yml.sample for ``hosts``, the gate after ceph-config, the report in
    place of ceph-osd."""
    play = copy.deepcopy(next(p for p in plays if p.get("hosts") == "osds"))
    tasks = play["tasks"]
    roles = [task.get("import_role", {}).get("name") for task in tasks]
    assert roles[-2:] == ["ceph-config", "ceph-osd"], roles
    tasks[-1:] = [
        {"import_role": {"name": "cephops.osd_tuning.disk_gate"}},
        {"name": REPORT_TASK, "ansible.builtin.debug": {"msg": {
            name: "{{ %s | default(None) }}" % name for name in CEPH_ANSIBLE_VARS}}},
    ]
    play["hosts"] = hosts
    # ceph-ansible ends the whole run at the first host stopped (the point of block); off, one run
    # shows every host's outcome. A host's own tasks are the same either way.
    play["any_errors_fatal"] = False
    # ceph-volume's own switch: it refuses loop devices otherwise.
    play["environment"] = {"CEPH_VOLUME_ALLOW_LOOP_DEVICES": "1"}
    return play


def site(host_groups, branch):
    plays = site_plays(branch)
    gather = next(t for t in all_hosts_play(plays)["pre_tasks"] if t.get("name") == "gather facts")
    return ([common_play(plays, branch), {"hosts": "osds", "gather_facts": False, "tasks": [gather]}]
            + [osds_play_with_gate(plays, ":".join(hosts)) for hosts in host_groups])


def collections_path(tmp_path, branch):
    tree = tmp_path / "collections" / "ansible_collections" / "openstack"
    tree.mkdir(parents=True)
    (tree / "config_template").symlink_to(branch.config_template)
    return "%s:%s" % (tmp_path / "collections", os.environ["CEPH_ANSIBLE_COLLECTIONS"])


def inventory(hosts, tmp_path):
    """One monitor and the OSD hosts ``hosts`` ({name: variables}), all this machine, as a real
    inventory would name them: ceph-facts takes the monitor's address for ceph.conf and
    generates the fsid on it."""
    local = {"ansible_connection": "local", "ansible_python_interpreter": "/usr/bin/python3"}
    return {"all": {
        # public_network as group_vars/all.yml must give it: every address, the monitor's first one.
        "vars": dict(cluster=CLUSTER, public_network="0.0.0.0/0", ceph_conf_key_directory=str(tmp_path / "etc-ceph"),
                     disk_gate_include_loop=True, disk_gate_runtime=2, disk_gate_plp_runtime=0,
                     disk_gate_poll_interval=1, disk_gate_region_size_mib=16,
                     # The first play on a disk probes it, later ones decide on its cached verdict, as a re-run would.
                     disk_gate_cache_max_age=3600, disk_gate_cache_dir=str(tmp_path / "cache"),
                     disk_gate_report_dir=str(tmp_path / "report"), **thresholds(LIMITS)),
        "children": {"mons": {"hosts": {"mon0": local}},
                     "osds": {"hosts": dict((name, dict(local, **variables)) for name, variables in hosts.items())}}}}


def run_site(tmp_path, hosts, host_groups, slow, mount_ns, branch):
    """The play's JSON report; it runs in ``mount_ns``, whose /sys/block holds the test's disks."""
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(inventory(hosts, tmp_path)))
    # ceph-config makes /etc/ceph, not a ceph_conf_key_directory of the user's.
    (tmp_path / "etc-ceph").mkdir()
    (tmp_path / "site.yml").write_text(yaml.safe_dump(site(host_groups, branch)))
    env = json_env(ANSIBLE_CONFIG=os.path.join(branch.dir, "ansible.cfg"),
                   ANSIBLE_COLLECTIONS_PATH=collections_path(tmp_path, branch),
                   ANSIBLE_LOG_PATH=str(tmp_path / "ansible.log"),
                   ANSIBLE_CACHE_PLUGIN_CONNECTION=str(tmp_path / "facts"),
                   ANSIBLE_ASYNC_DIR=str(tmp_path / "async"),
                   PATH=os.path.join(os.environ["CEPH_ANSIBLE_VENV"], "bin") + os.pathsep + os.environ["PATH"])
    # ceph-ansible's switch to gather each host's facts on the host, all at once, not one after another.
    argv = ["ansible-playbook", "--inventory", str(tmp_path / "hosts.yml"), "--extra-vars", "delegate_facts_host=false",
            str(tmp_path / "site.yml")]
    throttle = Throttle([("write_iops_device", disk, SLOW_WRITE_IOPS) for disk in slow])
    try:
        proc = subprocess.run(mount_ns + argv, capture_output=True, text=True, env=env, cwd=branch.dir,
                              check=False, preexec_fn=throttle.enter)
    finally:
        throttle.remove()
    try:
        # ceph-ansible's installer-status callback prints after the json report.
        return json.JSONDecoder().raw_decode(proc.stdout)[0]
    except ValueError:
        raise AssertionError("ansible-playbook gave no JSON (rc=%s)\n%s\n%s" % (proc.returncode, proc.stdout, proc.stderr))


def outcome(report, host):
    """(device variables the report task showed or None, messages of the failed tasks) of ``host``;
    a failed command's message carries the end of its stderr, which says why."""
    results = [(task["task"]["name"], task["hosts"][host]) for play in report["plays"]
               for task in play["tasks"] if host in task["hosts"]]
    shown = [r["msg"] for name, r in results if name == REPORT_TASK]
    # ansible-core renders an undefined variable's default(None) as "".
    received = dict((k, v) for k, v in shown[0].items() if v not in (None, "")) if shown else None
    return received, [(name, (r.get("msg") or "") + (": " + r["stderr"][-800:] if r.get("stderr") else ""))
                      for name, r in results if r.get("failed")]


# (host name prefix, shape, its variables, what ceph-osd receives under exclude: None when the gate stops the host)
SHAPES = [
    ("devices", "devices", lambda f0, f1, slow: dict(devices=[f0, f1, slow]),
     lambda f0, f1: dict(devices=[f0, f1], osd_auto_discovery=False)),
    ("dedicated", "devices + dedicated_devices", lambda f0, f1, slow: dict(devices=[f0, slow], dedicated_devices=[f1, f1]),
     # ceph-facts makes dedicated_devices unique.
     lambda f0, f1: dict(devices=[f0], dedicated_devices=[f1], osd_auto_discovery=False)),
    # Exclude keeps an lvm_volumes entry only when every part of it was approved.
    ("lvm", "lvm_volumes, raw data", lambda f0, f1, slow: dict(lvm_volumes=[dict(data=f0), dict(data=slow)]),
     lambda f0, f1: dict(lvm_volumes=[dict(data=f0)])),
]


def test_ceph_ansible_osds_play_with_the_gate(branch, loop_disks, mount_ns, tmp_path):
    """Every shape under exclude and block, each on three disks of its own (two fast, one slow)."""
    started = time.monotonic()
    disks = dict((shape[0], [loop_disks(), loop_disks(), loop_disks()]) for shape in SHAPES)
    paths = dict((prefix, [d.path for d in found]) for prefix, found in disks.items())
    hosts = {}
    for prefix, _shape, variables, _expected in SHAPES:
        for policy in ("exclude", "block"):
            hosts["%s-%s" % (prefix, policy)] = dict(variables(*paths[prefix]), disk_gate_policy=policy)
    # A play per policy: exclude probes, block then decides on the same verdicts.
    host_groups = [["%s-%s" % (shape[0], policy) for shape in SHAPES] for policy in ("exclude", "block")]
    etc_ceph = os.path.isdir("/etc/ceph")
    try:
        # As on an OSD host, the play sees only its disks: ceph-volume scans every block device,
        # and the loop devices other tests detach can vanish under its scan.
        only_these_disks(mount_ns, [disk for found in disks.values() for disk in found], tmp_path)
        report = run_site(tmp_path, hosts, host_groups, [found[2] for found in disks.values()], mount_ns, branch)
    finally:
        # ceph-config makes /etc/ceph; ceph.conf itself goes to ceph_conf_key_directory under tmp_path.
        if not etc_ceph and os.path.isdir("/etc/ceph"):
            os.rmdir("/etc/ceph")
    seconds = time.monotonic() - started

    for prefix, shape, _variables, expected in SHAPES:
        fast0, fast1, slow = paths[prefix]
        results = dict((policy, outcome(report, "%s-%s" % (prefix, policy))) for policy in ("exclude", "block"))
        TABLES.append(("ceph-ansible %s osds play, %s (fast0=%s, fast1=%s, slow=%s)" % (
            branch.name, shape, fast0, fast1, slow), [
            "  %-7s ceph-osd receives %s%s" % (
                policy, json.dumps(received, sort_keys=True) if received is not None else "nothing",
                "; stopped by: %s" % failed[0][1] if failed else "")
            for policy, (received, failed) in results.items()]))

        received, failed = results["block"]
        assert received is None and len(failed) == 1, (shape, results["block"])
        assert failed[0][1].startswith("disk gate: %s not approved on %s-block (policy block" % (slow, prefix)), failed
        received, failed = results["exclude"]
        # The gate's CRUSH class reaches ceph-osd: the batch's and each lvm_volumes entry's. Which
        # one depends on what the loop disks measure (their flush, about 1 ms here, sits at the bound).
        entries = [entry.pop("crush_device_class", None) for entry in (received or {}).get("lvm_volumes", [])]
        # The batch's only where its data disks measured alike.
        batch = (received or {}).pop("crush_device_class", None)
        assert set(entries) <= {"hdd", "ssd"} and batch in ("hdd", "ssd", None), (shape, results["exclude"])
        assert received == expected(fast0, fast1), (shape, results["exclude"])
        if received is None:
            assert len(failed) == 1 and failed[0][1].startswith(
                "disk gate: %s not approved on %s-exclude;" % (slow, prefix)), failed
        else:
            assert failed == [], failed
    TABLES.append(("ceph-ansible %s osds play: every shape and policy in one run of %.0f s" % (branch.name, seconds), []))
    assert (tmp_path / "etc-ceph" / (CLUSTER + ".conf")).is_file()
