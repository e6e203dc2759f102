"""sync_write_probe module entry point: argument checks and refusals that need no disk."""

import pytest

from ansible_collections.cephops.osd_tuning.plugins.modules import sync_write_probe


def test_unknown_devices_are_refused_not_fatal(run_module):
    result = run_module(sync_write_probe.main, {"devices": ["/dev/cephops-missing", "cephops-gone"]})
    assert result["changed"] is False
    assert [(r["device"], r["verdict"], r["reasons"]) for r in result["results"]] == [
        ("/dev/cephops-missing", "refused", ["/dev/cephops-missing: no such device"]),
        ("cephops-gone", "refused", ["cephops-gone: no such device"]),
    ]
    assert result["results"][0]["written"] is False


def test_option_that_places_the_writes_is_refused(run_module):
    result = run_module(sync_write_probe.main, {"devices": [], "fio_options": {"offset": "0"}})
    assert result["failed"] is True
    assert result["msg"] == "fio option offset is set by the probe and cannot be overridden"


@pytest.mark.parametrize("args,msg", [
    ({"min_iops": 100, "marginal_min_iops": 200}, "marginal_min_iops must not exceed min_iops"),
    ({"max_p99_sync_latency_ms": 2.0, "marginal_max_p99_sync_latency_ms": 1.0},
     "marginal_max_p99_sync_latency_ms must not be below max_p99_sync_latency_ms"),
    ({"adaptive_margin": 1.0}, "adaptive_margin must exceed 1"),
    ({"runtime": 0}, "runtime must be at least 1"),
    ({"cache_max_age": -1}, "cache_max_age must not be negative"),
])
def test_inconsistent_settings_fail_before_any_probe(run_module, args, msg):
    result = run_module(sync_write_probe.main, dict(args, devices=[]))
    assert result["failed"] is True
    assert result["msg"] == msg


def test_unknown_mode_is_refused(run_module):
    result = run_module(sync_write_probe.main, {"devices": [], "mode": "randread"})
    assert result["failed"] is True
    assert "mode" in result["msg"]
