"""Which launches a comparison speaks for: within-launch or between-launch inference.

A launch is one process launch of versus-run, i.e. one `run` record.  It is
identified by the record's `run_id` (time, host and pid: unique per launch),
not by `launch_id`, an index the user passes and may repeat.  Runs that carry
one run_id (the same file given twice) are one launch and pooled.

One launch a side (within-launch inference): the samples of each size are
the unit; the ratio of medians, its bootstrap CI and the Mann-Whitney test of
`compare_samples`.  What it finds holds for those two launches only: a
launch's process pair can sit on vCPUs that stay 2-3x apart for its whole
life, and one launch a side cannot tell that apart from the configurations,
so compare.py never turns it into a claim about them (CLAIM_LAUNCHES).

Several launches on a side (between-launch inference): the launch is the
unit.  Per size and launch the log of its median; a side's estimate is their
mean (the geometric mean of its launch medians: every launch weighs the same,
however many samples it has); the ratio A/B is the ratio of the two.  Its
standard error comes from a two-stage bootstrap: draw the side's launches
with replacement, then each drawn launch's median from its own resampled
samples; its variance is computed exactly from the distribution of a
resampled median over the order statistics (stats.median_rank_probabilities)
rather than estimated from random draws.  A drawn launch sits at its side's mean plus a
launch deviation drawn from both sides' deviations pooled, each widened by
sqrt(L/(L-1)) so that their mean square is the unbiased launch-to-launch
variance: launch effects (which vCPUs a process pair lands on) are a property
of the host and relative in size, so alike in both configurations; pooling
gives L_A + L_B - 2 degrees of freedom instead of one per side, and lets a
side with one launch borrow the other side's spread.  The interval and the
p-value use Student's t with those degrees of freedom, not the bootstrap
percentiles: with two launches a side the percentile interval excludes 1
whenever every launch of one side beats every launch of the other, which two
sides of one configuration do by chance in one comparison out of three (2 of
the 6 orders of four launches).  A rank test on launch medians is not used
either: with 2 against 2 launches its smallest two-sided p-value is 1/3, with
3 against 3 it is 1/10.  The within-launch draws add each launch median's own
noise a second time (it is already in the launch deviations): a little
conservative when launches agree, negligible when they do not.
Limit: t assumes roughly normal log launch effects.  Launches that fall into
two speed classes can make both launches of each side agree by chance (one
comparison in eight with two equally likely classes); interleave three or
more launches a side.
"""
from __future__ import annotations

import math
from functools import lru_cache
from dataclasses import dataclass

from .lazy import numpy as np
from .lazy import scipy_stats as sps

from .samples import SampleSet, launch_key
from .stats import (BETWEEN_LAUNCH, WITHIN_LAUNCH, SizeStats, bootstrap_median_draws, median_ci_sorted,
                    median_rank_probabilities, median_summary, sorted_median)

WITHIN = WITHIN_LAUNCH
BETWEEN = BETWEEN_LAUNCH


def launch_df(la: int, lb: int) -> int:
    """Degrees of freedom of a between-launch t: the launch variance is pooled over
    both sides (L_A + L_B - 2), less one because launch effects are not normal.  With
    the normal-theory L_A + L_B - 2, launches spread uniformly over 0.7-1.4x were
    claimed different in 6.6 % of A/A comparisons at 2 vs 2 and 6.0 % at 3 vs 3
    (200,000 draws); with one less, 1.0 % and 4.3 % (normal effects: 0.6 % and 3.4 %).
    Never below 1."""
    return max(la + lb - 3, 1)


@lru_cache(maxsize=256)
def t_quantile(df: float, confidence: float = 0.95) -> float:
    """Student's t quantile of a two-sided interval (97.5 % for 95 %)."""
    return float(sps.t.ppf(0.5 + confidence / 2, df))


