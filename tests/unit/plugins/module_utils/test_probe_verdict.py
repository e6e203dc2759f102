"""probe_verdict: verdicts around the thresholds, the adaptive rule, the journal ramp, the
power-loss protection verdict and the write cache winner."""

import pytest

from ansible_collections.cephops.osd_tuning.plugins.module_utils import fio_job, probe_verdict

THRESHOLDS = dict(probe_verdict.DEFAULT_THRESHOLDS)


def measurement(iops, p99_sync_us=None, p99_clat_us=50.0):
    sync = None if p99_sync_us is None else {"mean": p99_sync_us / 2, "p50": p99_sync_us / 2,
                                             "p99": p99_sync_us, "p99_9": p99_sync_us * 2}
    return {"write_iops": iops, "write_bw_bytes": int(iops * 4096), "total_ios": int(iops * 15),
            "runtime_ms": 15000, "job_errors": [],
            "latency_us": {"completion": {"mean": 20.0, "p50": 18.0, "p99": p99_clat_us, "p99_9": 90.0},
                           "sync": sync}}


# --------------------------------------------------------------------------- verdicts

@pytest.mark.parametrize("iops,p99_us,expected", [
    (36600.0, 28.0, "suitable"),       # Kioxia CD6, the SSD selection article
    (8713.0, 265.0, "suitable"),       # Intel DC S3500, the SSD selection article
    (5000.0, 1000.0, "suitable"),      # exactly at both limits
    (4999.9, 1000.0, "marginal"),
    (5000.0, 1001.0, "marginal"),
    (1000.0, 5000.0, "marginal"),      # exactly at the marginal limits
    (999.9, 500.0, "unsuitable"),
    (20000.0, 5001.0, "unsuitable"),
    (574.0, 2638.0, "unsuitable"),     # Samsung 980, the SSD selection article
])
def test_verdict_at_and_around_the_default_thresholds(iops, p99_us, expected):
    assert probe_verdict.verdict(measurement(iops, p99_us), THRESHOLDS)[0] == expected


def test_reasons_name_the_figures_and_limits():
    verdict, reasons = probe_verdict.verdict(measurement(574.0, 2638.0), THRESHOLDS)
    assert reasons == ["write IOPS 574 < 5000 (below the marginal floor 1000)",
                       "p99 sync latency 2.638 ms > 1 ms (marginal up to 5 ms)"]


def test_dd_measurement_is_judged_on_iops_only():
    m = fio_job.dd_outcome(0, "40960 bytes (41 kB) copied, 0.001 s, 41 MB/s")["measurement"]
    verdict, reasons = probe_verdict.verdict(m, THRESHOLDS)
    assert verdict == "suitable" and reasons[-1] == "p99 sync latency not measured by this method"


def test_marginal_band_above_the_suitable_one_is_refused():
    with pytest.raises(ValueError):
        probe_verdict.check_thresholds(dict(THRESHOLDS, marginal_min_iops=6000))
    with pytest.raises(ValueError):
        probe_verdict.check_thresholds(dict(THRESHOLDS, marginal_max_p99_sync_latency_ms=0.5))


# --------------------------------------------------------------------------- adaptive rule

@pytest.mark.parametrize("iops,p99_us,clear", [
    (20000.0, 100.0, True),    # far above every IOPS limit, far below every latency limit
    (400.0, 20000.0, True),    # far below everything
    (7600.0, 100.0, True),     # 5000 * 1.5 = 7500 < 7600
    (7400.0, 100.0, False),    # within the margin of min_iops
    (3500.0, 100.0, False),    # 5000 / 1.5 < 3500: within the margin of min_iops
    (2000.0, 100.0, True),     # 1000 * 1.5 < 2000 < 5000 / 1.5: clearly marginal
    (20000.0, 800.0, False),   # p99 within the margin of the latency limit
    (20000.0, None, False),    # latency limits set but no percentile measured
])
def test_clear_only_outside_the_margin_of_every_limit(iops, p99_us, clear):
    m = measurement(iops, p99_us, p99_clat_us=None if p99_us is None else 50.0)
    assert probe_verdict.is_clear(m, THRESHOLDS, 1.5) is clear


