"""Transitions between fitted regimes: steps vs slope changes, staircases,
and attribution to the thresholds a transport reports (name -> bytes).

A boundary between regimes A (last point x_a) and B (first point x_b) is a
*step* when the two fitted lines disagree significantly at the gap's middle
and do not meet inside the gap (a kink inside the gap would explain the data
as well); otherwise it is a *slope* change.  A true threshold t for a step
lies in (x_a, x_b]: `bytes` is x_b, `after_bytes` is x_a.

A boundary that no configured threshold explains is reported as a transition
only when its effect stands above the noise between replicates of the sweep (replicate_curves: the rounds of an
interleaved sweep, the launches analysed together, else consecutive blocks of
each size's samples): per replicate the two regimes' lines are fitted again
and the effect measured (a step's jump at the gap, a slope change's difference
over the two regimes), and Student's t over the replicates must exceed the
1 % two-sided quantile (replicate_test).  A threshold the transport reports
is matched to the strongest rising step whose gap meets a window from
MATCH_BELOW_BYTES + 5 % below the configured value (headers make a library
switch a few dozen to a few hundred bytes before its configured limit) to 5 %
above it; thresholds of one value are one candidate naming all of them; a
step down is never given a threshold's name.  Staircases are looked for among
the steps no threshold explains.

Without replicates (each size visited once) the sizes are the units: each of m
boundaries is tested at min(1 %, 0.1 / m) with a window as wide as that level
needs (boundary_level, window_for), and reported_only sorts the steps no
threshold names: the rising steps on the sweep's one dominant period are a
staircase (dominant_lattice), and any other step must be larger than every
level shift the other way (a host's slow phase starts with a step up and ends
with a step down of the same factor).  left_out_summary counts what was left out.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from functools import lru_cache

from .lazy import numpy as np

from .fit import SegmentedFit
from .lazy import scipy_stats

STEP_SIGMAS = 3.0          # jump significance against the lines' prediction error
STEP_NOISE_SIGMAS = 2.0    # ... and against the scatter of one point
MATCH_TOLERANCE = 0.05     # relative slack when matching a configured threshold
MATCH_BELOW_BYTES = 512    # ... and how far below it headers may move the step
# Thresholds a transport computes for the payload itself (its headers and framing already
# counted): no header slack below, and a narrow window: EXACT_TOLERANCE, at least a sweep step.
# With the library window the packet step's name went to a padding step 112 B below it (1280
# for 1392) in a launch whose real packet step the noise hid.
EXACT_THRESHOLDS: set[str] = {"mss_payload"}
EXACT_TOLERANCE = 0.02
EXACT_MIN_BYTES = 8
REPLICATE_ALPHA = 0.01     # two-sided level of the replicate test of a boundary
MIN_REPLICATES = 3
MAD_REPLICATES = 5         # from this many replicates their scatter is their MAD, below it their SD
# Thresholds above which a library documents a path that can be faster: UCX's rendezvous
# moves large messages zero-copy (one CMA copy between processes here) where its eager
# protocol copies twice, and on this kind of host it is the faster one at 20 KiB in some
# launches (a step down of ~3 us in 2 of 14).  Only these may name a step down.
FASTER_ABOVE: set[str] = {"rndv_thresh", "UCX_RNDV_THRESH"}


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
    threshold_names: list[str] = field(default_factory=list)   # every name of the matched value
    replicate_t: float | None = None # Student's t of the effect over the replicates
    between_sizes_p: float | None = None  # without replicates: p of the effect against the sizes' scatter
    replicates: int | None = None    # how many, and of what (replicate_curves)
    effect_rel: float | None = None  # the effect over the curve's level (step: jump; slope: over the regimes)
    noise_rel: float | None = None   # the curve's relative scatter about its neighbours
    settles: str | None = None       # a bend just after a matched threshold's switch, named for it
    stands_out: bool | None = None   # the replicate test's verdict (None: no replicates)
    jump_ci_us: list[float] | None = None   # 95 % interval of the jump (step_interval)
    test_level: float | None = None  # the level its test is held to (boundary_level: Bonferroni over many boundaries)
    window_sizes: int | None = None  # ... and the sizes each side of the gap it compared
    evidence: str | None = None      # why a boundary no threshold names is reported, or why not (reported_only)
    lattice_index: int | None = None # its step number on the sweep's dominant period (dominant_lattice)

    def to_dict(self) -> dict:
        d = asdict(self)
        del d["settles"]            # said in the label
        del d["lattice_index"]      # said by its staircase
        return d


@dataclass
class Staircase:
    period_bytes: float
    period_ci_bytes: list[float] | None
    first_bytes: int
    last_bytes: int
    steps: int
    step_height_us: float           # median one-way jump per step
    members: list[int] = field(default_factory=list)   # indexes into the transitions list
    page_bytes: int | None = None   # the host's page size, when the steps sit at its multiples
    meaning: str | None = None      # what the run record says the period is (explain_staircases)

    def to_dict(self) -> dict:
        d = asdict(self)
        if d["meaning"] is None:
            del d["meaning"]
        return d


def jump_words(t: dict) -> str:
    """A transition's jump (Transition.to_dict()) with its 95 % interval, in us one way."""
    ci = t.get("jump_ci_us")
    if not ci:
        return f"{t['jump_us']:+.3f} us"
    # a jump is a signed difference, so its interval is written as one ("from a to b"), as
    # the comparisons' effects are; one that includes 0 does not tell the jump's sign
    sure = "" if ci[0] > 0 or ci[1] < 0 else ": its size is not determined"
    return f"{t['jump_us']:+.3f} us (95 % CI from {ci[0]:+.3f} to {ci[1]:+.3f} us{sure})"


def staircase_sentence(sc: dict) -> str:
    """A staircase (Staircase.to_dict()) in words: period, its interval, steps, height, where."""
    ci = sc.get("period_ci_bytes")
    return (f"staircase: period {sc['period_bytes']:.0f} B" + (" (the page size)" if sc.get("page_bytes") else "")
            + (f", consistent with [{ci[0]:.0f}, {ci[1]:.0f}]" if ci else "")
            + f", {sc['steps']} steps of {sc['step_height_us']:.3f} us from {sc['first_bytes']} to {sc['last_bytes']} B"
            + (f": {sc['meaning']}" if sc.get("meaning") else ""))


def explain_staircases(staircases: list[Staircase], attrs: dict) -> None:
    """A period the transport's own framing makes: a module that pads each payload to a multiple
    of payload_align bytes puts a step on every multiple over a link slow enough to show it."""
    try:
        align = int(attrs.get("payload_align", 0))
    except ValueError:
        return
    for sc in staircases:
        if align > 0 and not sc.page_bytes and abs(sc.period_bytes - align) <= max(1.0, 0.02 * align):
            sc.meaning = f"the transport pads each payload to a multiple of {align} B"


def replicate_curves(visits: list[list[np.ndarray]], quantile: float) -> tuple[np.ndarray, str] | None:
    """Replicates of the location curve: visits[i] holds the sample arrays (reported
    time, in visiting order) of the i-th fitted size.  The k-th visit of every size
    is replicate k (a round of an interleaved sweep, or a launch when several were
    pooled) when every size has at least MIN_REPLICATES.  Returns a K x sizes array
    of `quantile`s and what the replicates are, or None (then the sizes themselves
    are the units: between_sizes_test).  Blocks of one visit's samples are no
    replicates: a burst of load or a speed class lasts a whole visit, and on a
    sequential sweep it moves a run of neighbouring sizes as one."""
    k = min((len(v) for v in visits), default=0)
    if k >= MIN_REPLICATES:
        return (np.array([[np.quantile(v[j], quantile) for v in visits] for j in range(k)]),
                "visits (rounds or launches)")
    return None


