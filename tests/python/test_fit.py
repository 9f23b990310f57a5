"""Models: the segmented Hockney fit recovers known parameters, breakpoints,
steps and staircases from synthetic runs (2 % noise, 1 % outliers)."""
import numpy as np
import pytest

import synth
from versus.analysis import analyse_run
from versus.fit import fit_segmented

DENSE = list(range(0, 12000, 64))


def test_single_regime_recovers_latency_and_bandwidth_within_3_percent(make_run):
    a = analyse_run(make_run(synth.hockney(2000, 0.1), synth.pow2(1 << 20), count=100, seed=2))
    assert len(a.fit.regimes) == 1 and not a.transitions
    g = a.fit.regimes[0].summary()
    assert g["latency_us"] == pytest.approx(2.0, rel=0.03)
    assert g["bandwidth_MBps"] == pytest.approx(1e4, rel=0.03)
    assert g["n_half_bytes"] == pytest.approx(20000, rel=0.06)
    assert g["latency_ci_us"][0] < g["latency_us"] < g["latency_ci_us"][1]


def test_latency_ci_covers_the_true_value_most_of_the_time(make_run):
    cover = 0
    reps = 30
    for seed in range(reps):
        a = analyse_run(make_run(synth.hockney(2000, 0.1), DENSE, count=40, seed=seed))
        lo, hi = a.fit.regimes[0].summary()["latency_ci_us"]
        cover += lo <= 2.0 <= hi
    assert cover >= 0.8 * reps


def test_slope_change_is_found_within_two_grid_steps_and_called_slope(make_run):
    model = synth.piecewise((0, synth.hockney(2000, 0.5)), (4000, synth.hockney(2000 - 0.3 * 4000, 0.8)))
    a = analyse_run(make_run(model, DENSE, count=60, seed=3))
    assert len(a.fit.regimes) == 2
    (t,) = a.transitions
    assert t.kind == "slope"
    assert abs(t.bytes - 4000) <= 128
    r0, r1 = (g.r_ns_per_byte for g in a.fit.regimes)
    assert r0 == pytest.approx(0.5, rel=0.05) and r1 == pytest.approx(0.8, rel=0.05)


def test_step_at_a_known_size_is_found_called_step_and_attributed(make_run):
    model = synth.piecewise((0, synth.hockney(2000, 0.5)), (6000, synth.hockney(5000, 0.3)))
    a = analyse_run(make_run(model, DENSE, count=60, seed=4, thresholds={"eager_limit": 6000,
                                                                        "unused_limit": 100000}))
    (t,) = a.transitions
    assert t.kind == "step"
    assert t.after_bytes < 6000 <= t.before_bytes          # within one grid step
    assert t.threshold == "eager_limit" and t.configured_bytes == 6000
    assert "eager_limit, configured 6000, detected 6016" in t.label
    assert a.unmatched_thresholds == [{"name": "unused_limit", "configured_bytes": 100000}]


def test_rendezvous_step_on_powers_of_two_with_a_different_small_message_regime(make_run):
    # seed 003: the first bytes behave differently; a jump at 8 KiB
    model = synth.piecewise((0, synth.hockney(1500, 0.0)), (128, synth.hockney(1800, 0.10)),
                            (8192, synth.hockney(4000, 0.08)))
    a = analyse_run(make_run(model, synth.pow2(1 << 20), count=100, seed=5,
                             thresholds={"rndv_thresh": 8192}))
    steps = {t.bytes: t for t in a.transitions if t.kind == "step"}
    assert 8192 in steps and steps[8192].configured_bytes == 8192
    last = a.fit.regimes[-1].summary()
    assert last["bandwidth_MBps"] == pytest.approx(12500, rel=0.03)
    assert last["latency_us"] == pytest.approx(4.0, rel=0.05)
    assert a.fit.regimes[0].to_bytes < 128       # the small-message regime is separate


def test_staircase_period_is_recovered_within_half_a_percent(make_run):
    model = synth.staircase(30000, 0.01, 1448, 20000)
    a = analyse_run(make_run(model, list(range(4, 12000, 8)), count=30, seed=6))
    (sc,) = a.staircases
    assert sc.period_bytes == pytest.approx(1448, rel=0.005)
    assert sc.period_ci_bytes[0] <= 1448 <= sc.period_ci_bytes[1]
    assert sc.steps == 8 and sc.step_height_us == pytest.approx(20.0, rel=0.05)
    assert all(t.kind == "step" and "staircase" in t.label for t in a.transitions)


