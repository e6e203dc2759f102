"""Probe fidelity: the module's write IOPS against its own fio command run by hand, on equal disks.

Each pair runs the sync_write_probe module on one disk and the exact fio command it returned
on an equal disk, alternating which goes first. The table gives the median of the pairs' ratios
(module / by hand; a pair's two sides ran a few seconds apart, so a drift in the machine's pace
cancels out) and the distribution-free 95 % interval of that median (order statistics of the
ratios), which says whether the pairs resolve a 5 % difference at all.
Target: module / by hand between 0.95 and 1.05.

Loop disks: each pair gets two fresh loop disks, sparse (as a new test disk is) or, with
--written, with every block of their backing files written (as a real disk has no blocks to
allocate). The lab (--lab) has one disk of each kind, so both sides run on the same disk,
whose probe region one discarded run writes first (the qcow2 overlay allocates a cluster on its
first write, which would slow whichever side came first). With --independent, both disks of a
pair get the same pace of their own, one row per kind of benchlib.paced_loop_disks (a fast, a
consumer and an HDD-like disk): the disk, not the shared backing disk, sets the pace, as on a
real drive; "requests" limits its write requests, "flush" slows its flushes alone.

usage: bench/run.sh probe_fidelity [--pairs 5] [--runtime 5] [--written | --independent [requests|flush]] [--lab [--disks SERIAL ...]]
Needs root (loop devices, or QEMU for --lab).
"""

import argparse
import contextlib
import math
import os
import sys

import benchlib

LAB_DISKS = ("CEPHOPS-SSD-0001", "CEPHOPS-NVME-0001", "CEPHOPS-VIRTIO-0001", "CEPHOPS-SLOW-0001")


def probe(module, label, path, runtime, region=None):
    """(write IOPS, fio command) of one module run on ``path``."""
    args = dict(devices=[path], runtime=runtime, overwrite_data=[path], plp_runtime=0, adaptive=False, **benchlib.EASY)
    found = module("sync_write_probe", dict(args, **(region or {})))["results"][0]
    if found["write_iops"] is None:
        sys.exit("%s: the module measured nothing: %s" % (label, "; ".join(found["reasons"])))
    return found["write_iops"], found["command"]


@contextlib.contextmanager
def pairs_of_disks(args):
    """[(label, VM or None, region arguments, lab disk path, pace)]: the lab's disks, or an entry
    for loop disks (one per kind of disk with --independent), which compare() makes fresh for
    every pair."""
    if args.lab:
        # The lab gate's probe region: zeroing 512 MiB costs the slow disk minutes a run.
        region = dict(region_size_mib=benchlib.lab_gate_variables()["disk_gate_region_size_mib"])
        with benchlib.lab_vm() as vm:
            yield [("%s (lab, %s)" % (serial, vm.accel), vm, region, vm.path_of(serial), None) for serial in args.disks]
    elif args.independent == "requests":
        yield [("two fresh loop disks a pair, each limited to %d write requests/s" % limit, None, None, None, limit)
               for limit in benchlib.INDEPENDENT_WRITE_REQUESTS]
    elif args.independent == "flush":
        yield [("two fresh loop disks a pair, each flush costing %g ms" % ms, None, None, None, ms)
               for ms in benchlib.INDEPENDENT_FLUSH_MS]
    else:
        yield [("two fresh loop disks a pair, %s backing files" % ("written" if args.written else "sparse"), None, None, None, None)]


def compare(args, vm, region, path, kind, label):
    """(hand-run IOPS, module IOPS) of ``args.pairs`` pairs, alternating which side goes first.
    The first pair starts with the module, whose command every hand-run side then repeats; on
    loop disks ``kind`` (or None) is the pace of both."""
    module = vm.module if vm else benchlib.module
    by_hand, probed, command = [], [], None
    if vm:
        probe(module, label, path, args.runtime, region)  # allocates the region's clusters
    for pair in range(args.pairs):
        # Two fresh loop disks a pair, both of the pace ``kind`` gives with --independent.
        with contextlib.nullcontext(([], {})) if vm else benchlib.paced_loop_disks(
                2, args.independent, kinds=(kind,), allocated=args.written) as (disks, _paces):
            mine, theirs = (path, path) if vm else (disks[0].path, disks[1].path)
            for step in ("module", "hand") if pair % 2 == 0 else ("hand", "module"):
                # The module's restore leaves its region to write back, which would slow the next side.
                if vm:
                    vm.run(["sync"])
                else:
                    os.sync()
                if step == "module":
                    iops, command = probe(module, label, mine, args.runtime, region)
                    probed.append(iops)
                    written_for = mine
                else:
                    by_hand.append(benchlib.fio_write_iops(
                        ["--filename=" + theirs if word == "--filename=" + written_for else word for word in command], on=vm))
    return by_hand, probed


def median_interval(values, confidence=0.95):
    """(low, high, coverage): the innermost pair of order statistics of ``values`` (the k-th lowest
    and the k-th highest) that holds their true median with at least ``confidence``; with too few
    values for that, the extremes and the confidence they give."""
    ordered, n = sorted(values), len(values)
    k, below = 1, 1 / 2 ** n  # the k-th lowest and highest; P(fewer than k values lie below the median)
    while k < (n + 1) // 2:
        below_next = below + math.comb(n, k) / 2 ** n
        if 1 - 2 * below_next < confidence:
            break
        k, below = k + 1, below_next
    return ordered[k - 1], ordered[n - k], 1 - 2 * below


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--runtime", type=int, default=5)
    parser.add_argument("--written", action="store_true", help="loop disks with every block of their backing files written")
    benchlib.add_pace_option(parser)
    parser.add_argument("--lab", action="store_true", help="compare on a lab VM's fast disks instead of loop disks")
    parser.add_argument("--disks", nargs="+", default=LAB_DISKS, metavar="SERIAL", help="with --lab: these lab disks only")
    args = parser.parse_args()
    if args.written and args.independent:
        parser.error("--written and --independent are two ways to pace a loop disk: choose one")
    rows = []
    with pairs_of_disks(args) as targets:
        for label, vm, region, path, kind in targets:
            by_hand, probed = compare(args, vm, region, path, kind, label)
            ratios = [mine / theirs for mine, theirs in zip(probed, by_hand)]
            ratio = benchlib.median(ratios)
            low, high, coverage = median_interval(ratios)
            rows.append((label, "%.0f (%.0f-%.0f)" % (benchlib.median(by_hand), min(by_hand), max(by_hand)),
                         "%.0f (%.0f-%.0f)" % (benchlib.median(probed), min(probed), max(probed)),
                         "%.3f" % ratio, "%.3f-%.3f%s" % (low, high, "" if coverage >= 0.95 else " (%.1f %%)" % (100 * coverage)),
                         "yes" if 0.95 <= ratio <= 1.05 else "**no**"))
    benchlib.table("Probe fidelity: the module against its own fio command by hand, %d s, %d alternating pairs"
                   % (args.runtime, args.pairs),
                   ("disks", "hand-run fio IOPS (range)", "module IOPS (range)", "module / by hand, median of the pairs",
                    "95 % interval of that median", "within 0.95-1.05"), rows)


if __name__ == "__main__":
    main()
