"""A/A: how often does a comparison of one configuration with itself claim a
difference?  Many seeded synthetic launches with a launch effect (each launch
slower or faster as a whole, a little differently per size, and now and then in
a speed class 3x slower for its whole life), compared 1 vs 1, 3 vs 3 and in the
shape of the default local campaign (3 launches a side, 0 B - 4 MiB, 300 then 40
samples per size).  A false claim is a comparison that prints any '+' or '-'
(a size or a regime); the rates are quoted in docs/analysis.md."""
import json

import numpy as np
import pytest

import synth
from versus.compare import compare_runs
from versus.load import load_file

NOMINAL = 0.05
LAUNCH_SD = 0.05            # log sd of a launch's factor: 4-6 % launch-to-launch spread
SIZE_SD = 0.02              # a launch's factor varies a little from size to size
SLOW_CLASS = (1 / 16, 3.0)  # probability and factor of a launch in a slow speed class
SMALL = [8, 64, 512, 4096, 16384, 65536, 262144, 1 << 20]
CAMPAIGN = synth.pow2(4 << 20)          # configs/local.toml: sizes 0:4M


def write_launch(path, rng, key, factor, sizes, large_from=65536, count=300, count_large=40):
    """One launch of an shm-like configuration: its own factor, then samples per size."""
    model = synth.hockney(300, 0.05)
    lines = [json.dumps(synth.run_record(name="shm", sizes=sizes) | {"run_id": key})]
    for n in sizes:
        f = factor * np.exp(SIZE_SD * rng.standard_normal())
        cnt = count if n < large_from else count_large
        sm = synth.samples(lambda b: f * model(b), n, cnt, rng, rel_noise=0.03, outlier_frac=0.02)
        lines.append(json.dumps({"record": "size", "bytes": n, "iterations": cnt, "warmup": 5, "batch": 1,
                                 "samples_ns": sm.tolist(), "elapsed_ns": int(sm.sum())}))
    lines.append(json.dumps({"record": "end", "status": "ok", "sizes_completed": len(sizes)}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return load_file(path)[0]


def launch_factor(rng, effect=1.0, slow=True):
    f = effect * np.exp(LAUNCH_SD * rng.standard_normal())
    return f * (SLOW_CLASS[1] if slow and rng.random() < SLOW_CLASS[0] else 1.0)


def claims_rate(tmp_path, n_a, n_b, sizes, reps, effect=1.0, seed=0, slow=True):
    """(fraction of comparisons printing a claim, fraction of sizes claimed, the
    launch-only differences the same comparisons found)."""
    claimed = sizes_claimed = total = launch_only = 0
    for rep in range(reps):
        rng = np.random.default_rng(seed * 100003 + rep)
        side = {}
        for s, n, eff in (("a", n_a, effect), ("b", n_b, 1.0)):
            side[s] = [write_launch(tmp_path / f"{s}{k}.jsonl", rng, f"{s}-{rep}-{k}", launch_factor(rng, eff, slow), sizes)
                       for k in range(n)]
        c = compare_runs(side["a"], side["b"], seed=rep)
        marks = [s.mark for s in c.sizes] + [r.mark for r in c.regimes]
        claimed += any(m in ("+", "-") for m in marks)
        sizes_claimed += sum(s.mark in ("+", "-") for s in c.sizes)
        total += len(c.sizes)
        launch_only += any(m in ("(+)", "(-)") for m in marks)
        if n_a == 1 and n_b == 1:
            assert not c.claims and all(m not in ("+", "-") for m in marks)
    return claimed / reps, sizes_claimed / total, launch_only / reps


def test_one_launch_a_side_never_claims_though_the_launches_differ(tmp_path):
    rate, per_size, launch_only = claims_rate(tmp_path, 1, 1, SMALL, 100)
    print(f"A/A 1 vs 1: {rate:.3f} of comparisons claimed; the launches differed in {launch_only:.2f}")
    assert rate == 0 and per_size == 0
    # what the within-launch marks alone would have printed: why they are no claim
    assert launch_only >= 0.5, launch_only


@pytest.mark.parametrize("sizes,reps", [(SMALL, 200), (CAMPAIGN, 100)], ids=["8-sizes", "default-campaign"])
def test_three_launches_a_side_claim_at_most_at_the_nominal_rate(tmp_path, sizes, reps):
    rate, per_size, _ = claims_rate(tmp_path, 3, 3, sizes, reps, seed=1)
    print(f"A/A 3 vs 3, {len(sizes)} sizes: {rate:.3f} of comparisons, {per_size:.4f} of sizes claimed")
    assert rate <= NOMINAL, rate


def test_three_launches_a_side_find_a_30_percent_difference(tmp_path):
    # without slow speed classes; a 3x slow launch among six (1 - (15/16)^6 = 32 % of the
    # rounds) widens the interval beyond a 30 % difference, as it should
    rate, per_size, _ = claims_rate(tmp_path, 3, 3, SMALL, 40, effect=0.7, seed=2, slow=False)
    print(f"30 % difference, 3 vs 3: found in {rate:.3f} of comparisons, {per_size:.3f} of sizes")
    assert rate >= 0.95 and per_size >= 0.8, (rate, per_size)
