"""The controller's time per host: qualify.yml over 1, 10 and 50 hosts in one run.

Every host is this machine over the local connection, with one sparse loop disk of its own and
its own directories for the gate's cache and async jobs; forks 50, so every host of a run is
served at once. The probe is as short as the module allows (1 s, no run without fsync, 16 MiB
region), so what grows with the host count is Ansible's and the role's work per host. Prints
the wall time and the CPU time of each run (ansible-playbook with everything it started: with
the local connection the modules run on this machine too) and, per host added, the increase
over the smallest count.

usage: bench/run.sh controller_per_host [--hosts 1 10 50] [--repeats 3]
Needs root (loop devices).
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import tempfile
import time

import benchlib

QUALIFY = os.path.join(benchlib.REPO_ROOT, "playbooks", "qualify.yml")


def inventory(disks, work):
    """An inventory of one local host per disk, each gating only its own disk."""
    hosts = {}
    for index, disk in enumerate(disks):
        name = "host%03d" % index
        hosts[name] = dict(ansible_connection="local", disk_gate_devices=[disk.path],
                           disk_gate_cache_dir=os.path.join(work, name, "cache"),
                           disk_gate_async_dir=os.path.join(work, name, "async"))
    settings = dict(disk_gate_include_loop=True, disk_gate_runtime=1, disk_gate_plp_runtime=0,
                    disk_gate_region_size_mib=16, disk_gate_cache_max_age=0, disk_gate_health_enabled=False)
    for prefix in ("disk_gate_", "disk_gate_hdd_"):
        settings.update((prefix + key, value) for key, value in benchlib.EASY.items())
    path = os.path.join(work, "hosts.json")  # JSON is YAML
    with open(path, "w") as handle:
        json.dump({"osds": {"hosts": hosts, "vars": settings}}, handle)
    return path


def qualify(hosts_file, reports):
    """(wall seconds, CPU seconds) of one qualify.yml run; fails on a non-zero exit."""
    env = dict(os.environ, ANSIBLE_FORKS="50")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run(["ansible-playbook", "-i", hosts_file, "-e", "cephops_report_dir=" + reports, QUALIFY],
                          capture_output=True, text=True, env=env, check=False)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit("qualify.yml failed (exit %d):\n%s" % (done.returncode, done.stdout[-3000:] + done.stderr[-2000:]))
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--hosts", type=int, nargs="+", default=[1, 10, 50])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    figures = {}
    for count in args.hosts:
        with benchlib.loop_disks(count) as disks:
            work = tempfile.mkdtemp(prefix="cephops-bench-hosts.")
            try:
                hosts_file = inventory(disks, work)
                runs = [qualify(hosts_file, os.path.join(work, "reports-%d" % repeat)) for repeat in range(args.repeats)]
            finally:
                shutil.rmtree(work)
        figures[count] = (benchlib.median([wall for wall, _cpu in runs]), benchlib.median([cpu for _wall, cpu in runs]))
    base = min(args.hosts)
    rows = []
    for count in args.hosts:
        wall, cpu = figures[count]
        added = count - base
        rows.append((count, "%.1f" % wall, "%.1f" % cpu,
                     "%.2f" % ((wall - figures[base][0]) / added) if added else "-",
                     "%.2f" % ((cpu - figures[base][1]) / added) if added else "-"))
    benchlib.table("qualify.yml against host count (local connection, one loop disk each, forks 50, median of %d)"
                   % args.repeats,
                   ("hosts", "wall s", "CPU s", "wall s per host added", "CPU s per host added"), rows,
                   notes=["CPU: ansible-playbook and everything it started, the modules and fio included (the "
                          "local connection runs them on this machine). Per host added: the increase over %d "
                          "host(s), divided by the hosts added." % base])


if __name__ == "__main__":
    main()
