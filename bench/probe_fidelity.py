"""Probe fidelity: the module's IOPS against the SSD selection article's fio command run by hand, same disk.

For each repeat, on each disk, runs the article's command (fio --ioengine=libaio --fsync=1
--direct=1 --bs=4k --iodepth=1 --rw=randwrite) and the sync_write_probe module with the
same runtime, alternating which goes first, and prints the medians and their ratio.
Target: module / by hand between 0.95 and 1.05.

Loop disks get fully written backing files (a real disk has no blocks left to allocate; a
sparse file would charge the article's whole-disk writes for allocation the module's fixed
region no longer pays). --lab runs the same on a lab VM's blank disks, over SSH by hand.

usage: bench/run.sh probe_fidelity [--disks 1] [--repeats 3] [--runtime 15] [--lab]
Needs root (loop devices, or QEMU for --lab).
"""

import argparse
import contextlib
import sys

import benchlib

LAB_DISKS = ("CEPHOPS-SSD-0001", "CEPHOPS-VIRTIO-0001", "CEPHOPS-HDD-0001", "CEPHOPS-SLOW-0001")
EASY = dict(min_iops=1, marginal_min_iops=1, max_p99_sync_latency_ms=10000, marginal_max_p99_sync_latency_ms=10000)


@contextlib.contextmanager
def targets(args):
    """(label, path, runner or None for the host, module runner) of each disk to compare."""
    if args.lab:
        # The lab gate's probe region: zeroing 512 MiB costs the 50-IOPS disk 80 s a run.
        region = dict(region_size_mib=benchlib.lab_gate_variables()["disk_gate_region_size_mib"])
        with benchlib.lab_vm() as vm:
            yield [("%s (lab, %s)" % (serial, vm.accel), vm.path_of(serial), vm,
                    lambda name, args: vm.module(name, dict(args, **region))) for serial in LAB_DISKS]
    else:
        with benchlib.loop_disks(args.disks, allocated=True) as disks:
            yield [(disk.name + " (loop)", disk.path, None, benchlib.module) for disk in disks]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--disks", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--runtime", type=int, default=15)
    parser.add_argument("--lab", action="store_true", help="compare on a lab VM's disks instead of loop disks")
    args = parser.parse_args()
    rows = []
    with targets(args) as disks:
        for label, path, where, module in disks:
            by_hand, probe = [], []
            for repeat in range(args.repeats):
                def run_by_hand():
                    by_hand.append(benchlib.article_fio(path, args.runtime, on=where))

                def run_module():
                    # The hand-run article command leaves random data on the disk; the benchmark
                    # wrote it, so it names the disk as one the probe may overwrite.
                    found = module("sync_write_probe", dict(devices=[path], runtime=args.runtime, overwrite_data=[path],
                                                            **EASY))["results"][0]
                    if found["write_iops"] is None:
                        sys.exit("%s: the module measured nothing: %s" % (label, "; ".join(found["reasons"])))
                    probe.append(found["write_iops"])

                for step in ((run_by_hand, run_module) if repeat % 2 == 0 else (run_module, run_by_hand)):
                    step()
            ratio = benchlib.median(probe) / benchlib.median(by_hand)
            rows.append((label, "%.0f" % benchlib.median(by_hand), "%.0f" % benchlib.median(probe),
                         "%.3f" % ratio, "yes" if 0.95 <= ratio <= 1.05 else "**no**"))
    benchlib.table("Probe fidelity: module vs the SSD selection article's fio command by hand, %d s, median of %d" % (args.runtime, args.repeats),
                   ("disk", "hand-run fio IOPS", "module IOPS", "module / by hand", "within 0.95-1.05"), rows)


if __name__ == "__main__":
    main()
