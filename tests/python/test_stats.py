"""Per-size statistics: definitions, coverage of the median CI, speed."""
import time

import numpy as np
import pytest

from versus.stats import bootstrap_median_draws, describe, median_ci_sorted, summarise_size


def test_one_way_is_half_the_round_trip_and_bandwidth_is_bytes_over_mean_time():
    rtt = np.array([1000, 2000, 3000, 4000], dtype=np.int64)
    st = summarise_size(1000, rtt)
    assert st.median_ns == 1250 and st.mean_ns == 1250 and st.min_ns == 500 and st.max_ns == 2000
    # 1000 bytes each way per round trip; mean RTT 2500 ns -> one way 1250 ns -> 800 MB/s
    assert st.bandwidth_MBps == pytest.approx(1000 / 1250 * 1e3)
    # not the mean of per-sample rates (which would be larger)
    assert st.bandwidth_MBps < np.mean(1000 / (rtt / 2) * 1e3)


def test_control_limits_are_percentiles_and_count_the_samples_beyond_them():
    x = np.arange(1000, 3000, dtype=np.int64)           # 2000 samples: k = floor(2000 * 0.00135) = 2
    x[-3:] = 20000
    st = summarise_size(8, x)
    ow = np.sort(x) / 2
    assert (st.lcl_ns, st.ucl_ns) == (ow[2], ow[-3]) == (501, 10000)
    assert st.outside_limits == 2                      # two below; the three stalls are the limit itself


def test_percentiles_std_and_stderr_match_numpy():
    rng = np.random.default_rng(3)
    x = rng.integers(1000, 5000, 777)
    st = summarise_size(64, x)
    ow = x / 2
    assert st.p99_ns == pytest.approx(np.percentile(ow, 99))
    assert st.std_ns == pytest.approx(ow.std(ddof=1))
    assert st.stderr_ns == pytest.approx(ow.std(ddof=1) / np.sqrt(777))


def test_median_ci_covers_the_true_median_95_percent_of_the_time():
    rng = np.random.default_rng(7)
    hits = 0
    reps = 1000
    for _ in range(reps):
        x = np.sort(rng.exponential(1.0, 41))
        lo, hi = median_ci_sorted(x)
        hits += lo <= np.log(2) <= hi
    assert 0.93 <= hits / reps <= 0.99


def test_median_ci_is_absent_when_too_few_samples():
    assert median_ci_sorted(np.array([1.0, 2.0, 3.0])) is None


def test_normality_check_tells_normal_from_skewed():
    rng = np.random.default_rng(1)
    assert summarise_size(8, rng.normal(1e5, 1e3, 2000).astype(np.int64)).normal is True
    assert summarise_size(8, (1e5 * (1 + rng.exponential(1, 2000))).astype(np.int64)).normal is False


def test_exact_bootstrap_of_the_median_matches_resampling():
    rng = np.random.default_rng(5)
    x = np.sort(rng.lognormal(0, 1, 201))
    fast = bootstrap_median_draws(x, 20000, rng)
    slow = np.median(rng.choice(x, (4000, x.size)), axis=1)
    for q in (2.5, 50, 97.5):
        assert np.percentile(fast, q) == pytest.approx(np.percentile(slow, q), rel=0.03)


def test_describe_matches_the_seed_001_definitions():
    d = describe([1.0, 2.0, 3.0, 4.0])
    assert d["mean"] == 2.5 and d["median"] == 2.5
    assert d["std"] == pytest.approx(np.std([1, 2, 3, 4], ddof=1))
    assert d["stderr"] == pytest.approx(d["std"] / 2)


def test_a_million_samples_summarise_in_well_under_a_second():
    x = np.random.default_rng(0).integers(1000, 100000, 1_000_000)
    summarise_size(8, x)                     # warm caches and imports
    t = time.perf_counter()
    summarise_size(8, x)
    assert time.perf_counter() - t < 1.0