def _theil_sen(x: np.ndarray, y: np.ndarray) -> float:
    """The median of the pairwise slopes: a line's slope that one wild point cannot tilt."""
    i, j = np.triu_indices(x.size, 1)
    return float(np.median((y[j] - y[i]) / (x[j] - x[i])))


EDGE_SIZES = 5             # sizes each side of a gap that measure a step's height per replicate
MAX_EDGE_SIZES = 12        # the widest window a one-visit sweep's step test takes (window_for)
# Boundaries of a one-visit sweep that may stand out by chance, expected per sweep: each of m
# boundaries is tested at REPLICATE_ALPHA or at this over m, whichever is smaller (boundary_level).
# Up to 10 boundaries the level stays 1 %; a 10,000-size sweep on a host with speed classes gets
# dozens, and at 1 % each a few of them stood out by chance alone.
FALSE_BOUNDARY_BUDGET = 0.1


def boundary_level(boundaries: int) -> float:
    """The level each boundary of a one-visit sweep is tested at: REPLICATE_ALPHA, or
    FALSE_BOUNDARY_BUDGET / boundaries when that is smaller (Bonferroni over the boundaries
    the segmentation placed, so that the expected number reported by chance stays under
    FALSE_BOUNDARY_BUDGET however many it placed)."""
    return min(REPLICATE_ALPHA, FALSE_BOUNDARY_BUDGET / max(boundaries, 1))


def selected_level(gaps: int) -> float:
    """The level a boundary is tested at over the replicates (rounds or launches).  The
    segmentation placed it where the pooled curve moves most among `gaps` places (the gaps
    between neighbouring sizes), and the replicates it is then tested on are the same data:
    tested at REPLICATE_ALPHA, the largest of many chance movements passes far more often
    than that (on a loaded host, 3 of 18 imposed-threshold sweeps reported two steps no
    threshold explains, each with t 4.7 to 6.6 over 5 rounds against the 4.6 of 1 %).  So
    each is held to Bonferroni over the gaps, FALSE_BOUNDARY_BUDGET / gaps (at most
    REPLICATE_ALPHA): under no transition at all, the chance that any gap of the sweep
    passes stays under FALSE_BOUNDARY_BUDGET."""
    return min(REPLICATE_ALPHA, FALSE_BOUNDARY_BUDGET / max(gaps, 1))


def window_for(level: float) -> int:
    """The fewest sizes each side of a gap, at least EDGE_SIZES (at most MAX_EDGE_SIZES), with
    which the exact Mann-Whitney test can reach `level` at all: with w a side its smallest
    two-sided p is 2 / C(2w, w) (0.0079 with 5, 0.0022 with 6, 0.00058 with 7)."""
    w = EDGE_SIZES
    while w < MAX_EDGE_SIZES and 2.0 / math.comb(2 * w, w) >= level:
        w += 1
    return w


def _edge_levels(x: np.ndarray, y: np.ndarray, A, B, w: int = EDGE_SIZES) -> tuple[np.ndarray, np.ndarray]:
    """The last w (EDGE_SIZES) values of regime A and the first of B in curve y, each
    moved along its regime's fitted slope to the gap's middle."""
    xm = 0.5 * (x[A.last] + x[B.first])
    ia = np.arange(max(A.first, A.last - w + 1), A.last + 1)
    ib = np.arange(B.first, min(B.last, B.first + w - 1) + 1)
    return y[ia] - A.r_ns_per_byte * (x[ia] - xm), y[ib] - B.r_ns_per_byte * (x[ib] - xm)


@lru_cache(maxsize=None)
def _mw_null_cdf(n1: int, n2: int) -> np.ndarray:
    """P(U <= u), u = 0 .. n1 n2, for the Mann-Whitney U of n1 against n2 values under the
    null, exactly: the counts of U are the coefficients of the Gaussian binomial
    [n1 + n2 choose n1] (the largest value comes from one sample or the other)."""
    prev = [np.ones(1)] * (n2 + 1)           # i = 0 values of the first sample
    for i in range(1, n1 + 1):
        row = [np.ones(1)]
        for j in range(1, n2 + 1):
            out = np.zeros(i * j + 1)
            out[j:j + prev[j].size] += prev[j]    # the largest is the first sample's: above all j
            out[:row[j - 1].size] += row[j - 1]   # ... or the second's
            row.append(out)
        prev = row
    return np.cumsum(prev[n2]) / math.comb(n1 + n2, n1)


def _mw_lower_count(n1: int, n2: int, tail: float = 0.025) -> int:
    """The largest c with P(U <= c) <= tail under the null (_mw_null_cdf), or -1 when even
    U = 0 is more likely than that."""
    return int(np.searchsorted(_mw_null_cdf(n1, n2), tail, side="right")) - 1


def _mw_exact_p(b: np.ndarray, a: np.ndarray) -> float:
    """The exact two-sided Mann-Whitney p of b against a (ties count a half): scipy's
    mannwhitneyu(b, a, method="exact"), from the cached null distribution."""
    u = float((b[:, None] > a[None, :]).sum() + 0.5 * (b[:, None] == a[None, :]).sum())
    cdf = _mw_null_cdf(b.size, a.size)
    low = min(u, b.size * a.size - u)
    return float(min(1.0, 2.0 * cdf[int(math.floor(low))]))


def step_interval(x: np.ndarray, y: np.ndarray, A, B, w: int = EDGE_SIZES) -> list[float] | None:
    """The 95 % interval (ns) of a step between the last w sizes of A and the first w of B (each
    moved along its regime's line to the gap), the Mann-Whitney test's own interval: the
    order statistics c + 1 and n1 n2 - c of the n1 n2 differences after - before, c the test's
    2.5 % critical count (the Hodges-Lehmann interval).  None with too few sizes for one."""
    ra, rb = _edge_levels(x, y, A, B, w)
    c = _mw_lower_count(ra.size, rb.size)
    if c < 0:
        return None
    d = np.sort((rb[:, None] - ra[None, :]).ravel())
    return [float(d[c]), float(d[d.size - 1 - c])]


def replicate_test(x: np.ndarray, reps: np.ndarray, A, B, kind: str) -> float:
    """A robust t over the replicates of a boundary's effect (replicate_effect)."""
    return replicate_effect(x, reps, A, B, kind)[1]


def replicate_effect(x: np.ndarray, reps: np.ndarray, A, B, kind: str) -> tuple[float, float]:
    """(effect, t): a boundary's median effect over the replicates and its robust t.  A step's effect in
    one replicate: the median over the last EDGE_SIZES sizes of regime B minus that
    over the first of A, each moved along its regime's slope to the gap's middle; a
    slope change's: the difference of the two regimes' Theil-Sen slopes in that
    replicate over half the span of both.  Medians, because one visit of a size
    that a burst of foreign load covered sits milliseconds high.  The statistic is
    the median effect over its standard error from the MAD (1.4826 MAD / sqrt K)."""
    centre, se = _replicate_centre_se(x, reps, A, B, kind)
    if se == 0:
        return centre, (math.copysign(math.inf, centre) if centre != 0 else 0.0)
    return centre, centre / se


