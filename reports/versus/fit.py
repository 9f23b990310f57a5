"""Segmented Hockney fits: T(n) = s + r*n per regime, regimes found by a
penalised segmented least-squares search (optimal partitioning with PELT
pruning and a BIC penalty).

The search runs on a robust per-size location (the lower quartile: load only
adds delay, so it moves far less than the median); the regimes reported are
lines through the per-size one-way medians within the boundaries it found.
Weights: each point gets sigma_i = max(c * y_i, se_i), where c is the
relative scatter of its curve about its neighbours (robust, estimated from
the data) and se_i the point's own standard error.  Lines are refitted with
bisquare reweighting.  Segments are fitted independently, so a regime
boundary can be a jump (step) or a kink (slope); `transitions.py` tells them
apart on the quartile fit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .lazy import numpy as np
from .lazy import scipy_stats as sps

MIN_SEGMENT = 3            # points per regime (a line through 2 points has no residual)
REL_NOISE_FLOOR = 0.002    # never assume the curve is smoother than 0.2 %


@dataclass
class Regime:
    """One fitted regime over sizes [from_bytes, to_bytes] (inclusive, measured sizes)."""
    first: int                 # index of the first point
    last: int                  # index of the last point (inclusive)
    from_bytes: int
    to_bytes: int
    s_ns: float                # intercept: latency
    r_ns_per_byte: float       # slope: inverse bandwidth
    cov: np.ndarray            # 2x2 covariance of (s, r)
    dof: int
    residual_rms_ns: float     # unweighted RMS of residuals
    residual_rel: float        # RMS of relative residuals

    @property
    def s_se(self) -> float:
        return float(math.sqrt(max(self.cov[0, 0], 0.0)))

    @property
    def r_se(self) -> float:
        return float(math.sqrt(max(self.cov[1, 1], 0.0)))

    def tcrit(self) -> float:
        return float(sps.t.ppf(0.975, self.dof)) if self.dof > 0 else 1.96

    def predict(self, x: float) -> float:
        return self.s_ns + self.r_ns_per_byte * x

    def predict_se(self, x: float) -> float:
        v = self.cov[0, 0] + 2 * x * self.cov[0, 1] + x * x * self.cov[1, 1]
        return float(math.sqrt(max(v, 0.0)))

    def summary(self) -> dict:
        """Plain-dict view with latency (us), bandwidth (MB/s), n_half (bytes) and 95 % CIs."""
        t = self.tcrit()
        s, r = self.s_ns, self.r_ns_per_byte
        s_ci = (s - t * self.s_se, s + t * self.s_se)
        r_ci = (r - t * self.r_se, r + t * self.r_se)

        def bw(rate):   # ns/byte -> MB/s
            return 1e3 / rate if rate > 0 else None
        bandwidth = bw(r)
        bw_ci, bw_note = None, None
        if bandwidth is not None:
            if r_ci[0] > 0:
                bw_ci = [bw(r_ci[1]), bw(r_ci[0])]
            else:
                bw_note = UNBOUNDED_BANDWIDTH
        n_half = n_half_ci = n_half_note = None
        if r > 0 and s > 0:      # meaningless for an intercept at or below zero
            n_half = s / r
            # delta method on s/r
            g = np.array([1 / r, -s / (r * r)])
            var = float(g @ self.cov @ g)
            hw = t * math.sqrt(max(var, 0.0))
            n_half_ci, n_half_note = physical_interval(n_half - hw, n_half + hw, "B")
        s_ci_us, s_note = physical_interval(s_ci[0] / 1e3, s_ci[1] / 1e3, "µs")
        return {
            "from_bytes": self.from_bytes, "to_bytes": self.to_bytes,
            "points": self.last - self.first + 1,
            "latency_us": s / 1e3, "latency_ci_us": s_ci_us, "latency_ci_note": s_note,
            "inverse_bandwidth_ns_per_byte": r,
            "inverse_bandwidth_ci_ns_per_byte": list(r_ci),
            "bandwidth_MBps": bandwidth, "bandwidth_ci_MBps": bw_ci, "bandwidth_ci_note": bw_note,
            "n_half_bytes": n_half, "n_half_ci_bytes": n_half_ci, "n_half_ci_note": n_half_note,
            "residual_rms_us": self.residual_rms_ns / 1e3,
            "residual_rel": self.residual_rel,
        }


UNBOUNDED_BANDWIDTH = "not determined: the slope's 95 % interval reaches 0 (bandwidth unbounded)"


def physical_interval(lo: float, hi: float, unit: str) -> tuple[list[float] | None, str | None]:
    """A 95 % interval of a quantity that cannot be negative (a time, a size): the
    interval, or None and the reason when it reaches below 0 or is not finite.
    Such an interval says the data cannot pin the quantity down, and numbers
    outside what is possible would only mislead."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None, "not determined: the interval is unbounded"
    if lo < 0:
        return None, f"not determined: the interval reaches below 0 {unit}"
    return [lo, hi], None


