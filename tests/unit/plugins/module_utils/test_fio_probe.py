"""fio_probe: command lines, fio JSON captured from real fio 3.33 runs on loop devices,
verdicts around the thresholds, the adaptive rule, the journal ramp, write cache parsers
and the result records."""

import pytest

from ansible_collections.cephops.osd_tuning.plugins.module_utils import fio_probe

from .test_probe_cache import DISK, stored

THRESHOLDS = dict(fio_probe.DEFAULT_THRESHOLDS)
REGION = (1024 * 1024 ** 2, 512 * 1024 ** 2)


def outcome(fixture_text, name, names, rc=0, stderr="", runtime=2):
    return fio_probe.fio_outcome(rc, fixture_text("fio/" + name), stderr, names, runtime)


def measurement(iops, p99_sync_us=None, p99_clat_us=50.0):
    sync = None if p99_sync_us is None else {"mean": p99_sync_us / 2, "p50": p99_sync_us / 2,
                                             "p99": p99_sync_us, "p99_9": p99_sync_us * 2}
    return {"write_iops": iops, "write_bw_bytes": int(iops * 4096), "total_ios": int(iops * 15),
            "runtime_ms": 15000, "job_errors": [],
            "latency_us": {"completion": {"mean": 20.0, "p50": 18.0, "p99": p99_clat_us, "p99_9": 90.0},
                           "sync": sync}}


# --------------------------------------------------------------------------- commands

def test_default_command_is_seed_001_inside_the_region():
    argv = fio_probe.fio_command("fio", [("sdb", "/dev/sdb")], fio_probe.job_options("randwrite"), 15, REGION)
    assert argv == ["fio", "--output-format=json", "--allow_file_create=0", "--thread", "--time_based", "--runtime=15",
                    "--offset=1073741824", "--size=536870912", "--ioengine=libaio", "--direct=1",
                    "--fsync=1", "--bs=4k", "--iodepth=1", "--rw=randwrite",
                    "--name=sdb", "--filename=/dev/sdb"]


def test_parallel_command_has_one_job_section_per_disk_and_no_group_reporting():
    argv = fio_probe.fio_command("fio", [("sdb", "/dev/sdb"), ("sdc", "/dev/sdc")],
                                 fio_probe.job_options("randwrite"), 2, REGION)
    assert argv[-4:] == ["--name=sdb", "--filename=/dev/sdb", "--name=sdc", "--filename=/dev/sdc"]
    assert not [a for a in argv if "group_reporting" in a]


def test_journal_clones_split_the_region():
    argv = fio_probe.fio_command("fio", [("sdb", "/dev/sdb")], fio_probe.job_options("journal"), 60, REGION, numjobs=4)
    assert "--numjobs=4" in argv and "--size=134217728" in argv and "--offset_increment=134217728" in argv
    assert "--sync=1" in argv and "--rw=write" in argv and "--fsync=1" not in argv


def test_overrides_replace_add_and_remove_options():
    # Overrides arrive checked and under fio's own names (fio_options.allowed_overrides).
    options = fio_probe.job_options("randwrite", {"bs": "16k", "ioengine": "psync", "iodepth": None,
                                                  "randseed": 7})
    assert options == [("direct", "1"), ("fsync", "1"), ("rw", "randwrite"), ("bs", "16k"), ("ioengine", "psync"),
                       ("randseed", "7")]


def test_unsynced_variant_drops_fsync_and_sync():
    options = fio_probe.unsynced(fio_probe.job_options("journal"))
    assert ("sync", "1") not in options and ("fsync", "0") in options and ("sync", "0") in options


def test_dd_command_covers_exactly_the_region():
    assert fio_probe.dd_command("/dev/sdb", REGION) == [
        "dd", "if=/dev/urandom", "of=/dev/sdb", "bs=4096", "seek=262144", "count=131072",
        "oflag=direct,dsync", "conv=notrunc,nocreat"]


# --------------------------------------------------------------------------- fio output

def test_normal_run_is_measured(fixture_text):
    found, version = outcome(fixture_text, "randwrite_fsync_loop.json", ["loop2"])
    m = found["loop2"]["measurement"]
    assert version == "fio-3.33"
    assert m["write_iops"] == 2516.2 and m["total_ios"] == 5035 and m["runtime_ms"] == 2000
    assert m["latency_us"]["sync"] == {"mean": 382.482, "p50": 329.728, "p99": 1531.904, "p99_9": 3063.808}
    assert fio_probe.p99_sync_latency_ms(m) == 1.532


def test_parallel_output_reports_each_disk(fixture_text):
    found, _version = outcome(fixture_text, "randwrite_fsync_two_disks.json", ["loop2", "loop3"])
    assert found["loop2"]["measurement"]["write_iops"] == 3038.0
    assert found["loop3"]["measurement"]["write_iops"] == 1971.0


