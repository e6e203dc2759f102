"""The power-loss protection verdict on disks whose flush has a known cost.

null_blk, the kernel's null block device, is loaded in the lab guest for these tests, with two
memory-backed disks made through its configfs interface (lab/flush_cost_disk.sh). Each has a
volatile write cache, so the kernel sends a flush after every fsync'd write, and no QEMU device
under it: what a flush costs is what null_blk is told, plus the guest kernel's own path.

- `protected` completes every command at once: a flush costs next to nothing, as on a drive
  that acknowledges it from a cache protected against power loss (the SSD selection
  article's Kioxia CD6).
- `consumer` completes every command, the flush included, after 1.735 ms (`completion_nsec`),
  the fsync latency of the article's Samsung 980, a drive without power-loss protection.
  Unlike the 980's, its plain writes wait as long; the verdict weighs what fsync adds to a
  write, which that leaves as it is.
- `consumer` again with the kernel told its cache is write-through: fsync sends no flush, so
  the figures must not pass for power-loss protection.

The verdicts asserted are the ones a reader of the article expects: the power-loss protection
verdict with the collection's default limits, and the gate's (`suitable` for the protected disk,
as for the Kioxia CD6 and the Intel DC S3500; `unsuitable` for the consumer one, as for the
Samsung 980 at 574 IOPS) with the default limits as they read in this lab. Every durable write
in the emulated guest also costs the guest's own path through its kernel and null_blk, a few
tenths of a millisecond that a real host does not pay and that grows with the load on the
machine. The protected disk, whose commands cost nothing, measures that path alone; each limit
gets it added (an IOPS limit becomes the IOPS of a write that takes the limit's time plus the
path, a latency limit the path's p99 more), so that the limits judge what the disk costs.
"""

from pathlib import Path

import pytest

from test_site_defaults import MEASURED, probe_one

testinfra_hosts = ["ansible://osds"]
pytestmark = [pytest.mark.drives, pytest.mark.load_sensitive]

# Makes and removes the disks in the guest; the OSD bench uses it too.
FLUSH_COST_DISK = Path(__file__).resolve().parents[3] / "lab" / "flush_cost_disk.sh"
# The article's Samsung 980: mean fsync latency under the sync-write probe.
CONSUMER_FLUSH_NS = 1_735_000
# The flush cost comes from the probe's own fsync latency: no run without fsync to size.
PROBE = {"runtime": 5, "region_offset_mib": 8, "region_size_mib": 32}
# The gate's default limits (roles/disk_gate/defaults/main.yml), for drives on real hosts.
DEFAULT_LIMITS = {"min_iops": 5000, "marginal_min_iops": 1000,
                  "max_p99_sync_latency_ms": 1.0, "marginal_max_p99_sync_latency_ms": 5.0}


def flush_cost_disk(host, *args):
    result = host.ansible("ansible.builtin.script", " ".join([str(FLUSH_COST_DISK), *args]), check=False, become=True)
    assert result.get("rc") == 0, result
    return result["stdout"].strip()


@pytest.fixture(scope="module")
def emulated(host):
    """{"protected": /dev node, "consumer": /dev node}; null_blk is unloaded after the tests."""
    assert not host.file("/sys/module/null_blk").exists, "null_blk is loaded already: these tests would not own it"
    disks = {}
    try:
        for name, nanoseconds in (("protected", 0), ("consumer", CONSUMER_FLUSH_NS)):
            disks[name] = flush_cost_disk(host, "create", name, str(nanoseconds))
        yield disks
    finally:
        for name in disks:
            flush_cost_disk(host, "remove", name)


@pytest.fixture(scope="module")
def lab_limits(host, emulated):
    """DEFAULT_LIMITS with the guest's own path per durable write added (see the docstring)."""
    path = probe_one(host, emulated["protected"], **PROBE)
    assert path["verdict"] in MEASURED, path
    mean_ms, p99_ms = 1000.0 / path["write_iops"], path["p99_sync_latency_ms"]
    limits = {"min_iops": int(1000.0 / (1000.0 / DEFAULT_LIMITS["min_iops"] + mean_ms)),
              "marginal_min_iops": int(1000.0 / (1000.0 / DEFAULT_LIMITS["marginal_min_iops"] + mean_ms)),
              "max_p99_sync_latency_ms": round(DEFAULT_LIMITS["max_p99_sync_latency_ms"] + p99_ms, 3),
              "marginal_max_p99_sync_latency_ms": round(DEFAULT_LIMITS["marginal_max_p99_sync_latency_ms"] + p99_ms, 3)}
    print("the guest's path: %.3f ms a durable write (p99 %.3f ms); limits here: %s" % (mean_ms, p99_ms, limits))
    return limits


