#!/usr/bin/env python3
"""How long the analysis takes to summarise one size of 1,000,000 samples
(load from JSONL excluded and included).  Run with the environment that has
the `versus` package: .venv/bin/python bench/analysis_speed.py"""
import json
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "reports"))
from versus.load import load_file  # noqa: E402
from versus.stats import summarise_size  # noqa: E402

N = 1_000_000


def best_of(fn, reps=5):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), float(np.median(times))


def main():
    rng = np.random.default_rng(0)
    rtt = np.rint(3000 * (1 + 0.05 * rng.standard_normal(N)) + rng.exponential(200, N)).astype(np.int64)
    summarise_size(8, rtt)
    best, med = best_of(lambda: summarise_size(8, rtt))
    print(f"summarise {N:,} samples: best {best * 1e3:.0f} ms, median {med * 1e3:.0f} ms")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "big.jsonl")
        with open(path, "w") as f:
            f.write(json.dumps({"record": "run", "schema": 1, "pattern": "pingpong", "transport": {}}) + "\n")
            f.write(json.dumps({"record": "size", "bytes": 8, "iterations": N, "warmup": 0, "batch": 1,
                                "samples_ns": rtt.tolist(), "elapsed_ns": int(rtt.sum())}) + "\n")
        best2, med2 = best_of(lambda: summarise_size(8, load_file(path)[0].sizes[0].samples_ns), 3)
        print(f"load JSONL + summarise {N:,} samples: best {best2 * 1e3:.0f} ms, median {med2 * 1e3:.0f} ms")
    return 0 if med < 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