def compare_samples(a: np.ndarray, b: np.ndarray, rng: np.random.Generator,
                    draws: int = 2000) -> tuple[float, list[float], float]:
    """Within-launch inference for sorted samples: (ratio of medians a/b, its 95 %
    bootstrap CI, two-sided Mann-Whitney p)."""
    ma, mb = sorted_median(a), sorted_median(b)
    ratio = ma / mb if mb > 0 else float("nan")
    da = bootstrap_median_draws(a, draws, rng)
    db = bootstrap_median_draws(b, draws, rng)
    with np.errstate(divide="ignore", invalid="ignore"):
        rs = da / db
    rs = np.sort(rs[np.isfinite(rs)])
    ci = [_percentile_sorted(rs, 2.5), _percentile_sorted(rs, 97.5)] if rs.size else [math.nan] * 2
    if a.size < 2 or b.size < 2 or (a[0] == a[-1] == b[0] == b[-1]):
        p = 1.0
    else:
        p = mann_whitney_sorted(a, b)
        if not math.isfinite(p):
            p = 1.0
    return ratio, ci, p


def _percentile_sorted(x: np.ndarray, q: float) -> float:
    """np.percentile(x, q) (linear, the same arithmetic) of an ascending array, read off by index."""
    pos = q / 100 * (x.size - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, x.size - 1)
    t = pos - lo
    a, b = float(x[lo]), float(x[hi])
    return a + (b - a) * t if t < 0.5 else b - (b - a) * (1 - t)


def mann_whitney_sorted(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided Mann-Whitney U p-value of two ascending samples: scipy's mannwhitneyu
    (method 'auto': the normal approximation with tie and continuity correction; exact for
    at most 8 a side without ties, left to scipy) computed from the sorted samples by binary
    search, without scipy's per-call argument handling, which cost more than the test on
    450-size comparisons (about 2 ms a size)."""
    n1, n2 = a.size, b.size
    if n1 <= 8 and n2 <= 8:
        return float(sps.mannwhitneyu(a, b, alternative="two-sided").pvalue)
    lo = np.searchsorted(b, a, side="left")
    hi = np.searchsorted(b, a, side="right")
    u1 = float(lo.sum() + 0.5 * (hi - lo).sum())
    u = max(u1, n1 * n2 - u1)
    both = np.concatenate((a, b))
    both.sort(kind="mergesort")
    edges = np.flatnonzero(np.diff(both)) + 1
    t = np.diff(np.concatenate(([0], edges, [both.size]))).astype(np.float64)
    n = n1 + n2
    s = math.sqrt(n1 * n2 / 12 * ((n + 1) - float((t ** 3 - t).sum()) / (n * (n - 1))))
    if s == 0:
        return 1.0
    z = (u - n1 * n2 / 2 - 0.5) / s
    return min(1.0, max(0.0, math.erfc(z / math.sqrt(2))))


def count_launches(runs) -> int:
    return len({launch_key(r) for r in runs})


def launch_log_medians(by_launch: dict[int, dict[str, np.ndarray]]) -> dict[str, dict[int, float]]:
    """Per launch, the log of its median at each size it measured (by_launch: SampleSet.by_launch)."""
    out: dict[str, dict[int, float]] = {}
    for b, d in by_launch.items():
        for k, x in d.items():
            out.setdefault(k, {})[b] = float(_log_floor(np.array([sorted_median(x)]))[0])
    return out


def regime_between(ya: dict[str, np.ndarray], yb: dict[str, np.ndarray],
                   sizes: list[int], confidence: float = 0.95) -> tuple[float, float, float] | None:
    """Ratio A/B over a regime of `sizes` with its 95 % CI, the launch as the unit.

    A launch's effect (the cores or vCPUs its process pair landed on) is shared
    by every size it measures, so the regime's sizes are not independent
    evidence: averaging k per-size log ratios as if they were would shrink the
    launch component of the uncertainty by sqrt(k).  Instead each launch gives
    one regime value, the mean over the regime's sizes of its log medians (the
    geometric mean of its medians), and Student's t on those values with the
    launch-to-launch variance pooled over both sides (L_A + L_B - 2 degrees of
    freedom), as per size.  Launches that did not measure every size of the
    regime are left out; None when fewer than three launches remain or a side
    has none (the caller then combines the per-size ratios)."""
    def values(y):
        return np.array([np.mean([d[b] for b in sizes]) for d in y.values() if all(b in d for b in sizes)])
    va, vb = values(ya), values(yb)
    la, lb = va.size, vb.size
    if la < 1 or lb < 1 or la + lb < 3:
        return None
    d = float(va.mean() - vb.mean())
    ss = float(((va - va.mean()) ** 2).sum() + ((vb - vb.mean()) ** 2).sum())
    se = math.sqrt(ss / (la + lb - 2) * (1 / la + 1 / lb))
    q = t_quantile(launch_df(la, lb), confidence)
    return math.exp(d), math.exp(d - q * se), math.exp(d + q * se)


def launch_interval(log_medians, confidence: float = 0.95) -> tuple[float, float, float]:
    """A configuration's figure at one size from its L >= 2 launches, and its interval:
    exp(mean) of the launches' log medians (the geometric mean of the launch medians,
    the value between_launches gives a side) and exp(mean -/+ t_{L-1} sd / sqrt(L)).

    Why the launch and not the sample: the samples of one launch share that launch's
    effect (which cores its process pair landed on, for its whole life), so an
    interval from all the launches' samples pooled says how well the pooled median is
    pinned down, not where the next launch will put the configuration; one launch
    2-8x slower than its twins leaves the pooled interval a few per cent wide while a
    comparison between launches (between_launches) finds no difference.  Student's t
    over the L log medians is the interval that comparison rests on, per side; its
    df are L - 1 (one configuration's launches alone, nothing pooled with another side).
    Where every launch gives the same median the interval is that value."""
    y = np.asarray(log_medians, dtype=np.float64)
    nl = int(y.size)
    if nl < 2:
        raise ValueError("an interval between launches needs two launches or more")
    m = float(y.mean())
    half = t_quantile(nl - 1, confidence) * float(y.std(ddof=1)) / math.sqrt(nl)
    return math.exp(m), math.exp(m - half), math.exp(m + half)


@dataclass(frozen=True)
class LaunchFigure:
    """A configuration's median time at one size (ns) with its 95 % interval and which
    it is: between launches (launch_interval) where two or more launches measured the
    size, else the one launch's median with its order-statistic interval (none below 6
    samples)."""
    launches: int
    median_ns: float
    ci_ns: tuple[float, float] | None
    kind: str                       # WITHIN or BETWEEN


def launch_figures(samples: SampleSet) -> dict[int, LaunchFigure]:
    """Per size (ascending) the configuration's figure from its launches (LaunchFigure)."""
    def compute():
        out = {}
        for b, d in samples.by_launch().items():
            xs = list(d.values())
            if len(xs) >= 2:
                v, lo, hi = launch_interval(log_medians(xs))
                out[b] = LaunchFigure(len(xs), v, (lo, hi), BETWEEN)
            else:
                out[b] = LaunchFigure(1, sorted_median(xs[0]), median_ci_sorted(xs[0]), WITHIN)
        return out
    return samples.once("launch figures", compute)


