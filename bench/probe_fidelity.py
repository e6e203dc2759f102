"""Probe fidelity: the module's IOPS against seed 001's fio command run by hand, same disk.

For each repeat, on each disk, runs the seed's command (fio --ioengine=libaio --fsync=1
--direct=1 --bs=4k --iodepth=1 --rw=randwrite) and the sync_write_probe module with the
same runtime, alternating which goes first, and prints the medians and their ratio.
Target: module / seed between 0.95 and 1.05.

usage: bench/run.sh probe_fidelity [--disks 1] [--repeats 3] [--runtime 15]
Needs root (loop devices). The lab variant runs the same against the lab VM's disks.
"""

import argparse

import benchlib


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--disks", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--runtime", type=int, default=15)
    args = parser.parse_args()
    rows = []
    with benchlib.loop_disks(args.disks) as disks:
        for disk in disks:
            seed, probe = [], []
            for repeat in range(args.repeats):
                def by_hand():
                    seed.append(benchlib.seed_fio(disk.path, args.runtime))

                def by_module():
                    result = benchlib.module("sync_write_probe", dict(
                        devices=[disk.path], runtime=args.runtime, min_iops=1, marginal_min_iops=1,
                        max_p99_sync_latency_ms=10000, marginal_max_p99_sync_latency_ms=10000))
                    probe.append(result["results"][0]["write_iops"])

                for step in ((by_hand, by_module) if repeat % 2 == 0 else (by_module, by_hand)):
                    step()
            ratio = benchlib.median(probe) / benchlib.median(seed)
            rows.append((disk.name + " (loop)", "%.0f" % benchlib.median(seed), "%.0f" % benchlib.median(probe),
                         "%.3f" % ratio, "yes" if 0.95 <= ratio <= 1.05 else "**no**"))
    benchlib.table("Probe fidelity: module vs seed 001 fio by hand, %d s, median of %d" % (args.runtime, args.repeats),
                   ("disk", "seed fio IOPS", "module IOPS", "module / seed", "within 0.95-1.05"), rows)


if __name__ == "__main__":
    main()
