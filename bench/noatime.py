"""What access time updates cost: many small files read repeatedly, per atime mode.

Creates a sparse loop disk with a filesystem, mounts it in a private mount namespace (the
host never sees it), writes FILES small files, then for each mount mode (strictatime,
relatime, noatime) and each of RUNS rounds: remounts, re-touches the files' mtime so relatime
has something to update (as after a write to an object), reads every file PASSES times and
syncs the filesystem. Prints, per mode, the median wall time of that read phase (also
relative to noatime) and the median bytes the kernel wrote to the disk during it.

--device measures on a blank block device instead (mkfs on it; wiped again afterwards);
--lab boots a lab VM and runs this script there on its spare filesystem disk.

Needs root, losetup, mkfs.xfs / mkfs.ext4, unshare. Not a test: numbers depend on the host.

usage: bench/run.sh noatime [--fs xfs|ext4] [--files 5000] [--passes 5] [--runs 7]
                            [--device /dev/BLANK | --lab]
"""

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import benchlib

LAB_FS_DISK = "/dev/disk/by-id/virtio-CEPHOPS-FS-0001"

MODES = ("strictatime", "relatime", "noatime")
NS_FLAG = "CEPHOPS_BENCH_IN_NS"


def run(argv):
    return subprocess.run(argv, check=True, capture_output=True, text=True, env=dict(os.environ, LC_ALL="C")).stdout


def sectors_written(device):
    with open("/sys/block/%s/stat" % os.path.basename(device)) as handle:
        return int(handle.read().split()[6])


def read_all(paths):
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.read(fd, 8192)
        finally:
            os.close(fd)


def one_run(device, mnt, mode, paths, passes):
    run(["mount", "-o", "remount," + mode, mnt])
    now = time.time()
    for path in paths:
        os.utime(path, (now - 60, now))  # atime older than mtime: relatime updates it once
    fd = os.open(mnt, os.O_RDONLY)
    try:
        os.sync()
        before = sectors_written(device)
        start = time.perf_counter()
        read_all(paths * passes)
        os.fsync(fd)  # syncfs of the mount: the dirty inodes reach the disk
        os.sync()
        elapsed = time.perf_counter() - start
    finally:
        os.close(fd)
    return elapsed, (sectors_written(device) - before) * 512


@contextlib.contextmanager
def scratch_disk(args, work):
    """The block device to format: the blank one named, or a sparse loop disk."""
    if args.device:
        device = os.path.realpath(args.device)
        if run(["wipefs", "--no-act", "--noheadings", device]).strip():
            sys.exit("%s is not blank (wipefs finds signatures): refusing to format it" % args.device)
        try:
            yield device
        finally:
            # Zeros, not wipefs: wipefs leaves the filesystem behind its magic, which the
            # collection's content checks rightly call data.
            run(["blkdiscard", "--zeroout", device])
        return
    image = os.path.join(work, "disk.img")
    with open(image, "wb") as handle:
        handle.truncate(4 * 1024 ** 3)
    loop = run(["losetup", "--find", "--show", image]).strip()
    try:
        yield loop
    finally:
        run(["losetup", "--detach", loop])


def bench(args):
    work = tempfile.mkdtemp(prefix="noatime-bench.")
    mnt = os.path.join(work, "mnt")
    os.mkdir(mnt)
    with scratch_disk(args, work) as device:
        run(["mkfs.xfs", "-q", "-f", "-i", "size=2048", device] if args.fs == "xfs" else ["mkfs.ext4", "-q", "-F", device])
        run(["mount", device, mnt])
        try:
            paths = []
            for index in range(args.files):
                directory = os.path.join(mnt, "d%03d" % (index // 500))
                os.makedirs(directory, exist_ok=True)
                path = os.path.join(directory, "f%05d" % index)
                with open(path, "wb") as handle:
                    handle.write(os.urandom(4096))
                paths.append(path)
            os.sync()
            results = dict((mode, []) for mode in MODES)
            for round_no in range(args.runs):
                # Rotate the order each round so drift on a shared host hits every mode alike.
                for mode in MODES[round_no % 3:] + MODES[:round_no % 3]:
                    results[mode].append(one_run(device, mnt, mode, paths, args.passes))
        finally:
            run(["umount", mnt])
    shutil.rmtree(work)
    return results


def report(args, results):
    base_time = statistics.median(sample[0] for sample in results["noatime"])
    rows = []
    for mode in MODES:
        elapsed = statistics.median(sample[0] for sample in results[mode])
        written = statistics.median(sample[1] for sample in results[mode])
        rows.append((mode, "%.1f" % (elapsed * 1000), "%.2f" % (elapsed / base_time), "%.0f" % (written / 1024.0)))
    where = args.device or "a sparse loop disk"
    benchlib.table("noatime: %s on %s, %d files of 4 KiB read %d times, then syncfs; median of %d runs"
                   % (args.fs, where, args.files, args.passes, args.runs),
                   ("mode", "time (ms)", "x noatime", "written (KiB)"), rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--fs", choices=("xfs", "ext4"), default="xfs")
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--device", help="a blank block device to format and measure on")
    parser.add_argument("--lab", action="store_true", help="run on a lab VM's spare filesystem disk")
    args = parser.parse_args()
    if args.lab:
        with benchlib.lab_vm() as vm:
            here = os.path.dirname(os.path.abspath(__file__))
            vm.put([__file__, os.path.join(here, "benchlib.py"), benchlib.loopdisk.__file__, benchlib.modulerun.__file__],
                   "/root/cephops-bench")
            print(vm.run(["python3", "/root/cephops-bench/noatime.py", "--device", LAB_FS_DISK, "--fs", args.fs,
                          "--files", str(args.files), "--passes", str(args.passes), "--runs", str(args.runs)]))
        return
    if os.geteuid() != 0:
        sys.exit("needs root (loop devices and mounts)")
    if os.environ.get(NS_FLAG) != "1":
        env = dict(os.environ, **{NS_FLAG: "1"})
        sys.exit(subprocess.call(["unshare", "--mount", "--propagation", "private",
                                  sys.executable, os.path.abspath(__file__)] + sys.argv[1:], env=env))
    report(args, bench(args))


if __name__ == "__main__":
    main()