def relative_noise(x: np.ndarray, y: np.ndarray) -> float:
    """Robust relative scatter of y about the line through each point's neighbours."""
    if x.size < 5:
        return 0.02
    x0, x1, x2 = x[:-2], x[1:-1], x[2:]
    y0, y2 = y[:-2], y[2:]
    a = (x1 - x0) / (x2 - x0)
    interp = y0 + a * (y2 - y0)
    d = (y[1:-1] - interp) / np.maximum(np.abs(y[1:-1]), 1e-12)
    # var(y1 - ((1-a) y0 + a y2)) = sigma^2 (1 + (1-a)^2 + a^2)
    scale = np.sqrt(1 + (1 - a) ** 2 + a ** 2)
    mad = float(np.median(np.abs(d / scale - np.median(d / scale))))
    return 1.4826 * mad


def isolated_points(x: np.ndarray, y: np.ndarray, c: float, k: float = 6.0) -> np.ndarray:
    """Boolean mask of points that depart from both neighbours alone (a spike,
    not a step: both neighbours deviate the other way by about half as much),
    such as seed 003's odd sizes.  They are kept in the statistics but left
    out of the fit so that one size cannot create two regime boundaries.

    The last size has one neighbour only: it is a spike when it lies more
    than k*c off the line through the two sizes before it while the size
    before it lies much closer to the line through its own two predecessors
    (one size at the top cannot make a regime, but it can tilt the last one)."""
    mask = np.zeros(x.size, dtype=bool)
    if x.size < 7:
        return mask
    x0, x1, x2 = x[:-2], x[1:-1], x[2:]
    a = (x1 - x0) / (x2 - x0)
    interp = y[:-2] + a * (y[2:] - y[:-2])
    d = y[1:-1] - interp              # absolute: a spike of any height moves both
    rel = d / np.maximum(np.abs(interp), 1e-12)   # neighbours' lines by half of it
    for i in range(1, d.size - 1):
        big = abs(rel[i]) > k * c
        left, right = d[i - 1] / d[i] if d[i] else 0, d[i + 1] / d[i] if d[i] else 0
        if big and -0.8 <= left <= -0.2 and -0.8 <= right <= -0.2:
            mask[i + 1] = True

    def off_extrapolation(j):      # relative departure of y[j] from the line through j-2, j-1
        xa, xb, ya, yb = x[j - 2], x[j - 1], y[j - 2], y[j - 1]
        e = yb + (yb - ya) / (xb - xa) * (x[j] - xb) if xb > xa else yb
        return (y[j] - e) / max(abs(e), 1e-12)
    m = x.size - 1
    top = abs(off_extrapolation(m))
    if top > k * c and abs(off_extrapolation(m - 1)) <= max(top / 4, 2 * c):
        mask[m] = True
    return mask


def segment_costs_pelt(x, y, w, penalty, min_len=MIN_SEGMENT):
    """Optimal partition minimising sum(weighted RSS) + penalty per segment.

    Returns the list of segment start indexes (first is 0).  Each candidate
    keeps running sums over its own segment only, so no difference of large
    prefix sums is ever taken (weights span orders of magnitude).
    """
    m = x.size
    F = np.full(m + 1, np.inf)
    F[0] = -penalty
    last = np.zeros(m + 1, dtype=np.int64)
    # Candidate starts and their running sums live in the first k columns.
    cand = np.zeros(m + 1, dtype=np.int64)
    S, Sx, Sy, Sxx, Sxy, Syy = (np.zeros(m + 1) for _ in range(6))
    k = 1
    for j in range(m):
        wj, xj, yj = w[j], x[j], y[j]
        c = cand[:k]
        s, sx, sy = S[:k], Sx[:k], Sy[:k]
        sxx, sxy, syy = Sxx[:k], Sxy[:k], Syy[:k]
        s += wj
        sx += wj * xj
        sy += wj * yj
        sxx += wj * xj * xj
        sxy += wj * xj * yj
        syy += wj * yj * yj
        vxx = sxx - sx * sx / s
        vxy = sxy - sx * sy / s
        vyy = syy - sy * sy / s
        with np.errstate(divide="ignore", invalid="ignore"):
            rss = np.where(vxx > 0, vyy - vxy * vxy / vxx, vyy)
        np.maximum(rss, 0.0, out=rss)
        ok = (j + 1 - c) >= min_len
        base = F[c] + rss
        total = np.where(ok, base + penalty, np.inf)
        best = int(np.argmin(total))
        F[j + 1] = total[best]
        last[j + 1] = c[best]
        # PELT pruning: a start that cannot beat F[j+1] now never will.
        keep = ~ok | (base <= F[j + 1])
        if not keep.all():
            n = int(keep.sum())
            for arr in (cand, S, Sx, Sy, Sxx, Sxy, Syy):
                arr[:n] = arr[:k][keep]
            k = n
        cand[k] = j + 1
        for arr in (S, Sx, Sy, Sxx, Sxy, Syy):
            arr[k] = 0.0
        k += 1
    if not np.isfinite(F[m]):
        return [0]
    starts = []
    j = m
    while j > 0:
        starts.append(int(last[j]))
        j = int(last[j])
    return sorted(starts)


