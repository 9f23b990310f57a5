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
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

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

    def to_dict(self) -> dict:
        d = asdict(self)
        del d["settles"]            # said in the label
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


def _edge_levels(x: np.ndarray, y: np.ndarray, A, B) -> tuple[np.ndarray, np.ndarray]:
    """The last EDGE_SIZES values of regime A and the first of B in curve y, each
    moved along its regime's fitted slope to the gap's middle."""
    xm = 0.5 * (x[A.last] + x[B.first])
    ia = np.arange(max(A.first, A.last - EDGE_SIZES + 1), A.last + 1)
    ib = np.arange(B.first, min(B.last, B.first + EDGE_SIZES - 1) + 1)
    return y[ia] - A.r_ns_per_byte * (x[ia] - xm), y[ib] - B.r_ns_per_byte * (x[ib] - xm)


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
    scale = 1.4826 * float(np.median(np.abs(eff - centre)))
    if scale == 0:
        return centre, (math.copysign(math.inf, centre) if centre != 0 else 0.0)
    return centre, centre / (scale / math.sqrt(eff.size))


def between_sizes_test(x: np.ndarray, y: np.ndarray, A, B, kind: str) -> float:
    """The two-sided p-value of a boundary's effect when the sweep has no replicates
    (each size visited once or twice): each size is one visit, so the scatter between
    neighbouring sizes is the noise.  A step: the exact Mann-Whitney test of the last
    EDGE_SIZES sizes of A against the first of B, each moved along its regime's line
    to the gap's middle (with 5 a side it says "stands out" only when every size after
    the gap lies beyond every size before it: p = 2/252).  A slope change: t of the
    difference of the two regimes' least-squares slopes, each with its standard error
    from its own sizes' scatter about its line, widened for the lag-1 autocorrelation
    of that scatter (and the degrees of freedom cut to the independent sizes); a
    regime of fewer than 4 sizes cannot show a slope change."""
    from scipy import stats as sps
    if kind == "step":
        ra, rb = _edge_levels(x, y, A, B)
        return float(sps.mannwhitneyu(rb, ra, alternative="two-sided", method="exact").pvalue)
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


def t_critical(replicates: int) -> float:
    from scipy import stats as sps
    return float(sps.t.ppf(1 - REPLICATE_ALPHA / 2, replicates - 1))


def classify(fit: SegmentedFit, replicates: tuple[np.ndarray, str] | None = None,
             test_noise: bool = False) -> list[Transition]:
    """Steps vs slope changes, judged on the fit that placed the boundaries
    (the lower-quartile curve when the run was analysed with one).  With
    replicates of that curve (replicate_curves), each says whether its effect
    stands above the replicates' noise (stands_out; reported_only keeps those);
    without them, when test_noise, whether it stands above the scatter between
    sizes (between_sizes_test)."""
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
        tr = Transition(pos, int(xa), int(xb), kind, jump / 1e3, ratio)
        level = max(abs(A.predict(xm)), 1e-9)
        effect = jump if kind == "step" else dr * 0.5 * (float(x[B.last]) - float(x[A.first]))
        tr.effect_rel = effect / level
        tr.noise_rel = fit.rel_noise
        if replicates is not None and len(replicates[0]) >= MIN_REPLICATES:
            reps = replicates[0]
            tr.replicate_t, tr.replicates = replicate_test(x, reps, A, B, kind), len(reps)
            tr.stands_out = abs(tr.replicate_t) > t_critical(len(reps))
        elif test_noise:
            tr.between_sizes_p = between_sizes_test(x, fit.y, A, B, kind)
            tr.stands_out = tr.between_sizes_p < REPLICATE_ALPHA
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


def reported_only(trans: list[Transition]) -> list[Transition]:
    """The transitions worth reporting: those a configured threshold explains (the
    library says it switches there: the fit's own test is evidence enough), and
    the others only when they stand above the replicates' noise."""
    return [t for t in trans if t.threshold or t.settles or t.stands_out is not False]


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
                   thresholds: dict[str, int], tolerance: float = MATCH_TOLERANCE) -> list[int]:
    """A configured value that no transition took is tested where the library says it switches:
    every gap of its window (match_window) that is no regime boundary, EDGE_SIZES sizes a side
    moved along the local regime's slope, the step's effect per replicate and its robust t
    (replicate_test's), Bonferroni over the window's gaps at REPLICATE_ALPHA.  The strongest gap
    that passes, and stands above the curve's scatter (STEP_NOISE_SIGMAS) and rises (or falls, for
    a threshold in FASTER_ABOVE), becomes a transition named for the value.  One hypothesis per
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
        # the gaps next to a step share some of its sizes and pass too, with less height)
        i, t, centre, level = max(passing, key=lambda c: abs(c[2]))
        tr = Transition(int(x[i + 1]), int(x[i]), int(x[i + 1]), "step", centre / 1e3, None)
        tr.effect_rel, tr.noise_rel = centre / level, loc.rel_noise
        tr.replicate_t, tr.replicates, tr.stands_out = float(t), len(reps), True
        tr.threshold, tr.threshold_names, tr.configured_bytes = names[0], list(names), int(val)
        tr.label = (f"{' = '.join(names)}, configured {val}, detected {_detected(tr)} (tested at the configured "
                    f"value: a step of {centre / 1e3:+.3f} us, t {t:.1f} over {len(reps)} {how}; the "
                    "segmentation placed no boundary there)")
        trans.append(tr)
        matched.append(int(val))
    trans.sort(key=lambda t: t.bytes)
    return matched


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
