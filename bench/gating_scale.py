"""Host gating time against disk count: parallel probing against the seed procedure.

For 1, 4 and 8 loop disks, times the sync_write_probe module (all disks in one fio run, as
the gate does) and the seed procedure (seed 001's fio command, disk after disk), and prints
medians. Targets: 8 disks take at most 1.3x the time of 1 disk, and at most 0.1x the seed
procedure's time for the same 8 disks.

usage: bench/run.sh gating_scale [--counts 1 4 8] [--repeats 3] [--runtime 15]
Needs root (loop devices).
"""

import argparse
import time

import benchlib


def timed(step):
    start = time.monotonic()
    step()
    return time.monotonic() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--runtime", type=int, default=15)
    args = parser.parse_args()
    module_times, seed_times = {}, {}
    for count in args.counts:
        with benchlib.loop_disks(count) as disks:
            module_runs, seed_runs = [], []
            for _repeat in range(args.repeats):
                module_runs.append(timed(lambda: benchlib.module("sync_write_probe", dict(
                    devices=[d.path for d in disks], runtime=args.runtime, min_iops=1, marginal_min_iops=1,
                    max_p99_sync_latency_ms=10000, marginal_max_p99_sync_latency_ms=10000))))
                seed_runs.append(timed(lambda: [benchlib.seed_fio(d.path, args.runtime) for d in disks]))
            module_times[count], seed_times[count] = benchlib.median(module_runs), benchlib.median(seed_runs)
    base = module_times[args.counts[0]]
    rows = []
    for count in args.counts:
        vs_one, vs_seed = module_times[count] / base, module_times[count] / seed_times[count]
        rows.append((count, "%.1f" % module_times[count], "%.2f" % vs_one, "%.1f" % seed_times[count],
                     "%.3f" % vs_seed,
                     "yes" if vs_one <= 1.3 and (count < 8 or vs_seed <= 0.1) else "**no**"))
    benchlib.table("Gating time against disk count (%d s probes, median of %d)" % (args.runtime, args.repeats),
                   ("disks", "module s", "x 1 disk", "seed procedure s", "module / seed", "target met"), rows,
                   notes=["Module time includes Ansible's own overhead (about a second per call on the "
                          "controller); the seed procedure is fio alone."])


if __name__ == "__main__":
    main()
