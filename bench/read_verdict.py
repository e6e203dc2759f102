"""How many runs the queue roles' read verdict needs to see an effect, and what it costs.

The queue roles read a disk five times before and five times after a change and call it worse
only when every run after is slower than every run before and the median dropped by more than
the minimum (5 %). This puts a known effect between the two sides: a fresh allocated loop disk
under a blkio read limit (bytes a second, which binds both the sequential and the 4 KiB random
reads), lowered by EFFECT per cent for the side after. Per number of runs per side and per
effect, TRIALS pairs of seq_read_probe runs (sequential and random reads, as the roles run it)
are judged by the roles' own rule; the table counts the verdicts. An effect of 0 shows how often
noise alone is called worse.

A second table times one side of the roles' measurement at their defaults (5 runs of 5 s of
each kind) on 1 and on 4 disks at once, the time a change adds to site.yml per side and role.

With --lab, the same on one disk of a freshly booted lab VM, at its own pace: its noise is the
lab's (TCG, a disk image on the host), not a limit's. An effect of 0 reads it unlimited on both
sides; an effect E caps the side after, through QEMU's read byte limit on that disk, at E per
cent below the side before's median sequential read (the random reads at QD32 stay far under
the cap), and the table adds the median change the cap made.

Needs root, losetup, fio and the blkio cgroup (v1), or QEMU for --lab. Not a test: numbers
depend on the host.

usage: bench/run.sh read_verdict [--runs 3 5 7] [--effects 0 5 20] [--trials 5] [--runtime 1]
                                 [--limit-mib-s 50] [--no-cost] [--lab [--disk random]]
                                 (--no-cost and --limit-mib-s: loop disks only)
"""

import argparse
import collections
import contextlib
import os
import sys
import time

import benchlib

from ansible_collections.cephops.osd_tuning.plugins.filter import read_figures

MIB = 1024 ** 2
# zoo disk name -> serial: the lab's SATA disks with real data to read (an unwritten image reads
# zeros from a hole at the host's memory speed).
LAB_DISKS = {"random": "CEPHOPS-RAND-0001", "data": "CEPHOPS-DATA-0001"}


def side(path, runs, runtime, run_module=benchlib.module):
    """One seq_read_probe run as the roles make it; (its result for the disk, seconds)."""
    started = time.monotonic()
    result = run_module("seq_read_probe", dict(devices=[path], repeats=runs, runtime=runtime, random_read=True))
    assert not result.get("failed"), result
    return result["results"], time.monotonic() - started


def judged(args, read, limit_before, limit_after):
    """Per number of runs and effect, TRIALS pairs of sides judged by the roles' rule: rows of
    (runs, effect, trials, worse, same, better, median change, median seconds a side).
    ``read(runs)`` reads one side; ``limit_before()`` and ``limit_after(effect, before)`` set the
    disk's limits for each side."""
    rows = []
    for runs in args.runs:
        for effect in args.effects:
            counted, seconds, changes = collections.Counter(), [], []
            for _trial in range(args.trials):
                limit_before()
                before, took = read(runs)
                limit_after(effect, before)
                after, _took = read(runs)
                seconds.append(took)
                figure, = read_figures.compare(before, after, {}, "limit")
                counted[figure["verdict"]] += 1
                changes.append(figure["change_percent"])
            rows.append((runs, "%d %%" % effect, args.trials, counted["worse"], counted["same"], counted["better"],
                         "%+.1f %%" % benchlib.median(changes), "%.1f" % benchlib.median(seconds)))
    return rows


def verdicts(disk, throttle, args):
    def limit(effect):
        throttle.limit("read_bps_device", disk, int(args.limit_mib_s * (1 - effect / 100.0) * MIB))

    rows = judged(args, lambda runs: side(disk.path, runs, args.runtime), lambda: limit(0),
                  lambda effect, _before: limit(effect))
    benchlib.table(
        "Read verdict: verdicts per number of runs and effect (%d s runs, %s MiB/s read limit)"
        % (args.runtime, args.limit_mib_s),
        ["runs per side", "effect", "trials", "worse", "same", "better", "s per side (median)"],
        [row[:6] + row[7:] for row in rows],
        notes=["Minimum change 5 % (the roles' default): an effect of 5 % moves the median by about that much, "
               "so it is called worse only where it moved by more."])