def test_early_decision_needs_two_clear_stages_that_agree():
    clear = measurement(20000.0, 100.0)
    assert probe_verdict.decided_early([clear], THRESHOLDS, 1.5) is False
    # Far apart but both clearly suitable: decided, a busy host's noise does not move the verdict.
    assert probe_verdict.decided_early([measurement(8000.0, 100.0), clear], THRESHOLDS, 1.5) is True
    # The earlier stage within the margin of min_iops (5000 * 1.5 = 7500): not yet.
    assert probe_verdict.decided_early([measurement(7000.0, 100.0), clear], THRESHOLDS, 1.5) is False
    assert probe_verdict.decided_early([clear, measurement(7000.0, 100.0)], THRESHOLDS, 1.5) is False
    # Both clear, but one suitable and one marginal: no agreement, no early verdict.
    assert probe_verdict.decided_early([measurement(2000.0, 100.0), clear], THRESHOLDS, 1.5) is False


def test_a_disk_clearly_short_of_one_marginal_limit_is_decided_whatever_the_other():
    # 40 IOPS is far below the marginal floor (1000 / 1.5); its p99 sits within the margin of
    # the latency limit, which alone would keep is_clear false: unsuitable either way.
    slow = measurement(40.0, 900.0)
    assert probe_verdict.is_clear(slow, THRESHOLDS, 1.5) is False
    assert probe_verdict.decided_early([slow, measurement(45.0, 1100.0)], THRESHOLDS, 1.5) is True
    assert probe_verdict.verdict(slow, THRESHOLDS)[0] == "unsuitable"
    # Fast, but p99 far above the marginal latency limit (5 ms * 1.5) in both stages.
    assert probe_verdict.decided_early([measurement(9000.0, 9000.0), measurement(9500.0, 8000.0)], THRESHOLDS, 1.5)
    # Only one of the two stages clearly short: not yet.
    assert probe_verdict.decided_early([measurement(900.0, 100.0), slow], THRESHOLDS, 1.5) is False


# --------------------------------------------------------------------------- journal ramp

def steps(*iops):
    return [{"numjobs": 2 ** i, "write_iops": value} for i, value in enumerate(iops)]


def test_ramp_doubles_until_the_gain_falls_under_min_gain():
    # The journal test article's example: 5854, 10924, ... then 17124 at the step where it maxes out.
    assert probe_verdict.next_numjobs([], 0.1, 16) == 1
    assert probe_verdict.next_numjobs(steps(5854), 0.1, 16) == 2
    assert probe_verdict.next_numjobs(steps(5854, 10924), 0.1, 16) == 4
    assert probe_verdict.next_numjobs(steps(5854, 10924, 17124, 17500), 0.1, 16) is None
    assert probe_verdict.saturated_at(steps(5854, 10924, 17124, 17500), 0.1) == 4
    assert probe_verdict.saturated_at(steps(5854, 10924), 0.1) is None


def test_ramp_stops_at_the_cap():
    assert probe_verdict.next_numjobs(steps(100, 200, 400), 0.1, 4) is None


# --------------------------------------------------------------------------- power-loss protection

def run(iops):
    """A measurement as fio_job gives it, as far as the verdict reads it: IOPS at queue depth 1."""
    return {"write_iops": iops, "latency_us": None}


ON = {"tool": "nvme", "present": True, "enabled": True, "volatile": True, "kernel_view": "write back"}
SATA_ON = {"tool": "hdparm", "enabled": True, "volatile": True, "kernel_view": "write back"}
# The SSD selection article's fio runs (4k random writes, queue depth 1, fsync after each) and
# the same write without fsync, whose rate is the inverse of its submission plus completion
# latency in those runs (Samsung 980 4.7 + 16.4 us, Kioxia CD6 5.8 + 17.7, Intel DC S3500
# 5.7 + 49.9): the article ran no job without fsync. These go through the verdict of a run
# without fsync (plp_verdict, mode journal's); the probe's own fsync latency (plp_from_fsync)
# gives the same rule the same times below.
SAMSUNG_980 = (run(574.0), run(47000.0))
KIOXIA_CD6 = (run(36600.0), run(42500.0))
INTEL_DC_S3500 = (run(8713.0), run(18000.0))