def with_launch_figures(sizes: list[SizeStats], samples: SampleSet, bytes_factor: float = 1.0) -> None:
    """Make each size's median, its interval and the bandwidth over them the
    configuration's figures between launches (launch_figures) where two or more
    launches measured it; the median of the samples pooled and its interval are kept
    (pooled_median_ns, pooled_median_ci_ns).  The rest of a size's statistics (mean,
    sd, percentiles, control limits) stay those of all the samples together."""
    figs = launch_figures(samples)
    for s in sizes:
        f = figs.get(s.bytes)
        if f is None or f.kind != BETWEEN:
            continue
        s.pooled_median_ns, s.pooled_median_ci_ns = s.median_ns, s.median_ci_ns
        s.median_ns, s.median_ci_ns = f.median_ns, f.ci_ns
        s.interval_kind, s.launches = BETWEEN, f.launches
        moved = bytes_factor * s.bytes
        s.bandwidth_MBps = moved / f.median_ns * 1e3 if f.median_ns > 0 else float("nan")
        s.bandwidth_ci_MBps = (moved / f.ci_ns[1] * 1e3, moved / f.ci_ns[0] * 1e3) if f.ci_ns[0] > 0 else None


def interval_words(kind: str, launches: int | None = None) -> str:
    """Which 95 % interval a configuration's figure carries, for a legend or a header."""
    if kind == BETWEEN:
        n = f"{launches} launches, " if launches else ""
        return f"95 % CI between launches ({n}Student's t on the log launch medians)"
    return "95 % CI within one launch (order statistics of its samples)"


def interval_label(kind: str, launches: int | None = None) -> str:
    """The same in a few words, for a table cell: 'between 3 launches (t)', 'within one launch'."""
    if kind == BETWEEN:
        return f"between {launches} launches (t)" if launches else "between launches (t)"
    return "within one launch"