def _replicate_centre_se(x: np.ndarray, reps: np.ndarray, A, B, kind: str) -> tuple[float, float]:
    """The median effect over the replicates (replicate_effect) and its robust standard error."""
    eff = []
    if kind == "step":
        for y in reps:
            la, lb = _edge_levels(x, y, A, B)
            eff.append(np.median(lb) - np.median(la))
    else:
        half_span = 0.5 * (x[B.last] - x[A.first])
        xa, xb = x[A.first:A.last + 1], x[B.first:B.last + 1]
        for y in reps:
            eff.append((_theil_sen(xb, y[B.first:B.last + 1]) - _theil_sen(xa, y[A.first:A.last + 1])) * half_span)
    eff = np.array(eff, dtype=np.float64)
    centre = float(np.median(eff))
    if eff.size < MAD_REPLICATES:
        # the MAD of three or four values is the smallest gap between two of them, zero
        # when two replicates agree by chance: their standard deviation instead (seed 001's
        # three launches of 10,000 sizes had 124 boundaries 'stand out' on the MAD)
        scale = float(eff.std(ddof=1))
    else:
        scale = 1.4826 * float(np.median(np.abs(eff - centre)))
    return centre, scale / math.sqrt(eff.size)


def between_sizes_test(x: np.ndarray, y: np.ndarray, A, B, kind: str, w: int = EDGE_SIZES) -> float:
    """The two-sided p-value of a boundary's effect when the sweep has no replicates
    (each size visited once or twice): each size is one visit, so the scatter between
    neighbouring sizes is the noise.  A step: the exact Mann-Whitney test of the last
    w (EDGE_SIZES) sizes of A against the first w of B, each moved along its regime's line
    to the gap's middle (with 5 a side it says "stands out" at 1 % only when every size
    after the gap lies beyond every size before it: p = 2/252).  A slope change: t of the
    difference of the two regimes' least-squares slopes, each with its standard error
    from its own sizes' scatter about its line, widened for the lag-1 autocorrelation
    of that scatter (and the degrees of freedom cut to the independent sizes); a
    regime of fewer than 4 sizes cannot show a slope change."""
    from scipy import stats as sps
    if kind == "step":
        ra, rb = _edge_levels(x, y, A, B, w)
        return _mw_exact_p(rb, ra)
    fits = []
    for R in (A, B):
        xr, yr = x[R.first:R.last + 1], y[R.first:R.last + 1]
        if xr.size < 4:
            return 1.0
        res = sps.linregress(xr, yr)
        e = yr - (res.intercept + res.slope * xr)
        # neighbouring sizes share the machine's state (a sequential sweep's slow
        # phases): lag-1 autocorrelation rho leaves n (1 - rho) / (1 + rho) independent sizes
        rho = float(np.clip(np.corrcoef(e[:-1], e[1:])[0, 1], 0.0, 0.95)) if np.std(e) > 0 else 0.0
        inflate = (1 + rho) / (1 - rho)
        fits.append((res.slope, res.stderr * math.sqrt(inflate), xr.size / inflate))
    (sa, ea, na), (sb, eb, nb) = fits
    se = math.hypot(ea, eb)
    if se == 0:
        return 0.0 if sa != sb else 1.0
    return float(2 * sps.t.sf(abs(sb - sa) / se, max(na + nb - 4, 1.0)))


def t_critical(replicates: int, level: float = REPLICATE_ALPHA) -> float:
    """Student's t of a two-sided test at `level` over the replicates."""
    from scipy import stats as sps
    return float(sps.t.ppf(1 - level / 2, replicates - 1))


def classify(fit: SegmentedFit, replicates: tuple[np.ndarray, str] | None = None,
             test_noise: bool = False) -> list[Transition]:
    """Steps vs slope changes, judged on the fit that placed the boundaries
    (the lower-quartile curve when the run was analysed with one).  With
    replicates of that curve (replicate_curves), each says whether its effect
    stands above the replicates' noise (stands_out; reported_only keeps those);
    without them, when test_noise, whether it stands above the scatter between
    sizes (between_sizes_test), each of the m boundaries at boundary_level(m) with
    the window that level needs (window_for).  Each step's jump gets a 95 %
    interval (jump_ci_us): from the replicates (the median effect's robust
    standard error, Student's t), else from the sizes each side (step_interval),
    else, and for slope changes, from the two lines' prediction errors."""
    out = []
    fit = fit.locator
    x, sigma = fit.x, fit.sigma
    alpha = boundary_level(len(fit.regimes) - 1)
    window = window_for(alpha)
    alpha_rep = selected_level(len(x) - 1)
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
        tr = Transition(pos, int(xa), int(xb), kind, jump / 1e3, ratio)
        level = max(abs(A.predict(xm)), 1e-9)
        effect = jump if kind == "step" else dr * 0.5 * (float(x[B.last]) - float(x[A.first]))
        tr.effect_rel = effect / level
        tr.noise_rel = fit.rel_noise
        z95 = 1.959963984540054
        ci = [(jump - z95 * pred_se) / 1e3, (jump + z95 * pred_se) / 1e3]
        estimate = None
        if replicates is not None and len(replicates[0]) >= MIN_REPLICATES:
            reps = replicates[0]
            tr.replicate_t, tr.replicates = replicate_test(x, reps, A, B, kind), len(reps)
            crit = t_critical(len(reps), alpha_rep)
            tr.stands_out = abs(tr.replicate_t) > crit
            tr.test_level = alpha_rep
            if not tr.stands_out:
                tr.evidence = (f"within the replicates' noise (t {abs(tr.replicate_t):.1f} over {len(reps)} "
                               f"replicates, {crit:.1f} needed when the segmentation chose it among "
                               f"{len(x) - 1} gaps)")
            if kind == "step":
                centre, se = _replicate_centre_se(x, reps, A, B, kind)
                half = float(scipy_stats.t.ppf(0.975, len(reps) - 1)) * se
                ci = [(centre - half) / 1e3, (centre + half) / 1e3]
                estimate = centre
        elif test_noise:
            tr.between_sizes_p = between_sizes_test(x, fit.y, A, B, kind, window)
            tr.test_level, tr.window_sizes = alpha, (window if kind == "step" else None)
            tr.stands_out = tr.between_sizes_p < alpha
            if kind == "step":
                sized = step_interval(x, fit.y, A, B, window)
                if sized is not None:
                    ci = [v / 1e3 for v in sized]
                    ra, rb = _edge_levels(x, fit.y, A, B, window)
                    estimate = float(np.median((rb[:, None] - ra[None, :]).ravel()))   # Hodges-Lehmann
        if kind == "step" and estimate is not None:
            # one value: the step's height is the estimate its interval is built around (the lines'
            # difference at the gap extrapolates both regimes and may lie outside that interval)
            tr.jump_us = estimate / 1e3
            tr.effect_rel = estimate / level
        tr.jump_ci_us = ci
        out.append(tr)
    return out


PAGE_HEADER_BYTES = 128    # how far below a page multiple a page step may show (a transport's header)


def feasible_periods(lo: np.ndarray, hi: np.ndarray, idx: np.ndarray,
                     slack: float = 1.0) -> tuple[float, float] | None:
    """The periods P for which one offset phi puts phi + idx[i] * P inside every
    step's gap (lo[i], hi[i]] (each widened by slack): a step's position is known
    only to its gap.  For a given P an offset exists exactly when every pair of
    gaps agrees, so the set is [max of the pairs' lower bounds, min of their upper
    bounds].  None when no period fits them all."""
    p_lo, p_hi = 0.0, math.inf
    for i in range(len(idx)):
        for j in range(i + 1, len(idx)):
            dk = float(idx[j] - idx[i])
            if dk <= 0:
                continue
            p_lo = max(p_lo, (lo[j] - hi[i] - 2 * slack) / dk)
            p_hi = min(p_hi, (hi[j] - lo[i] + 2 * slack) / dk)
    return (p_lo, p_hi) if p_lo < p_hi and math.isfinite(p_hi) else None


