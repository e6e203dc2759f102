"""read_figures: before/after pairs of seq_read_probe results per changed disk, judged on the
sequential measure and, where the probe read at random too, on both."""

from ansible_collections.cephops.osd_tuning.plugins.filter import read_figures


def result(device, runs, error=None, random=None):
    """A seq_read_probe result; ``random``, IOPS of the random runs, adds the random figures."""
    ordered = sorted(runs) if not error else []
    row = {"max_sectors_kb": 1280, "runs": runs, "error": error,
           "read_mib_s": ordered[len(ordered) // 2] if ordered else None,
           "min_mib_s": ordered[0] if ordered else None, "max_mib_s": ordered[-1] if ordered else None}
    if random is not None:
        iops = sorted(random)
        row.update(random_runs=random, random_error=None, random_iops=iops[len(iops) // 2],
                   random_min_iops=iops[0], random_max_iops=iops[-1], random_lat_ms=round(32000.0 / iops[len(iops) // 2], 3))
    return {"device": device, "table": [row]}


def test_pairs_disks_measured_before_and_after_with_spread_and_change():
    before = [result("sdb", [100.0, 98.0, 101.0, 99.0, 100.0]), result("sdc", [50.0] * 5)]
    after = [result("sdb", [110.0, 111.0, 108.0, 110.0, 109.0])]
    figure, = read_figures.compare(before, after, {"sdb": {"value": 64, "source": "class ssd"}}, "max_sectors_kb")
    assert figure["device"] == "sdb" and figure["setting"] == 64
    assert (figure["before"]["read_mib_s"], figure["before"]["min_mib_s"], figure["before"]["max_mib_s"]) == (100.0, 98.0, 101.0)
    assert figure["after"]["read_mib_s"] == 110.0 and figure["change_percent"] == 10.0
    assert figure["line"] == ("sdb: max_sectors_kb 64, sequential read 100.0 MiB/s (98.0-101.0) -> "
                              "110.0 MiB/s (108.0-111.0), +10.0%, median of 5 runs (min-max): better, every run "
                              "faster and the median +10.0% (more than 5.0%)")
    assert (figure["verdict"], figure["why"]) == ("better", "every run faster and the median +10.0% (more than 5.0%)")


def test_a_failed_side_has_no_change_and_says_why():
    figure, = read_figures.compare([result("sdb", [100.0] * 5)], [result("sdb", [None] * 5, error="timed out")],
                                   {"sdb": {"value": "none"}}, "scheduler")
    assert figure["change_percent"] is None
    assert "-> not measured (timed out)" in figure["line"]
    assert (figure["verdict"], figure["why"]) == ("same", "not measured on both sides")


def verdict_of(before_runs, after_runs, min_change_percent=5):
    figure, = read_figures.compare([result("sdb", before_runs)], [result("sdb", after_runs)],
                                   {"sdb": {"value": 64}}, "max_sectors_kb", min_change_percent)
    return figure["verdict"], figure["why"]


def test_worse_needs_every_run_slower_and_the_median_down_by_more_than_the_minimum():
    assert verdict_of([50.0, 51.0, 49.0, 50.0, 52.0], [6.0, 6.5, 6.2, 6.1, 6.3]) == (
        "worse", "every run slower and the median -87.6% (more than 5.0%)")
    # Apart, but by no more than the minimum: same.
    assert verdict_of([100.0, 100.5, 100.2, 100.1, 100.3], [96.0, 96.2, 96.1, 96.3, 96.4]) == (
        "same", "the median moved by 4.0%, not more than 5.0%")
    assert verdict_of([100.0, 100.5, 100.2, 100.1, 100.3], [96.0, 96.2, 96.1, 96.3, 96.4], 3)[0] == "worse"


def test_a_noisy_host_says_same_and_that_the_runs_overlapped():
    # The median fell by a third, but one run after is as fast as one before.
    assert verdict_of([90.0, 100.0, 110.0, 100.0, 60.0], [60.0, 66.0, 70.0, 64.0, 68.0]) == (
        "same", "the runs before and after overlap")


def test_with_random_reads_a_change_is_worse_where_either_measure_is_and_the_line_shows_both():
    steady = [100.0, 98.0, 101.0, 99.0, 100.0]
    figure, = read_figures.compare([result("sdb", steady, random=[1000.0, 990.0, 1010.0, 1005.0, 995.0])],
                                   [result("sdb", steady, random=[500.0, 490.0, 510.0, 505.0, 495.0])],
                                   {"sdb": {"value": "bfq"}}, "scheduler")
    assert (figure["change_percent"], figure["random_change_percent"], figure["verdict"]) == (0.0, -50.0, "worse")
    assert figure["why"] == ("4 KiB random read worse: every run slower and the median -50.0% (more than 5.0%); "
                             "sequential read same: the runs before and after overlap")
    assert figure["line"] == (
        "sdb: scheduler bfq, sequential read 100.0 MiB/s (98.0-101.0) -> 100.0 MiB/s (98.0-101.0), +0.0%; "
        "4 KiB random read (QD32) 1000.0 IOPS (990.0-1010.0), 32.0 ms -> 500.0 IOPS (490.0-510.0), 64.0 ms, -50.0%, "
        "median of 5 runs (min-max): worse, " + figure["why"])
    assert figure["after"]["random_runs"] == [500.0, 490.0, 510.0, 505.0, 495.0]


def test_with_random_reads_better_needs_no_measure_worse():
    faster = [110.0, 111.0, 108.0, 110.0, 109.0]
    figure, = read_figures.compare([result("sdb", [100.0] * 5, random=[1000.0] * 5)],
                                   [result("sdb", faster, random=[1000.0] * 5)], {"sdb": {"value": 64}}, "max_sectors_kb")
    assert (figure["verdict"], figure["random_change_percent"]) == ("better", 0.0)
    assert figure["why"].startswith("sequential read better: every run faster")
    figure, = read_figures.compare([result("sdb", [100.0] * 5, random=[1000.0] * 5)],
                                   [result("sdb", faster, random=[900.0] * 5)], {"sdb": {"value": 64}}, "max_sectors_kb")
    assert figure["verdict"] == "worse"


def test_a_failed_random_side_judges_on_the_sequential_measure_and_says_so():
    before = result("sdb", [100.0] * 5, random=[1000.0] * 5)
    after = result("sdb", [100.0] * 5, random=[1000.0] * 5)
    after["table"][0].update(random_iops=None, random_error="timed out")
    figure, = read_figures.compare([before], [after], {"sdb": {"value": 64}}, "max_sectors_kb")
    assert (figure["verdict"], figure["random_change_percent"]) == ("same", None)
    assert "-> not measured (timed out)" in figure["line"] and "4 KiB random read same: not measured on both sides" in figure["why"]