def band_words(sizes: list[dict], what: str = "median") -> str:
    """Which interval the per-size figures of some configurations (size dicts with
    interval_kind and launches) carry, for a figure's title or a table's caption:
    'median with 95 % CI within one launch', 'geometric mean of the launch medians with
    95 % CI between launches (3 launches, Student's t)', or both, said apart."""
    kinds = {s.get("interval_kind", WITHIN) for s in sizes}
    ls = sorted({int(s.get("launches") or 1) for s in sizes if s.get("interval_kind") == BETWEEN})
    n = (f"{ls[0]}" if len(ls) == 1 else f"{ls[0]}-{ls[-1]}") + " launches, " if ls else ""
    between = f"95 % CI between launches ({n}Student's t)"
    if kinds == {BETWEEN}:
        return f"{what}: geometric mean of the launch medians, {between}"
    if BETWEEN in kinds:
        return (f"{what} with 95 % CI: between launches where several launches of a configuration measured "
                f"a size (the geometric mean of the launch medians, {between}), else within one launch")
    return f"{what} with 95 % CI within one launch"


@dataclass
class SizeInference:
    """One size's comparison, with the method it used."""
    ratio: float
    ci: list[float]
    p: float
    median_a_ns: float          # within-launch: the median; between-launch: geometric mean of launch medians
    median_b_ns: float
    inference: str              # WITHIN or BETWEEN
    launches_a: int
    launches_b: int
    df: float | None            # degrees of freedom of the between-launch t, else None
    log_se: float | None = None  # standard error of log(ratio) (between launches), to widen the CI



def _log_floor(x: np.ndarray) -> np.ndarray:
    return np.log(np.maximum(x, 1e-3))          # 1 ps: a zero time has no log


def log_medians(launches: list[np.ndarray]) -> np.ndarray:
    return _log_floor(np.array([sorted_median(x) for x in launches]))


def _residuals(y: np.ndarray) -> np.ndarray:
    """A side's launch deviations from its mean, widened by sqrt(L/(L-1)) so that
    their mean square is the unbiased launch-to-launch variance."""
    nl = y.size
    return (y - y.mean()) * math.sqrt(nl / (nl - 1)) if nl > 1 else np.empty(0)


def _side_variance(launches: list[np.ndarray], y: np.ndarray, resid: np.ndarray) -> float:
    """Variance of the two-stage bootstrap of a side's mean log launch median, exactly
    (no random draws): L launches drawn with replacement, each placed at the side's
    mean plus a launch deviation drawn from both sides' pooled residuals, plus the
    deviation of its bootstrap median (whose distribution over the order statistics
    is known exactly, stats.median_rank_probabilities) from its median.  The two
    parts are independent and the L draws alike, so the variance of their mean is
    (var(deviation) + var(within)) / L; the pooled residuals have mean 0."""
    first, second = [], []
    for x, yj in zip(launches, y):
        p = median_rank_probabilities(int(x.size))
        lx = _log_floor(x) - yj
        first.append(float(p @ lx))
        second.append(float(p @ (lx * lx)))
    within = float(np.mean(second) - np.mean(first) ** 2)
    between = float(np.mean(resid * resid)) if resid.size else 0.0
    return (between + max(within, 0.0)) / y.size


def between_launches(a: list[np.ndarray], b: list[np.ndarray], rng: np.random.Generator,
                     draws: int = 2000) -> SizeInference:
    """Ratio of geometric means of launch medians A/B, its 95 % CI and p-value (see module
    doc).  rng and draws are kept for the callers; the variance is computed exactly."""
    la, lb = len(a), len(b)
    if la + lb < 3:
        raise ValueError("between-launch inference needs several launches on at least one side")
    ya, yb = log_medians(a), log_medians(b)
    resid = np.concatenate([_residuals(ya), _residuals(yb)])
    df = float(launch_df(la, lb))                # launch-to-launch variance pooled over both sides
    va, vb = _side_variance(a, ya, resid), _side_variance(b, yb, resid)
    d = float(ya.mean() - yb.mean())
    se = math.sqrt(va + vb)
    if se > 0:
        p = float(2 * sps.t.sf(abs(d) / se, df))
        q = t_quantile(df)
        ci = [math.exp(d - q * se), math.exp(d + q * se)]
    else:                            # every sample of every launch identical
        p = 1.0 if d == 0 else 0.0
        ci = [math.exp(d)] * 2
    return SizeInference(math.exp(d), ci, p, _side_value(a, ya), _side_value(b, yb), BETWEEN, la, lb, df, se)


