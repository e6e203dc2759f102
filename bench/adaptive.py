"""Adaptive runtime: time to a verdict, and agreement with the full-length probe.

On a loop disk, for thresholds far below, near and far above the disk's measured IOPS, runs
the sync_write_probe module with the full runtime and with adaptive stages, and prints
the verdicts, whether they agree, and how many seconds the adaptive probe wrote. With --lab,
the same per lab disk with the thresholds the lab's gate uses (molecule/shared/group_vars).
Target: a clear-cut disk decided in at most 3 s of probing, with the full-length probe's
verdict (on every lab disk).

usage: bench/run.sh adaptive [--repeats 3] [--runtime 15] [--lab [--serial SERIAL ...]]
Needs root (loop devices, or QEMU for --lab).
"""

import argparse
import sys

import benchlib

# serial -> whether the gate treats it as an HDD (rotational: the lab's HDD and its virtio disk)
LAB_DISKS = {"CEPHOPS-SSD-0001": False, "CEPHOPS-SLOW-0001": False, "CEPHOPS-HDD-0001": True,
             "CEPHOPS-VIRTIO-0001": True}
NOTE = ("A disk near a threshold is not clear-cut: the adaptive probe falls back to a full-length probe there, "
        "by design, and that probe's verdict can differ from the separate full-length run it is compared with "
        "by noise alone.")


def probe(module, path, runtime, thresholds, adaptive):
    return module("sync_write_probe", dict(devices=[path], runtime=runtime, adaptive=adaptive,
                                           **thresholds))["results"][0]


def compare(module, path, runtime, thresholds, repeats):
    """(verdicts seen, agreements, median adaptive seconds, all agree) over the repeats."""
    agree, seconds, verdicts = [], [], set()
    for _repeat in range(repeats):
        full = probe(module, path, runtime, thresholds, False)
        quick = probe(module, path, runtime, thresholds, True)
        if quick["adaptive"] is None:
            sys.exit("%s: the adaptive probe measured nothing: %s" % (path, "; ".join(quick["reasons"])))
        agree.append(full["verdict"] == quick["verdict"])
        seconds.append(quick["adaptive"]["seconds_probed"])
        verdicts.add("%s/%s" % (full["verdict"], quick["verdict"]))
    return ", ".join(sorted(verdicts)), "%d/%d" % (sum(agree), len(agree)), benchlib.median(seconds), all(agree)


def easy(min_iops):
    return dict(min_iops=min_iops, marginal_min_iops=max(min_iops // 2, 1), max_p99_sync_latency_ms=10000,
                marginal_max_p99_sync_latency_ms=10000)


def on_loop(args):
    rows = []
    with benchlib.loop_disks(1) as (disk,):
        measured = probe(benchlib.module, disk.path, args.runtime, easy(1), False)["write_iops"]
        cases = (("far below (clear-cut suitable)", max(int(measured / 10), 2)),
                 ("near the measured IOPS", int(measured)),
                 ("far above (clear-cut unsuitable)", int(measured * 10)))
        for label, min_iops in cases:
            verdicts, agreed, seconds, all_agree = compare(benchlib.module, disk.path, args.runtime, easy(min_iops),
                                                           args.repeats)
            # Near a threshold two full-length probes can differ by noise alone: no target there.
            target = ("yes" if all_agree and seconds <= 3 else "**no**") if label.startswith("far") else "n/a"
            rows.append((label, min_iops, verdicts, agreed, "%.1f" % seconds, target))
    benchlib.table("Adaptive runtime on a loop disk measured at %.0f IOPS (full runtime %d s, %d repeats)"
                   % (measured, args.runtime, args.repeats),
                   ("min_iops", "value", "verdict full/adaptive", "agree", "adaptive s probed (median)", "target met"),
                   rows, notes=[NOTE])


def lab_settings(hdd):
    """Thresholds and probe region of the lab's gate for a disk of this class."""
    values = benchlib.lab_gate_variables()
    prefix = "disk_gate_hdd_" if hdd else "disk_gate_"
    names = ("min_iops", "marginal_min_iops", "max_p99_sync_latency_ms", "marginal_max_p99_sync_latency_ms")
    return dict([(name, values[prefix + name]) for name in names]
                + [("region_size_mib", values["disk_gate_region_size_mib"])])


def on_lab(args):
    rows = []
    with benchlib.lab_vm() as vm:
        for serial in args.serial or LAB_DISKS:
            hdd = LAB_DISKS[serial]
            thresholds = lab_settings(hdd)
            verdicts, agreed, seconds, all_agree = compare(vm.module, vm.path_of(serial), args.runtime, thresholds,
                                                           args.repeats)
            rows.append((serial, "hdd" if hdd else "ssd", thresholds["min_iops"], verdicts,
                         agreed, "%.1f" % seconds, "yes" if all_agree and seconds <= 3 else "**no**"))
        accel = vm.accel
    benchlib.table("Adaptive runtime per lab disk (%s; full runtime %d s, %d repeats)" % (accel, args.runtime, args.repeats),
                   ("disk", "thresholds", "min_iops", "verdict full/adaptive", "agree", "adaptive s probed (median)",
                    "target met"), rows, notes=[NOTE])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--runtime", type=int, default=15)
    parser.add_argument("--lab", action="store_true", help="per lab disk, with the lab gate's thresholds")
    parser.add_argument("--serial", action="append", choices=sorted(LAB_DISKS), help="with --lab: only this disk")
    args = parser.parse_args()
    (on_lab if args.lab else on_loop)(args)


if __name__ == "__main__":
    main()
