"""The interval bench/probe_fidelity.py gives the median of its pairs' ratios: the order statistics
a binomial(n, 1/2) count puts around the median, checked against their textbook values."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from probe_fidelity import median_interval  # noqa: E402  (a benchmark script, not a package)


@pytest.mark.parametrize("n, k, coverage", [
    (5, 1, 1 - 2 / 32),  # too few values for 95 %: the extremes, 93.75 %
    (9, 2, 1 - 2 * 10 / 512),
    (30, 10, 0.957226),
    (40, 14, 0.961523),
])
def test_the_interval_is_the_innermost_order_statistics_that_keep_95_percent(n, k, coverage):
    values = [float(v) for v in range(n, 0, -1)]  # any order: the function sorts them
    low, high, found = median_interval(values)
    assert (low, high) == (k, n + 1 - k)
    assert found == pytest.approx(coverage, abs=1e-6)
