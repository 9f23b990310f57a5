"""Comparisons: a minimum effect below which a significant difference is "no
practical difference", and claimed regimes split where the ratio changes."""
import synth
from versus.compare import compare_runs

SIZES = [1 << k for k in range(3, 17)]


def test_a_significant_one_percent_difference_is_no_practical_difference(make_run):
    base = synth.hockney(2000, 0.1)
    a = make_run(lambda n: 0.99 * base(n), SIZES, count=4000, seed=1, name="a", rel_noise=0.005)
    b = make_run(base, SIZES, count=4000, seed=2, name="b", rel_noise=0.005)
    c = compare_runs([a], [b], draws=500)
    assert sum(s.mark == "(=)" for s in c.sizes) >= 0.8 * len(SIZES)
    assert any("no practical difference" in r.text for r in c.regimes)
    strict = compare_runs([a], [b], draws=500, min_effect=0.0)
    assert sum(s.mark == "(+)" for s in strict.sizes) >= 0.8 * len(SIZES)


def test_a_regime_whose_ratio_changes_is_split_not_averaged(make_run):
    base = synth.hockney(2000, 0.1)
    # A is twice as fast up to 1 KiB, 10 % faster above: one '+' run, two statements
    fast = synth.piecewise((0, lambda n: 0.5 * base(n)), (1024, lambda n: 0.9 * base(n)))
    a = make_run(fast, SIZES, count=200, seed=3, name="a")
    b = make_run(base, SIZES, count=200, seed=4, name="b")
    c = compare_runs([a], [b], draws=1000)
    assert all(s.mark == "(+)" for s in c.sizes)
    claims = [r for r in c.regimes if r.mark == "(+)"]
    assert len(claims) == 2, [r.text for r in c.regimes]
    small, large = claims
    assert small.to_bytes == 512 and large.from_bytes == 1024
    assert abs(small.faster_pct - 50) < 3 and abs(large.faster_pct - 10) < 3
    assert small.faster_pct_pm < 3 and large.faster_pct_pm < 3
