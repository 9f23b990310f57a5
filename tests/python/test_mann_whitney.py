"""The Mann-Whitney p-value computed from sorted samples is scipy's, ties and all."""
import numpy as np
import pytest
import scipy.stats as sps

from versus.launches import mann_whitney_sorted


@pytest.mark.parametrize("seed", range(6))
def test_same_p_as_scipy(seed):
    rng = np.random.default_rng(seed)
    for n1, n2, shift, grain in ((40, 35, 0.0, 1), (1111, 1111, 0.3, 1), (9, 300, 2.0, 50), (5, 6, 1.0, 1),
                                 (200, 200, 0.0, 1000)):
        a = np.sort(np.round(rng.lognormal(3 + shift, 0.2, n1) * 100 / grain) * grain)
        b = np.sort(np.round(rng.lognormal(3, 0.2, n2) * 100 / grain) * grain)   # coarse grain: many ties
        want = sps.mannwhitneyu(a, b, alternative="two-sided").pvalue
        assert mann_whitney_sorted(a, b) == pytest.approx(want, rel=1e-9, abs=1e-300)


def test_percentile_read_off_a_sorted_array_is_numpys():
    from versus.launches import _percentile_sorted
    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 40, 1999, 2000):
        x = np.sort(rng.lognormal(0, 0.1, n))
        for q in (2.5, 50, 97.5):
            assert _percentile_sorted(x, q) == np.percentile(x, q)
