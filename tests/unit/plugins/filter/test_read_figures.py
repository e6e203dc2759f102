"""read_figures: before/after pairs of seq_read_probe results per changed disk."""

from ansible_collections.cephops.osd_tuning.plugins.filter import read_figures


def result(device, runs, error=None):
    ordered = sorted(runs) if not error else []
    return {"device": device, "table": [{"max_sectors_kb": 1280, "runs": runs, "error": error,
                                         "read_mib_s": ordered[len(ordered) // 2] if ordered else None,
                                         "min_mib_s": ordered[0] if ordered else None,
                                         "max_mib_s": ordered[-1] if ordered else None}]}


def test_pairs_disks_measured_before_and_after_with_spread_and_change():
    before = [result("sdb", [100.0, 98.0, 101.0, 99.0, 100.0]), result("sdc", [50.0] * 5)]
    after = [result("sdb", [110.0, 111.0, 108.0, 110.0, 109.0])]
    figure, = read_figures.compare(before, after, {"sdb": {"value": 64, "source": "class ssd"}}, "max_sectors_kb")
    assert figure["device"] == "sdb" and figure["setting"] == 64
    assert (figure["before"]["read_mib_s"], figure["before"]["min_mib_s"], figure["before"]["max_mib_s"]) == (100.0, 98.0, 101.0)
    assert figure["after"]["read_mib_s"] == 110.0 and figure["change_percent"] == 10.0
    assert figure["line"] == ("sdb: max_sectors_kb 64, sequential read 100.0 MiB/s (98.0-101.0) -> "
                              "110.0 MiB/s (108.0-111.0), +10.0%, median of 5 runs (min-max)")


def test_a_failed_side_has_no_change_and_says_why():
    figure, = read_figures.compare([result("sdb", [100.0] * 5)], [result("sdb", [None] * 5, error="timed out")],
                                   {"sdb": {"value": "none"}}, "scheduler")
    assert figure["change_percent"] is None
    assert "-> not measured (timed out)" in figure["line"]
