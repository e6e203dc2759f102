"""A second, no-change run of site.yml against disk count: module calls per host and wall time.

For each disk count, boots a lab VM with that many blank virtio disks and nothing else, runs
playbooks/site.yml with the lab's variables once (the gate probes every disk), then again
REPEATS times (the gate serves its cache, nothing is left to change), and counts what those
runs sent to the host: each task or loop item that ran there is one module call, each extra
async_status retry one poll. Tasks that run on the controller (set_fact, assert, debug,
includes, delegated report writing) are not calls to the host. Target: the same number of
module calls for 1, 4 and 8 disks.

usage: bench/run.sh nochange_run [--counts 1 4 8] [--repeats 3]
Needs root (QEMU) and the lab image (built on first use, about a minute).
"""

import argparse
import json
import os
import subprocess
import sys
import time

import benchlib

SITE = os.path.join(benchlib.REPO_ROOT, "playbooks", "site.yml")
# Actions that Ansible runs on the controller: they cost no round trip to the host.
CONTROLLER_ACTIONS = {"set_fact", "assert", "debug", "fail", "meta", "include_tasks", "import_tasks",
                      "include_role", "import_role", "include_vars", "add_host", "group_by", "pause"}


def calls_to_host(report, host):
    """(module calls, extra polls) one host got in a run, from the json callback's output."""
    calls = polls = 0
    for play in report["plays"]:
        for task in play["tasks"]:
            result = task["hosts"].get(host)
            action = (result or {}).get("action", "").rsplit(".", 1)[-1]
            if not result or action in CONTROLLER_ACTIONS or result.get("_ansible_delegated_vars"):
                continue
            items = result.get("results") if isinstance(result.get("results"), list) else [result]
            for item in items:
                if not item.get("skipped"):
                    calls += 1
                    polls += max(int(item.get("attempts", 1)) - 1, 0)
    return calls, polls


def site_run(vm, extra_vars):
    """(seconds, module calls, polls, changed tasks) of one site.yml run."""
    env = benchlib.modulerun.json_env()
    start = time.monotonic()
    proc = subprocess.run(["ansible-playbook", "-i", vm.inventory, SITE, "-e", json.dumps(extra_vars)],
                          capture_output=True, text=True, env=env, check=False)
    seconds = time.monotonic() - start
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        sys.exit("site.yml gave no JSON (rc=%s): %s" % (proc.returncode, proc.stderr[-3000:]))
    if proc.returncode != 0:
        sys.exit("site.yml failed (rc=%s): %s" % (proc.returncode, json.dumps(report["stats"])))
    calls, polls = calls_to_host(report, vm.name)
    return seconds, calls, polls, report["stats"][vm.name]["changed"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows, no_change_calls, accels = [], set(), set()
    for count in args.counts:
        # Gate every blank disk; the zoo's filesystem and over-provisioning spares are absent here.
        extra_vars = {"cephops_gate_devices": ["/dev/disk/by-id/virtio-CEPHOPS-BLANK-%04d" % index
                                               for index in range(1, count + 1)],
                      "mount_options_new_filesystems": [], "overprovision_disks": []}
        with benchlib.lab_vm(blank_disks=count) as vm:
            accels.add(vm.accel)
            first = site_run(vm, extra_vars)
            again = [site_run(vm, extra_vars) for _repeat in range(args.repeats)]
        calls = sorted(set(run[1] for run in again))
        no_change_calls.update(calls)
        rows.append((count, first[1], "%.0f" % first[0], "/".join(map(str, calls)),
                     "%.0f" % benchlib.median([run[2] for run in again]),
                     "%.0f" % benchlib.median([run[0] for run in again]), max(run[3] for run in again)))
    met = "met" if len(no_change_calls) == 1 else "**missed**"
    benchlib.table("site.yml against disk count on a lab VM: first run, then %d no-change runs (medians)" % args.repeats,
                   ("disks", "first run: module calls", "first run s", "no-change: module calls", "no-change: polls",
                    "no-change s", "no-change: changed tasks"), rows,
                   notes=["Target (the same number of module calls for every disk count): %s." % met,
                          "Lab VMs run under QEMU (%s): a call costs seconds here, far more than on real hosts."
                          % "/".join(sorted(accels))])


if __name__ == "__main__":
    main()
