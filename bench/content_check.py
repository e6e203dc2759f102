"""What the whole-disk writers' content check costs, and what it can miss, per disk size.

Before mkfs, an HPA with erase, the partition method's discard or a namespace deletion, the
content check reads the first and last 64 MiB of the disk whole and one MiB in every 16 MiB
between (more apart past 256 GiB, so it reads at most about 16 GiB). This times that check
(module_utils/blankness.read_contents, as the modules call it) on allocated loop disks, the
page cache dropped before every run, against the inventory's 64 MiB sample, and scales the
measured read rate to 1, 4 and 16 TB disks. The scaled rows are marked as such: they assume
the loop disk's rate, which a real disk's own rate replaces. The rotational row is an
estimate from a seek model, not a measurement: no rotational disk is here.

usage: bench/run.sh content_check [--size-gib 8] [--repeats 3]
Needs root (loop devices, drop_caches).
"""

import argparse
import os
import sys
import time

from ansible_collections.cephops.osd_tuning.plugins.module_utils import blankness

import benchlib

MIB = 1024 ** 2
TB = 1000 ** 4
# The seek model of the rotational estimate: an average seek and half a turn of a 7200 rpm
# disk, then 1 MiB at 200 MB/s, for every sample between the edges.
HDD_SAMPLE_SECONDS = 0.0085 + 0.0042 + MIB / 200e6


def no_blkid(argv):
    raise AssertionError("a blank disk needs no blkid: %s" % argv)


def timed_check(disk, whole_disk_write):
    with open("/proc/sys/vm/drop_caches", "w") as handle:
        handle.write("3\n")
    start = time.monotonic()
    content = blankness.read_contents(no_blkid, [(disk.path, disk.size, 512, False)], whole_disk_write)[disk.path]
    seconds = time.monotonic() - start
    assert content["nonzero_mib"] == 0 and not content["errors"], content
    return seconds, content["sampled_mib"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-gib", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    with benchlib.loop_disks(1, args.size_gib, allocated=True) as (disk,):
        size_bytes = disk.size
        runs = dict((mode, [timed_check(disk, mode == "full") for _repeat in range(args.repeats)])
                    for mode in ("inventory", "full"))
    rows = []
    for mode, label in (("inventory", "inventory sample"), ("full", "writers' full check")):
        seconds = benchlib.median([s for s, _mib in runs[mode]])
        mib = runs[mode][0][1]
        stride = blankness.writer_stride(size_bytes) if mode == "full" else None
        edge = blankness.WRITER_EDGE_MIB if mode == "full" else blankness.HEAD_MIB
        rows.append(["%d GiB loop disk, %s (measured)" % (args.size_gib, label), mib,
                     blankness.largest_missable_mib(size_bytes, edge, stride), "%.2f" % seconds,
                     "%.0f" % (mib / seconds), "-"])
    rate = rows[1][1] / benchlib.median([s for s, _mib in runs["full"]])  # MiB/s of the full check
    for terabytes in (1, 4, 16):
        size = terabytes * TB
        stride = blankness.writer_stride(size)
        mib = len(blankness.sample_chunks(size, blankness.WRITER_EDGE_MIB, stride))
        hdd = (mib - 2 * blankness.WRITER_EDGE_MIB) * HDD_SAMPLE_SECONDS + 2 * blankness.WRITER_EDGE_MIB * MIB / 200e6
        rows.append(["%d TB, writers' full check (scaled from the loop disk's rate)" % terabytes, mib,
                     blankness.largest_missable_mib(size, blankness.WRITER_EDGE_MIB, stride), "%.0f" % (mib / rate),
                     "%.0f" % rate, "%.0f" % hdd])
    benchlib.table(
        "The whole-disk writers' content check",
        ["disk and check", "MiB read", "largest run it can miss (MiB)", "seconds", "MiB/s",
         "rotational estimate (s, seek model)"],
        rows,
        notes=["Medians of %d runs, the page cache dropped before each. Rotational estimate: %.1f ms per sample "
               "between the edges (seek, half a turn at 7200 rpm, 1 MiB at 200 MB/s); no rotational disk was "
               "measured. A rotational disk over %d GiB gets the inventory's sample between full edges instead and "
               "is refused as not fully checked unless the user accepts the sample."
               % (args.repeats, HDD_SAMPLE_SECONDS * 1000, blankness.ROTATIONAL_FULL_CHECK_MAX_BYTES // 1024 ** 3)])


if __name__ == "__main__":
    if os.geteuid() != 0:
        sys.exit("content_check needs root (loop devices, drop_caches)")
    main()