def test_plp_verdicts_of_the_article_s_drives():
    consumer = probe_verdict.plp_verdict(*SAMSUNG_980, cache=ON)
    assert (consumer["verdict"], consumer["flush_cost_ms"], consumer["ratio"]) == ("unlikely", 1.721, 0.012)
    assert (consumer["flush_cost_source"], consumer["plain_write_ms"]) == ("run_without_fsync", 0.021)
    assert consumer["reasons"] == [
        "a durable write takes 1.742 ms (574 IOPS), one without fsync 0.021 ms (47000 IOPS): fsync costs 1.721 ms",
        "a flush of 0.5 ms or more empties a volatile cache to flash"]
    enterprise = probe_verdict.plp_verdict(*KIOXIA_CD6, cache=ON)
    assert (enterprise["verdict"], enterprise["flush_cost_ms"]) == ("likely", 0.004)
    # The S3500's sync latency less its completion latency in the article: 108.5 - 49.9 us.
    sata = probe_verdict.plp_verdict(*INTEL_DC_S3500, cache=SATA_ON)
    assert (sata["verdict"], sata["flush_cost_ms"]) == ("likely", 0.059)


def test_a_cheap_fsync_on_a_slow_disk_is_no_evidence():
    # 300 IOPS with fsync, 320 without: the ratio alone (0.94) looked like power-loss protection.
    found = probe_verdict.plp_verdict(run(300.0), run(320.0), SATA_ON)
    assert (found["verdict"], found["flush_cost_ms"], found["ratio"]) == ("unknown", 0.208, 0.938)
    assert "every write is slow" in found["reasons"][-1]


def test_a_flush_cost_between_the_bounds_is_unknown():
    found = probe_verdict.plp_verdict(run(2500.0), run(20000.0), SATA_ON)
    assert (found["verdict"], found["flush_cost_ms"]) == ("unknown", 0.35)


def test_an_nvme_drive_without_a_volatile_cache():
    no_vwc = {"tool": "nvme", "present": False, "enabled": False, "volatile": False, "kernel_view": "write through"}
    fast = probe_verdict.plp_verdict(*KIOXIA_CD6, cache=no_vwc)
    assert fast["verdict"] == "likely" and fast["reasons"][0] == (
        "the drive reports no volatile write cache (NVMe vwc 0): acknowledged writes are durable by design")
    slow = probe_verdict.plp_verdict(run(450.0), run(460.0), no_vwc)
    assert slow["verdict"] == "unknown" and slow["reasons"][-1].startswith("durable writes take more than 0.5 ms")
    # A volatile cache switched off is no drive without one: the figures then say nothing.
    off = probe_verdict.plp_verdict(*KIOXIA_CD6, cache=dict(ON, enabled=False, volatile=False))
    assert off["verdict"] == "unknown" and off["reasons"][0].startswith("the write cache is off (nvme)")


def test_a_cache_that_is_off_or_never_flushed_hides_the_flush_cost():
    off = probe_verdict.plp_verdict(*KIOXIA_CD6, cache=dict(SATA_ON, enabled=False, volatile=False,
                                                            kernel_view="write through"))
    assert off["verdict"] == "unknown" and off["reasons"][0].startswith("the write cache is off (hdparm)")
    unflushed = probe_verdict.plp_verdict(*KIOXIA_CD6, cache=dict(SATA_ON, kernel_view="write through"))
    assert unflushed["verdict"] == "unknown" and "sends no flush" in unflushed["reasons"][0]
    loop = {"tool": "sysfs", "enabled": False, "volatile": False, "kernel_view": "write through"}
    assert probe_verdict.plp_verdict(*SAMSUNG_980, cache=loop)["reasons"][0].startswith(
        "the write cache is off (queue/write_cache write through)")


def test_the_figures_decide_alone_when_the_cache_cannot_be_read():
    unread = dict(SATA_ON, enabled=None, volatile=None)
    found = probe_verdict.plp_verdict(*SAMSUNG_980, cache=unread)
    assert found["verdict"] == "unlikely" and found["reasons"][0].startswith("the write cache state could not be read")
    assert probe_verdict.plp_verdict(*SAMSUNG_980, cache=None)["verdict"] == "unlikely"


def test_without_iops_nothing_is_concluded():
    found = probe_verdict.plp_verdict(run(0.0), SAMSUNG_980[1], ON)
    assert (found["verdict"], found["flush_cost_ms"]) == ("unknown", None)


def fsynced(iops, completion_us, sync_us, writes=15000, syncs=None):
    """A probe's measurement as fio_job gives it, as far as the fsync figures go: IOPS at queue
    depth 1 and the mean write completion and fsync latency, with one fsync per write."""
    return {"write_iops": iops, "total_ios": writes, "sync_ios": writes if syncs is None else syncs,
            "latency_us": {"completion": {"mean": completion_us, "p50": None, "p99": None, "p99_9": None},
                           "sync": {"mean": sync_us, "p50": None, "p99": None, "p99_9": None}}}


