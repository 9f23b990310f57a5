"""What a baseline can resolve, and what would decide an undecided size.

A check compares new launches with a baseline's, the launch as the unit: the
half width of a size's interval on the log scale is about
q * sd * sqrt(1/n + 1/m) for n new and m baseline launches, sd the
launch-to-launch standard deviation (at like host state where the drift probe
explains it, covariate.py) and q the t quantile of the interval's level.  So

- an unchanged configuration passes a tolerance +-U only once that half width is
  under U, and no number of new launches gets it below q * sd / sqrt(m): a
  baseline whose launches spread too much for its tolerance is untestable, and
  `baseline save` says so (with the launches it would need);
- a slowdown is called `regressed` with 80 % power once it exceeds
  U + (q + 0.84) * sd * sqrt(1/n + 1/m): `baseline save` gives that smallest
  detectable change for 3 and for 10 new launches;
- an `unsure` size is decided at the spread seen so far when the half width
  drops under the distance from its estimate to the nearest bound it can clear:
  `check` prints how many new launches that takes (sequential.launches_needed),
  or that the baseline's own launches are too few, and how many would do.

The bounds are read on the log scale of the time ratio new/baseline: a latency
rule's relative bounds as log(1 + bound), an absolute one through the
reference, a bandwidth rule's through 1 / (1 + bound) (a bandwidth 10 % lower
is a time 11.1 % longer).
"""
from __future__ import annotations

import math

from .lazy import numpy as np

from .covariate import host_classes
from .sequential import base_needed, check_design, launches_needed, t_at

Z80 = 0.8416                   # one-sided normal quantile of 80 % power
NEW_LAUNCHES = (3, 10)         # the check designs a baseline is described for


def _log1p_bound(x: float) -> float:
    if x <= -1:
        return -math.inf
    return math.log1p(x) if math.isfinite(x) else math.inf


def log_bounds(rule, ref_ns: float, b: int) -> tuple[float, float]:
    """The rule's bounds on the log of the time ratio new / baseline at size b (reference ref_ns):
    (lower: improved beyond it, upper: regressed beyond it)."""
    if rule.metric == "latency":
        if rule.relative:
            return _log1p_bound(rule.lower), _log1p_bound(rule.upper)
        ref_us = ref_ns / 1e3
        return (_log1p_bound(rule.lower / ref_us) if ref_us > 0 else -math.inf,
                _log1p_bound(rule.upper / ref_us) if ref_us > 0 else math.inf)
    if rule.relative:
        lo, hi = rule.lower, rule.upper
    else:
        ref_bw = b / ref_ns * 1e3 if ref_ns > 0 else 0.0
        lo, hi = (rule.lower / ref_bw, rule.upper / ref_bw) if ref_bw > 0 else (-1.0, math.inf)
    # a bandwidth ratio 1 + x is a time ratio 1 / (1 + x)
    return -_log1p_bound(hi), -_log1p_bound(lo)


def _distance(e: float, lo: float, hi: float) -> tuple[float, str]:
    """How far the half width must shrink for the estimate e to be decided, and to what."""
    if e > hi:
        return e - hi, "regressed"
    if e < lo:
        return lo - e, "improved"
    return min(e - lo, hi - e), "pass"


def undecided_needs(rule, s, alpha: float, last: int | None = None) -> dict:
    """For an `unsure` size (a compare.SizeComparison, new against baseline): the new launches that
    would decide it at the spread seen, or the baseline launches, with words."""
    n, m = s.launches_a, s.launches_b
    lo, hi = log_bounds(rule, s.median_b_us * 1e3, s.bytes)
    e = math.log(s.ratio) if s.ratio > 0 else -math.inf
    dist, verdict = _distance(e, lo, hi)
    if s.log_se is None or not s.df or n + m < 3:
        return {"new": None, "baseline": None, "toward": verdict,
                "words": "one launch a side: a spread between launches needs more launches (3 or more a side)"}
    sd = s.log_se / math.sqrt(1 / n + 1 / m)
    q = t_at(alpha, s.df)
    new = launches_needed(dist, sd, q, m)
    reach = q * sd * math.sqrt(1 / max(n, last or n) + 1 / m)     # the half width at the last look
    band = (hi - lo) / 2 if math.isfinite(hi - lo) else math.inf
    hopeless = reach >= band and abs(e - (hi if e > 0 else lo)) < reach
    spread = f"launch sd {100 * (math.exp(sd) - 1):.1f} %"
    if math.isfinite(new):
        total = max(n, math.ceil(new))
        words = (f"about {total} new launches (it has {n}) would decide it ({verdict}) at this spread "
                 f"({spread}, estimate {100 * (s.ratio - 1):+.1f} %)")
        if last is not None and total > last:
            words += f"; more than this design's {last}"
        return {"new": total, "baseline": None, "toward": verdict, "words": words, "hopeless": hopeless}
    want = base_needed(dist, sd, q, max(n, last or n))
    words = (f"no number of new launches decides it against the baseline's {m} launches ({spread}, estimate "
             f"{100 * (s.ratio - 1):+.1f} %, {verdict} needs the interval within {100 * (math.exp(dist) - 1):.1f} %)")
    if math.isfinite(want):
        words += f"; a baseline of {math.ceil(want)} launches would, with {max(n, last or n)} new"
    return {"new": None, "baseline": math.ceil(want) if math.isfinite(want) else None,
            "toward": verdict, "words": words, "hopeless": hopeless}


