"""Transitions between fitted regimes: steps vs slope changes, staircases,
and attribution to the thresholds a transport reports (name -> bytes).

A boundary between regimes A (last point x_a) and B (first point x_b) is a
*step* when the two fitted lines disagree significantly at the gap's middle
and do not meet inside the gap (a kink inside the gap would explain the data
as well); otherwise it is a *slope* change.  A true threshold t for a step
lies in (x_a, x_b]: `bytes` is x_b, `after_bytes` is x_a.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from .fit import SegmentedFit

STEP_SIGMAS = 3.0          # jump significance against the lines' prediction error
STEP_NOISE_SIGMAS = 2.0    # ... and against the scatter of one point
MATCH_TOLERANCE = 0.05     # relative slack when matching a configured threshold


@dataclass
class Transition:
    bytes: int                   # detected position: first size of the new regime (steps),
                                 # where the lines meet (slope changes)
    after_bytes: int             # last measured size of the previous regime
    before_bytes: int            # first measured size of the next regime
    kind: str                    # "step" or "slope"
    jump_us: float               # one-way jump at the gap (steps; signed)
    slope_ratio: float | None    # r_after / r_before
    label: str = ""
    threshold: str | None = None
    configured_bytes: int | None = None
    staircase: int | None = None     # index into Analysis.staircases when part of one

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Staircase:
    period_bytes: float
    period_ci_bytes: list[float] | None
    first_bytes: int
    last_bytes: int
    steps: int
    step_height_us: float           # median one-way jump per step
    members: list[int] = field(default_factory=list)   # indexes into the transitions list

    def to_dict(self) -> dict:
        return asdict(self)


def classify(fit: SegmentedFit) -> list[Transition]:
    """Steps vs slope changes, judged on the fit that placed the boundaries
    (the lower-quartile curve when the run was analysed with one)."""
    out = []
    fit = fit.locator
    x, sigma = fit.x, fit.sigma
    for A, B in zip(fit.regimes[:-1], fit.regimes[1:]):
        xa, xb = float(x[A.last]), float(x[B.first])
        xm = 0.5 * (xa + xb)
        jump = B.predict(xm) - A.predict(xm)
        pred_se = math.hypot(A.predict_se(xm), B.predict_se(xm))
        # the scatter one point of this curve actually shows about its neighbours
        # (the per-point weights may assume more: a quantile's order-statistic
        # interval is wide for a few tens of samples)
        point_sigma = min(0.5 * (sigma[A.last] + sigma[B.first]),
                          fit.rel_noise * 0.5 * (abs(fit.y[A.last]) + abs(fit.y[B.first])))
        dr = B.r_ns_per_byte - A.r_ns_per_byte
        meet = None
        if abs(dr) > 0:
            meet = (A.s_ns - B.s_ns) / dr
        meets_in_gap = meet is not None and xa <= meet <= xb
        significant = abs(jump) > STEP_SIGMAS * pred_se and abs(jump) > STEP_NOISE_SIGMAS * point_sigma
        ratio = (B.r_ns_per_byte / A.r_ns_per_byte) if A.r_ns_per_byte != 0 else None
        if significant and not meets_in_gap:
            kind, pos = "step", int(xb)
        else:
            kind = "slope"
            # the segmentation put xa on A's line and xb on B's: the kink lies between
            pos = int(round(min(max(meet, xa), xb))) if meet is not None else int(xb)
        out.append(Transition(pos, int(xa), int(xb), kind, jump / 1e3, ratio))
    return out


def find_staircases(trans: list[Transition], min_steps: int = 3,
                    rel_tol: float = 0.15) -> list[Staircase]:
    """Runs of >= min_steps steps, roughly evenly spaced (a missed step counts as
    a double period), with heights of one sign."""
    steps = [i for i, t in enumerate(trans) if t.kind == "step" and t.jump_us > 0]
    if len(steps) < min_steps:
        return []
    pos = np.array([trans[i].bytes for i in steps], dtype=np.float64)
    gaps = np.diff(pos)
    found: list[Staircase] = []
    i = 0
    while i < len(gaps):
        # grow a run from gap i whose gaps are multiples of the run's period
        period = gaps[i]
        j = i + 1
        while j < len(gaps):
            k = round(gaps[j] / period)
            if k < 1 or abs(gaps[j] - k * period) > rel_tol * period + 1:
                break
            j += 1
        members = steps[i:j + 1]
        if len(members) >= min_steps:
            p = pos[i:j + 1]
            idx = np.concatenate([[0], np.cumsum(np.round(np.diff(p) / period))])
            if idx[-1] > 0:
                A = np.column_stack([np.ones_like(idx), idx])
                coef, *_ = np.linalg.lstsq(A, p, rcond=None)
                per = float(coef[1])
                ci = None
                if len(p) > 2:
                    res = p - A @ coef
                    s2 = float(res @ res) / (len(p) - 2)
                    se = math.sqrt(s2 / float(((idx - idx.mean()) ** 2).sum()))
                    from scipy import stats as sps
                    t = float(sps.t.ppf(0.975, len(p) - 2))
                    # a position is only known to within the measurement grid
                    grid = float(np.median([trans[m].before_bytes - trans[m].after_bytes for m in members]))
                    hw = max(t * se, grid / max(idx[-1], 1))
                    ci = [float(per - hw), float(per + hw)]
                heights = [trans[m].jump_us for m in members]
                sc = Staircase(per, ci, int(p[0]), int(p[-1]), len(members),
                               float(np.median(heights)), list(members))
                for m in members:
                    trans[m].staircase = len(found)
                found.append(sc)
            i = j
        else:
            i += 1
    return found


def attribute(trans: list[Transition], thresholds: dict[str, int],
              staircases: list[Staircase] | None = None,
              tolerance: float = MATCH_TOLERANCE) -> list[dict]:
    """Label each transition; match it to at most one configured threshold
    (each threshold used at most once, nearest first).  Returns the thresholds
    that matched nothing, as dicts."""
    pairs = []
    for ti, t in enumerate(trans):
        lo, hi = t.after_bytes, t.before_bytes
        for name, val in thresholds.items():
            slack = max(tolerance * val, 1.0)
            if lo - slack <= val <= hi + slack:
                dist = 0.0 if lo <= val <= hi else min(abs(val - lo), abs(val - hi))
                pairs.append((dist, abs(val - t.bytes), ti, name, val))
    used_t, used_n = set(), set()
    for dist, _, ti, name, val in sorted(pairs):
        if ti in used_t or name in used_n:
            continue
        used_t.add(ti)
        used_n.add(name)
        t = trans[ti]
        t.threshold, t.configured_bytes = name, int(val)
        t.label = f"{name}, configured {val}, detected {_detected(t)}"
    for t in trans:
        if t.threshold:
            continue
        if t.staircase is not None and staircases:
            sc = staircases[t.staircase]
            t.label = f"staircase step (period {sc.period_bytes:.0f} B), detected {_detected(t)}"
        else:
            what = "step" if t.kind == "step" else "slope change"
            t.label = f"unexplained {what}, detected {_detected(t)}"
    return [{"name": n, "configured_bytes": int(v)} for n, v in thresholds.items() if n not in used_n]


def _detected(t: Transition) -> str:
    if t.kind == "step":
        if t.before_bytes - t.after_bytes <= 1:
            return f"{t.bytes}"
        return f"{t.bytes} (between {t.after_bytes} and {t.before_bytes})"
    return f"{t.bytes} (slope x{t.slope_ratio:.2f})" if t.slope_ratio is not None else f"{t.bytes}"
