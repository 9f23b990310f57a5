"""The ranges of sizes a comparison states its claims over.

A comparison of two configurations over thousands of sizes cannot test every
size and adjust for their number: with ten thousand sizes a per-size test
adjusted over them has no power left, and the statements alternate between
"no significant difference" and "35x slower" at neighbouring sizes whose
intervals all exclude 1.  Inference is made over a few ranges instead.

The ranges are found on the curve of per-size log ratios log(A/B) by binary
segmentation into pieces of constant level: a piece is split at the cut that
removes the most squared deviation from its mean among the cuts whose two
sides differ by at least the comparison's minimum effect (2 %: ranges closer
than that are one to a reader), as long as that removal
exceeds a penalty of PENALTY_PER_LN * ln(m) noise variances (m sizes), the
number of ranges stays at most MAX_RANGES and each piece keeps at least
`min_size(m)` sizes.  The noise is how much the curve moves from one size to
the next (1.4826 * MAD of the first differences / sqrt 2): the launch effect
that every size of a launch shares moves the whole curve and is no reason to
split it; the test of each range (compare.py) takes the launch as the unit,
so that shared effect is in its interval.

Only the ranges' count enters the claims' family: each range's interval is
simultaneous at 95 % over the ranges (Bonferroni: each at 1 - 0.05/K).
"""
from __future__ import annotations

import math

from .lazy import numpy as np

MAX_RANGES = 8             # a reader can take in this many statements
PENALTY_PER_LN = 3.0       # penalty per split: 3 ln m noise variances (the fits' BIC term)
NOISE_FLOOR = 1e-3         # never assume the log-ratio curve is smoother than 0.1 %


def min_size(m: int) -> int:
    """The fewest sizes a range may have: 2, and 1 % of the sizes on a long sweep
    (a cluster of a few noisy sizes is no range)."""
    return max(2, m // 100)


def curve_noise(lr: np.ndarray) -> float:
    """The size-to-size scatter of the log-ratio curve (robust)."""
    if lr.size < 3:
        return NOISE_FLOOR
    d = np.diff(lr)
    mad = float(np.median(np.abs(d - np.median(d))))
    return max(1.4826 * mad / math.sqrt(2), NOISE_FLOOR)


def _best_cut(y: np.ndarray, lo: int, hi: int, k: int, min_step: float) -> tuple[float, int]:
    """(reduction of the sum of squares, cut index) of the best single cut of y[lo:hi]
    into two pieces of at least k whose levels differ by at least min_step."""
    seg = y[lo:hi]
    n = seg.size
    if n < 2 * k:
        return 0.0, -1
    c1 = np.cumsum(seg)
    total = c1[-1]
    i = np.arange(k, n - k + 1)                 # left piece has i points
    left = c1[i - 1]
    # SS(whole) - SS(left) - SS(right) = n_l n_r / n (mean_l - mean_r)^2
    step = np.abs(left / i - (total - left) / (n - i))
    gain = np.where(step >= min_step, step ** 2 * i * (n - i) / n, 0.0)
    j = int(np.argmax(gain))
    return float(gain[j]), lo + int(i[j])


def split_ranges(lr, max_ranges: int = MAX_RANGES, se=None, min_step: float = 0.0) -> list[tuple[int, int]]:
    """Index ranges [a, b) covering the per-size log ratios lr (sizes ascending).
    se: the sizes' own standard errors of log(A/B) where they are independent of
    one another (one launch a side: the samples are the unit); the noise is then
    at least their median (a few sizes say little about their own scatter).
    min_step: the least difference of log ratio between two neighbouring ranges (the
    comparison's minimum effect: ranges that differ by less are one to a reader)."""
    y = np.asarray(lr, dtype=np.float64)
    m = y.size
    if m < 4:
        return [(0, m)] if m else []
    sigma = curve_noise(y)
    if se is not None and len(se):
        sigma = max(sigma, float(np.median(se)))
    penalty = PENALTY_PER_LN * math.log(m) * sigma * sigma
    k = min_size(m)
    pieces = [(0, m)]
    cuts = {(0, m): _best_cut(y, 0, m, k, min_step)}
    while len(pieces) < max_ranges:
        best = max(pieces, key=lambda p: cuts[p][0])
        gain, at = cuts[best]
        if at < 0 or gain <= penalty:
            break
        i = pieces.index(best)
        left, right = (best[0], at), (at, best[1])
        pieces[i:i + 1] = [left, right]
        for p in (left, right):
            cuts[p] = _best_cut(y, p[0], p[1], k, min_step)
    return pieces