def fit_line(x, y, w):
    """Weighted least squares y = s + r x; returns (s, r, cov, dof, wrss)."""
    X = np.column_stack([np.ones_like(x), x])
    sw = np.sqrt(w)
    A = X * sw[:, None]
    b = y * sw
    coef, *_ = np.linalg.lstsq(A, b, rcond=None)
    resid = b - A @ coef
    wrss = float(resid @ resid)
    dof = x.size - 2
    try:
        xtx_inv = np.linalg.inv(A.T @ A)
    except np.linalg.LinAlgError:
        xtx_inv = np.full((2, 2), np.nan)
    # Weights are relative (c is estimated), so scale by the residual variance
    # when there is any; never below the assumed noise.
    scale = max(wrss / dof, 1.0) if dof > 0 else 1.0
    return float(coef[0]), float(coef[1]), xtx_inv * scale, dof, wrss


ROBUST_TUNING = 4.685     # Tukey bisquare constant (95 % efficiency under normal noise)


def fit_line_robust(x, y, w, iterations=20):
    """fit_line with Tukey bisquare reweighting of the standardised residuals:
    a size whose residual is far beyond both the assumed noise and the scatter
    of the others (a size hit by foreign load as a whole, a top size with one
    bad round) loses its weight instead of tilting the line.  Residuals within
    the assumed noise are never downweighted (the scale is at least 1).
    Returns (s, r, cov, dof, wrss, robust_weights)."""
    rw = np.ones_like(w)
    s, r, cov, dof, wrss = fit_line(x, y, w)
    if x.size < 5:
        return s, r, cov, dof, wrss, rw
    for _ in range(iterations):
        u = (y - (s + r * x)) * np.sqrt(w)
        live = rw > 0
        scale = max(1.4826 * float(np.median(np.abs(u[live]))), 1.0)
        z = u / (ROBUST_TUNING * scale)
        new = np.where(np.abs(z) < 1, (1 - z * z) ** 2, 0.0)
        if (new > 0).sum() < 3:
            break
        if np.allclose(new, rw, atol=1e-4):
            rw = new
            break
        rw = new
        s, r, cov, dof, wrss = fit_line(x, y, w * rw)
    dof = int((rw > 0).sum()) - 2
    if dof > 0:
        cov = cov * max(wrss / dof, 1.0) / max(wrss / max(x.size - 2, 1), 1.0)
    return s, r, cov, max(dof, 0), wrss, rw


@dataclass
class SegmentedFit:
    regimes: list[Regime]
    rel_noise: float
    excluded: list[int]            # bytes of isolated sizes left out of the fit
    penalty: float
    x: np.ndarray
    y: np.ndarray
    sigma: np.ndarray
    location: str = "median"       # what y is
    placement: "SegmentedFit | None" = None   # the fit on the robust location that placed
                                               # the boundaries (None: this one did)

    @property
    def locator(self) -> "SegmentedFit":
        """The fit whose boundaries and lines decide steps vs slope changes."""
        return self.placement if self.placement is not None else self


