"""How often `versus history` marks a change point where there is none, and how often it
finds a real step: simulated series of per-run medians (log-normal noise, and the same
with one run in twenty hit by a 20-50 % slowdown, as a noisy host gives), run through
history.change_points exactly as the store's series are.

    .venv/bin/python bench/history_false_alarms.py [--series 1000] [--runs 30]

Prints, per noise kind and series length: the share of step-free series with any change
point (the false-alarm rate per series), and for a step of 5, 10 and 20 % in the middle
the share found within one run of its place.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reports"))
from versus.history import change_points  # noqa: E402


def series(rng, n, sigma, spikes, step=0.0):
    y = np.exp(sigma * rng.standard_normal(n))
    if step:
        y[n // 2:] *= 1 + step
    if spikes:
        hit = rng.random(n) < 0.05
        y[hit] *= 1 + rng.uniform(0.2, 0.5, hit.sum())
    return 2000.0 * y


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--series", type=int, default=1000)
    ap.add_argument("--runs", type=int, nargs="+", default=[12, 30, 100])
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    print(f"{'noise':>22} {'runs':>5} {'false alarms':>13} {'5% found':>9} {'10% found':>10} {'20% found':>10}")
    for name, sigma, spikes in (("log-normal 1 %", 0.01, False), ("log-normal 3 %", 0.03, False),
                                ("1 % + 5 % spikes", 0.01, True)):
        for n in a.runs:
            fa = sum(bool(change_points(list(series(rng, n, sigma, spikes)))) for _ in range(a.series))
            found = []
            for step in (0.05, 0.10, 0.20):
                hits = 0
                for _ in range(a.series):
                    cps = change_points(list(series(rng, n, sigma, spikes, step)))
                    hits += any(abs(c - n // 2) <= 1 for c in cps)
                found.append(hits / a.series)
            print(f"{name:>22} {n:5d} {fa / a.series:13.3f} {found[0]:9.3f} {found[1]:10.3f} {found[2]:10.3f}")


if __name__ == "__main__":
    main()