def at_page_boundary(t: Transition, page: int, narrow: bool = True) -> int | None:
    """k when the step's gap meets [k * page - PAGE_HEADER_BYTES, k * page] (k >= 1),
    else None; when `narrow`, only for a gap at most a quarter page wide (a wider
    gap meets a page boundary too easily to say anything on its own)."""
    if narrow and t.before_bytes - t.after_bytes > page / 4:
        return None
    k = math.ceil((t.after_bytes + 1) / page)          # first multiple above the gap's start
    return k if k >= 1 and k * page - PAGE_HEADER_BYTES <= t.before_bytes else None


def _staircase(trans: list[Transition], members: list[int], idx: np.ndarray, period: float,
               page: int | None = None) -> Staircase:
    """A Staircase of trans[members] (idx: each member's step number): the period is
    the middle of the feasible periods (feasible_periods), which are its interval;
    when the gaps allow none (a step placed a size off by noise), a least-squares
    line through the positions with Student's t, widened to the grid."""
    p = np.array([trans[m].bytes for m in members], dtype=np.float64)
    lo = np.array([trans[m].after_bytes for m in members], dtype=np.float64)
    hi = np.array([trans[m].before_bytes for m in members], dtype=np.float64)
    feas = feasible_periods(lo, hi, idx)
    if feas is not None:
        per, ci = 0.5 * (feas[0] + feas[1]), [float(feas[0]), float(feas[1])]
    else:
        A = np.column_stack([np.ones_like(idx), idx])
        coef, *_ = np.linalg.lstsq(A, p, rcond=None)
        per, ci = float(coef[1]), None
        if len(p) > 2:
            res = p - A @ coef
            s2 = float(res @ res) / (len(p) - 2)
            se = math.sqrt(s2 / float(((idx - idx.mean()) ** 2).sum()))
            from scipy import stats as sps
            t = float(sps.t.ppf(0.975, len(p) - 2))
            cell = float(np.median(hi - lo))           # a position is known only to its gap
            hw = max(t * se, cell / max(idx[-1], 1))
            ci = [float(per - hw), float(per + hw)] if per - hw > 0 else None   # a period below 0 B: no interval
    if page is not None:
        per = float(page)
    heights = [trans[m].jump_us for m in members]
    return Staircase(float(per), ci, int(p[0]), int(p[-1]), len(members),
                     float(np.median(heights)), list(members), page)


def find_staircases(trans: list[Transition], min_steps: int = 3,
                    rel_tol: float = 0.15, page_bytes: int | None = None) -> list[Staircase]:
    """Runs of >= min_steps steps, roughly evenly spaced (a missed step counts as
    a double period), with heights of one sign.  With the host's page size, the
    rising steps at page boundaries (at_page_boundary) are taken first as one
    staircase of that period when two or more of them have narrow gaps."""
    steps = [i for i, t in enumerate(trans) if t.kind == "step" and t.jump_us > 0 and not t.threshold]
    found: list[Staircase] = []
    if page_bytes:
        # two narrow gaps at page boundaries establish the staircase; then every
        # rising step whose gap meets a page boundary belongs to it
        narrow = sum(at_page_boundary(trans[i], page_bytes) is not None for i in steps)
        paged = [(i, at_page_boundary(trans[i], page_bytes, narrow=False)) for i in steps]
        paged = [(i, k) for i, k in paged if k is not None]
        if narrow >= 2:
            members = [i for i, _ in paged]
            found.append(_staircase(trans, members, np.array([k for _, k in paged], dtype=np.float64),
                                    page_bytes, page=page_bytes))
            steps = [i for i in steps if i not in members]
    # the sweep's dominant period (reported_only marked its steps): one staircase
    lattice = [i for i in steps if trans[i].lattice_index is not None]
    if len(lattice) >= min_steps:
        idx = np.array([trans[i].lattice_index for i in lattice], dtype=np.float64)
        per = float((trans[lattice[-1]].bytes - trans[lattice[0]].bytes) / max(idx[-1] - idx[0], 1.0))
        found.append(_staircase(trans, lattice, idx - idx[0], per))
        steps = [i for i in steps if i not in lattice]
    if len(steps) < min_steps:
        return _number(trans, found)
    pos = np.array([trans[i].bytes for i in steps], dtype=np.float64)
    grid = np.array([trans[i].before_bytes - trans[i].after_bytes for i in steps], dtype=np.float64)
    gaps = np.diff(pos)

    def chain(i, period):
        """End of the run from gap i whose gaps are one period, or two (one step missed),
        within rel_tol of it plus the grid (a step's position is known only to its gap).
        No more than one missed step in a row: across a wide gap any period fits, and two
        steps near each other would otherwise make a staircase with a distant third."""
        j = i
        while j < len(gaps):
            k = round(gaps[j] / period)
            if not 1 <= k <= 2 or abs(gaps[j] - k * period) > rel_tol * period + max(grid[j], grid[j + 1]) + 1:
                break
            j += 1
        return j

    i = 0
    while i < len(gaps):
        # the period that carries the longest run from gap i: that gap, half of it (a
        # missed step), or the next gap (a stray step or a threshold's between)
        cands = [gaps[i], gaps[i] / 2] + ([gaps[i + 1]] if i + 1 < len(gaps) else [])
        period, j = max(((c, chain(i, c)) for c in cands if c > 0), key=lambda pj: pj[1])
        if j == i:
            i += 1
            continue
        members = steps[i:j + 1]
        if len(members) >= min_steps:
            p = pos[i:j + 1]
            idx = np.concatenate([[0], np.cumsum(np.round(np.diff(p) / period))])
            if idx[-1] > 0:
                found.append(_staircase(trans, members, idx, period))
            i = j
        else:
            i += 1
    return _number(trans, _merge_in_phase(trans, found, rel_tol))


MERGE_MAX_MISSED = 3      # steps two runs of one staircase may lack between them


def _merge_in_phase(trans: list[Transition], found: list[Staircase], rel_tol: float) -> list[Staircase]:
    """Join consecutive staircases that are one broken in two: periods within rel_tol of each
    other, and the second starting a whole number of periods after the first ends, with at
    most MERGE_MAX_MISSED steps missing between (a noisy stretch, or a stray step, broke the
    chain).  Each part shows the period on its own (min_steps or more); being in phase across
    the gap is what says they are one.  Page staircases are left as they are."""
    out: list[Staircase] = []
    for sc in sorted(found, key=lambda x: x.first_bytes):
        prev = out[-1] if out else None
        if prev is not None and prev.page_bytes is None and sc.page_bytes is None:
            per = 0.5 * (prev.period_bytes + sc.period_bytes)
            gap = sc.first_bytes - prev.last_bytes
            k = round(gap / per)
            grid = max(trans[prev.members[-1]].before_bytes - trans[prev.members[-1]].after_bytes,
                       trans[sc.members[0]].before_bytes - trans[sc.members[0]].after_bytes)
            if (abs(prev.period_bytes - sc.period_bytes) <= rel_tol * per and 1 <= k <= MERGE_MAX_MISSED + 1
                    and abs(gap - k * per) <= rel_tol * per + grid + 1):
                members = prev.members + sc.members
                p = np.array([trans[m].bytes for m in members], dtype=np.float64)
                idx = np.concatenate([[0], np.cumsum(np.round(np.diff(p) / per))])
                out[-1] = _staircase(trans, members, idx, per)
                continue
        out.append(sc)
    return out


def _number(trans: list[Transition], found: list[Staircase]) -> list[Staircase]:
    """Order staircases by their first step and point each member at its staircase."""
    found.sort(key=lambda sc: sc.first_bytes)
    for n, sc in enumerate(found):
        for m in sc.members:
            trans[m].staircase = n
    return found


