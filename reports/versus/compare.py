"""Comparing two configurations (A and B): statements over ranges of sizes, and
each size's ratio beside them; launch-to-launch spread.

Per common size: ratio of medians A/B of the reported time (one-way for a
ping-pong, units.py) with its 95 % CI (one launch a side: a bootstrap of the
medians, drawn exactly from their order statistics, and a Mann-Whitney p;
several launches: the launch as the unit, launches.py).

Claims are made over ranges, not size by size: with ten thousand sizes a
per-size test adjusted over them has no power left.  ranges.split_ranges cuts
the sizes into at most 8 ranges where the log ratio keeps one level; each
range's ratio (the geometric mean over its sizes, the launch as the unit) has
an interval simultaneous at 95 % over the ranges (Bonferroni), and its mark
is what that interval gives: `+` (A faster) or `-` (A slower) when it excludes
1, `=` ("no practical difference") when it does but the ratio is within the
minimum effect (2 % by default), `~` when it includes 1.  The interval a
statement prints is the one its mark was decided on.

A size's mark is its own 95 % interval's (point_mark): never `~` where that
interval excludes 1; bare where its range's statement claims the same, in
parentheses otherwise (a difference this size shows alone, not a claim).
One launch a side never claims: every mark is in parentheses.

The two sides measure one pattern, or the two sides of the transport interface
where the quantity is the same (units.crossing: a two-sided ping-pong against a
put-with-notification, one-way latency at each size): the statistics and the
claim rule are the same, and the comparison says that it crosses the interface.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from .lazy import numpy as np

from .covariate import adjusted as host_adjusted, launch_drift, words as cov_words
from .hostload import comparison_note
from .launches import (BETWEEN, WITHIN, compare_samples, infer_size, launch_log_medians, launch_spread,
                       regime_between, scope_words, t_quantile)
from .lazy import scipy_stats as sps
from .ranges import split_ranges
from .load import Run, check_comparable, check_same_configuration
from .samples import SampleSet, launch_key
from .units import PATTERN_WORDS, crossing, run_meaning

__all__ = ["compare_samples", "compare_runs", "Comparison", "SizeComparison", "RegimeStatement"]

ALPHA = 0.05
MIN_EFFECT = 0.02          # below this relative difference a significant one is "no practical difference"


@dataclass
class SizeComparison:
    bytes: int
    n_a: int
    n_b: int
    median_a_us: float
    median_b_us: float
    ratio: float                   # median A / median B (reported times, units.py)
    ratio_ci: list[float]
    p_value: float                 # Mann-Whitney U, two-sided
    p_adjusted: float
    mark: str                      # '+' A faster, '-' A slower, '~' no significant difference,
                                   # '=' significant but smaller than the minimum effect;
                                   # '(+)', '(-)', '(=)': the same between two single launches,
                                   # not a claim about the configurations
    inference: str = WITHIN        # launches.WITHIN or launches.BETWEEN
    launches_a: int = 1
    launches_b: int = 1
    df: float | None = None        # degrees of freedom of the between-launch t
    log_se: float | None = None    # standard error of log(ratio), between launches
    host: str = ""                 # how the host's state was adjusted for (covariate.py), "" when not

    @property
    def faster_pct(self) -> float:
        return (1 - self.ratio) * 100


@dataclass
class RegimeStatement:
    mark: str
    from_bytes: int
    to_bytes: int
    sizes: int
    faster_pct: float | None        # (1 - ratio) * 100, A relative to B; positive = A faster
    faster_pct_pm: float | None     # half width of its 95 % CI
    text: str
    ratio: float | None = None      # the regime's ratio A/B (geometric mean over its sizes)
    ratio_ci: list[float] | None = None   # and its 95 % CI
    span: str = ""                  # the text's parts: which sizes ('for messages >= 4 KiB'),
    effect: str = ""                # what holds there ('12 % ± 3 % faster', 'no significant difference')
    detail: str = ""                # and the medians at its first size
    needed: str = ""                # an undecided range: the launches a side that would decide it


@dataclass
class Comparison:
    a_label: str
    b_label: str
    alpha: float
    adjust: str
    min_effect: float = MIN_EFFECT
    sizes: list[SizeComparison] = field(default_factory=list)
    regimes: list[RegimeStatement] = field(default_factory=list)
    launch_spread_a: list[dict] = field(default_factory=list)
    launch_spread_b: list[dict] = field(default_factory=list)
    only_a: list[int] = field(default_factory=list)
    only_b: list[int] = field(default_factory=list)
    # sizes left out because a launch's payload check failed there (--include-invalid keeps them)
    invalid_a: list[int] = field(default_factory=list)
    invalid_b: list[int] = field(default_factory=list)
    invalid_included: bool = False
    time_label: str = "one-way latency (round trip / 2)"    # what the compared times are (units.py)
    claims: bool = False           # the marks speak for the configurations (several launches a side)
    scope: str = ""                # which launches the marks speak for, and the caveat: said once
    load_note: str = ""            # the two sides' host load, when it must be said (hostload.py)
    crosses: str = ""              # the sides are the two sides of the transport interface: what is compared
    host_words: str = ""           # where the drift probe explained the launches' variance and was used

    def to_dict(self) -> dict:
        d = asdict(self)
        for s, sd in zip(self.sizes, d["sizes"]):
            sd["faster_pct"] = s.faster_pct
        return d


def adjust_pvalues(p, method: str = "holm") -> np.ndarray:
    """Holm (family-wise) or Benjamini-Hochberg ('bh', false discovery rate)."""
    p = np.asarray(p, dtype=np.float64)
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    ps = p[order]
    if method == "holm":
        adj = np.maximum.accumulate(ps * (m - np.arange(m)))
    elif method == "bh":
        adj = np.minimum.accumulate((ps * m / np.arange(1, m + 1))[::-1])[::-1]
    else:
        raise ValueError(f"unknown p-value adjustment {method!r} (holm, bh)")
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


def compare_runs(a_runs: list[Run], b_runs: list[Run], alpha: float = ALPHA,
                 adjust: str = "holm", seed: int = 0, draws: int = 2000,
                 min_effect: float = MIN_EFFECT, include_invalid: bool = False,
                 labels: tuple[str, str] | None = None,
                 samples: tuple[SampleSet, SampleSet] | None = None,
                 host: bool = True) -> Comparison:
    """Compare A against B (each: one run or several launches of one configuration).
    min_effect: relative difference below which a significant size is marked '='.
    A size where any launch of a side failed its payload check is left out of
    the comparison (and listed in invalid_a / invalid_b) unless include_invalid.
    labels: what to call A and B in the statements (default: their runs' labels, told
    apart when they are the same, e.g. one configuration on one host and on two).
    samples: the two sides' SampleSet of these runs, when the caller has them (else made here).
    alpha: the two-sided level of every between-launch interval (0.05: 95 %; a sequential
    design's nominal level, sequential.py).  host: compare launches at like host state where
    the drift probe explains their variance (covariate.py)."""
    if not 0 <= min_effect < 1:
        raise ValueError(f"minimum effect {min_effect} is not a fraction in [0, 1)")
    crosses = check_sides(a_runs, b_runs)
    check_same_configuration(a_runs)
    check_same_configuration(b_runs)
    rng = np.random.default_rng(seed)
    inv_a = sorted({b for r in a_runs for b in r.invalid_bytes()})
    inv_b = sorted({b for r in b_runs for b in r.invalid_bytes()})
    skip_a, skip_b = (set(), set()) if include_invalid else (set(inv_a), set(inv_b))
    sa, sb = samples or (SampleSet.of(a_runs), SampleSet.of(b_runs))
    pa, pb = sa.pooled(skip_a), sb.pooled(skip_b)
    la, lb = sa.by_launch(skip_a), sb.by_launch(skip_b)
    common = sorted(set(pa) & set(pb) - skip_a - skip_b)
    cmp = Comparison(*(labels or _side_labels(a_runs, b_runs)), alpha, adjust, min_effect,
                     only_a=sorted(set(pa) - set(pb) - skip_b), only_b=sorted(set(pb) - set(pa) - skip_a),
                     invalid_a=inv_a, invalid_b=inv_b, invalid_included=include_invalid,
                     time_label=time_label(a_runs, b_runs), crosses=crosses)
    # one launch a side: within-launch inference; several: between launches (launches.py)
    rows = [(b, infer_size(list(la[b].values()), list(lb[b].values()), rng, draws)) for b in common]
    drift = (launch_drift(a_runs, launch_key), launch_drift(b_runs, launch_key)) if host else None
    adjusted_at = {}
    for i, (b, r) in enumerate(rows):
        if r.inference != BETWEEN:
            continue
        adj = _host_adjusted(la[b], lb[b], drift, b) if drift else None
        if adj is not None:
            adjusted_at[b] = adj
        if adj is not None or not math.isclose(alpha, ALPHA):
            rows[i] = (b, _at_level(r, adj, alpha))
    padj = adjust_pvalues([r.p for _, r in rows], adjust)
    for (b, r), pj in zip(rows, padj):
        cmp.sizes.append(SizeComparison(b, int(pa[b].size), int(pb[b].size),
                                        r.median_a_ns / 1e3, r.median_b_ns / 1e3, r.ratio, r.ci, r.p,
                                        float(pj), point_mark(r.ratio, r.ci, min_effect),
                                        r.inference, r.launches_a, r.launches_b, r.df, r.log_se,
                                        cov_words(adjusted_at[b]) if b in adjusted_at else ""))
    cmp.claims = bool(cmp.sizes) and all(s.inference == BETWEEN for s in cmp.sizes)
    infos = dict(rows)
    ya, yb = launch_log_medians(la), launch_log_medians(lb)
    da, db = (_range_drift(drift[0], la), _range_drift(drift[1], lb)) if drift else (None, None)
    cmp.regimes = range_statements(cmp, lambda grp, conf: range_ratio(grp, infos, ya, yb, conf, da, db))
    cmp.host_words = _host_words(list(adjusted_at.values()), len(rows))
    mark_sizes(cmp)
    cmp.scope = scope_words(cmp.sizes) + family_words(len(cmp.regimes)) + (
        f"; {cmp.host_words}" if cmp.host_words else "")
    cmp.load_note = comparison_note(a_runs, b_runs)
    if sa.n_launches > 1:
        cmp.launch_spread_a = launch_spread(sa)
    if sb.n_launches > 1:
        cmp.launch_spread_b = launch_spread(sb)
    return cmp


def _host_adjusted(la_b: dict, lb_b: dict, drift, b: int):
    """covariate.adjusted for one size's launches (la_b / lb_b: launch -> samples), or None
    where a launch did not record the drift probe."""
    from .launches import log_medians
    da, db = drift[0].get(b, {}), drift[1].get(b, {})
    ka, kb = list(la_b), list(lb_b)
    if not all(k in da for k in ka) or not all(k in db for k in kb):
        return None
    ya, yb = log_medians(list(la_b.values())), log_medians(list(lb_b.values()))
    return host_adjusted(ya, np.array([da[k] for k in ka]), yb, np.array([db[k] for k in kb]))


def _at_level(r, adj, alpha: float):
    """A between-launch inference with its interval and p at level 1 - alpha, from the host
    adjustment when there is one (its log ratio, se and df), else from its own."""
    from dataclasses import replace
    from .sequential import t_at
    d, se, df = (adj.log_ratio, adj.se, adj.df) if adj is not None else (math.log(r.ratio), r.log_se, r.df)
    if se is None or not df:
        return r
    q = t_at(alpha, df)
    p = float(2 * sps.t.sf(abs(d) / se, df)) if se > 0 else r.p
    return replace(r, ratio=math.exp(d), ci=[math.exp(d - q * se), math.exp(d + q * se)], p=p, df=df, log_se=se)


def _range_drift(drift: dict[int, dict[str, float]], by_launch: dict) -> dict[str, dict[int, float]]:
    """Per launch, its log drift at each size (the shape of launches.launch_log_medians)."""
    out: dict[str, dict[int, float]] = {}
    for b, d in drift.items():
        if b in by_launch:
            for k, v in d.items():
                out.setdefault(k, {})[b] = v
    return out


def _host_words(adjusted: list, n: int) -> str:
    """Where the comparison was made at like host state, said once."""
    if not adjusted:
        return ""
    red = float(np.median([a.reduction for a in adjusted]))
    cls = max(a.classes for a in adjusted)
    return (f"compared at like host state at {len(adjusted)} of {n} sizes: there the drift probe "
            f"(the cache-line round trip beside each size) explained the launch-to-launch variance "
            f"({cls} host class{'es' if cls != 1 else ''}; intervals a median {100 * red:.0f} % narrower; "
            "docs/analysis.md, 'The host as a covariate'); at those sizes A/B is the ratio at like host "
            "state, not the ratio of the two sides' geometric means")


def check_sides(a_runs: list[Run], b_runs: list[Run]) -> str:
    """Both sides of one pattern (load.check_comparable refuses others), or one side a two-sided
    ping-pong and the other a put-with-notification, which report one quantity (units.crossing):
    then the words that say the comparison crosses the interface."""
    pa, pb = {r.pattern for r in a_runs}, {r.pattern for r in b_runs}
    if len(pa) == 1 and len(pb) == 1:
        (a,), (b,) = pa, pb
        quantity = crossing(a, b)
        if quantity:
            def words(runs, p):
                v = runs[0].variant
                return PATTERN_WORDS[p] + (f" ({v})" if v else "")
            return (f"the comparison crosses the transport interface: A is {words(a_runs, a)}, B "
                    f"{words(b_runs, b)}; both report the {quantity} at each size, compared with the "
                    "statistics and the claim rule of any comparison")
    check_comparable(a_runs + b_runs)
    return ""


def time_label(a_runs: list[Run], b_runs: list[Run]) -> str:
    """What the compared times are: the sides' one label, or each side's when they differ."""
    la, lb = run_meaning(a_runs[0]).time_label, run_meaning(b_runs[0]).time_label
    return la if la == lb else f"A: {la}; B: {lb}"


def point_mark(ratio: float, ci: list[float], min_effect: float) -> str:
    """A size's own mark, from the interval printed beside it: '+' / '-' when the
    95 % CI of A/B lies below / above 1, '=' when it excludes 1 but the ratio is
    within the minimum effect, '~' when it includes 1."""
    if not (ci[1] < 1 or ci[0] > 1):
        return "~"
    return "=" if 1 - min_effect < ratio < 1 / (1 - min_effect) else ("+" if ratio < 1 else "-")


def size_mark(ratio: float, ci: list[float], min_effect: float, claimed: str | None) -> str:
    """The mark printed at a size: its own (point_mark), bare when the statement over
    its range claims the same (launches as the unit), else in parentheses: a difference
    this size shows alone (or these two launches show), not a claim.  A size whose
    interval excludes 1 is never marked '~'."""
    own = point_mark(ratio, ci, min_effect)
    if own == "~" or own == claimed:
        return own
    return f"({own})"


def mark_sizes(cmp: Comparison) -> None:
    """Each size's printed mark, once the statements over the ranges are made."""
    for r in cmp.regimes:
        claimed = r.mark if r.mark in ("+", "-", "=") else None
        for s in cmp.sizes:
            if r.from_bytes <= s.bytes <= r.to_bytes:
                ok = claimed if s.inference == BETWEEN else None
                s.mark = size_mark(s.ratio, s.ratio_ci, cmp.min_effect, ok)


def family_words(k: int) -> str:
    if k <= 1:
        return ""
    return (f"; the statements are made over {k} ranges of sizes, each interval 95 % simultaneous over "
            f"the {k} (Bonferroni: each at {100 - 5 / k:.3g} %); the marks of single sizes are their own 95 % "
            "intervals, in parentheses where no statement claims them")


def bare(mark: str) -> str:
    """A mark without the parentheses of a launch-only difference."""
    return mark.strip("()")


def named_statements(cmp: Comparison, a_name: str, b_name: str) -> list[str]:
    """The comparison's statements with A and B by name, then once what they speak for."""
    out = [f"{r.mark} {r.text.replace(cmp.a_label, a_name).replace(cmp.b_label, b_name)}" for r in cmp.regimes]
    return out + [f"({a_name} against {b_name}: {cmp.scope}.)"] if out else out


def _side_label(runs: list[Run]) -> str:
    lab = runs[0].label
    return lab if len(runs) == 1 else f"{lab} ({len(runs)} launches)"


def _side_labels(a_runs: list[Run], b_runs: list[Run]) -> tuple[str, str]:
    """The two sides' labels; when they read the same, each says where its ranks ran
    (the number of hosts), else which side it is."""
    la, lb = _side_label(a_runs), _side_label(b_runs)
    if la != lb:
        return la, lb

    def hosts(runs):
        return len(set(map(str, runs[0].record.get("hosts") or [])))
    ha, hb = hosts(a_runs), hosts(b_runs)
    if ha != hb:
        return tuple(f"{lab} ({'one host' if h <= 1 else f'{h} hosts'})" for lab, h in ((la, ha), (lb, hb)))
    return f"{la} [A]", f"{lb} [B]"


def fmt_bytes(n: int) -> str:
    for unit, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k and n % k == 0:
            return f"{n // k} {unit}"
    return f"{n} B"


def _log_ratio_se(g: SizeComparison) -> float:
    """A size's standard error of log(A/B), from its 95 % CI."""
    lo, hi = g.ratio_ci
    if not (lo > 0 and hi > 0):
        return math.inf
    return max((math.log(hi) - math.log(lo)) / (2 * 1.96), 1e-12)


def _z(confidence: float) -> float:
    return float(sps.norm.ppf(0.5 + confidence / 2))


def range_ratio(grp: list[SizeComparison], infos: dict, ya, yb,
                confidence: float, da=None, db=None) -> tuple[tuple[float, float, float], bool]:
    """A range's ratio A/B with its CI at `confidence`, and whether the launch was the
    unit (a claim about the configurations).  One size: that size's own inference, so
    that at 95 % the statement's interval is the one its row prints; several sizes with
    several launches: launches.regime_between; otherwise the per-size combination."""
    if len(grp) == 1:
        r = infos[grp[0].bytes]
        between = r.inference == BETWEEN
        if math.isclose(confidence, 0.95):
            return (r.ratio, r.ci[0], r.ci[1]), between
        if between:
            d, q = math.log(r.ratio), t_quantile(r.df, confidence) * (r.log_se or 0.0)
            return (r.ratio, math.exp(d - q), math.exp(d + q)), True
        return _widen((r.ratio, r.ci[0], r.ci[1]), confidence), False
    if any(g.inference == BETWEEN for g in grp):
        got = _range_adjusted(ya, yb, da, db, [g.bytes for g in grp], confidence) if da else None
        got = got or regime_between(ya, yb, [g.bytes for g in grp], confidence)
        if got is not None:
            return got, True
    return _regime_ratio(grp, confidence), False


def _range_adjusted(ya, yb, da, db, sizes: list[int], confidence: float):
    """A range's ratio at like host state: each launch's mean log median and mean log drift over
    the range's sizes (covariate.adjusted); None when the drift does not explain the variance."""
    def values(y, d):
        keys = [k for k in y if all(b in y[k] for b in sizes) and all(b in d.get(k, {}) for b in sizes)]
        return ([float(np.mean([y[k][b] for b in sizes])) for k in keys],
                [np.mean([d[k][b] for b in sizes], axis=0) for k in keys])
    va, ca = values(ya, da)
    vb, cb = values(yb, db)
    if not va or not vb:
        return None
    adj = host_adjusted(va, np.array(ca), vb, np.array(cb))
    if adj is None:
        return None
    q = t_quantile(adj.df, confidence) * adj.se
    return math.exp(adj.log_ratio), math.exp(adj.log_ratio - q), math.exp(adj.log_ratio + q)


def _widen(rci: tuple[float, float, float], confidence: float) -> tuple[float, float, float]:
    """A 95 % interval of a ratio widened to `confidence` on the log scale (normal)."""
    ratio, lo, hi = rci
    if not (lo > 0 and hi > 0 and ratio > 0):
        return rci
    k = _z(confidence) / 1.96
    return ratio, ratio * (lo / ratio) ** k, ratio * (hi / ratio) ** k


def range_statements(cmp: Comparison, ratio_of) -> list[RegimeStatement]:
    """The statements over the ranges of ranges.split_ranges: each range's ratio with
    its interval, simultaneous at 1 - alpha over the ranges (Bonferroni), and the mark
    that interval gives.  ratio_of(grp, confidence) -> ((ratio, lo, hi), launch unit)."""
    sizes = cmp.sizes
    if not sizes:
        return []
    lr = np.log(np.clip(np.nan_to_num(np.array([s.ratio for s in sizes]), nan=1.0), 1e-12, None))
    within = [s for s in sizes if s.inference != BETWEEN]
    pieces = split_ranges(lr, se=[_log_ratio_se(s) for s in within] if len(within) == len(sizes) else None,
                          min_step=-math.log(1 - cmp.min_effect))
    conf = 1 - cmp.alpha / len(pieces)
    out = []
    for a, b in pieces:
        grp = sizes[a:b]
        lo, hi = grp[0].bytes, grp[-1].bytes
        if a == 0 and b == len(sizes):
            span = "at every size measured" if lo != hi else f"at {fmt_bytes(lo)}"
        elif lo == hi:
            span = f"at {fmt_bytes(lo)}"
        elif b == len(sizes):
            span = f"for messages >= {fmt_bytes(lo)}"
        elif a == 0:
            span = f"for messages <= {fmt_bytes(hi)}"
        else:
            span = f"for messages from {fmt_bytes(lo)} to {fmt_bytes(hi)}"
        rci, unit = ratio_of(grp, conf)
        out.append(_statement(cmp, grp, span, rci, unit, conf))
    return out


def _statement(cmp: Comparison, grp: list[SizeComparison], span: str, rci,
               launch_unit: bool, confidence: float = 0.95) -> RegimeStatement:
    """One range's statement.  Its mark is the one its interval gives, and that interval
    is the one printed: '~' when it includes 1 (with the interval), '+' / '-' when it
    excludes 1, '=' when it does but the ratio is within the minimum effect; in
    parentheses (and said to be about these two launches) unless the launch was the unit."""
    lo, hi, k = grp[0].bytes, grp[-1].bytes, len(grp)
    r = rci
    pct, pm = _regime_effect(r)
    ci = [r[1], r[2]]
    if not (r[1] > 1 or r[2] < 1):
        effect = f"no significant difference (A/B {r[0]:.3g}, 95 % CI {r[1]:.3g} to {r[2]:.3g})"
        return RegimeStatement("~", lo, hi, k, None, None, f"no significant difference {span} "
                               f"(A/B {r[0]:.3g}, 95 % CI {r[1]:.3g} to {r[2]:.3g})", r[0], ci,
                               span=span, effect=effect,
                               needed=needed_words(grp, r, cmp.min_effect, confidence) if launch_unit else "")
    first = grp[0]
    detail = f"{first.median_a_us:.3g} us vs {first.median_b_us:.3g} us at {fmt_bytes(first.bytes)}"
    if k > 1:
        rs = [g.ratio for g in grp]
        detail += f"; A/B from {min(rs):.3g} to {max(rs):.3g} over its {k} sizes"
    mark = "=" if 1 - cmp.min_effect < r[0] < 1 / (1 - cmp.min_effect) else ("+" if r[0] < 1 else "-")
    if mark == "=":
        effect = (f"no practical difference (significant but under {cmp.min_effect * 100:.0f} %: "
                  f"A {pct:+.1f} % faster, 95 % CI of A/B {r[1]:.3g} to {r[2]:.3g})")
        text, detail = f"{effect} {span}", ""
    else:
        effect = f"{effect_words(r)}"
        text = f"{cmp.a_label} is {effect} than {cmp.b_label} {span} ({detail})"
    if not launch_unit:
        text = f"in these two launches only: {text}"
        mark = f"({mark})"
    return RegimeStatement(mark, lo, hi, k, pct, pm, text, r[0], ci,
                           span=span, effect=effect, detail=detail)


def to_decide(grp: list[SizeComparison], rci, min_effect: float,
              confidence: float = 0.95) -> tuple[float, str, float] | None:
    """Launches a side that would decide an undecided range at the spread seen, what they
    would decide ('a difference': its interval excludes 1; 'no practical difference': it fits
    within the minimum effect) and the launch sd in the log; math.inf when no number would at
    this estimate; None when the range's interval does not give a launch spread."""
    from .sequential import launches_needed, t_at
    ratio, lo, hi = rci
    la, lb = min(g.launches_a for g in grp), min(g.launches_b for g in grp)
    if not (lo > 0 and hi > 0 and ratio > 0) or la + lb < 3:
        return None
    dfs = [g.df for g in grp if g.df]
    q = t_at(1 - confidence, min(dfs)) if dfs else _z(confidence)
    se = (math.log(hi) - math.log(lo)) / (2 * q)
    sd = se / math.sqrt(1 / la + 1 / lb)
    e = abs(math.log(ratio))
    band = -math.log(1 - min_effect)
    z = _z(confidence)             # many launches: t near the normal quantile
    claim = launches_needed(e, sd, z, None)
    same = launches_needed(band - e, sd, z, None) if e < band else math.inf
    n, what = min((claim, "a difference"), (same, "no practical difference"))
    return n, what, sd


def needed_words(grp: list[SizeComparison], rci, min_effect: float, confidence: float = 0.95) -> str:
    """What would decide an undecided range at the spread seen (to_decide), in words."""
    got = to_decide(grp, rci, min_effect, confidence)
    if got is None:
        return ""
    n, what, sd = got
    ratio = rci[0]
    la, lb = min(g.launches_a for g in grp), min(g.launches_b for g in grp)
    spread = f"launch sd {100 * (math.exp(sd) - 1):.1f} %"
    if not math.isfinite(n):
        return f"undecided at any number of launches at this estimate ({spread})"
    return (f"about {max(math.ceil(n), la, lb)} launches a side (it has {la} and {lb}) would decide it "
            f"({what}) at this spread ({spread}, A/B {ratio:.3g})")


RATIO_WORDING = 2.0        # from this factor on a difference is stated as a ratio, not a percentage


def effect_words(rci: tuple[float, float, float]) -> str:
    """'12 % ± 3 % faster', '12 % slower (95 % CI 2 % to 30 %)' or '52× slower
    (95 % CI 40×–70×)' for a time ratio A/B with its 95 % CI.  From a factor
    of 2 on, a percentage reads badly ('5127 % slower'): the factor is given
    instead.  A ± is printed only when it is clearly smaller than the value
    and the CI is about symmetric; otherwise the CI bounds are."""
    ratio, lo, hi = rci
    faster = ratio < 1
    word = "faster" if faster else "slower"
    # factor: how many times longer the slower side takes; CI in the same terms
    f, flo, fhi = (1 / ratio, 1 / hi, 1 / lo) if faster else (ratio, lo, hi)
    if f >= RATIO_WORDING:
        def x(v):
            return f"{v:.3g}×" if v < 100 else f"{v:.0f}×"
        return f"{x(f)} {word} (95 % CI {x(flo)}–{x(fhi)})"
    # percentages: faster = time saved (1 - ratio), slower = time added (ratio - 1)
    pct, plo, phi = ((1 - ratio, 1 - hi, 1 - lo) if faster else (ratio - 1, lo - 1, hi - 1))
    pct, plo, phi = pct * 100, plo * 100, phi * 100
    pm = (phi - plo) / 2
    digits = 1 if pm < 1 or pct < 10 else 0
    # a bound the rounding would print as 0 % hides that the interval excludes 1
    # (1.004 read '0 % to 81 %'): as many digits as its sign needs, up to 3
    while digits < 3 and min(abs(plo), abs(phi)) > 0 and round(min(abs(plo), abs(phi)), digits) == 0:
        digits += 1
    symmetric = abs((phi - pct) - (pct - plo)) <= 0.2 * pm
    if pm < 0.9 * pct and symmetric:
        return f"{pct:.{digits}f} % ± {pm:.{digits}f} % {word}"
    return f"{pct:.{digits}f} % {word} (95 % CI {plo:.{digits}f} % to {phi:.{digits}f} %)"


def _regime_ratio(grp: list[SizeComparison], confidence: float = 0.95) -> tuple[float, float, float]:
    """Geometric mean ratio A/B over the regime and its 95 % CI, combining each
    size's own uncertainty (as independent: right within one launch a side,
    where samples are the unit) with the scatter of the ratio across the
    regime's sizes.  Between launches the sizes share each launch's effect, and
    launches.regime_between is used instead."""
    lr = np.log([g.ratio for g in grp])
    se_each = np.array([(math.log(g.ratio_ci[1]) - math.log(g.ratio_ci[0])) / (2 * 1.96) for g in grp])
    k = lr.size
    var = float((se_each ** 2).sum()) / k ** 2
    if k >= 2:
        var += float(lr.var(ddof=1)) / k
    mean = float(lr.mean())
    hw = _z(confidence) * math.sqrt(var)
    return math.exp(mean), math.exp(mean - hw), math.exp(mean + hw)


def _regime_effect(rci: tuple[float, float, float]) -> tuple[float, float]:
    """(faster_pct, half width of its CI) of a regime's ratio A/B with its CI,
    for the JSON fields."""
    ratio, lo, hi = rci
    return (1 - ratio) * 100, (hi - lo) / 2 * 100
