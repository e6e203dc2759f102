"""Ceph's own measurement next to the probe's: `ceph tell osd.N bench` against sync_write_probe.

Boots a lab VM on the ceph image (Debian 13, Ceph 18.2), bootstraps a monitor and a manager
with the ceph scenario's script, and makes its disks distinct (TCG alone would rank equal disks
by noise), one of two ways:
- `--zoo throttled`: four zoo disks get distinct write request limits through QEMU;
- `--zoo flush`: three null_blk disks in the guest (lab/flush_cost_disk.sh) complete every
  command, the flush included, after a set time, as a drive that empties a volatile cache does.
Each disk is probed first (4k, QD1, fsync per write, median of the repeats), then gets an OSD
from `ceph-volume lvm create`, as ceph-ansible's ceph-osd role would make it, and is measured by
the OSD's own bench (4 KiB writes, median of the repeats); the mClock capacity each OSD recorded
at start-up is shown where Ceph kept one. Target: both rank the disks the same.

usage: bench/run.sh ceph_osd_bench [--zoo throttled|flush] [--repeats 3] [--runtime 10]
Needs root and QEMU; under TCG about 13 minutes for the flush zoo and 55 for the throttled one
(its 10 w/s disk alone takes half).
"""

import argparse
import json
import os
import time

import benchlib

# zoo disk: (serial, write requests a second QEMU allows, 0 for no limit)
# In this VM the fast disks reach only some 100 sync writes a second (the monitor and manager
# share its two emulated CPUs), so the limits sit well below that.
THROTTLED = {"ssd": ("CEPHOPS-SSD-0001", 0), "virtio": ("CEPHOPS-VIRTIO-0001", 60),
             "hdd": ("CEPHOPS-HDD-0001", 25), "slow": ("CEPHOPS-SLOW-0001", 10)}
# null_blk disk: nanoseconds each command waits. The consumer drive's is the Samsung 980's
# fsync latency in the SSD selection article; the slower one's about an HDD's seek.
FLUSH_COSTS = {"protected": 0, "consumer": 1_735_000, "slower": 8_000_000}
FLUSH_COST_DISK = os.path.join(benchlib.REPO_ROOT, "lab", "flush_cost_disk.sh")
BOOTSTRAP = os.path.join(benchlib.REPO_ROOT, "molecule", "ceph", "bootstrap-mon-mgr.sh")
# Ceph's small-write bench, 400 writes of 4 KiB (1.6 MB over 100 objects of 4 MiB): at the
# slow disk's 10 writes a second that is a minute a run.
OSD_BENCH = ["1638400", "4096", "4194304", "100"]


def ceph(vm, *args):
    return json.loads(vm.run(["ceph", "--cluster", "ceph", *args, "--format", "json"]))


def wait_up(vm, osd, timeout=900):
    """ceph-volume starts the OSD; `ceph tell` reaches it only once the monitor has it up. An OSD
    benches its disk for mClock before it boots, some 3000 writes: five minutes at 10 a second."""
    deadline = time.monotonic() + timeout
    while not any(entry["osd"] == osd and entry["up"] for entry in ceph(vm, "osd", "dump")["osds"]):
        if time.monotonic() > deadline:
            raise SystemExit("osd.%d is not up after %d s" % (osd, timeout))
        time.sleep(5)


