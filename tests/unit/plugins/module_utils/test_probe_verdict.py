"""probe_verdict: verdicts around the thresholds, the adaptive rule, the journal ramp, the
power-loss protection hint and the write cache winner."""

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


# --------------------------------------------------------------------------- hints

def test_plp_hint_from_the_fsync_ratio():
    assert probe_verdict.plp_hint(36600.0, 38000.0)["hint"].endswith("consistent with power-loss protection")
    assert probe_verdict.plp_hint(574.0, 80000.0)["hint"].endswith("likely no power-loss protection")
    assert probe_verdict.plp_hint(574.0, 0) is None


def test_faster_cache_setting():
    assert probe_verdict.faster_cache_setting(574.0, 1830.0) == "off"
