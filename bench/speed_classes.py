#!/usr/bin/env python3
"""How often the launch speed-class rule (reports/versus/speedclass.py) calls
launches of one class two classes, and how often it finds real classes.

Synthetic launches (tests/python/synth.py): 20 sizes from 0 B to 256 KiB, 100
samples each (2 % noise, 1 % outliers), each launch's times scaled by a
log-normal launch factor and a further 2 % per launch and size.
  false   sets of 3, 5 and 10 launches of one class, launch effects sd 3, 5, 10 %
  found   3 + 7 launches 2x, 1.5x, 1.3x apart and 1 + 2 launches 2x, 1.5x apart,
          launch effects of 5 % within each class: the two classes, with the
          right membership sizes

usage: bench/speed_classes.py [--sets 2000] [--found-sets 200]
"""
import argparse
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "reports"))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))

import synth  # noqa: E402
from versus.load import load_file  # noqa: E402
from versus.speedclass import speed_classes  # noqa: E402

SIZES = [0] + [1 << k for k in range(0, 19)]


def launch_set(d, rng, factors, per_size=0.02, count=100):
    runs = []
    for i, f in enumerate(factors):
        g = dict(zip(SIZES, np.exp(rng.normal(0, per_size, len(SIZES)))))
        path = os.path.join(d, f"L{i}.jsonl")
        synth.write_run(path, lambda n, f=f, g=g: (2000 + 0.1 * n) * f * g[n], SIZES, count=count,
                        seed=int(rng.integers(1 << 31)), launch_id=i, run_id=f"launch-{i}")
        runs += load_file(path)
    return runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=2000, help="sets of one class per case")
    ap.add_argument("--found-sets", type=int, default=200, help="sets with two classes per case")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        for sd in (0.03, 0.05, 0.10):
            for n in (3, 5, 10):
                rng = np.random.default_rng(12345 + n)
                split = sum(speed_classes(launch_set(d, rng, np.exp(rng.normal(0, sd, n))))["count"] > 1
                            for _ in range(args.sets))
                print(f"one class, {n:2d} launches, launch effects {sd:.0%}: split in {split} of {args.sets} "
                      f"({100 * split / args.sets:.2f} %)", flush=True)
        for fast, slow, factor in ((3, 7, 2.0), (3, 7, 1.5), (3, 7, 1.3), (1, 2, 2.0), (1, 2, 1.5)):
            rng = np.random.default_rng(7)
            hit = 0
            for _ in range(args.found_sets):
                f = np.exp(rng.normal(0, 0.05, fast + slow)) * np.r_[np.ones(fast), np.full(slow, factor)]
                sc = speed_classes(launch_set(d, rng, rng.permutation(f)))
                hit += sc["count"] == 2 and sorted(len(c["launches"]) for c in sc["classes"]) == sorted([fast, slow])
            print(f"{fast} + {slow} launches {factor}x apart: found in {hit} of {args.found_sets}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