LATTICE_ALPHA = 0.01       # a period among a one-visit sweep's rising steps: chance p, Bonferroni over the tries
LATTICE_NEXT = 8           # periods tried: the distance from each rising step to each of the next 8 ...
LATTICE_MULTIPLES = 3      # ... over 1, 2 or 3 (steps the segmentation missed between them)


@dataclass
class Lattice:
    """The dominant period among a sweep's rising steps (dominant_lattice)."""
    period_bytes: float
    offset_bytes: float
    members: dict[int, int]    # index into the transitions -> step number on the lattice
    p: float                   # chance p of that many steps on one lattice, times the lattices tried
    candidates: int            # rising steps looked at


def _on_lattice(lo: np.ndarray, hi: np.ndarray, slack: np.ndarray, phi: float, period: float,
                kmax: float = math.inf) -> tuple[np.ndarray, np.ndarray]:
    """Which gaps (lo - slack, hi + slack] hold a point phi + k * period (|k| <= kmax), and k."""
    k = np.round((hi - phi) / period)
    t = phi + k * period
    return (t > lo - slack) & (t <= hi + slack) & (np.abs(k) <= kmax), k


def dominant_lattice(trans: list[Transition], cand: list[int], min_steps: int = 3) -> Lattice | None:
    """The one period that puts the most of the rising steps trans[cand] on a lattice
    phi + k * period, if chance cannot explain that many: a packet or page staircase
    is one period over the whole sweep, and a host's level shifts are no period at all.
    A step is on the lattice when a lattice point lies in its gap (after_bytes,
    before_bytes] widened by the gap's width each side (noise moves a boundary by a
    size).  Periods tried: the distance from each step to each of the next LATTICE_NEXT
    over 1 to LATTICE_MULTIPLES; each is refined by least squares on the steps near its
    pair, then on all its steps.  Chance: n - 2 other steps each land on a lattice with
    probability q (their widened gaps over the period), so p = P(Binomial(n - 2, q) >=
    hits - 2), times the number of lattices tried (Bonferroni), must be under
    LATTICE_ALPHA; of the lattices that pass, the one with the smallest p (a half
    period doubles q for the same steps, a double period halves the steps)."""
    n = len(cand)
    if n < min_steps:
        return None
    lo = np.array([trans[i].after_bytes for i in cand], dtype=np.float64)
    hi = np.array([trans[i].before_bytes for i in cand], dtype=np.float64)
    width = np.maximum(hi - lo, 1.0)
    span = hi[-1] - lo[0]
    tried = 0
    results, found = [], []
    for a in range(n):
        for b in range(a + 1, min(n, a + 1 + LATTICE_NEXT)):
            for d in range(1, LATTICE_MULTIPLES + 1):
                period = (hi[b] - hi[a]) / d
                if period <= 4 * max(width[a], width[b]) or period * (min_steps - 1) > span:
                    continue
                tried += 1
                # a pair on a lattice already found, at its period: the same lattice again
                if any(hit_s[a] and hit_s[b] and abs(period - per_s) <= (width[a] + width[b]) / d
                       for per_s, hit_s in found):
                    continue
                phi = hi[a]
                hit, k = _on_lattice(lo, hi, width + (width[a] + width[b]) / d * np.abs(np.round((hi - phi) / period)),
                                     phi, period, kmax=2 * LATTICE_MULTIPLES)
                for _ in range(2):       # refine on the steps found, then take every step on it
                    kh = k[hit]
                    if kh.size < 2 or kh[0] == kh[-1]:
                        break
                    mid = 0.5 * (lo[hit] + hi[hit])
                    kc = kh - kh.mean()
                    per_new = float(kc @ (mid - mid.mean()) / (kc @ kc))     # least squares: mid = phi + k P
                    if per_new <= 0:
                        break
                    phi, period = float(mid.mean() - per_new * kh.mean()), per_new
                    hit, k = _on_lattice(lo, hi, width, phi, period)
                h = int(hit.sum())
                if h < min_steps or np.any(np.diff(k[hit]) == 0):       # two steps on one lattice point
                    continue
                q = float(np.mean(np.minimum(3 * width / period, 1.0)))
                results.append((h, q, period, phi, hit, k))
                found.append((period, hit))
    if not results:
        return None
    hs = np.array([r[0] for r in results], dtype=np.float64)
    qs = np.array([r[1] for r in results], dtype=np.float64)
    ps = scipy_stats.binom.sf(hs - 3, n - 2, qs) * tried
    j = int(np.argmin(ps))
    if ps[j] >= LATTICE_ALPHA:
        return None
    h, q, period, phi, hit, k = results[j]
    members = {cand[i]: int(k[i]) for i in np.flatnonzero(hit)}
    return Lattice(float(period), float(phi), members, float(ps[j]), n)


def _log_height(t: Transition) -> float:
    """A step's height as the log of the levels' ratio: a level shift of the whole curve by a
    factor f and its return are then equal and opposite (+log f, -log f)."""
    e = t.effect_rel if t.effect_rel is not None else 0.0
    return math.log1p(e) if e > -1 else -math.inf


def reported_only(trans: list[Transition]) -> list[Transition]:
    """The transitions worth reporting: those a configured threshold explains (the
    library says it switches there: the fit's own test is evidence enough), and
    the others only when they stand above the replicates' noise.

    Without replicates (a one-visit sweep, between_sizes_p), the noise that matters
    is the host's own level shifts: a slow phase moves a run of neighbouring sizes
    together, up where it starts and down where it ends, and each end stands out of
    the sizes' scatter like a step.  So two rules decide among the steps no threshold
    names:
    - periodic: the rising steps on the sweep's dominant period (dominant_lattice)
      are reported as one staircase, however small each step (this rule also
      holds with replicates);
    - larger than the shifts the other way: any other step stands out only when its
      height (log ratio of the levels, _log_height) exceeds the largest step the
      other way that stands out too, by STEP_NOISE_SIGMAS times the curve's relative
      scatter.  Level shifts come both ways, and a transport's switches rise (a step
      down is rare: FASTER_ABOVE), so the steps down say how large the host's shifts
      get.
    Each boundary left out says why (evidence); left_out_summary counts them."""
    one_visit = [i for i, t in enumerate(trans) if t.between_sizes_p is not None and not (t.threshold or t.settles)]
    for i in one_visit:
        if trans[i].stands_out is False:
            trans[i].evidence = "within the sizes' scatter"
    # the dominant period is looked for among every tested rising step, with replicates too
    # (a staircase's small steps may each miss the Bonferroni level of a sweep of many
    # boundaries, and stand out together on their grid)
    tested = one_visit + [i for i, t in enumerate(trans) if t.replicate_t is not None and t.between_sizes_p is None
                          and not (t.threshold or t.settles)]
    rising = [i for i in tested if trans[i].kind == "step" and trans[i].jump_us > 0]
    lat = dominant_lattice(trans, rising)
    if lat is not None:
        base = min(lat.members.values())
        for i, k in lat.members.items():
            t = trans[i]
            t.lattice_index, t.stands_out = k - base, True
            t.evidence = (f"on the sweep's period of {lat.period_bytes:.0f} B ({len(lat.members)} of "
                          f"{lat.candidates} rising steps; chance p {lat.p:.1g})")
    shifts = [i for i in one_visit if trans[i].kind == "step" and trans[i].stands_out
              and trans[i].lattice_index is None]
    ups = [i for i in shifts if trans[i].jump_us > 0]
    downs = [i for i in shifts if trans[i].jump_us < 0]
    top_up = max((_log_height(trans[i]) for i in ups), default=None)
    top_down = max((-_log_height(trans[i]) for i in downs), default=None)
    for mine, other, word in ((ups, top_down, "down"), (downs, top_up, "up")):
        if other is None:
            continue
        for i in mine:
            t = trans[i]
            margin = STEP_NOISE_SIGMAS * (t.noise_rel or 0.0)
            if abs(_log_height(t)) <= other + margin:
                t.stands_out = False
                t.evidence = (f"no larger than the host's level shifts the other way (a step {word} of up to "
                              f"a factor {math.exp(other):.3f}, plus {STEP_NOISE_SIGMAS:g} times the scatter)")
            else:
                t.evidence = f"larger than every level shift the other way (a step {word} of up to a factor {math.exp(other):.3f})"
    return [t for t in trans if t.threshold or t.settles or t.stands_out is not False]