def test_staircase_with_a_missed_step_keeps_its_period():
    x = np.arange(4, 12000, 8).astype(float)
    y = 30000 + 0.01 * x + 20000 * (x // 1448)
    fit = fit_segmented(x, y * (1 + 0.005 * np.random.default_rng(1).standard_normal(x.size)))
    from versus.transitions import classify, find_staircases
    tr = classify(fit)
    tr = [t for i, t in enumerate(tr) if i != 3]    # drop one detected step
    (sc,) = find_staircases(tr)
    assert sc.period_bytes == pytest.approx(1448, rel=0.005)


def test_pure_noise_on_a_line_gives_no_transition(make_run):
    hits = 0
    for seed in range(20):
        a = analyse_run(make_run(synth.hockney(3000, 0.2), DENSE, count=30, seed=100 + seed))
        hits += len(a.transitions)
    assert hits <= 2


def test_one_odd_size_is_left_out_of_the_fit_and_makes_no_transition(make_run):
    base = synth.hockney(2000, 0.5)
    model = lambda n: base(n) + (2000 if n == 3008 else 0)     # seed 003: an odd size costs more
    a = analyse_run(make_run(model, DENSE, count=60, seed=8))
    assert a.fit.excluded == [3008]
    assert not a.transitions and len(a.fit.regimes) == 1


def test_a_size_at_a_step_is_not_a_spike_when_only_its_neighbours_lower_quartile_dips():
    # a packet step between 8876 and 8884 B over a token bucket: the medians step cleanly, but a
    # burst lets a few samples of 8892 B through early, so the lower quartile dips there and 8884
    # alone looks like a spike in it; it must stay in the fit and the step stay at 8884
    x = np.arange(8700, 9101, 8).astype(float)
    y = np.where(x >= 8884, 366e3, 358e3) + 3.0 * (x - 8700)
    loc = y - 1500.0
    loc[x == 8892] -= 3500.0
    loc[x == 8876] -= 500.0
    fit = fit_segmented(x, y, np.full(x.size, 150.0), loc=loc, loc_se=np.full(x.size, 150.0))
    from versus.transitions import classify
    assert 8884 not in fit.excluded
    steps = [t for t in classify(fit) if t.kind == "step" and t.jump_us > 5]
    assert [t.bytes for t in steps] == [8884]


@pytest.mark.parametrize("seed", range(4))
def test_last_regime_bandwidth_survives_heavy_outlier_sizes_at_the_top(make_run, seed):
    # 10 GB/s line; three of the top sizes (the largest among them) take 2.5-3x
    # as long as a whole, as when foreign load lands on them: the last regime's
    # bandwidth must still be the line's, not a slope bent towards them.
    sizes = list(range(0, 1 << 20, 1 << 14)) + [1 << 20]
    slow = {sizes[-9]: 3.0, sizes[-5]: 2.5, sizes[-1]: 3.0}
    base = synth.hockney(3000, 0.1)
    a = analyse_run(make_run(lambda n: base(n) * slow.get(n, 1.0), sizes, count=40, seed=seed))
    last = a.fit.regimes[-1].summary()
    assert last["bandwidth_MBps"] == pytest.approx(1e4, rel=0.03)
    assert not a.transitions
    assert sorted(a.fit.excluded) == sorted(slow)


def test_robust_line_ignores_one_bad_size_inside_a_regime():
    # one size 40 % off, next to the top of the regime, loses its weight in the
    # bisquare refit instead of tilting the slope
    from versus.fit import fit_line, fit_line_robust
    x = np.linspace(1e5, 1e6, 10)
    y = 3000 + 0.1 * x
    y = y * (1 + 0.002 * np.random.default_rng(0).standard_normal(x.size))
    y[-2] *= 1.4
    w = 1 / (0.002 * y) ** 2
    plain = fit_line(x, y, w)[1]
    s, r, cov, dof, wrss, rw = fit_line_robust(x, y, w)
    assert abs(plain - 0.1) > 0.003
    assert r == pytest.approx(0.1, rel=0.02)
    assert rw[-2] == 0 and rw[:-2].min() > 0.5


def test_summary_puts_fitted_asymptotic_bandwidth_beside_the_measured_peak(make_run):
    a = analyse_run(make_run(synth.hockney(2000, 0.1), synth.pow2(1 << 20), count=60, seed=9))
    bw = a.to_dict()["bandwidth"]
    top = a.sizes[-1]
    assert bw["peak_bytes"] == top.bytes and bw["peak_MBps"] == pytest.approx(top.bandwidth_MBps)
    assert bw["asymptotic_MBps"] == pytest.approx(1e4, rel=0.03)
    # n / (s + r n) < 1 / r: the measured peak stays below the asymptote
    assert 1.0 <= bw["asymptotic_over_peak"] < 1.3 and bw["agrees"] is True


def test_a_staircase_at_the_transports_padding_says_so():
    from versus.transitions import Staircase, explain_staircases
    pad = Staircase(64.2, [63.9, 64.5], 1144, 2168, 16, 5.2)
    page = Staircase(4096.0, None, 4096, 16384, 4, 0.3, page_bytes=4096)
    other = Staircase(578.0, None, 2024, 4920, 3, 10.0)
    explain_staircases([pad, page, other], {"payload_align": "64"})
    assert "64 B" in pad.meaning and page.meaning is None and other.meaning is None
    assert "meaning" not in other.to_dict() and pad.to_dict()["meaning"] == pad.meaning


def test_two_near_steps_and_a_distant_third_are_no_staircase():
    # ofi over tcp: steps at 8450 and 9050 B and one at 33000 B, sizes 150 B apart near the
    # first two and 1000 B apart above: 23950 B is "40 periods of 599 B" only because the
    # sparse grid lets any period fit; at most one missed step in a row may join a staircase
    from versus.transitions import Transition, find_staircases
    trans = [Transition(8450, 8300, 8450, "step", 0.5, None), Transition(9050, 8900, 9050, "step", 1.2, None),
             Transition(33000, 32000, 33000, "step", 0.5, None)]
    assert find_staircases(trans) == []


def test_a_negative_fitted_latency_is_not_printed_as_a_figure():
    from versus.render import fmt_value
    assert fmt_value([-179.0, None, None, "not determined: the interval reaches below 0 us"], "us_ci") == \
        "not determined: the fitted value is below 0"
    assert fmt_value([6.47, 3.94, 9.0, None], "us_ci") == "6.47 [3.94, 9.00]"