def _side_value(launches: list[np.ndarray], y: np.ndarray) -> float:
    """A side's figure: the geometric mean of its launch medians; one launch's median as it is
    (exp(log(m)) may differ from m in the last digit, and the summary prints m)."""
    return sorted_median(launches[0]) if len(launches) == 1 else math.exp(y.mean())


def infer_size(a: list[np.ndarray], b: list[np.ndarray], rng: np.random.Generator,
               draws: int = 2000) -> SizeInference:
    """Within-launch inference when each side has one launch at this size,
    between-launch inference when either has several."""
    if len(a) == 1 and len(b) == 1:
        ratio, ci, p = compare_samples(a[0], b[0], rng, draws)
        return SizeInference(ratio, ci, p, float(np.median(a[0])), float(np.median(b[0])),
                             WITHIN, 1, 1, None)
    return between_launches(a, b, rng, draws)



CLAIM_LAUNCHES = 3     # launches a side a campaign runs, and that a claim is advised to rest on


def scope_words(sizes: list) -> str:
    """What a comparison's marks speak for, from the inference of its sizes
    (objects or JSON dicts): said once per comparison."""
    def get(s, k, d):
        return s.get(k, d) if isinstance(s, dict) else getattr(s, k, d)
    kinds = {get(s, "inference", WITHIN) for s in sizes}
    if not kinds or kinds == {WITHIN}:
        return ("one launch a side: the marks in parentheses compare these two launches, not the "
                "configurations (launches of one configuration can differ by several per cent, on "
                f"a shared host by 2-3x); a claim needs several launches a side, {CLAIM_LAUNCHES} or more, "
                "interleaved")
    la = min(get(s, "launches_a", 1) for s in sizes)
    lb = min(get(s, "launches_b", 1) for s in sizes)
    if kinds == {BETWEEN}:
        few = (f"; fewer than {CLAIM_LAUNCHES} launches a side leave few degrees of freedom: only large "
               "differences can be claimed" if min(la, lb) < CLAIM_LAUNCHES else "")
        return f"across launches ({la} vs {lb}, the launch is the unit){few}"
    return (f"across launches ({la} vs {lb}) where both sides have several launches; in parentheses: "
            "sizes with one launch a side, which compare two launches only")


def method_words(sizes: list[dict]) -> str:
    """How the sizes of a comparison (JSON form) were tested, for a table's legend."""
    kinds = {s.get("inference", WITHIN) for s in sizes}
    within = ("within one launch a side: medians, ratio A/B with 95 % bootstrap CI, "
              "Mann-Whitney U")
    between = ("between launches: geometric means of launch medians, ratio A/B with 95 % CI and "
               "p from Student's t (two-stage bootstrap SE, launch variance pooled over both sides; "
               "a regime's CI from each launch's geometric mean over the regime)")
    if kinds == {BETWEEN}:
        return between
    if kinds == {WITHIN} or not kinds:
        return within
    return f"{between}; sizes with one launch a side: {within}"


def launch_spread(samples: SampleSet) -> list[dict]:
    """Per size: spread of the launch medians (between launches) beside the
    spread within launches (pooled sd, and the typical standard error of a
    launch median).  Between >> within-median-SE means launches differ.
    Each run of the set counts as one launch here."""
    return samples.once("launch spread", lambda: _launch_spread(samples))


def _launch_spread(samples: SampleSet) -> list[dict]:
    per: dict[int, list] = {}
    for t in samples.times:
        for b, x in t.items():
            per.setdefault(b, []).append(median_summary(x))
    out = []
    for b, st in sorted(per.items()):
        if len(st) < 2:
            continue
        _, meds, sds, ses = (np.array(v) for v in zip(*st))
        out.append({
            "bytes": b, "launches": len(st),
            "median_of_medians_us": float(np.median(meds)) / 1e3,
            "between_launch_sd_us": float(meds.std(ddof=1)) / 1e3,
            "between_launch_range_us": float(np.ptp(meds)) / 1e3,
            "within_launch_sd_us": float(np.sqrt(np.mean(sds ** 2))) / 1e3,
            "within_launch_median_se_us": float(np.sqrt(np.mean(ses ** 2))) / 1e3,
        })
    return out