def left_out_summary(classified: list[Transition], reported: list[Transition]) -> dict:
    """How much reported_only left out of the transitions classified (the segmentation's
    boundaries and any tested at a configured value): counts by reason, the largest level
    shift the host made (a factor), and a sentence for a reader."""
    kept = {id(t) for t in reported}
    gone = [t for t in classified if id(t) not in kept]
    reasons: dict[str, int] = {}
    for t in gone:
        why = t.evidence or ("within the replicates' noise" if t.replicate_t is not None else "not tested")
        why = why.split(" (")[0]
        reasons[why] = reasons.get(why, 0) + 1
    shifts = [abs(_log_height(t)) for t in classified
              if t.kind == "step" and t.between_sizes_p is not None and t.stands_out is not None
              and t.evidence is not None and "level shift" in t.evidence]
    factor = math.exp(max(shifts)) if shifts else None
    tested = [t for t in classified if t.test_level is not None]
    text = ""
    if gone:
        parts = [f"{n} {why}" + (f" (up to a factor {factor:.3f})" if factor is not None and "level shift" in why
                                 else "")
                 for why, n in sorted(reasons.items(), key=lambda kv: -kv[1])]
        text = (f"{len(reported)} transition{'s' if len(reported) != 1 else ''} reported of {len(classified)} "
                f"boundaries; {len(gone)} left out: " + "; ".join(parts))
        if tested:
            t0 = tested[0]
            text += (f"; each boundary tested at p < {t0.test_level:.2g}"
                     + (f", {t0.window_sizes} sizes each side" if t0.window_sizes else ""))
    return {"classified": len(classified), "reported": len(reported), "n_not_reported": len(gone),
            "reasons": reasons, "level_shift_factor": factor, "text": text}


def threshold_candidates(thresholds: dict[str, int]) -> list[tuple[int, list[str]]]:
    """The configured values, each once, with every name that carries it."""
    by: dict[int, list[str]] = {}
    for name, val in thresholds.items():
        by.setdefault(int(val), []).append(name)
    return sorted(by.items())


def match_window(value: int, tolerance: float = MATCH_TOLERANCE, exact: bool = False) -> tuple[float, float]:
    """Where a library's switch at `value` may show: up to MATCH_BELOW_BYTES + 5 %
    below it (the limit counts a header, or the payload at which the header plus
    payload reach it), 5 % above it (at least one byte each side).  A threshold the
    transport computed for the payload (exact): EXACT_TOLERANCE either side, at least
    EXACT_MIN_BYTES."""
    if exact:
        slack = max(EXACT_TOLERANCE * value, EXACT_MIN_BYTES)
        return value - slack, value + slack
    return value - MATCH_BELOW_BYTES - max(tolerance * value, 1.0), value + max(tolerance * value, 1.0)


def _exact(names: list[str]) -> bool:
    return all(n in EXACT_THRESHOLDS for n in names)


def _strength(t: Transition) -> float:
    """How big a transition is, relative to the curve (a step's height, a slope change's
    effect over its regimes).  Not its replicate t: that says how sure, not how big, and
    one noisy round can make a large switch less sure than a small bump beside it."""
    return abs(t.effect_rel) if t.effect_rel is not None else abs(t.jump_us)


def _in_window(trans: list[Transition], used: set[int], lo: float, hi: float) -> list[int]:
    """The transitions not yet named whose gap (after_bytes, before_bytes] meets [lo, hi)."""
    return [i for i, t in enumerate(trans) if i not in used and t.after_bytes < hi and t.before_bytes >= lo]


def threshold_notes(attrs: dict) -> dict[str, str]:
    """What a recorded threshold means, where the run record says more than its value: the
    packet step (a message's payload needs a second TCP segment) names its path."""
    if "mss" not in attrs:
        return {}
    framing = attrs.get("tcp_framing")
    return {"mss_payload": f"the packet step: a second TCP segment from here on (MSS {attrs['mss']} B at MTU "
                           f"{attrs.get('mtu', '?')} on {attrs.get('path_iface') or '?'}"
                           f"{', less framing of ' + framing if framing else ''})"}


def attribute(trans: list[Transition], thresholds: dict[str, int],
              staircases: list[Staircase] | None = None,
              tolerance: float = MATCH_TOLERANCE, notes: dict[str, str] | None = None) -> list[dict]:
    """Label each transition; match each configured value (all its names) to at
    most one transition: the strongest rising step whose gap meets the value's
    window (match_window), else the strongest slope change there; a step down
    only for a threshold in FASTER_ABOVE.  Each transition takes at most one
    value.  Returns the thresholds that matched nothing, as dicts."""
    used: set[int] = set()
    matched: set[int] = set()
    for val, names in threshold_candidates(thresholds):
        near = _in_window(trans, used, *match_window(val, tolerance, _exact(names)))
        down_ok = any(n in FASTER_ABOVE for n in names)
        steps = [i for i in near if trans[i].kind == "step" and (trans[i].jump_us > 0 or down_ok)]
        slopes = [i for i in near if trans[i].kind == "slope"]
        pick = max(steps or slopes, key=lambda i: _strength(trans[i]), default=None)
        if pick is None:
            continue
        used.add(pick)
        matched.add(val)
        t = trans[pick]
        t.threshold, t.threshold_names, t.configured_bytes = names[0], list(names), int(val)
        t.label = f"{' = '.join(names)}, configured {val}, detected {_detected(t)}"
        said = [notes[n] for n in names if notes and n in notes]
        if said:
            t.label += f": {said[0]}"
        # the line may bend just after the switch (its first sizes settle): part of it
        for i in near:
            b = trans[i]
            if i != pick and b.kind == "slope" and b.bytes > t.bytes and not b.settles:
                b.settles = f"{' = '.join(names)} (the line bends just after the switch), detected {_detected(b)}"
    label_rest(trans, staircases)
    return [{"name": n, "configured_bytes": int(v)} for v, names in threshold_candidates(thresholds)
            if v not in matched for n in names]


COPY_WINDOW_BYTES = 512     # a copy threshold may show this much (+ 5 %) either side of its value
COPY_MEANING = {
    "x86_rep_movsb_threshold": "memcpy switches to rep movsb (glibc)",
    "x86_non_temporal_threshold": "memcpy switches to non-temporal stores (glibc)",
}


