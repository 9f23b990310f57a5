"""Comparisons of sides made of several launches: launch-level effects are
not taken for differences between configurations, real ones still are."""
import numpy as np
import pytest

import synth
from versus.compare import adjust_pvalues, compare_runs, compare_samples
from versus.launches import BETWEEN, WITHIN, count_launches
from versus.samples import SampleSet

SIZES = [8, 512, 16384, 262144]


def launches(make_run, rng, ids, lo, hi, scale=1.0, seed=0, name="shm"):
    """One run per launch id; each launch's times scaled by its own factor from U(lo, hi)."""
    return [make_run(synth.hockney(2000 * scale * f, 0.1 * scale * f), SIZES, count=100,
                     seed=seed + i, launch_id=i, name=name)
            for i, f in zip(ids, rng.uniform(lo, hi, len(ids)))]


def pooled_claims(a, b, alpha=0.05):
    """What pooling every launch's samples (the within-launch test) would claim."""
    pa, pb = SampleSet.of(a).pooled(), SampleSet.of(b).pooled()
    rng = np.random.default_rng(0)
    rows = [compare_samples(pa[n], pb[n], rng, 500) for n in SIZES]
    padj = adjust_pvalues([p for _, _, p in rows])
    return any(pj < alpha and (ci[0] > 1 or ci[1] < 1) and not 0.98 < r < 1 / 0.98
               for (r, ci, _), pj in zip(rows, padj))


@pytest.mark.parametrize("n_a,n_b", [(2, 2), (1, 3)])
def test_launches_of_one_distribution_are_claimed_different_at_most_at_the_nominal_rate(make_run, n_a, n_b):
    reps, claims, pooled = 100, 0, 0
    for rep in range(reps):
        rng = np.random.default_rng(rep)
        a = launches(make_run, rng, range(0, 2 * n_a, 2), 0.7, 1.4, seed=1000 * rep)
        b = launches(make_run, rng, range(1, 2 * n_b + 1, 2), 0.7, 1.4, seed=1000 * rep + 500)
        c = compare_runs(a, b, seed=rep, draws=1000)
        assert all(s.inference == BETWEEN and (s.launches_a, s.launches_b) == (n_a, n_b) for s in c.sizes)
        claims += any(s.mark in "+-" for s in c.sizes)
        pooled += pooled_claims(a, b)
    assert claims <= 0.05 * reps, f"{claims} of {reps} comparisons claimed a difference"
    # the same data, samples pooled over launches, claims differences far more often
    assert pooled >= 0.3 * reps, f"pooled samples claimed a difference in only {pooled} of {reps}"


def test_a_30_percent_difference_with_small_launch_spread_is_found_with_3_launches_a_side(make_run):
    for rep in range(20):
        rng = np.random.default_rng(100 + rep)
        a = launches(make_run, rng, [0, 2, 4], 0.97, 1.03, scale=0.7, seed=1000 * rep, name="fast")
        b = launches(make_run, rng, [1, 3, 5], 0.97, 1.03, seed=1000 * rep + 500, name="slow")
        c = compare_runs(a, b, seed=rep, draws=1000)
        assert [s.mark for s in c.sizes] == ["+"] * len(SIZES), [(s.ratio, s.ratio_ci) for s in c.sizes]
        for s in c.sizes:
            assert s.inference == BETWEEN and s.df is not None and s.df >= 2
            assert s.ratio_ci[0] < s.ratio < s.ratio_ci[1] < 0.8 and s.ratio == pytest.approx(0.7, abs=0.04)
            assert s.ratio == pytest.approx(s.median_a_us / s.median_b_us)
        (claim,) = c.regimes
        assert claim.faster_pct == pytest.approx(30, abs=4)
        assert claim.text.startswith("fast pingpong/blocking (3 launches) is ") and "faster than slow" in claim.text
        assert c.claims and c.scope.startswith("across launches (3 vs 3, the launch is the unit)")
        assert "(" not in claim.mark and "these two launches" not in claim.text
        d = c.to_dict()["sizes"][0]
        assert (d["inference"], d["launches_a"], d["launches_b"]) == (BETWEEN, 3, 3)


def test_one_launch_a_side_is_within_launch_and_never_a_claim(make_run):
    a = make_run(synth.hockney(1400, 0.07), SIZES, count=100, seed=1, name="fast")
    b = make_run(synth.hockney(2000, 0.1), SIZES, count=100, seed=2, name="slow")
    c = compare_runs([a], [b])
    assert all(s.inference == WITHIN and s.df is None for s in c.sizes)
    assert all(s.mark == "(+)" for s in c.sizes)
    (diff,) = c.regimes
    assert diff.mark == "(+)" and diff.text.startswith("in these two launches only: fast pingpong/blocking is ")
    assert not c.claims and "not the configurations" in c.scope and "3 or more" in c.scope
    assert c.to_dict()["sizes"][0]["inference"] == WITHIN


def test_a_launch_is_a_run_id_not_a_launch_index(make_run):
    model = synth.hockney(2000, 0.1)
    two = [make_run(model, SIZES, seed=i, launch_id=0, run_id=f"host-{i}") for i in range(2)]
    assert count_launches(two) == 2
    again = [make_run(model, SIZES, seed=i, launch_id=i, run_id="host-same") for i in range(2)]
    assert count_launches(again) == 1
    c = compare_runs(two, again)
    assert all((s.launches_a, s.launches_b, s.inference) == (2, 1, BETWEEN) for s in c.sizes)
    assert c.launch_spread_a and not c.launch_spread_b


def test_the_text_legend_names_the_inference_used(make_run):
    from versus.console import format_comparison
    model = synth.hockney(2000, 0.1)
    a = [make_run(model, SIZES, seed=i, launch_id=i, name="a") for i in (0, 2)]
    b = [make_run(model, SIZES, seed=i, launch_id=i, name="b") for i in (1, 3)]
    text = format_comparison(compare_runs(a, b).to_dict())
    assert "between launches" in text and "Mann-Whitney" not in text
    text = format_comparison(compare_runs(a[:1], b[:1]).to_dict())
    assert "within one launch a side" in text and "Mann-Whitney U" in text
