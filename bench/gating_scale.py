"""Host gating time against disk count: parallel probing against the hand-run procedure.

For 1, 4, 8 and 12 loop disks, times the sync_write_probe module (all disks in one fio run,
as the gate does, region check and restore included), full length and adaptive, and the hand-run
procedure (the SSD selection article's fio command, disk after disk), and prints medians.
Targets, in the role's default mode (adaptive): 1 disk at most 0.6x the hand-run procedure;
8 disks at most 1.2x the time of 1 disk; 12 disks at most 0.05x the hand-run procedure's time
for the same disks (a full-length probe alone is 1/12 of it); the deep-queue run (the mClock
figure) at most 15 % more than the adaptive gate without it; every adaptive verdict equal to
the full-length one. The full-length columns show what the mode saves.

usage: bench/run.sh gating_scale [--counts 1 4 8 12] [--repeats 3] [--runtime 15]
                                 [--region-size-mib N] [--plp-runtime S] [--independent [requests|flush]]
                                 [--kinds N ...]
--region-size-mib and --plp-runtime pass the module's options of those names (default: the
module's own), to show what the region check costs; plp_runtime sizes the run without fsync,
which only a probe without an fsync latency of its own takes (not this randwrite probe, whose
power-loss verdict reads its own fsync latency).
--independent gives each loop disk a pace of its own (benchlib.paced_loop_disks: a fast, a
consumer and an HDD-like disk, in turn), as real disks are, instead of all of them sharing the
backing disk's: "requests" limits its write requests, so plain writes are as slow as flushes;
"flush" slows its flushes alone, as on a drive without power-loss protection. A second table
then shows whether they are independent: each disk's figure probed alone against its figure in
the gate's run of all of them, for the largest count. --kinds picks the paces cycled over the
disks (write requests a second, or milliseconds a flush): one kind makes every disk alike, so
that "x 1 disk" compares the gate of N disks with the gate of one disk of the same kind, where
a mix waits on its slowest disk and one disk is the fastest kind.
Needs root (loop devices).
"""

import argparse
import subprocess
import time

import benchlib


def timed(step):
    start = time.monotonic()
    step()
    return time.monotonic() - start


# Thresholds that leave every disk here clear-cut, as most real disks are against the real ones:
# with the probe's margin of 1.5, suitable above 150 IOPS, marginal between 15 and 67, unsuitable
# below 7, so the paced kinds (about 300, 30 and 5 IOPS) and unpaced loop disks (thousands) are
# each decided early. A marginal band of 20 to 50 IOPS left its clear window at 30 to 33, which
# the consumer-slow kind straddled: it fell back to the full-length probe in the adaptive mode.
LIMITS = dict(min_iops=100, marginal_min_iops=10, max_p99_sync_latency_ms=500, marginal_max_p99_sync_latency_ms=1000)
TARGET_VS_ONE = {8: 1.2}
TARGET_VS_HAND = {1: 0.6, 12: 0.05}
# What the deep-queue run (the mClock figure, after the sync probe) may add to the adaptive gate.
TARGET_DEEP_QUEUE_COST = 0.15


def gate(disks, runtime, adaptive, verdicts, options):
    """One module run over these disks; its verdicts appended to ``verdicts``; {path: write IOPS}."""
    found = benchlib.module("sync_write_probe", dict(devices=[d.path for d in disks], runtime=runtime,
                                                     adaptive=adaptive, **LIMITS, **options))
    verdicts.append([r["verdict"] for r in found["results"]])
    return dict((r["device"], r["write_iops"]) for r in found["results"])


