"""Tuning effect of max_sectors_kb: sequential read throughput at each candidate, lab disks.

Boots a lab VM and runs the seq_read_probe module (read-only fio, 4 MiB requests, the value
set for the measurement and set back afterwards) on each lab disk at each candidate the
max_sectors_kb role measures by default, REPEATS times, and prints the median MiB/s per value
and the fastest. The NVMe disk is left out: the lab keeps fio load off QEMU's NVMe model.

usage: bench/run.sh max_sectors_kb [--repeats 3] [--runtime 5]
Needs root (QEMU) and the lab image.
"""

import argparse
import os

import yaml

import benchlib

LAB_DISKS = ("CEPHOPS-SSD-0001", "CEPHOPS-HDD-0001", "CEPHOPS-VIRTIO-0001", "CEPHOPS-DATA-0001")


def role_candidates():
    with open(os.path.join(benchlib.REPO_ROOT, "roles", "max_sectors_kb", "defaults", "main.yml")) as handle:
        return yaml.safe_load(handle)["max_sectors_kb_candidates"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--runtime", type=int, default=5)
    args = parser.parse_args()
    candidates = role_candidates()  # what the role measures by default
    rows = []
    with benchlib.lab_vm() as vm:
        for serial in LAB_DISKS:
            speeds = {}  # KiB measured at -> MiB/s per repeat
            for _repeat in range(args.repeats):
                result = vm.module("seq_read_probe", dict(devices=[vm.path_of(serial)], max_sectors_kb=candidates,
                                                          runtime=args.runtime, repeats=1))["results"][0]
                for entry in result["table"]:
                    speeds.setdefault(entry["max_sectors_kb"], []).append(entry["read_mib_s"] or 0.0)
            medians = dict((value, benchlib.median(found)) for value, found in speeds.items())
            slowest, best = min(medians.values()), max(medians, key=medians.get)
            for value in sorted(medians):
                rows.append((serial, value, "%.0f" % medians[value], "%.2f" % (medians[value] / max(slowest, 0.001)),
                             "fastest" if value == best else ""))
        accel = vm.accel
    benchlib.table("Sequential read MiB/s per max_sectors_kb on lab disks (%s, %d s per value, median of %d)"
                   % (accel, args.runtime, args.repeats),
                   ("disk", "max_sectors_kb", "MiB/s", "x slowest", ""), rows,
                   notes=["QEMU disks are files on the host: the figures show the method and the spread a "
                          "real drive would be measured with, not a drive's behaviour."])


if __name__ == "__main__":
    main()