# The SSD selection article's runs as fio 3.33 under libaio reported them: 8713 IOPS, 49.9 us
# completion and 108.5 us fsync latency (Intel DC S3500); 574 IOPS, 16.4 us and 1735 us (Samsung 980).
INTEL_DC_S3500_RUN = fsynced(8713.0, 49.9, 108.5)
SAMSUNG_980_RUN = fsynced(574.0, 16.4, 1735.0)


def test_the_probe_s_own_fsync_latency_gives_the_articles_flush_costs_without_another_run():
    # 49.9 + 108.5 us exceed the 115 us a durable write takes: the fsync latency holds the write.
    sata = probe_verdict.plp_from_fsync(INTEL_DC_S3500_RUN, SATA_ON)
    assert (sata["verdict"], sata["flush_cost_ms"], sata["plain_write_ms"]) == ("likely", 0.059, 0.056)
    assert (sata["flush_cost_source"], sata["unsynced_iops"], sata["ratio"]) == ("fsync_latency", None, None)
    assert sata["reasons"] == [
        "a durable write takes 0.115 ms (8713 IOPS), the write itself 0.056 ms: fsync costs 0.059 ms (the mean fsync "
        "latency fio reported, 0.108 ms, less the write's completion, 0.05 ms, which fio timed with it)",
        "flushes acknowledged within 0.25 ms and fast durable writes: a protected cache"]
    consumer = probe_verdict.plp_from_fsync(SAMSUNG_980_RUN, ON)
    assert (consumer["verdict"], consumer["flush_cost_ms"]) == ("unlikely", 1.719)
    # The same figures as a run without fsync whose write is the article's submission plus
    # completion (test_plp_verdicts_of_the_article_s_drives): one rule, the same flush cost.
    assert probe_verdict.plp_verdict(*INTEL_DC_S3500, cache=SATA_ON)["flush_cost_ms"] == sata["flush_cost_ms"]


def test_an_fsync_timed_on_its_own_is_the_flush_cost_as_fio_reported_it():
    # As psync and io_uring time it: write and fsync add up to less than a durable write.
    found = probe_verdict.plp_from_fsync(fsynced(317.0, 490.5, 2654.8), SATA_ON)
    assert (found["verdict"], found["flush_cost_ms"], found["plain_write_ms"]) == ("unlikely", 2.655, 0.5)
    assert found["reasons"][0] == ("a durable write takes 3.155 ms (317 IOPS), the write itself 0.5 ms: fsync costs "
                                   "2.655 ms (the mean fsync latency fio reported)")


def test_the_flush_cost_of_a_captured_loop_disk_run(fixture_text):
    found, _version = fio_job.fio_outcome(0, fixture_text("fio/randwrite_fsync_loop.json"), "", ["loop2"], 2)
    measured = found["loop2"]["measurement"]
    cost, counted = probe_verdict.fsync_cost_ms(measured)
    assert (round(cost, 3), round(counted, 3)) == (0.339, 0.043)  # 382.482 - 43.234 us, fio's own figures
    assert probe_verdict.plp_from_fsync(measured, None)["flush_cost_ms"] == 0.339


def test_a_probe_without_one_fsync_per_write_has_no_flush_cost_of_its_own(fixture_text):
    found, _version = fio_job.fio_outcome(0, fixture_text("fio/journal_sync_numjobs1.json"), "", ["loop2"], 2)
    assert probe_verdict.plp_from_fsync(found["loop2"]["measurement"], ON) is None  # O_DSYNC: no sync latency
    dd = fio_job.dd_outcome(0, "40960 bytes (41 kB) copied, 0.001 s, 41 MB/s")["measurement"]
    assert probe_verdict.plp_from_fsync(dd, ON) is None
    every_fourth = fsynced(2000.0, 40.0, 300.0, writes=20000, syncs=5000)  # fsync=4
    assert probe_verdict.fsync_cost_ms(every_fourth) is None
    # A run stopped between a write and its fsync still has one fsync per write.
    assert probe_verdict.fsync_cost_ms(fsynced(2000.0, 40.0, 300.0, writes=20000, syncs=19999)) is not None


def test_a_verdict_without_a_flush_cost_carries_every_field():
    assert probe_verdict.plp_unknown("why") == {
        "verdict": "unknown", "reasons": ["why"], "flush_cost_source": None, "flush_cost_ms": None,
        "plain_write_ms": None, "unsynced_iops": None, "ratio": None}


def test_faster_cache_setting():
    assert probe_verdict.faster_cache_setting(574.0, 1830.0) == "off"