def probe(host, disk, **limits):
    outcome = probe_one(host, disk, **dict(PROBE, **limits))
    assert outcome["verdict"] in MEASURED, outcome
    assert outcome["zeroed"] is True, outcome
    return outcome


def probe_until(host, disk, shows, tries=3, **limits):
    """A probe of ``disk``, repeated (``tries`` in all at most) until ``shows(result)``: the
    load on the machine only ever adds to the guest's path, and a busy moment (the suite's
    other stages run beside the lab) can add tenths of a millisecond to one probe's flush.
    The last result, for the assertions to show."""
    for _attempt in range(tries):
        result = probe(host, disk, **limits)
        if shows(result):
            break
    return result


def consumer_figures_hold(result):
    plp = result["plp"]
    return (plp["verdict"] == "unlikely" and result["verdict"] == "unsuitable"
            and CONSUMER_FLUSH_NS / 1e6 <= plp["flush_cost_ms"] < 1.6 * plp["plain_write_ms"])


def bands_verdict(result):
    """The verdict the module's documented bands give these figures (probe_verdict.py, set for
    real drives): a flush of 0.5 ms or more empties a volatile cache to flash; one of up to
    0.25 ms, with durable writes of up to 0.5 ms, is a protected cache; else unknown."""
    cost, durable_ms = result["plp"]["flush_cost_ms"], 1000.0 / result["write_iops"]
    if cost >= 0.5:
        return "unlikely"
    return "likely" if cost <= 0.25 and durable_ms <= 0.5 else "unknown"


def test_a_flush_that_costs_nothing_is_judged_by_its_cost_and_told_from_a_flush_to_flash(host, emulated, lab_limits):
    """The protected disk's flush costs the guest's own path alone. With the emulated CPU to
    itself that is under the 0.25 ms a protected cache may take, and the verdict `likely`;
    beside the suite's other stages and lab VMs the path alone measured 0.27-0.50 ms, and for
    such figures `unknown` (or `unlikely`) is the bands' right answer. What holds under any
    load: the verdict is the one the bands give the measured figures, and the module finds the
    consumer drive's flush delay on top of the same path."""
    protected = probe_until(host, emulated["protected"],
                            lambda found: found["plp"]["verdict"] == "likely" and found["verdict"] == "suitable",
                            **lab_limits)
    consumer = probe(host, emulated["consumer"], **lab_limits)
    plp = protected["plp"]
    assert protected["write_cache"]["enabled"] is True, protected["write_cache"]
    assert plp["verdict"] == bands_verdict(protected), plp
    found_delay_ms = consumer["plp"]["flush_cost_ms"] - plp["flush_cost_ms"]
    assert found_delay_ms >= 0.5 * CONSUMER_FLUSH_NS / 1e6, (plp, consumer["plp"])
    assert protected["verdict"] == "suitable", protected["reasons"]


def test_a_flush_of_the_consumer_drives_cost_is_unlikely_power_loss_protection(host, emulated, lab_limits):
    result = probe_until(host, emulated["consumer"], consumer_figures_hold, **lab_limits)
    plp = result["plp"]
    assert result["write_cache"]["enabled"] is True, result["write_cache"]
    assert plp["verdict"] == "unlikely", plp
    assert result["verdict"] == "unsuitable", result["reasons"]
    # A flush waits null_blk's delay once, as a plain write does: fsync adds about one plain
    # write (counting the write in twice, as fio's sync latency under libaio does, adds two:
    # the module takes the write's completion off that figure).
    assert plp["flush_cost_source"] == "fsync_latency", plp
    assert CONSUMER_FLUSH_NS / 1e6 <= plp["flush_cost_ms"] < 1.6 * plp["plain_write_ms"], plp


def test_a_flush_the_kernel_never_sends_says_nothing(host, emulated):
    view = f"/sys/block/{emulated['consumer'][5:]}/queue/write_cache"
    host.check_output(f"echo 'write through' > {view}")
    try:
        result = probe(host, emulated["consumer"])
    finally:
        host.check_output(f"echo 'write back' > {view}")
    plp = result["plp"]
    assert result["write_cache"]["kernel_view"] == "write through", result["write_cache"]
    assert plp["verdict"] == "unknown", plp
    assert plp["reasons"][0].startswith("the write cache is off (queue/write_cache write through)"), plp
