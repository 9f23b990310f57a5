"""A loaded host under the transition detector: an interleaved sweep of 5 rounds over the ground-truth
tests' 129 sizes around an imposed threshold, where foreign load lands on runs of neighbouring sizes
within a round (each burst makes them 5 to 40 % slower, and stays for that round only).  The threshold
must be found and named in every sweep, and the steps nothing explains (each burst's edges) must stay
within the detector's budget: a boundary the segmentation chose among G gaps is tested at 0.1/G
(transitions.selected_level).  Tested at 1 %, as before, the same sweeps report more of them."""
import json

import numpy as np

import synth
from versus import transitions
from versus.analysis import summary_document
from versus.load import load_file


THRESHOLD = 12000
SWEEPS = 30


def gt_sizes(t):
    def stepped(lo, hi, step):
        return list(range(int(lo), int(hi), max(int(round(step * t)), 1)))
    return sorted(set([8, 64, 512] + stepped(t / 4, t / 2, 0.05) + stepped(t / 2, 2 * t, 0.015)
                      + stepped(2 * t, 4 * t + 1, 0.10)))


def loaded_sweep(path, seed):
    rng = np.random.default_rng(seed)
    sizes = gt_sizes(THRESHOLD)
    model = synth.piecewise((0, synth.hockney(2000, 0.05)), (THRESHOLD + 1, synth.hockney(4000, 0.05)))
    lines = [json.dumps(synth.run_record(name="loaded", thresholds={"rndv_thresh": THRESHOLD}, sizes=sizes))]
    pos = 0
    for rnd in range(5):
        slow = np.ones(len(sizes))
        for _ in range(rng.integers(1, 4)):           # one to three bursts per round
            at, length = rng.integers(0, len(sizes)), rng.integers(3, 12)
            slow[at:at + length] *= 1 + rng.uniform(0.05, 0.4)
        for k, n in enumerate(sizes):
            sm = synth.samples(lambda b: model(b) * slow[k], n, 30, rng, rel_noise=0.03, outlier_frac=0.02)
            lines.append(json.dumps({"record": "size", "bytes": n, "iterations": 30, "warmup": 20, "batch": 1,
                                     "samples_ns": sm.tolist(), "round": rnd, "position": pos}))
            pos += 1
    lines.append(json.dumps({"record": "end", "status": "ok"}))
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def counts(tmp_path):
    found, unexplained = 0, []
    for seed in range(SWEEPS):
        (run,) = load_file(loaded_sweep(tmp_path / f"s{seed}.jsonl", seed))
        d = summary_document([run])["runs"][0]
        found += any("rndv_thresh" in (t.get("threshold_names") or [t.get("threshold")])
                     and abs(t["bytes"] - THRESHOLD) <= 0.05 * THRESHOLD for t in d["transitions"])
        unexplained.append(sum(t["label"].startswith("unexplained") for t in d["transitions"]))
    return found, unexplained


def test_a_loaded_sweep_keeps_its_threshold_and_few_unexplained_steps(tmp_path):
    found, unexplained = counts(tmp_path)
    assert found == SWEEPS
    assert max(unexplained) <= 1, unexplained
    assert sum(unexplained) / SWEEPS <= 0.2, unexplained


def test_at_one_percent_the_same_sweeps_report_more(tmp_path, monkeypatch):
    monkeypatch.setattr(transitions, "selected_level", lambda gaps: transitions.REPLICATE_ALPHA)
    found, unexplained = counts(tmp_path)
    assert found == SWEEPS
    assert sum(unexplained) > 0.2 * SWEEPS, unexplained


def test_a_steps_height_lies_in_its_own_interval(tmp_path):
    """One value per quantity: the jump printed is the estimate its interval is built around (the
    replicates' median step, or the sizes' Hodges-Lehmann shift), not the regime lines' difference,
    which lay outside that interval for 15 of 59 steps of real loaded sweeps."""
    steps = 0
    for seed in range(8):
        (run,) = load_file(loaded_sweep(tmp_path / f"s{seed}.jsonl", seed))
        for t in summary_document([run])["runs"][0]["transitions"]:
            if t["kind"] == "step" and t.get("jump_ci_us"):
                lo, hi = t["jump_ci_us"]
                assert lo - 1e-9 <= t["jump_us"] <= hi + 1e-9, t
                steps += 1
    assert steps >= 8
