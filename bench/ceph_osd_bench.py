"""Ceph's own measurement next to the probe's, and the mClock capacity seeded from the probe.

Boots a lab VM on the ceph image (Debian 13, Ceph 18.2), bootstraps a monitor and a manager
with the ceph scenario's script, and makes its disks distinct (TCG alone would rank equal disks
by noise), one of two ways:
- `--zoo throttled`: four zoo disks get distinct write request limits through QEMU;
- `--zoo flush`: three null_blk disks in the guest (lab/flush_cost_disk.sh) complete every
  command, the flush included, after a set time, as a drive that empties a volatile cache does.
Each disk is probed first (4k, QD1, fsync per write, and the deep-queue run in the shape of the
OSD's start-up bench; medians of the repeats), then gets an OSD from `ceph-volume lvm create`,
as ceph-ansible's ceph-osd role would make it, and is measured by the OSD's own bench (median
of the repeats): the small-write bench (400 writes of 4 KiB) and the start-up bench's shape
(12,288,000 bytes of 4 KiB). The mClock capacity each OSD recorded at start-up is shown where
Ceph kept one; then mclock_capacity seeds every OSD from its disk's deep-queue figure (clamped
to the cluster's bounds), which is read back with `ceph config get`, and its undo, after which
the OSD's own value is read back again. Targets: the probe and the bench rank the disks the
same; unlike disks get different seeds; the undo leaves each OSD's own value.

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
# The shape of the bench an OSD runs at start-up for mClock: 12,288,000 bytes of 4 KiB writes.
STARTUP_BENCH = ["12288000", "4096", "4194304", "100"]


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
    probe, deep, bench, startup, capacity, seeded, undone = {}, {}, {}, {}, {}, {}, {}
    osds, identity = {}, {}
    with benchlib.lab_vm() as vm:
        paths, slowed_by = make_disks(vm, args.zoo)
        vm.put([BOOTSTRAP], "/root")
        vm.run(["sh", "/root/bootstrap-mon-mgr.sh", "ceph", "10.0.2.15", "10.0.2.0/24"])
        vm.run(["ceph", "--cluster", "ceph", "config", "set", "osd", "osd_memory_target", "939524096"])
        # ceph-volume authenticates with the bootstrap-osd key, which ceph-osd's role would fetch.
        vm.run(["ceph", "--cluster", "ceph", "auth", "get", "client.bootstrap-osd", "-o",
                "/var/lib/ceph/bootstrap-osd/ceph.keyring"])
        for disk, path in paths.items():
            results = [vm.module("sync_write_probe", dict(devices=[path], runtime=args.runtime, **benchlib.EASY, **region))
                       ["results"][0] for _repeat in range(args.repeats)]
            probe[disk] = benchlib.median([r["write_iops"] for r in results])
            deep[disk] = benchlib.median([r["deep_queue"]["write_iops"] for r in results])
            identity[disk] = dict((key, results[0][key]) for key in ("name", "wwn", "serial", "model"))
        for disk, path in paths.items():
            before = set(ceph(vm, "osd", "ls"))
            vm.run(["ceph-volume", "--cluster", "ceph", "lvm", "create", "--bluestore", "--data", path])
            (osd,) = set(ceph(vm, "osd", "ls")) - before
            wait_up(vm, osd)
            osds[disk] = osd
            bench[disk] = benchlib.median([ceph(vm, "tell", "osd.%d" % osd, "bench", *OSD_BENCH)["iops"]
                                           for _repeat in range(args.repeats)])
            startup[disk] = benchlib.median([ceph(vm, "tell", "osd.%d" % osd, "bench", *STARTUP_BENCH)["iops"]
                                             for _repeat in range(args.repeats)])
            capacity[disk] = own_capacity(vm, osd)
        seeds = [dict(identity[disk], iops=deep[disk], why="its deep-queue IOPS") for disk in paths]
        result = vm.module("mclock_capacity", dict(seeds=seeds, ceph=["ceph", "--cluster", "ceph"]))
        assert not result.get("failed"), result
        for entry in result["osds"]:
            disk = [d for d, osd in osds.items() if osd == entry["osd"]][0]
            clamped = [note for note in entry["notes"] if "clamped" in note]
            seeded[disk] = own_capacity(vm, entry["osd"]) + (", clamped: " + clamped[0] if clamped else "")
        assert not vm.module("mclock_capacity", dict(state="absent", ceph=["ceph", "--cluster", "ceph"])).get("failed")
        for disk, osd in osds.items():
            undone[disk] = own_capacity(vm, osd)
        accel = vm.accel
    by_probe, by_bench = ranks(probe), ranks(bench)
    rows = [(disk, slowed_by[disk], "%.0f" % probe[disk], "%.0f" % deep[disk], "%.0f" % bench[disk],
             "%.0f" % startup[disk], "%.2f" % (startup[disk] / deep[disk]), capacity[disk], seeded[disk], undone[disk],
             by_probe[disk], by_bench[disk])
            for disk in sorted(paths, key=by_probe.get)]
    distinct = len(set(seeded.values())) == len(seeded)
    benchlib.table("Ceph's OSD bench, the probe and the seeded mClock capacity on the same lab disks, %s zoo "
                   "(Ceph 18.2, %s, median of %d)" % (args.zoo, accel, args.repeats),
                   ("disk", "made slow by", "probe QD1 IOPS", "deep-queue IOPS", "osd bench IOPS (400 x 4 KiB)",
                    "osd bench IOPS (12 MB x 4 KiB)", "12 MB bench / deep queue", "mClock capacity the OSD set",
                    "seeded", "after the undo", "rank by probe", "rank by bench"),
                   rows, notes=["Same ranking: %s. Unlike disks, different seeds: %s. The undo left each OSD's own "
                                "value: %s." % ("yes" if by_probe == by_bench else "**no**",
                                                "yes" if distinct else "**no**",
                                                "yes" if undone == capacity else "**no**")])


def own_capacity(vm, osd):
    """The mClock capacity the configuration database holds for osd.N, with its option's class."""
    found = [option for option in ceph(vm, "config", "dump")
             if option["section"] == "osd.%d" % osd and option["name"].startswith("osd_mclock_max_capacity_iops")]
    return "%.0f (%s)" % (float(found[0]["value"]), found[0]["name"][-3:]) if found else "not recorded"


if __name__ == "__main__":
    main()