def attribute_copy(trans: list[Transition], copy: dict[str, int], tolerance: float = MATCH_TOLERANCE) -> None:
    """Name a transition that no library threshold took after the host's memcpy switch
    (Run.copy_thresholds): a rising step or a slope change whose gap meets the window of
    COPY_WINDOW_BYTES + 5 % either side of the value, the strongest there.  Either side,
    because a transport copies its payload with a header, or part of it by another path
    (UCX's shared-memory transport and Open MPI's vader show the rep movsb switch a few
    hundred bytes above the tunable; moving the tunable moves the step with it).  A copy
    threshold that matches nothing is no finding: the switch is often too small to see."""
    used = {i for i, t in enumerate(trans) if t.threshold or t.settles}
    for name, val in sorted(copy.items(), key=lambda kv: kv[1]):
        slack = COPY_WINDOW_BYTES + max(tolerance * val, 1.0)
        near = [i for i in _in_window(trans, used, val - slack, val + slack)
                if trans[i].kind == "slope" or trans[i].jump_us > 0]
        pick = max(near, key=lambda i: _strength(trans[i]), default=None)
        if pick is None:
            continue
        used.add(pick)
        t = trans[pick]
        t.threshold, t.threshold_names, t.configured_bytes = name, [name], int(val)
        t.label = (f"{name}, host {val}, detected {_detected(t)}: "
                   f"{COPY_MEANING.get(name, 'the C library changes its copy method')}")


@dataclass
class _Span:
    """Sizes first..last of the location curve on one line of slope r (for _edge_levels)."""
    first: int
    last: int
    r_ns_per_byte: float


def targeted_steps(fit: SegmentedFit, replicates: tuple[np.ndarray, str] | None, trans: list[Transition],
                   thresholds: dict[str, int], tolerance: float = MATCH_TOLERANCE,
                   notes: dict[str, str] | None = None) -> list[int]:
    """A configured value that no transition took is tested where the library says it switches:
    every gap of its window (match_window) that is no regime boundary, EDGE_SIZES sizes a side
    moved along the local regime's slope, the step's effect per replicate and its robust t
    (replicate_test's), Bonferroni over the window's gaps at REPLICATE_ALPHA.  The strongest gap
    that passes, and stands above the curve's scatter (STEP_NOISE_SIGMAS) and rises (or falls, for
    a threshold in FASTER_ABOVE), becomes a transition named for the value, with what the record
    says the value means (notes, as attribute() adds them: the packet step's MSS and MTU).  One hypothesis per
    configured value, stated before looking: the segmentation's search over every gap needs far
    stronger evidence, and can miss a step that noise on the quartile curve hides.  Appends to
    trans; returns the values it matched."""
    if replicates is None or len(replicates[0]) < MIN_REPLICATES:
        return []
    reps, how = replicates
    loc = fit.locator
    x = loc.x
    taken = {t.configured_bytes for t in trans if t.threshold}
    bounds = {r.last for r in loc.regimes[:-1]}
    matched = []
    for val, names in threshold_candidates(thresholds):
        if val in taken:
            continue
        lo_w, hi_w = match_window(val, tolerance, _exact(names))
        gaps = [i for i in range(len(x) - 1) if x[i] < hi_w and x[i + 1] >= lo_w and i not in bounds]
        if not gaps:
            continue
        crit = float(scipy_stats.t.ppf(1 - REPLICATE_ALPHA / (2 * len(gaps)), len(reps) - 1))
        down_ok = any(n in FASTER_ABOVE for n in names)
        passing = []
        for i in gaps:
            reg = next((g for g in loc.regimes if g.first <= i < g.last), None)
            if reg is None:
                continue
            A = _Span(max(reg.first, i - EDGE_SIZES + 1), i, reg.r_ns_per_byte)
            B = _Span(i + 1, min(reg.last, i + EDGE_SIZES), reg.r_ns_per_byte)
            if A.last - A.first < 2 or B.last - B.first < 2:
                continue
            centre, t = replicate_effect(x, reps, A, B, "step")
            level = max(abs(reg.predict(0.5 * (x[i] + x[i + 1]))), 1e-9)
            if abs(t) > crit and abs(centre) > STEP_NOISE_SIGMAS * loc.rel_noise * level and (centre > 0 or down_ok):
                passing.append((i, t, centre, level))
        if not passing:
            continue
        # of the gaps that pass, the largest step (as attribute(): t says how sure, not how big;
        # the gaps next to a step share some of its sizes and pass too, with less height) -- but
        # a value the transport computed for the payload (exact) is a hypothesis about one gap:
        # when the gap holding the value passes, it is the step (a 64 B padding, TCP's over the lab's relay, puts steps of
        # the same height every 64 B inside the window; a CI launch named one 124 B below the
        # packet step at MTU 9000)
        at = [c for c in passing if x[c[0]] < val <= x[c[0] + 1]] if _exact(names) else []
        i, t, centre, level = at[0] if at else max(passing, key=lambda c: abs(c[2]))
        tr = Transition(int(x[i + 1]), int(x[i]), int(x[i + 1]), "step", centre / 1e3, None)
        tr.effect_rel, tr.noise_rel = centre / level, loc.rel_noise
        tr.replicate_t, tr.replicates, tr.stands_out = float(t), len(reps), True
        tr.threshold, tr.threshold_names, tr.configured_bytes = names[0], list(names), int(val)
        tr.label = (f"{' = '.join(names)}, configured {val}, detected {_detected(tr)} (tested at the configured "
                    f"value: a step of {centre / 1e3:+.3f} us, t {t:.1f} over {len(reps)} {how}; the "
                    "segmentation placed no boundary there)")
        said = [notes[n] for n in names if notes and n in notes]
        if said:
            tr.label += f": {said[0]}"
        trans.append(tr)
        matched.append(int(val))
    trans.sort(key=lambda t: t.bytes)
    return matched


REL_TOL_FILL = 0.15       # how far from its lattice point (a share of the period, beyond the grid) a step still counts


def _placement(x: np.ndarray, first: int, last: int, phi: float, period: float,
               taken: list[tuple[float, float]]) -> list[tuple[int, float, int]]:
    """Where the lattice phi + j * period puts steps strictly inside sizes first..last, away from
    every transition already there: (j, position, gap index) each."""
    pts = []
    for j in range(math.ceil((x[first] - phi) / period), math.floor((x[last] - phi) / period) + 1):
        pos = phi + j * period
        i = int(np.searchsorted(x, pos)) - 1          # x[i] < pos <= x[i + 1]
        if first <= i and i + 1 <= last and not any(lo <= pos <= hi for lo, hi in taken):
            pts.append((j, pos, i))
    return pts


def fill_lattice(fit: SegmentedFit, replicates: tuple[np.ndarray, str] | None, trans: list[Transition],
                 stairs: list[Staircase]) -> int:
    """A staircase's steps where the segmentation saw a ramp.

    A staircase of small steps, a size apart a few times per period, is also well described by a
    line: on a noisy launch the segmentation draws one regime with a slope across several steps,
    and the staircase then keeps only the steps outside it.  The lattice is that of the longest
    staircase find_staircases found (not the page's), refitted by least squares (gap middles
    against step numbers) on every rising step no threshold names whose gap lies on it (within
    the grid plus REL_TOL_FILL of a period), twice.  Each regime holding no reported transition
    and two or more lattice points is then tested as a whole: per replicate, its curve fitted by
    a line plus one common step at every lattice point (least squares on [1, x, steps below x]);
    the step's median over the replicates against its robust standard error (1.4826 MAD /
    sqrt K), Bonferroni over the regimes tested at REPLICATE_ALPHA, must show a rise and stand
    above the curve's scatter (STEP_NOISE_SIGMAS).  A ramp gives a step of 0 (the line takes
    it); a staircase gives its height.  When it passes, every lattice point of the regime becomes
    a step of the staircase, with its own height: the half periods either side moved along the
    regime's common slope (the fit's x term), median over the replicates.  Appends to trans;
    returns how many steps it added."""
    if replicates is None or len(replicates[0]) < MIN_REPLICATES:
        return 0
    x = np.asarray(fit.locator.x, dtype=np.float64)
    grid = float(np.median(np.diff(x))) if x.size > 1 else 0.0
    mid = _gap_middle
    own = [sc for sc in stairs if sc.page_bytes is None]
    if own:
        sc = max(own, key=lambda c: c.steps)
        first = min((trans[m] for m in sc.members), key=lambda t: t.bytes)
        seeds = [(mid(first), sc.period_bytes)]
    else:
        # no staircase: two neighbouring rising steps that stood out may be two of one (the others drawn
        # as ramps); each pair's distance is tried as a period, Bonferroni over the pairs too
        rising = sorted((t for t in trans if t.kind == "step" and t.jump_us > 0 and not t.threshold),
                        key=lambda t: t.bytes)
        seeds = [(mid(a), mid(b) - mid(a)) for a, b in zip(rising, rising[1:]) if mid(b) - mid(a) > 4 * grid]
    for phi, period in seeds:
        added = _fill_from(fit, replicates, trans, x, grid, phi, period, len(seeds))
        if added:
            return added
    return 0


