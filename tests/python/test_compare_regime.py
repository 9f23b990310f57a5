"""A regime's claim over several sizes, between launches: a launch's effect is
shared by every size it measures, so the regime's CI is about as wide as one
size's and covers the true ratio at the nominal rate; treating the sizes as
independent (what within-launch inference may do) would make it sqrt(k)
times too narrow."""
import math

import numpy as np

import synth
from versus.compare import _regime_ratio, compare_runs

SIZES = [1 << k for k in range(3, 19, 2)]          # 8 sizes, 8 B .. 128 KiB
TRUE = 0.7                                          # A takes 70 % of B's time at every size


def side(make_run, rng, ids, scale, name, seed):
    """One run per launch; each launch's times scaled by one factor for all its sizes."""
    return [make_run(synth.hockney(2000 * scale * f, 0.1 * scale * f), SIZES, count=60,
                     seed=seed + i, launch_id=lid, name=name)
            for i, (lid, f) in enumerate(zip(ids, np.exp(0.05 * rng.standard_normal(len(ids)))))]


def test_a_regime_ci_between_launches_is_as_wide_as_a_size_ci_and_covers_the_truth(make_run):
    reps, claimed, missed, missed_as_independent = 60, 0, 0, 0
    width_ratio = []
    for rep in range(reps):
        rng = np.random.default_rng(7000 + rep)
        a = side(make_run, rng, [0, 2, 4], TRUE, "fast", 1000 * rep)
        b = side(make_run, rng, [1, 3, 5], 1.0, "slow", 1000 * rep + 500)
        c = compare_runs(a, b, seed=rep, draws=800)
        by_bytes = {s.bytes: s for s in c.sizes}
        for r in c.regimes:
            if r.mark != "+" or r.sizes < 2:
                continue
            grp = [s for b_, s in by_bytes.items() if r.from_bytes <= b_ <= r.to_bytes]
            claimed += 1
            lo, hi = r.ratio_ci
            assert lo < r.ratio < hi
            assert math.isclose(r.ratio, math.exp(np.mean(np.log([s.ratio for s in grp]))), rel_tol=1e-9)
            missed += not lo <= TRUE <= hi
            size_hw = np.median([math.log(s.ratio_ci[1] / s.ratio_ci[0]) / 2 for s in grp])
            width_ratio.append(math.log(hi / lo) / 2 / size_hw)
            _, ilo, ihi = _regime_ratio(grp)             # the sizes taken as independent
            missed_as_independent += not ilo <= TRUE <= ihi
    print(f"{claimed} regimes; CI half width regime/size median {np.median(width_ratio):.2f}; "
          f"missed {missed}, as independent {missed_as_independent}")
    assert claimed >= 0.8 * reps, f"only {claimed} regimes claimed in {reps} comparisons"
    med = float(np.median(width_ratio))
    assert 0.6 <= med <= 1.3, f"regime CI / size CI half width: median {med:.2f}"
    assert missed <= 0.1 * claimed, f"{missed} of {claimed} regime CIs miss the true ratio (nominal 5 %)"
    # the same claims with the sizes taken as independent: far too narrow
    assert missed_as_independent >= 3 * max(missed, 1), (missed_as_independent, missed)


def test_a_regime_within_one_launch_a_side_keeps_the_size_level_combination(make_run):
    a = make_run(synth.hockney(1400, 0.07), SIZES, count=100, seed=1, name="fast")
    b = make_run(synth.hockney(2000, 0.1), SIZES, count=100, seed=2, name="slow")
    c = compare_runs([a], [b])
    (claim,) = c.regimes
    assert tuple(claim.ratio_ci) == _regime_ratio(c.sizes)[1:]
