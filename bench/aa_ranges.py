#!/usr/bin/env python3
"""A/A at any number of sizes: how often does a comparison of a configuration with
itself state a difference, three launches a side, at 20 sizes and at 10,000?

The launches are the synthetic ones of tests/python/test_false_claims.py (each
launch slower or faster as a whole by a log-normal 5 %, a little differently per
size, and one launch in 16 in a speed class 3x slower); 20 sizes spread
logarithmically from 1 B to 1 MiB, or every 4 B from 4 B (10,000 sizes: seed 001's
sweep).  A false claim is a comparison whose statements include a '+' or '-'; a
size marked bare '+' or '-' is counted too (it is one only inside such a statement).
Prints the rates with a 95 % Wilson interval; exits 1 when a rate's interval lies
above the nominal 5 %.

usage: bench/aa_ranges.py [--sizes 20,10000] [--reps 400,100] [--samples 40,20]
"""
import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "reports"))
sys.path.insert(0, str(HERE.parent / "tests" / "python"))

from versus.compare import compare_runs  # noqa: E402
import test_false_claims as aa  # noqa: E402

NOMINAL = 0.05


def sweep(n: int) -> list[int]:
    if n > 1000:
        return list(range(4, 4 * n + 1, 4))
    return sorted({int(v) for v in np.geomspace(1, 1 << 20, n)}) + []


def wilson(k: int, n: int) -> tuple[float, float]:
    z = 1.96
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return c - h, c + h


def rate(nsizes: int, reps: int, samples: int, tmp: Path) -> dict:
    sizes = sweep(nsizes)
    stated = sized = total = 0
    ranges = []
    t0 = time.time()
    for rep in range(reps):
        rng = np.random.default_rng(7 * rep + 1)
        side = {s: [aa.write_launch(tmp / f"{s}{k}.jsonl", rng, f"{s}-{rep}-{k}", aa.launch_factor(rng), sizes,
                                    count=samples, count_large=samples) for k in range(3)] for s in "ab"}
        c = compare_runs(side["a"], side["b"], seed=rep, draws=200)
        stated += any(r.mark in ("+", "-") for r in c.regimes)
        sized += sum(s.mark in ("+", "-") for s in c.sizes)
        total += len(c.sizes)
        ranges.append(len(c.regimes))
    lo, hi = wilson(stated, reps)
    return {"sizes": len(sizes), "reps": reps, "claimed": stated / reps, "ci": (lo, hi),
            "size_rate": sized / max(total, 1), "ranges_median": float(np.median(ranges)),
            "ranges_max": int(max(ranges)), "seconds": time.time() - t0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="20,10000")
    ap.add_argument("--reps", default="400,100")
    ap.add_argument("--samples", default="40,20", help="samples per size of each launch")
    a = ap.parse_args()
    worst = 0.0
    with tempfile.TemporaryDirectory() as d:
        for n, r, k in zip(*(map(int, v.split(",")) for v in (a.sizes, a.reps, a.samples))):
            got = rate(n, r, k, Path(d))
            worst = max(worst, got["ci"][0])
            print(f"A/A 3 vs 3, {got['sizes']} sizes, {k} samples each, {r} comparisons: "
                  f"{got['claimed']:.3f} stated a difference (95 % CI {got['ci'][0]:.3f}-{got['ci'][1]:.3f}); "
                  f"{got['size_rate']:.5f} of sizes marked bare +/-; ranges median {got['ranges_median']:g}, "
                  f"at most {got['ranges_max']}; {got['seconds']:.0f} s", flush=True)
    return 1 if worst > NOMINAL else 0


if __name__ == "__main__":
    sys.exit(main())