def launch_sd(y: np.ndarray, c: np.ndarray | None) -> tuple[float, int, bool]:
    """The launch-to-launch sd of log launch medians y (one configuration), at like host state
    when the drift probe c (log) explains them (classes and slope, F test p < 0.05), with its df."""
    from .covariate import P_ENTER, _fit
    from .lazy import scipy_stats as sps
    y = np.asarray(y, float)
    base = float(y.std(ddof=1)) if y.size > 1 else math.nan
    if c is None or y.size < 4 or not np.isfinite(c).all():
        return base, y.size - 1, False
    cls = host_classes(np.asarray(c, float))
    cols = [np.ones(y.size)] + [(cls == j).astype(float) for j in range(1, int(cls.max()) + 1)] + [np.asarray(c)]
    full = _fit(y, np.column_stack(cols))
    if full is None or full[2] < 2:
        return base, y.size - 1, False
    _, rss, df, _ = full
    rss0 = float(((y - y.mean()) ** 2).sum())
    q = (y.size - 1) - df
    f = ((rss0 - rss) / q) / (rss / df) if rss > 0 else math.inf
    if not f > 0 or float(sps.f.sf(f, q, df)) >= P_ENTER:
        return base, y.size - 1, False
    return math.sqrt(rss / df), df, True


def baseline_resolution(runs, rules, rule_for, references: dict[int, float]) -> dict:
    """Per size of a baseline's launches: launch sd, the smallest slowdown detected with 80 %
    power with 3 and 10 new launches (check --run designs), and whether an unchanged
    configuration can pass its tolerance; warnings for the sizes where it cannot."""
    from .covariate import launch_drift
    from .launches import log_medians
    from .samples import SampleSet, launch_key
    samples = SampleSet.of(runs)
    m = samples.n_launches
    out = {"launches": m, "sizes": [], "warnings": [], "adjusted_sizes": 0}
    if m < 2:
        out["warnings"].append(f"one launch: a check against it compares samples of two launches, not the "
                               f"configurations; save 5 or more launches (10 resolve about twice as finely as 3)")
        return out
    drift = launch_drift(runs, launch_key)
    untestable = []
    for b, d in samples.by_launch().items():
        keys = list(d)
        if len(keys) < 2 or b not in references:
            continue
        rule = rule_for(rules, b)
        if rule is None:
            continue
        y = log_medians(list(d.values()))
        c = np.array([drift.get(b, {}).get(k, (math.nan, 0.0))[0] for k in keys])
        sd, df, adj = launch_sd(y, c if np.isfinite(c).all() else None)
        out["adjusted_sizes"] += adj
        lo, hi = log_bounds(rule, references[b], b)
        row = {"bytes": b, "launch_sd_pct": 100 * (math.exp(sd) - 1), "adjusted": adj}
        for n in NEW_LAUNCHES:
            design = check_design(m, min(3, n), n)
            q = t_at(design.nominal_alpha, df + n - 1)
            hw = q * sd * math.sqrt(1 / n + 1 / m)
            se = sd * math.sqrt(1 / n + 1 / m)
            row[f"detects_pct_{n}"] = 100 * (math.exp(hi + hw + Z80 * se) - 1) if math.isfinite(hi) else None
            row[f"passes_{n}"] = bool(hw + Z80 * se <= min(hi, -lo))
        out["sizes"].append(row)
        if not row[f"passes_{NEW_LAUNCHES[-1]}"]:
            untestable.append(row)
    if untestable:
        worst = max(untestable, key=lambda r: r["launch_sd_pct"])
        out["warnings"].append(
            f"its launches spread too much for its tolerance at {len(untestable)} of {len(out['sizes'])} sizes "
            f"(at {worst['bytes']} B launch sd {worst['launch_sd_pct']:.1f} %): even {NEW_LAUNCHES[-1]} new "
            f"launches of an unchanged configuration would often be `unsure` there; save more launches, or "
            "widen the tolerance")
    return out


def resolution_words(res: dict, tolerance: str) -> list[str]:
    """What `baseline save` prints about what the baseline can resolve."""
    rows = res["sizes"]
    if not rows:
        return []
    def span(key):
        v = [r[key] for r in rows if r.get(key) is not None]
        return f"{min(v):+.0f} % to {max(v):+.0f} %" if v and min(v) != max(v) else (f"{v[0]:+.0f} %" if v else "-")
    sd = [r["launch_sd_pct"] for r in rows]
    words = [f"launch sd {min(sd):.1f} % to {max(sd):.1f} % over {len(rows)} sizes"
             + (f" (at like host state at {res['adjusted_sizes']} sizes: the drift probe explains the rest)"
                if res["adjusted_sizes"] else ""),
             f"a slowdown called regressed with 80 % power against {tolerance}: "
             + "; ".join(f"{span(f'detects_pct_{n}')} with {n} new launches" for n in NEW_LAUNCHES)]
    return words