def independence_table(disks, paces, together, runtime, options):
    """Each disk probed alone against its figure in the run of all of them: equal (within 10 %
    in sum) when the disks do not wait on each other."""
    alone = dict((disk.path, gate([disk], runtime, False, [], options)[disk.path]) for disk in disks)
    rows = [(disk.path, paces[disk.path], "%.1f" % alone[disk.path], "%.1f" % together[disk.path],
             "%.2f" % (together[disk.path] / alone[disk.path])) for disk in disks]
    ratio = sum(together.values()) / sum(alone.values())
    rows.append(("sum", "", "%.1f" % sum(alone.values()), "%.1f" % sum(together.values()),
                 "%.2f (%s)" % (ratio, "independent" if abs(ratio - 1) <= 0.10 else "**not independent**")))
    benchlib.table("Independent loop disks: each alone and all %d together (%d s probes)" % (len(disks), runtime),
                   ("disk", "pace", "write IOPS alone", "write IOPS together", "together / alone"),
                   rows, notes=["An fsync'd write costs the write and its flush: under a write-request limit a "
                                "disk's figure is half its limit or less, under a slow flush a little less than one "
                                "a flush's time. Disks are independent when the sum of their figures run together is "
                                "within 10 % of the sum of their figures alone."])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[1, 4, 8, 12])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--runtime", type=int, default=15)
    parser.add_argument("--region-size-mib", type=int)
    parser.add_argument("--plp-runtime", type=int)
    benchlib.add_pace_option(parser)
    parser.add_argument("--kinds", type=float, nargs="+", help="with --independent: the paces cycled over the disks")
    args = parser.parse_args()
    options = dict((name, value) for name, value in (("region_size_mib", args.region_size_mib),
                                                     ("plp_runtime", args.plp_runtime)) if value is not None)
    full, quick, shallow, hand, same = {}, {}, {}, {}, {}
    for count in args.counts:
        with benchlib.paced_loop_disks(count, args.independent, kinds=args.kinds) as (disks, paces):
            runs = {"full": [], "quick": [], "shallow": [], "hand": []}
            verdicts = {"full": [], "quick": []}
            together = {}  # the full run's figures, for the independence table

            def full_gate():
                together.update(gate(disks, args.runtime, False, verdicts["full"], options))

            for _repeat in range(args.repeats):
                runs["full"].append(timed(full_gate))
                runs["quick"].append(timed(lambda: gate(disks, args.runtime, True, verdicts["quick"], options)))
                runs["shallow"].append(timed(lambda: gate(disks, args.runtime, True, verdicts["quick"],
                                                          dict(options, deep_queue_seconds=0))))
                runs["hand"].append(timed(lambda: [benchlib.article_fio(d.path, args.runtime) for d in disks]))
                # The article's command leaves random data all over each disk, which the probe's
                # content checks rightly refuse: discard it (holes in the backing files) untimed.
                for disk in disks:
                    subprocess.run(["blkdiscard", disk.path], check=True)
            full[count], quick[count], hand[count] = (benchlib.median(runs[k]) for k in ("full", "quick", "hand"))
            shallow[count] = benchlib.median(runs["shallow"])
            same[count] = all(v == verdicts["full"][0] for v in verdicts["full"] + verdicts["quick"])
            if paces and count == max(args.counts):
                independence_table(disks, paces, together, args.runtime, options)
    rows = []
    for count in args.counts:
        vs_one, vs_hand = quick[count] / quick[args.counts[0]], quick[count] / hand[count]
        deep_cost = quick[count] / shallow[count] - 1
        met = (vs_one <= TARGET_VS_ONE.get(count, float("inf")) and vs_hand <= TARGET_VS_HAND.get(count, float("inf"))
               and deep_cost <= TARGET_DEEP_QUEUE_COST)
        rows.append((count, "%.1f" % full[count], "%.2f" % (full[count] / full[args.counts[0]]), "%.1f" % quick[count],
                     "%.2f" % vs_one, "%.1f" % shallow[count], "%+.0f %%" % (100 * deep_cost), "%.1f" % hand[count],
                     "%.3f" % (full[count] / hand[count]), "%.3f" % vs_hand,
                     "yes" if same[count] else "**no**", "yes" if met and same[count] else "**no**"))
    settings = "".join(", %s %s" % (name, value) for name, value in options.items())
    settings += benchlib.PACE_TITLES.get(args.independent, "")
    settings += ", all of one kind" if args.kinds and len(args.kinds) == 1 else ""
    benchlib.table("Gating time against disk count (%d s probes, median of %d%s)" % (args.runtime, args.repeats, settings),
                   ("disks", "module full s", "full x 1 disk", "module adaptive s", "adaptive x 1 disk",
                    "adaptive without deep queue s", "deep-queue cost", "hand-run procedure s", "full / by hand",
                    "adaptive / by hand", "same verdicts", "target met"), rows,
                   notes=["Targets, in the role's default mode (adaptive): 1 disk at most 0.6x and 12 disks at most "
                          "0.05x the hand-run procedure, 8 disks at most 1.2x one disk, the deep-queue run (the "
                          "mClock figure, deep_queue_seconds) at most +15 % on the adaptive gate without it "
                          "(deep_queue_seconds 0), every verdict of every run equal. Module times include Ansible's own overhead "
                          "(about a second per call on the controller), the region check and the restore of the "
                          "probe region (the power-loss verdict reads the probe's own fsync latency: no run without "
                          "fsync); the hand-run procedure is fio alone. "
                          + {"requests": "Each loop disk is limited on its own (a fast, a consumer and an HDD-like "
                                         "write-request limit, in turn), as real disks on their own controllers are.",
                             "flush": "Each loop disk's flush costs a time of its own (a fast, a consumer and an "
                                      "HDD-like disk, in turn), its plain writes and reads the host's pace, as on "
                                      "drives without power-loss protection."}.get(
                                          args.independent, "Loop disks share one backing disk and two CPUs here, "
                                                            "unlike real disks on their own controllers.")])


if __name__ == "__main__":
    main()