@contextlib.contextmanager
def qemu_read_limit(vm, disk):
    """A setter of the lab disk's read byte limit (0: none) through the VM's QEMU monitor; no limit
    afterwards."""
    sys.path.insert(0, os.path.join(benchlib.REPO_ROOT, "lab"))
    import labctl  # the lab's monitor client, needed on the host only

    def limit(bytes_per_s):
        with contextlib.closing(labctl.Qmp(os.path.join(vm.state, "vms", vm.name, "qmp.sock"))) as qmp:
            qmp.execute("block_set_io_throttle", device=disk, bps_rd=bytes_per_s,
                        **dict.fromkeys(("bps", "bps_wr", "iops", "iops_rd", "iops_wr"), 0))

    try:
        yield limit
    finally:
        limit(0)


def lab_verdicts(args):
    """The verdict table on one lab disk: its own noise, and a cap E per cent under its pace."""
    with benchlib.lab_vm() as vm:
        path = vm.path_of(LAB_DISKS[args.disk])
        with qemu_read_limit(vm, args.disk) as limit:
            def cap(effect, before):
                if effect:
                    limit(int(before[0]["table"][0]["read_mib_s"] * (1 - effect / 100.0) * MIB))

            rows = judged(args, lambda runs: side(path, runs, args.runtime, vm.module), lambda: limit(0), cap)
        accel = vm.accel
    benchlib.table(
        "Read verdict on the lab disk %s (%s): verdicts per number of runs and effect (%d s runs)"
        % (LAB_DISKS[args.disk], accel, args.runtime),
        ["runs per side", "effect", "trials", "worse", "same", "better", "median change (median)",
         "s per side (median)"], rows,
        notes=["Effect 0: no limit on either side, the lab disk's own spread. Effect E: the side after capped at "
               "E % under the side before's median sequential read (QEMU's read byte limit).",
               "Minimum change 5 % (the roles' default)."])


def cost(disks, args):
    rows = []
    for count in (1, len(disks)):
        started = time.monotonic()
        result = benchlib.module("seq_read_probe", dict(devices=[d.path for d in disks[:count]], repeats=5,
                                                        runtime=5, random_read=True))
        assert not result.get("failed"), result
        rows.append((count, "%.1f" % (time.monotonic() - started), "50"))
    benchlib.table("Read verdict: one side of the roles' measurement at their defaults",
                   ["disks at once", "seconds", "of it reading (5 runs x (5 s + 5 s))"], rows,
                   notes=["Per role and change, site.yml spends this twice (before and after); the disks a role "
                          "changes are read side by side, so the time does not grow with their number."])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[3, 5, 7])
    parser.add_argument("--effects", type=int, nargs="+", default=[0, 5, 20])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--runtime", type=int, default=1)
    parser.add_argument("--limit-mib-s", type=float, default=50.0)
    parser.add_argument("--no-cost", action="store_true", help="skip the timing at the roles' defaults")
    parser.add_argument("--lab", action="store_true", help="on one disk of a lab VM, at its own pace")
    parser.add_argument("--disk", choices=sorted(LAB_DISKS), default="random", help="with --lab: the zoo disk")
    args = parser.parse_args()
    if args.lab:
        lab_verdicts(args)
        return
    with benchlib.loop_disks(4, size_gib=2, allocated=True) as disks:
        with benchlib.throttled([("read_bps_device", disks[0], int(args.limit_mib_s * MIB))]) as throttle:
            verdicts(disks[0], throttle, args)
        if not args.no_cost:
            cost(disks, args)


if __name__ == "__main__":
    main()
