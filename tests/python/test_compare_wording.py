"""Wording of comparative statements: factors for big differences,
percentages for small ones, never a ± larger than the value."""
import re

import pytest

import synth
from versus.compare import compare_runs, effect_words

SIZES = [8, 64, 512, 4096, 16384, 65536]


@pytest.mark.parametrize("rci,expect", [
    ((52.3, 40.1, 70.3), "52.3× slower (95 % CI 40.1×–70.3×)"),
    ((1 / 52.3, 1 / 70.3, 1 / 40.1), "52.3× faster (95 % CI 40.1×–70.3×)"),
    ((0.88, 0.85, 0.91), "12 % ± 3 % faster"),
    ((1.12, 1.02, 1.30), "12 % slower (95 % CI 2 % to 30 %)"),
    ((1.6, 1.2, 2.4), "60 % slower (95 % CI 20 % to 140 %)"),
    # a bound just beyond 1 keeps the digit that shows it (not '0 % to 81 %')
    ((1.35, 1.004, 1.81), "35.0 % slower (95 % CI 0.4 % to 81.0 %)"),
])
def test_effect_words(rci, expect):
    assert effect_words(rci) == expect


def test_no_plus_minus_larger_than_the_value_over_a_range_of_effects():
    for ratio in (0.3, 0.6, 0.9, 0.97, 1.03, 1.2, 1.8, 3, 50):
        for rel in (0.01, 0.1, 0.5, 0.9):
            lo, hi = ratio * (1 - rel * 0.5), ratio * (1 + rel)
            text = effect_words((ratio, lo, hi))
            m = re.match(r"([\d.]+) % ± ([\d.]+) %", text)
            if m:
                assert float(m.group(2)) < float(m.group(1)), text
            f = re.match(r"([\d.]+)×", text)
            assert (f is not None) == (max(ratio, 1 / ratio) >= 2), text


def test_a_fifty_times_slower_side_is_stated_as_a_factor(make_run):
    a = make_run(synth.hockney(100000, 5.0), SIZES, count=60, seed=1, name="slow")
    b = make_run(synth.hockney(2000, 0.1), SIZES, count=60, seed=2, name="fast")
    c = compare_runs([a], [b], seed=0, draws=500)
    (claim,) = [r for r in c.regimes if r.mark == "(-)"] or [None]
    assert claim is not None, [r.text for r in c.regimes]
    assert "× slower (95 % CI " in claim.text and "%" not in claim.text.split("(95 % CI")[0]
    assert "±" not in claim.text
