"""Host gating time against disk count: parallel probing against the seed procedure.

For 1, 4 and 8 loop disks, times the sync_write_probe module (all disks in one fio run, as
the gate does), full length and adaptive, and the seed procedure (seed 001's fio command,
disk after disk), and prints medians. Targets: 8 disks take at most 1.3x the time of 1 disk
(full-length probe), and at most 0.1x the seed procedure's time for the same 8 disks (a
full-length probe alone is 1/8 of it, so this needs the adaptive probe on clear-cut disks).

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


def gate(disks, runtime, adaptive):
    return benchlib.module("sync_write_probe", dict(
        devices=[d.path for d in disks], runtime=runtime, adaptive=adaptive, min_iops=1, marginal_min_iops=1,
        max_p99_sync_latency_ms=10000, marginal_max_p99_sync_latency_ms=10000))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--runtime", type=int, default=15)
    args = parser.parse_args()
    full, quick, seed = {}, {}, {}
    for count in args.counts:
        with benchlib.loop_disks(count) as disks:
            runs = {"full": [], "quick": [], "seed": []}
            for _repeat in range(args.repeats):
                runs["full"].append(timed(lambda: gate(disks, args.runtime, False)))
                runs["quick"].append(timed(lambda: gate(disks, args.runtime, True)))
                runs["seed"].append(timed(lambda: [benchlib.seed_fio(d.path, args.runtime) for d in disks]))
            full[count], quick[count], seed[count] = (benchlib.median(runs[k]) for k in ("full", "quick", "seed"))
    base = full[args.counts[0]]
    rows = []
    for count in args.counts:
        vs_one, vs_seed = full[count] / base, quick[count] / seed[count]
        met = vs_one <= 1.3 and (count < 8 or vs_seed <= 0.1)
        rows.append((count, "%.1f" % full[count], "%.2f" % vs_one, "%.1f" % quick[count], "%.1f" % seed[count],
                     "%.3f" % (full[count] / seed[count]), "%.3f" % vs_seed, "yes" if met else "**no**"))
    benchlib.table("Gating time against disk count (%d s probes, median of %d)" % (args.runtime, args.repeats),
                   ("disks", "module full s", "x 1 disk", "module adaptive s", "seed procedure s",
                    "full / seed", "adaptive / seed", "target met"), rows,
                   notes=["Module times include Ansible's own overhead (about a second per call on the controller), "
                          "the no-fsync power-loss hint probe and zeroing the probe region; the seed procedure is "
                          "fio alone. Loop disks share one backing disk and two CPUs here, unlike real disks on "
                          "their own controllers."])


if __name__ == "__main__":
    main()