def _regimes(x, y, w, bounds) -> list[Regime]:
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        xs, ys, ws = x[a:b], y[a:b], w[a:b]
        s, r, cov, dof, _, rw = fit_line_robust(xs, ys, ws)
        res = (ys - (s + r * xs))[rw > 0]
        yk = ys[rw > 0]
        out.append(Regime(a, b - 1, int(xs[0]), int(xs[-1]), s, r, cov, dof,
                          float(np.sqrt(np.mean(res ** 2))),
                          float(np.sqrt(np.mean((res / np.maximum(np.abs(yk), 1e-12)) ** 2)))))
    return out


def _weights(y, se, c):
    sigma = np.maximum(c * np.abs(y), se)
    sigma = np.maximum(sigma, 1e-9 * max(float(np.abs(y).max(initial=0)), 1.0))
    return sigma, 1.0 / sigma ** 2


def fit_segmented(x, y, se=None, penalty=None, min_len=MIN_SEGMENT,
                  rel_noise=None, max_regimes=None, drop_isolated=True,
                  loc=None, loc_se=None, location="median") -> SegmentedFit:
    """Segmented Hockney fit over points (x bytes, y one-way ns), sorted by x.

    penalty defaults to a BIC term: 3 parameters per regime (s, r, breakpoint)
    times ln(number of points).

    loc / loc_se: a robust per-size location (the lower quartile) and its
    standard error.  When given, the noise estimate, the isolated sizes and
    the regime boundaries come from it (returned as `.placement`, which
    `transitions.classify` uses), and the regimes reported are y's lines
    fitted within those boundaries.  Without it y places its own boundaries.
    Every line is fitted with bisquare reweighting (fit_line_robust).
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    se = np.zeros_like(y) if se is None else np.asarray(se, dtype=np.float64)[order]
    split = loc is not None
    if split:
        ly = np.asarray(loc, dtype=np.float64)[order]
        lse = np.zeros_like(ly) if loc_se is None else np.asarray(loc_se, dtype=np.float64)[order]
    else:
        ly, lse = y, se
    lc = relative_noise(x, ly) if rel_noise is None else rel_noise
    lc = max(lc, REL_NOISE_FLOOR)
    c = max(relative_noise(x, y), REL_NOISE_FLOOR) if split and rel_noise is None else lc
    excluded: list[int] = []
    if drop_isolated:
        iso = isolated_points(x, ly, lc)
        if split:
            # a spike shows in the medians too: a size at a true step whose lower quartile
            # alone dips on a neighbour (a rate limiter's burst lets a few samples through
            # early) is not one, and dropping it would move the step by a sweep step
            iso &= isolated_points(x, y, c)
        excluded = [int(v) for v in x[iso]]
        x, y, se, ly, lse = x[~iso], y[~iso], se[~iso], ly[~iso], lse[~iso]
    m = x.size
    lsigma, lw = _weights(ly, lse, lc)
    sigma, w = _weights(y, se, c)
    if penalty is None:
        penalty = 3.0 * math.log(max(m, 2))
    if m < 2:
        return SegmentedFit([], c, excluded, penalty, x, y, sigma, location)
    if m < 2 * min_len:
        starts = [0]
    else:
        starts = segment_costs_pelt(x, ly, lw, penalty, min_len)
        if max_regimes and len(starts) > max_regimes:
            starts = starts[:max_regimes]
    bounds = starts + [m]
    placement = None
    if split:
        placement = SegmentedFit(_regimes(x, ly, lw, bounds), lc, excluded, penalty, x, ly, lsigma,
                                 "q25")
    return SegmentedFit(_regimes(x, y, w, bounds), c, excluded, penalty, x, y, sigma, location,
                        placement)


def with_boundaries(fit: SegmentedFit, before_bytes: list[int], min_points: int = 2) -> SegmentedFit:
    """The fit with its regimes cut only at the sizes given (the first size of each
    regime after a reported transition): the regimes a reader is shown are then the
    pieces between the transitions the analysis reports, one segmentation for both.
    Each regime is refitted (medians and, when there, the lower quartiles that placed
    the boundaries) within the new bounds; a cut that would leave a regime of fewer
    than min_points sizes is not made."""
    m = int(fit.x.size)
    if m == 0:
        return fit
    starts = [0]
    for b in sorted(set(int(v) for v in before_bytes)):
        i = int(np.searchsorted(fit.x, b, side="left"))
        if i - starts[-1] >= min_points and m - i >= min_points:
            starts.append(i)
    bounds = starts + [m]

    def cut(f: SegmentedFit) -> SegmentedFit:
        return replace(f, regimes=_regimes(f.x, f.y, 1.0 / f.sigma ** 2, bounds))
    return replace(cut(fit), placement=cut(fit.placement) if fit.placement is not None else None)
