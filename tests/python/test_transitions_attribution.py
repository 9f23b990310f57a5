"""Which transition takes a configured threshold's name: the strongest rising
step in the window below and above it (headers move a library's switch a few
dozen to a few hundred bytes below its limit), never a step down, one
candidate for thresholds of one value; staircases never take a threshold's step."""

import synth
from versus.analysis import analyse_run
from versus.transitions import Transition, attribute, find_staircases, label_rest, match_window


def step(at, jump, after=None, t=None, kind="step"):
    tr = Transition(at, after if after is not None else at - 60, at, kind, jump, None)
    tr.replicate_t = t
    return tr


def test_the_strongest_rising_step_in_the_window_is_named_not_the_nearest():
    real = step(5950, 1.8, t=90.0)             # 50 B under the limit: the header
    noise = step(6010, 0.05, t=2.0)            # nearer to 6000, small
    down = step(6060, -0.3, t=-20.0)           # a step down, strong
    trans = [real, noise, down]
    assert attribute(trans, {"btl_vader_eager_limit": 6000}) == []
    assert real.threshold == "btl_vader_eager_limit" and real.configured_bytes == 6000
    assert noise.threshold is None and down.threshold is None
    assert down.label.startswith("unexplained step down")


def test_a_step_down_never_takes_a_threshold_name():
    down = step(8000, -0.5, t=-40.0)
    unmatched = attribute([down], {"eager_limit": 8000})
    assert down.threshold is None and unmatched == [{"name": "eager_limit", "configured_bytes": 8000}]


def test_two_names_of_one_value_are_one_candidate_and_both_are_named():
    real = step(10100, 18.0, after=9950, t=30.0)
    other = step(10300, 0.4, t=6.0)
    assert attribute([real, other], {"rxm_buffer_size": 10000, "eager_limit": 10000}) == []
    assert sorted(real.threshold_names) == ["eager_limit", "rxm_buffer_size"]
    assert "rxm_buffer_size = eager_limit" in real.label or "eager_limit = rxm_buffer_size" in real.label
    assert other.threshold is None and other.label.startswith("unexplained")


def test_the_window_reaches_a_few_hundred_bytes_below_and_five_percent_above():
    lo, hi = match_window(6000)
    assert lo == 6000 - 512 - 300 and hi == 6300
    far_below = step(5000, 2.0, t=50.0)
    assert attribute([far_below], {"limit": 6000}) == [{"name": "limit", "configured_bytes": 6000}]


def test_a_staircase_does_not_swallow_the_threshold_step_and_keeps_its_period():
    # page steps every 4096 B and a rendezvous step between two of them
    trans = [step(p, 0.2, after=p - 180, t=20.0) for p in (8340, 16440, 20580, 24700)]
    rndv = step(12120, 2.0, after=11940, t=80.0)
    trans = sorted(trans + [rndv], key=lambda t: t.bytes)
    attribute(trans, {"rndv_thresh": 12000})
    (sc,) = find_staircases(trans)
    label_rest(trans, [sc])
    assert rndv.threshold == "rndv_thresh" and rndv.staircase is None
    assert sc.steps == 4 and abs(sc.period_bytes - 4096) < 150, sc
    assert all(t.label.startswith("staircase step") for t in trans if t is not rndv)


def test_a_step_50_bytes_under_the_limit_is_found_and_named_in_a_noisy_interleaved_sweep(make_run):
    base = synth.hockney(1500, 0.05)
    model = synth.piecewise((0, base), (5950, lambda n: base(n) + 1500))
    sizes = list(range(3000, 12000, 90))
    hits = 0
    for seed in range(5):
        r = make_run(model, sizes, count=40, seed=seed, rel_noise=0.03,
                     thresholds={"btl_vader_eager_limit": 6000})
        a = analyse_run(r)
        named = [t for t in a.transitions if t.threshold == "btl_vader_eager_limit"]
        hits += len(named) == 1 and 5950 <= named[0].before_bytes <= 6050 and named[0].jump_us > 0
        assert sum(t.label.startswith("unexplained") for t in a.transitions) <= 1, [t.label for t in a.transitions]
    assert hits == 5
