"""fill_lattice: a staircase's steps where the segmentation drew a ramp.  Synthetic sweeps in the
lab staircase's shape (400 to 1600 B every 8 B, five interleaved rounds, a size's visit moved as a
whole by the host: the noise that makes the segmentation see ramps).  Power: a staircase of 64 B
steps of 5.12 us all the way is reported with most of its steps.  False claims: where the truth
is a ramp of the same mean slope (after a staircase, or all the way), steps filled there and
staircases found are counted; the rule is held to its level."""
import json

import numpy as np

from versus.analysis import analyse_run
from versus.load import load_file

SIZES = list(range(400, 1601, 8))
ROUNDS = 5
STEP_NS = 5120.0          # one way


def sweep(tmp_path, one_way_ns, seed, visit_sd_ns=1600.0, sample_sd_ns=600.0, count=40):
    """A results file: every size visited once per round (interleaved), each visit moved as a
    whole by N(0, visit_sd) (the host), its samples round trips with N(0, sample_sd) each."""
    rng = np.random.default_rng(seed)
    lines = [json.dumps({"record": "run", "schema": 1, "transport": {"name": "tcp", "library": "synthetic",
                                                                     "version": "0", "provider": "", "options": {},
                                                                     "thresholds": {}},
                         "pattern": "pingpong", "variant": "blocking", "ranks": 2, "hosts": ["a", "b"]})]
    pos = 0
    for r in range(ROUNDS):
        for n in rng.permutation(SIZES):
            shift = rng.normal(0, visit_sd_ns)
            s = 2 * (one_way_ns(int(n)) + shift) + rng.normal(0, sample_sd_ns, count)
            s = np.maximum(s, 1).astype(int)
            lines.append(json.dumps({"record": "size", "bytes": int(n), "iterations": count, "warmup": 2,
                                     "batch": 1, "samples_ns": s.tolist(), "round": r, "position": pos}))
            pos += 1
    lines.append(json.dumps({"record": "end", "status": "ok", "message": "", "sizes_completed": pos}))
    p = tmp_path / f"s{seed}.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return load_file(p)[0]


def stairs(n):
    return 60000.0 + STEP_NS * ((n + 16 + 63) // 64)


def stairs_then_ramp(n):
    """The staircase up to 900 B, then a ramp of its mean slope (no steps)."""
    if n <= 900:
        return stairs(n)
    return stairs(900) + STEP_NS / 64 * (n - 900)


def filled(a):
    return [t for t in a.transitions if (t.evidence or "").startswith("on the staircase's period")]


def test_a_staircase_keeps_its_steps_through_ramps(tmp_path):
    found, fills = [], 0
    for seed in range(12):
        a = analyse_run(sweep(tmp_path, stairs, seed))
        best = max(a.staircases, key=lambda s: s.steps, default=None)
        found.append(best.steps if best and abs(best.period_bytes - 64) <= 2 else 0)
        fills += len(filled(a))
    print("steps found per sweep:", found, "filled:", fills)
    assert sum(f >= 10 for f in found) >= 8, found     # 8 of 12 here; 2 of 12 without fill_lattice


def test_no_steps_are_filled_into_a_ramp(tmp_path):
    false, sweeps = 0, 30
    for seed in range(100, 100 + sweeps):
        a = analyse_run(sweep(tmp_path, stairs_then_ramp, seed))
        false += any(t.bytes > 940 for t in filled(a))
    print(f"sweeps with a step filled into the ramp: {false} of {sweeps}")
    assert false <= 1, false


def ramp(n):
    return 60000.0 + STEP_NS / 64 * (n - 400)


def test_a_ramp_gets_no_staircase(tmp_path):
    """Without a staircase, two neighbouring steps seed a lattice: a ramp must not become one."""
    found = sum(bool(analyse_run(sweep(tmp_path, ramp, seed)).staircases) for seed in range(200, 230))
    print(f"ramps reported as a staircase: {found} of 30")
    assert found <= 1, found
