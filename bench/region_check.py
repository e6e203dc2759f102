"""What the probe's data safety costs: the region check, the restore, and the road not taken.

Before it writes, sync_write_probe reads its whole region and refuses a disk whose region is
not all zeros (the region check); afterwards it zeroes only the blocks it wrote and reads them
back (restore). The alternative it does not take, saving the region to the host and writing
it back (save/restore), is timed too, as is the whole-region zeroing the probe did before.
Each figure is for all disks at once (as the module runs them), median of the repeats; the
gate figure is one sync_write_probe call with the default 15 s probe.
Target: the check and the restore together take at most 10% of the gate's time.
With --independent each loop disk has a pace of its own (benchlib.paced_loop_disks: a fast, a
consumer and an HDD-like disk in turn), so the probe and the restore run at each disk's pace,
not the shared backing disk's: "requests" limits its write requests, plain writes and flushes
alike; "flush" slows its flushes alone, as on a drive without power-loss protection. The region
check only reads, which neither slows. Under a request limit the roads not taken (zeroing the
whole region, save/restore) are left out: each writes the whole region at the limit's pace
(minutes a disk at 16 requests a second), which shows the limit, not the choice.

usage: bench/run.sh region_check [--counts 1 8] [--repeats 3] [--independent [requests|flush] | --lab]
Needs root (loop devices, or QEMU for --lab).
"""

import argparse
import json
import os
import subprocess
import sys
import time

import benchlib

MODULE_UTILS = os.path.join(benchlib.REPO_ROOT, "plugins", "module_utils")
OPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "region_ops.py")
REGION = (1024 * 1024 ** 2, 512 * 1024 ** 2)
PROBE_SECONDS = 15
LAB_DISKS = ("CEPHOPS-SSD-0001", "CEPHOPS-VIRTIO-0001", "CEPHOPS-HDD-0001", "CEPHOPS-SLOW-0001")


class Host:
    label = "loop"

    def ops(self, op, paths, *extra):
        argv = [sys.executable, OPS, MODULE_UTILS, str(REGION[0]), str(REGION[1]), op] + list(extra) + paths
        return json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)["seconds"]

    @staticmethod
    def module(name, args):
        return benchlib.module(name, args)


class Lab:
    folder = "/root/cephops-bench"

    def __init__(self, vm):
        self.vm = vm
        self.label = "lab, " + vm.accel
        vm.put([OPS] + [os.path.join(MODULE_UTILS, name) for name in ("probe_region.py", "direct_io.py")], self.folder)

    def ops(self, op, paths, *extra):
        argv = ["python3", self.folder + "/region_ops.py", self.folder, str(REGION[0]), str(REGION[1]), op]
        return json.loads(self.vm.run(argv + list(extra) + paths))["seconds"]

    def module(self, name, args):
        return self.vm.module(name, args)


def disk_sets(args):
    """(where, label, [paths]) of each set of disks to measure, one set at a time: loop disks are
    made for their set only, one set's write limits at a time, as this process joins one cgroup."""
    if args.lab:
        with benchlib.lab_vm() as vm:
            lab = Lab(vm)
            paths = [vm.path_of(serial) for serial in LAB_DISKS]
            for serial, path in zip(LAB_DISKS, paths):
                yield lab, "%s (%s)" % (serial, lab.label), [path]
            yield lab, "all %d lab disks (%s)" % (len(paths), lab.label), paths
        return
    for count in args.counts:
        with benchlib.paced_loop_disks(count, args.independent) as (disks, _paces):
            yield Host(), "%d loop disk%s" % (count, "s" if count > 1 else ""), [d.path for d in disks]


def timed(step):
    start = time.monotonic()
    step()
    return time.monotonic() - start


def measure(where, paths, repeats, runs, roads_not_taken):
    """Adds ``repeats`` timings of each step on ``paths`` to ``runs``; with ``roads_not_taken``,
    of the whole-region zeroing and save/restore too."""
    for _repeat in range(repeats):
        runs["check"].append(where.ops("check", paths))
        if roads_not_taken:
            runs["save_restore"].append(where.ops("save_restore", paths))
        runs["gate"].append(timed(lambda: where.module("sync_write_probe", dict(
            devices=paths, runtime=PROBE_SECONDS, **benchlib.EASY))))
        where.ops("dirty", paths, str(PROBE_SECONDS))
        runs["restore"].append(where.ops("restore", paths))
        if roads_not_taken:
            where.ops("dirty", paths, str(PROBE_SECONDS))
            runs["zero_all"].append(where.ops("zero_all", paths))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--repeats", type=int, default=3)
    benchlib.add_pace_option(parser)
    parser.add_argument("--lab", action="store_true", help="measure on a lab VM's blank disks")
    args = parser.parse_args()
    if args.lab and args.independent:
        parser.error("--independent paces loop disks; the lab's disks have their own pace")
    rows = []
    for where, label, paths in disk_sets(args):
        runs = dict((key, []) for key in ("check", "gate", "restore", "zero_all", "save_restore"))
        # Under a request limit the roads not taken would time the limit; a slow flush they pay once.
        measure(where, paths, args.repeats, runs, roads_not_taken=args.independent != "requests")
        found = dict((key, benchlib.median(values) if values else None) for key, values in runs.items())
        share = (found["check"] + found["restore"]) / found["gate"]
        rows.append((label, "%.2f" % found["check"], "%.1f" % found["gate"], "%.1f%%" % (100 * found["check"] / found["gate"]),
                     "%.2f" % found["restore"], "%.1f%%" % (100 * share),
                     *("-" if found[key] is None else "%.2f" % found[key] for key in ("zero_all", "save_restore")),
                     "yes" if share <= 0.10 else "**no**"))
    benchlib.table("The probe region: check, restore and save/restore (512 MiB region, %d s probe, median of %d%s)"
                   % (PROBE_SECONDS, args.repeats, benchlib.PACE_TITLES.get(args.independent, "")),
                   ("disks", "region check s", "gate s", "check / gate", "restore after a probe s",
                    "(check + restore) / gate", "zero whole region s", "save/restore s",
                    "check + restore <= 10% of gate"), rows,
                   notes=["Seconds for all the row's disks at once. 'restore after a probe' zeroes only the blocks a "
                          "%d s fio probe wrote and reads them back; 'zero whole region' is the dd the probe used "
                          "before; 'save/restore' copies the region to /var/tmp, writes it back and compares "
                          "checksums, which also needs 512 MiB of host storage per disk." % PROBE_SECONDS])


if __name__ == "__main__":
    main()
