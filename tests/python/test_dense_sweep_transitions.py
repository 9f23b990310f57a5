"""A dense, noisy one-visit sweep (seed 001's shape: every 4 B from 4 to 40000 B, 20-50 samples per
size, on a host whose speed classes 10-15 % apart switch every 150-500 sizes; synth_dense) is
reported so that a reader can use it: the packet staircase as one staircase of its period (within
2 B of 1448 B) starting at the first packet step, fewer than 3 other transitions, at most one on a
sweep with no step at all, each step with its gap and the interval of its jump, and a count of the
boundaries left out.  Before, such a sweep reported 55 transitions and 5.8 staircases of periods
480-1448 B (30.6 and 3.4 with no step at all)."""
import json
import math

import numpy as np
import pytest

import synth_dense
from versus.analysis import analyse_run
from versus.console import format_summary
from versus.load import load_file
from versus.transitions import (Transition, boundary_level, dominant_lattice, find_staircases, reported_only,
                                window_for)

SEEDS = (0, 1, 2)
PERIOD_TOLERANCE = 2.0      # bytes
MAX_OTHERS = 3              # transitions outside the staircase, per sweep


@pytest.fixture(scope="module")
def dense(tmp_path_factory):
    """dense(kind, seed) -> the analysis of one synthetic sweep (each made once per module)."""
    made = {}
    kinds = {"stairs": {}, "flat": {"height_ns": 0.0},
             "flat-step": {"height_ns": 0.0, "steps": ((24001, 20000.0),)}}

    def get(kind, seed):
        if (kind, seed) not in made:
            path = tmp_path_factory.mktemp("dense") / f"{kind}-{seed}.jsonl"
            synth_dense.write_dense(path, seed=seed, **kinds[kind])
            made[kind, seed] = analyse_run(load_file(path)[0])
        return made[kind, seed]
    return get


@pytest.mark.parametrize("seed", SEEDS)
def test_the_packet_staircase_is_one_staircase_of_its_period_from_the_first_packet_step(dense, seed):
    a = dense("stairs", seed)
    (sc,) = a.staircases
    assert abs(sc.period_bytes - synth_dense.PERIOD) <= PERIOD_TOLERANCE, sc
    assert sc.period_ci_bytes[0] <= synth_dense.PERIOD <= sc.period_ci_bytes[1], sc
    assert sc.steps >= 20                                     # of 27 in the sweep
    assert sc.step_height_us == pytest.approx(synth_dense.HEIGHT_NS / 1e3, rel=0.15)
    first = a.transitions[0]                                  # the first jump: the first packet step
    assert first.staircase == 0 and first.after_bytes < synth_dense.PERIOD + 1 <= first.before_bytes
    others = [t for t in a.transitions if t.staircase is None]
    assert len(others) < MAX_OTHERS, [t.label for t in others]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_sweep_with_no_step_reports_at_most_one_transition_and_no_staircase(dense, seed):
    a = dense("flat", seed)
    assert len(a.transitions) <= 1, [t.label for t in a.transitions]
    assert a.staircases == []


def test_a_step_larger_than_the_hosts_level_shifts_is_reported_alone_with_its_gap_and_interval(dense):
    a = dense("flat-step", 0)
    (t,) = a.transitions
    assert t.kind == "step" and (t.after_bytes, t.before_bytes) == (24000, 24004)
    lo, hi = t.jump_ci_us
    assert 0 < lo <= hi and lo < 20.0 * 1.15 and hi > 20.0      # 20 us, on a fast or a slow stretch
    assert "larger than every level shift" in t.evidence


def test_every_reported_step_has_its_gap_and_the_interval_of_its_jump(dense):
    a = dense("stairs", 0)
    for t in a.transitions:
        assert t.after_bytes < t.bytes <= t.before_bytes
        lo, hi = t.jump_ci_us
        assert lo <= hi and (t.kind != "step" or lo > 0), t
    held = [t for t in a.transitions if t.staircase is not None]
    inside = sum(t.jump_ci_us[0] <= t.jump_us <= t.jump_ci_us[1] for t in held)
    assert inside >= 0.9 * len(held)


def test_what_was_left_out_is_counted_in_the_json_and_said_in_the_summary(dense):
    a = dense("stairs", 1)
    d = json.loads(json.dumps(a.to_dict()))
    out = d["transitions_left_out"]
    assert out["reported"] == len(d["transitions"])
    assert out["n_not_reported"] == out["classified"] - out["reported"] >= 20      # the host's shifts
    assert sum(out["reasons"].values()) == out["n_not_reported"]
    assert out["level_shift_factor"] == pytest.approx(1.15, abs=0.03)
    text = format_summary({"runs": [d]})
    assert f"{out['n_not_reported']} left out" in text and "level shifts" in text
    assert "staircase: period 1448 B" in text


def test_boundaries_are_tested_at_one_percent_up_to_ten_and_bonferroni_beyond():
    assert boundary_level(3) == 0.01 and boundary_level(10) == 0.01
    assert boundary_level(57) == pytest.approx(0.1 / 57)
    # the window is as wide as the level needs: with w a side the smallest p is 2 / C(2w, w)
    assert window_for(0.01) == 5 and window_for(boundary_level(57)) == 7
    for m in (1, 20, 57, 300):
        w = window_for(boundary_level(m))
        assert 2 / math.comb(2 * w, w) < boundary_level(m)


def _step(at, jump, grid=4, level=100.0):
    t = Transition(at, at - grid, at, "step", jump, None)
    t.effect_rel, t.noise_rel = jump / level, 0.005
    t.between_sizes_p, t.stands_out = 0.0005, True
    return t


def test_level_shifts_both_ways_are_left_out_and_a_larger_step_stays():
    rng = np.random.default_rng(3)
    trans = []
    at = 1000
    while at < 29000:                                         # a slow stretch: up, then back down
        f, length = rng.uniform(1.10, 1.15), 4 * int(rng.integers(150, 500))
        trans += [_step(at, 100 * (f - 1)), _step(at + length, -100 * (1 - 1 / f))]
        at += length + 4 * int(rng.integers(150, 500))
    big = _step(31000, 40.0)
    kept = reported_only(sorted(trans + [big], key=lambda t: t.bytes))
    assert kept == [big]


def test_the_dominant_period_is_found_among_strays_and_made_one_staircase():
    rng = np.random.default_rng(4)
    stairs = [_step(1448 * k + 4, 3.0) for k in range(1, 20) if k not in (6, 13)]     # two missed
    strays = [_step(int(p) // 4 * 4, 12.0) for p in rng.uniform(500, 29000, 15)]
    trans = sorted(stairs + strays, key=lambda t: t.bytes)
    lat = dominant_lattice(trans, list(range(len(trans))))
    assert lat is not None and abs(lat.period_bytes - 1448) < 1
    assert {trans[i].bytes for i in lat.members} >= {t.bytes for t in stairs}
    kept = reported_only(trans)
    (sc,) = [s for s in find_staircases(kept) if s.steps >= 10]
    assert abs(sc.period_bytes - 1448) <= PERIOD_TOLERANCE and sc.steps >= len(stairs)


def test_random_steps_make_no_period():
    found = 0
    for seed in range(20):
        rng = np.random.default_rng(100 + seed)
        pos = np.sort(rng.choice(np.arange(1, 10000), 40, replace=False)) * 4
        trans = [_step(int(p), 5.0) for p in pos]
        found += dominant_lattice(trans, list(range(len(trans)))) is not None
    assert found <= 1