def _gap_middle(t: Transition) -> float:
    """The middle of a step's gap (after_bytes, before_bytes]: where a lattice point is placed."""
    return 0.5 * (t.after_bytes + t.before_bytes)


def _fill_from(fit: SegmentedFit, replicates: tuple[np.ndarray, str], trans: list[Transition], x: np.ndarray,
               grid: float, phi0: float, period0: float, tries: int) -> int:
    """fill_lattice from one lattice (a step's middle phi0, period0), its tests held to REPLICATE_ALPHA
    over the regimes tested times `tries` (the lattices tried)."""
    reps, how = replicates
    loc = fit.locator
    mid = _gap_middle
    taken = [(t.after_bytes - grid, t.before_bytes + grid) for t in trans]
    # the lattice: refitted on every rising step on it, the staircase's own and those its chain missed
    state = {"phi": float(phi0), "period": float(period0)}

    def on_lattice():
        phi, period = state["phi"], state["period"]
        return [t for t in trans if t.kind == "step" and t.jump_us > 0 and not t.threshold
                and abs(mid(t) - phi - round((mid(t) - phi) / period) * period) <= grid + REL_TOL_FILL * period]

    def refit():
        for _ in range(2):
            steps = on_lattice()
            m = np.array([mid(t) for t in steps], dtype=np.float64)
            k = np.round((m - state["phi"]) / state["period"])
            if len(set(k)) < 3:
                return False
            kc = k - k.mean()
            per = float(kc @ (m - m.mean()) / (kc @ kc))
            if not per > 0:
                return False
            state["phi"], state["period"] = float(m.mean() - per * k.mean()), per
        return True

    if not refit() and len(on_lattice()) < 2:
        return 0
    inside = [n for n, g in enumerate(loc.regimes) if not any(g.from_bytes < t.bytes <= g.to_bytes for t in trans)]
    todo = [n for n in inside if len(_placement(x, loc.regimes[n].first, loc.regimes[n].last, state["phi"],
                                                 state["period"], taken)) >= 2]
    if not todo:
        return 0
    total = len(todo) * tries
    crit = float(scipy_stats.t.ppf(1 - REPLICATE_ALPHA / (2 * total), len(reps) - 1))
    added = 0
    while todo:
        # the regime nearest a step on the lattice first, the lattice anchored at that step: a period
        # known to a few bytes is carried over as few periods as it can be; each regime filled refits it
        anchors = np.array([mid(t) for t in on_lattice()], dtype=np.float64)
        centre_of = {n: 0.5 * (loc.regimes[n].from_bytes + loc.regimes[n].to_bytes) for n in todo}
        n = min(todo, key=lambda r: float(np.min(np.abs(anchors - centre_of[r]))))
        todo.remove(n)
        anchor = float(anchors[np.argmin(np.abs(anchors - centre_of[n]))])
        g = loc.regimes[n]
        pts = _placement(x, g.first, g.last, anchor, state["period"], taken)
        xs = x[g.first:g.last + 1]
        ys = reps[:, g.first:g.last + 1]
        if len(pts) < 2 or xs.size < 2 * len(pts) + 3:
            continue
        steps_below = (xs[:, None] > np.array([pos for _, pos, _ in pts])[None, :]).sum(axis=1)
        A = np.column_stack([np.ones_like(xs), xs - xs.mean(), steps_below])
        coef = np.linalg.lstsq(A, ys.T, rcond=None)[0].T
        h = coef[:, 2]
        centre = float(np.median(h))
        se = 1.4826 * float(np.median(np.abs(h - centre))) / math.sqrt(len(h))
        t_all = centre / se if se > 0 else (math.inf if centre > 0 else 0.0)
        slope, per = float(np.median(coef[:, 1])), state["period"]
        level = max(abs(g.s_ns + g.r_ns_per_byte * float(xs.mean())), 1e-9)
        if not (centre > 0 and t_all > crit and centre > STEP_NOISE_SIGMAS * loc.rel_noise * level):
            continue
        for j, pos, i in pts:
            a = (xs > pos - per / 2) & (xs <= pos)
            b = (xs > pos) & (xs <= pos + per / 2)
            if not a.any() or not b.any():
                continue
            xa, xb = float(xs[a].mean()), float(xs[b].mean())
            c = float(np.median(ys[:, b].mean(axis=1) - ys[:, a].mean(axis=1) - slope * (xb - xa)))
            tr = Transition(int(x[i + 1]), int(x[i]), int(x[i + 1]), "step", c / 1e3, None)
            tr.effect_rel, tr.noise_rel = c / level, loc.rel_noise
            tr.replicate_t, tr.replicates, tr.stands_out = float(t_all), len(reps), True
            tr.test_level = REPLICATE_ALPHA / total
            tr.evidence = (f"on the staircase's period of {per:.0f} B, where the segmentation fitted a ramp over "
                           f"{g.from_bytes}-{g.to_bytes} B: that stretch as one staircase against the ramp, a step "
                           f"of {centre / 1e3:+.3f} us, t {t_all:.1f} over {len(reps)} {how}")
            trans.append(tr)
            taken.append((tr.after_bytes - grid, tr.before_bytes + grid))
            added += 1
        refit()
    phi, period = state["phi"], state["period"]
    if added:       # one numbering for every step on the lattice, old and new: find_staircases joins them
        steps = on_lattice()
        ks = [round((mid(t) - phi) / period) for t in steps]
        for t, kk in zip(steps, ks):
            t.lattice_index = int(kk - min(ks))
    trans.sort(key=lambda t: t.bytes)
    return added


def label_rest(trans: list[Transition], staircases: list[Staircase] | None) -> None:
    """Label the transitions no threshold explains: staircase steps, or unexplained."""
    for t in trans:
        if t.threshold:
            continue
        if t.settles:
            t.label = t.settles
        elif t.staircase is not None and staircases:
            sc = staircases[t.staircase]
            what = f"page {sc.page_bytes} B" if sc.page_bytes else f"period {sc.period_bytes:.0f} B"
            what += f": {sc.meaning}" if sc.meaning else ""
            t.label = f"staircase step ({what}), detected {_detected(t)}"
        else:
            what = ("step" if t.jump_us >= 0 else "step down") if t.kind == "step" else "slope change"
            t.label = f"unexplained {what}, detected {_detected(t)}"


def _detected(t: Transition) -> str:
    if t.kind == "step":
        if t.before_bytes - t.after_bytes <= 1:
            return f"{t.bytes}"
        return f"{t.bytes} (between {t.after_bytes} and {t.before_bytes})"
    return f"{t.bytes} (slope x{t.slope_ratio:.2f})" if t.slope_ratio is not None else f"{t.bytes}"
