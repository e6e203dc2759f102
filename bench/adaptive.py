"""Adaptive runtime: time to a verdict, and agreement with the full-length probe.

On a loop disk, for thresholds far below, near and far above the disk's measured IOPS, runs
the sync_write_probe module with the full runtime and with adaptive stages, and prints
the verdicts, whether they agree, and how many seconds the adaptive probe wrote. Target: a
clear-cut disk decided in at most 3 s of probing, with the full-length probe's verdict.

usage: bench/run.sh adaptive [--repeats 3] [--runtime 15]
Needs root (loop devices).
"""

import argparse

import benchlib


def probe(path, runtime, min_iops, adaptive):
    return benchlib.module("sync_write_probe", dict(
        devices=[path], runtime=runtime, adaptive=adaptive, min_iops=min_iops, marginal_min_iops=min_iops // 2,
        max_p99_sync_latency_ms=10000, marginal_max_p99_sync_latency_ms=10000))["results"][0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--runtime", type=int, default=15)
    args = parser.parse_args()
    rows = []
    with benchlib.loop_disks(1) as (disk,):
        measured = probe(disk.path, args.runtime, 1, False)["write_iops"]
        cases = (("far below (clear-cut suitable)", max(int(measured / 10), 2)),
                 ("near the measured IOPS", int(measured)),
                 ("far above (clear-cut unsuitable)", int(measured * 10)))
        for label, min_iops in cases:
            agree, seconds, verdicts = [], [], []
            for _repeat in range(args.repeats):
                full = probe(disk.path, args.runtime, min_iops, False)
                quick = probe(disk.path, args.runtime, min_iops, True)
                agree.append(full["verdict"] == quick["verdict"])
                seconds.append(quick["adaptive"]["seconds_probed"])
                verdicts.append("%s/%s" % (full["verdict"], quick["verdict"]))
            # Near a threshold two full-length probes can differ by noise alone: no target there.
            target = ("yes" if all(agree) and benchlib.median(seconds) <= 3 else "**no**") \
                if label.startswith("far") else "n/a"
            rows.append((label, min_iops, ", ".join(sorted(set(verdicts))), "%d/%d" % (sum(agree), len(agree)),
                         "%.1f" % benchlib.median(seconds), target))
    benchlib.table("Adaptive runtime on a loop disk measured at %.0f IOPS (full runtime %d s, %d repeats)"
                   % (measured, args.runtime, args.repeats),
                   ("min_iops", "value", "verdict full/adaptive", "agree", "adaptive s probed (median)", "target met"),
                   rows, notes=["A disk near a threshold is not clear-cut: the adaptive probe falls back to a "
                                "full-length probe there, by design, and that probe's verdict can differ from the "
                                "separate full-length run it is compared with by noise alone."])


if __name__ == "__main__":
    main()