def test_errored_job_is_an_error_and_the_healthy_job_still_counts(fixture_text):
    stderr = "fio: io_u error on file /dev/loop1: No space left on device: write offset=1302372352, buflen=4096"
    found, _version = outcome(fixture_text, "job_error_enospc.json", ["loop1", "loop3"], rc=1, stderr=stderr)
    assert found["loop1"]["error"].startswith("fio job failed with errno 28 (No space left on device)")
    assert "measurement" in found["loop3"]


def test_sync_mode_without_sync_section_judges_completion_latency(fixture_text):
    found, _version = outcome(fixture_text, "journal_sync_numjobs1.json", ["loop2"])
    m = found["loop2"]["measurement"]
    assert m["latency_us"]["sync"] is None
    assert fio_probe.p99_sync_latency_ms(m) == round(m["latency_us"]["completion"]["p99"] / 1000, 3)


def test_numjobs_clones_are_summed(fixture_text):
    found, _version = outcome(fixture_text, "journal_sync_numjobs2.json", ["loop2"])
    m = found["loop2"]["measurement"]
    assert m["write_iops"] == round(2100.949525 + 2093.953023, 1)
    assert m["latency_us"]["completion"]["p99"] == 2244.608  # the worse clone


def test_truncated_output_is_an_error_for_every_disk(fixture_text):
    found, version = outcome(fixture_text, "truncated.json", ["loop2", "loop3"], rc=0)
    assert version is None
    assert found["loop2"]["error"].startswith("fio exited with rc=0: fio output is not complete JSON")
    assert found["loop3"] == found["loop2"]


def test_no_json_at_all_is_an_error_with_stderr():
    found, _version = fio_probe.fio_outcome(1, "", "fio: unrecognized option '--bogus'", ["sdb"], 15)
    assert found["sdb"]["error"] == "fio exited with rc=1: fio printed no JSON: fio: unrecognized option '--bogus'"


def test_terminated_run_is_an_error_despite_its_json(fixture_text):
    found, _version = outcome(fixture_text, "terminated_sigterm.json", ["loop2"], rc=128, runtime=10)
    assert found["loop2"]["error"].startswith("fio exited with rc=128")


def test_terminated_run_is_an_error_even_with_rc_zero(fixture_text):
    found, _version = outcome(fixture_text, "terminated_sigterm.json", ["loop2"], rc=0, runtime=10)
    assert found["loop2"] == {"error": "fio ran 2760 ms of 10 s"}


def test_missing_device_completes_no_write(fixture_text):
    found, _version = outcome(fixture_text, "missing_device.json", ["loop9"], rc=1,
                              stderr="fio: file creation disallowed by allow_file_create=0", runtime=1)
    assert found["loop9"]["error"] == "fio exited with rc=1: fio: file creation disallowed by allow_file_create=0"


def test_disk_missing_from_output_is_an_error(fixture_text):
    found, _version = outcome(fixture_text, "randwrite_fsync_loop.json", ["loop2", "sdz"])
    assert found["sdz"] == {"error": "fio reported no result for this disk"}


def test_dd_statistics():
    stderr = ("131072+0 records in\n131072+0 records out\n"
              "536870912 bytes (537 MB, 512 MiB) copied, 47.8912 s, 11.2 MB/s\n")
    m = fio_probe.dd_outcome(0, stderr)["measurement"]
    assert m["write_iops"] == round(131072 / 47.8912, 1)
    assert m["latency_us"]["completion"]["p99"] is None
    assert fio_probe.dd_outcome(1, "dd: failed to open '/dev/sdz': No such file or directory") == {
        "error": "dd exited with rc=1: dd: failed to open '/dev/sdz': No such file or directory"}


# --------------------------------------------------------------------------- verdicts

@pytest.mark.parametrize("iops,p99_us,expected", [
    (36600.0, 28.0, "suitable"),       # Kioxia CD6, seed 001
    (8713.0, 265.0, "suitable"),       # Intel DC S3500, seed 001
    (5000.0, 1000.0, "suitable"),      # exactly at both limits
    (4999.9, 1000.0, "marginal"),
    (5000.0, 1001.0, "marginal"),
    (1000.0, 5000.0, "marginal"),      # exactly at the marginal limits
    (999.9, 500.0, "unsuitable"),
    (20000.0, 5001.0, "unsuitable"),
    (574.0, 2638.0, "unsuitable"),     # Samsung 980, seed 001
])
def test_verdict_at_and_around_the_default_thresholds(iops, p99_us, expected):
    assert fio_probe.verdict(measurement(iops, p99_us), THRESHOLDS)[0] == expected


def test_reasons_name_the_figures_and_limits():
    verdict, reasons = fio_probe.verdict(measurement(574.0, 2638.0), THRESHOLDS)
    assert reasons == ["write IOPS 574 < 5000 (below the marginal floor 1000)",
                       "p99 sync latency 2.638 ms > 1 ms (marginal up to 5 ms)"]