def make_disks(vm, zoo):
    """({disk: /dev node}, {disk: what makes it slow}) of the zoo on the VM."""
    if zoo == "flush":
        vm.put([FLUSH_COST_DISK], "/root")
        # LVM takes only the device types it knows; ceph-volume lvm create needs it to take null_blk's.
        vm.run(["sh", "-c", "printf 'devices {\\n types = [ \"nullb\", 16 ]\\n}\\n' >> /etc/lvm/lvmlocal.conf"])
        return (dict((disk, vm.run(["sh", "/root/flush_cost_disk.sh", "create", disk, str(ns)]).strip())
                     for disk, ns in FLUSH_COSTS.items()),
                dict((disk, "%g ms a command" % (ns / 1e6) if ns else "nothing") for disk, ns in FLUSH_COSTS.items()))
    for disk, (_serial, iops) in THROTTLED.items():
        benchlib.labctl(vm.state, "throttle", vm.name, disk, str(iops))
    return (dict((disk, vm.path_of(serial)) for disk, (serial, _iops) in THROTTLED.items()),
            dict((disk, "%d write requests/s" % iops if iops else "nothing") for disk, (_serial, iops) in THROTTLED.items()))


def ranks(values):
    """{key: rank}, 1 for the highest value."""
    return dict((key, rank) for rank, key in enumerate(sorted(values, key=values.get, reverse=True), start=1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--zoo", choices=("throttled", "flush"), default="throttled")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--runtime", type=int, default=10)
    args = parser.parse_args()
    os.environ["CEPHOPS_LAB_VARIANT"] = "ceph"  # labctl's image variant for every call below
    region = dict(region_size_mib=benchlib.lab_gate_variables()["disk_gate_region_size_mib"])
    probe, bench, capacity = {}, {}, {}
    with benchlib.lab_vm() as vm:
        paths, slowed_by = make_disks(vm, args.zoo)
        vm.put([BOOTSTRAP], "/root")
        vm.run(["sh", "/root/bootstrap-mon-mgr.sh", "ceph", "10.0.2.15", "10.0.2.0/24"])
        vm.run(["ceph", "--cluster", "ceph", "config", "set", "osd", "osd_memory_target", "939524096"])
        # ceph-volume authenticates with the bootstrap-osd key, which ceph-osd's role would fetch.
        vm.run(["ceph", "--cluster", "ceph", "auth", "get", "client.bootstrap-osd", "-o",
                "/var/lib/ceph/bootstrap-osd/ceph.keyring"])
        for disk, path in paths.items():
            probe[disk] = benchlib.median([
                vm.module("sync_write_probe", dict(devices=[path], runtime=args.runtime, **benchlib.EASY, **region))
                ["results"][0]["write_iops"] for _repeat in range(args.repeats)])
        for disk, path in paths.items():
            before = set(ceph(vm, "osd", "ls"))
            vm.run(["ceph-volume", "--cluster", "ceph", "lvm", "create", "--bluestore", "--data", path])
            (osd,) = set(ceph(vm, "osd", "ls")) - before
            wait_up(vm, osd)
            bench[disk] = benchlib.median([ceph(vm, "tell", "osd.%d" % osd, "bench", *OSD_BENCH)["iops"]
                                           for _repeat in range(args.repeats)])
            found = [option for option in ceph(vm, "config", "dump")
                     if option["section"] == "osd.%d" % osd and option["name"].startswith("osd_mclock_max_capacity_iops")]
            capacity[disk] = "%.0f (%s)" % (float(found[0]["value"]), found[0]["name"][-3:]) if found else "not recorded"
        accel = vm.accel
    by_probe, by_bench = ranks(probe), ranks(bench)
    rows = [(disk, slowed_by[disk], "%.0f" % probe[disk], "%.0f" % bench[disk],
             "%.2f" % (bench[disk] / probe[disk]), capacity[disk], by_probe[disk], by_bench[disk])
            for disk in sorted(paths, key=by_probe.get)]
    benchlib.table("Ceph's OSD bench and the probe on the same lab disks, %s zoo (Ceph 18.2, %s, median of %d)"
                   % (args.zoo, accel, args.repeats),
                   ("disk", "made slow by", "probe IOPS", "osd bench IOPS", "bench / probe",
                    "mClock capacity", "rank by probe", "rank by bench"),
                   rows, notes=["Same ranking: %s." % ("yes" if by_probe == by_bench else "**no**")])


if __name__ == "__main__":
    main()
