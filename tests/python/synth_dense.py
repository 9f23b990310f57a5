"""A dense, noisy one-visit sweep like seed 001's staircase run (every 4 B from 4 to 40000 B, each
size visited once, in order), with what makes such a sweep hard to read:

- few samples per size (20 to 50, drawn per size), 2 % noise per sample and 1 % outliers;
- a host that runs in speed classes: every few hundred sizes (150 to 500) it switches between a fast
  class and a slow one 10 to 15 % slower (drawn per slow stretch), and a sequential sweep carries
  each stretch over a run of neighbouring sizes;
- a little scatter between visits (0.5 %: each size's visit has its own level).

The model, one way: T(n) = s + r n + height * (number of packets - 1), a packet being `period`
bytes of payload (an MSS-like step: n = k * period + 1 needs one packet more than k * period, so the
k-th step lies in the gap (k * period, k * period + 4] of this sweep).  height = 0: no step at all.
"""
import json

import numpy as np

import synth

SIZES = list(range(4, 40001, 4))
PERIOD = 1448
S_NS = 20000.0            # one-way latency
R_NS_PER_BYTE = 1.5       # ~670 MB/s
HEIGHT_NS = 3000.0        # one packet more: +3 us one way (13 % of the curve at the bottom, 2 % at the top)


def speed_classes(n_sizes, rng, run_len=(150, 500), slow=(0.10, 0.15)):
    """Per size the factor its visit runs at: stretches of run_len sizes, alternately fast (1)
    and slow (1 + a fraction drawn from `slow` per stretch), starting with either."""
    out = np.ones(n_sizes)
    i, is_slow = 0, bool(rng.random() < 0.5)
    while i < n_sizes:
        n = int(rng.integers(run_len[0], run_len[1] + 1))
        if is_slow:
            out[i:i + n] = 1.0 + rng.uniform(*slow)
        i += n
        is_slow = not is_slow
    return out


def packets(n, period=PERIOD):
    return max((int(n) - 1) // period, 0)


def dense_lines(seed=0, height_ns=HEIGHT_NS, period=PERIOD, sizes=SIZES, samples=(20, 50),
                rel_noise=0.02, visit_noise=0.005, outlier_frac=0.01, classes=True, thresholds=None, steps=()):
    """JSONL lines of one such run; the truth is in the run record's transport attrs
    (`synthetic_period`, `synthetic_height_ns`) for a reader of the file, not for the analysis.
    steps: further (from_bytes, ns) steps, each adding ns one way from that size on (a protocol switch)."""
    rng = np.random.default_rng(seed)
    factor = speed_classes(len(sizes), rng) if classes else np.ones(len(sizes))
    rec = synth.run_record(name="dense", sizes=sizes, thresholds=thresholds)
    rec["transport"]["attrs"] = {"synthetic_period": str(period), "synthetic_height_ns": str(height_ns)}
    lines = [json.dumps(rec)]
    for n, f in zip(sizes, factor):
        count = int(rng.integers(samples[0], samples[1] + 1))
        one_way = S_NS + R_NS_PER_BYTE * n + height_ns * packets(n, period)
        one_way = (one_way + sum(h for at, h in steps if n >= at)) * f
        one_way *= 1 + visit_noise * rng.standard_normal()
        base = 2.0 * one_way
        x = base * (1 + rel_noise * rng.standard_normal(count))
        out = rng.random(count) < outlier_frac
        x[out] += base * rng.uniform(0.5, 3.0, out.sum())
        sm = np.maximum(np.rint(x), 1).astype(np.int64)
        lines.append(json.dumps({"record": "size", "bytes": int(n), "iterations": count, "warmup": 10,
                                 "batch": 1, "samples_ns": sm.tolist(), "elapsed_ns": int(sm.sum())},
                                separators=(",", ":")))
    lines.append(json.dumps({"record": "end", "status": "ok", "message": "", "sizes_completed": len(sizes),
                             "end_time": "2026-01-01T00:00:10Z"}))
    return lines


def write_dense(path, **kw):
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(dense_lines(**kw)) + "\n")
    return path