def test_dd_measurement_is_judged_on_iops_only():
    m = fio_probe.dd_outcome(0, "40960 bytes (41 kB) copied, 0.001 s, 41 MB/s")["measurement"]
    verdict, reasons = fio_probe.verdict(m, THRESHOLDS)
    assert verdict == "suitable" and reasons[-1] == "p99 sync latency not measured by this method"


def test_marginal_band_above_the_suitable_one_is_refused():
    with pytest.raises(ValueError):
        fio_probe.check_thresholds(dict(THRESHOLDS, marginal_min_iops=6000))
    with pytest.raises(ValueError):
        fio_probe.check_thresholds(dict(THRESHOLDS, marginal_max_p99_sync_latency_ms=0.5))


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
    assert fio_probe.is_clear(m, THRESHOLDS, 1.5) is clear


def test_early_decision_needs_two_clear_stages_that_agree():
    clear = measurement(20000.0, 100.0)
    assert fio_probe.decided_early([clear], THRESHOLDS, 1.5) is False
    # Far apart but both clearly suitable: decided, a busy host's noise does not move the verdict.
    assert fio_probe.decided_early([measurement(8000.0, 100.0), clear], THRESHOLDS, 1.5) is True
    # The earlier stage within the margin of min_iops (5000 * 1.5 = 7500): not yet.
    assert fio_probe.decided_early([measurement(7000.0, 100.0), clear], THRESHOLDS, 1.5) is False
    assert fio_probe.decided_early([clear, measurement(7000.0, 100.0)], THRESHOLDS, 1.5) is False
    # Both clear, but one suitable and one marginal: no agreement, no early verdict.
    assert fio_probe.decided_early([measurement(2000.0, 100.0), clear], THRESHOLDS, 1.5) is False


def test_a_disk_clearly_short_of_one_marginal_limit_is_decided_whatever_the_other():
    # 40 IOPS is far below the marginal floor (1000 / 1.5); its p99 sits within the margin of
    # the latency limit, which alone would keep is_clear false: unsuitable either way.
    slow = measurement(40.0, 900.0)
    assert fio_probe.is_clear(slow, THRESHOLDS, 1.5) is False
    assert fio_probe.decided_early([slow, measurement(45.0, 1100.0)], THRESHOLDS, 1.5) is True
    assert fio_probe.verdict(slow, THRESHOLDS)[0] == "unsuitable"
    # Fast, but p99 far above the marginal latency limit (5 ms * 1.5) in both stages.
    assert fio_probe.decided_early([measurement(9000.0, 9000.0), measurement(9500.0, 8000.0)], THRESHOLDS, 1.5)
    # Only one of the two stages clearly short: not yet.
    assert fio_probe.decided_early([measurement(900.0, 100.0), slow], THRESHOLDS, 1.5) is False


# --------------------------------------------------------------------------- journal ramp

def steps(*iops):
    return [{"numjobs": 2 ** i, "write_iops": value} for i, value in enumerate(iops)]


def test_ramp_doubles_until_the_gain_falls_under_min_gain():
    # Seed 003's example: 5854, 10924, ... then 17124 at the step where it maxes out.
    assert fio_probe.next_numjobs([], 0.1, 16) == 1
    assert fio_probe.next_numjobs(steps(5854), 0.1, 16) == 2
    assert fio_probe.next_numjobs(steps(5854, 10924), 0.1, 16) == 4
    assert fio_probe.next_numjobs(steps(5854, 10924, 17124, 17500), 0.1, 16) is None
    assert fio_probe.saturated_at(steps(5854, 10924, 17124, 17500), 0.1) == 4
    assert fio_probe.saturated_at(steps(5854, 10924), 0.1) is None


def test_ramp_stops_at_the_cap():
    assert fio_probe.next_numjobs(steps(100, 200, 400), 0.1, 4) is None


# --------------------------------------------------------------------------- hints

def test_plp_hint_from_the_fsync_ratio():
    assert fio_probe.plp_hint(36600.0, 38000.0)["hint"].endswith("consistent with power-loss protection")
    assert fio_probe.plp_hint(574.0, 80000.0)["hint"].endswith("likely no power-loss protection")
    assert fio_probe.plp_hint(574.0, 0) is None


def test_faster_cache_setting():
    assert fio_probe.faster_cache_setting(574.0, 1830.0) == "off"


# --------------------------------------------------------------------------- result records

def test_served_result_carries_the_disk_as_it_is_now_and_says_cached():
    renamed = dict(DISK, name="sdf", path="/dev/sdf")
    result = fio_probe.cached_result(renamed, stored(), 120)
    assert (result["device"], result["name"], result["verdict"], result["write_iops"]) == ("/dev/sdf", "sdf", "suitable", 8713.0)
    assert (result["cached"], result["cache_age_seconds"], result["written"], result["zeroed"]) == (True, 120, False, None)
