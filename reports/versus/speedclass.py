"""Launch speed classes: the launches of one configuration falling into groups.

On a shared host a launch's process pair can land on cores (or vCPUs) that stay
fast or slow for the whole launch: seed 001 measured three launches of one
configuration at 0.27-0.34 us and seven at 0.69-0.73 us (8 B).  A mean of such
launches describes none of them, and a t-test on three launches a side cannot
always tell two classes from a difference, so the summary and the report say
so.  The rule (docs/analysis.md, "Launch speed classes"):

1. It needs 3 or more launches and the sizes every launch measured (median > 0).
2. Each launch's relative speed is the mean, over those sizes, of its log
   median less the mean log median of all launches at that size (a whole-launch
   effect, averaged over sizes so that one noisy size cannot make a class).  Its
   standard error comes from each median's own (the order-statistic interval),
   the sizes taken as independent.
3. The launches, sorted by relative speed, are split at the widest gap when
   that gap is at least ln 1.25 (the nearest launches of two classes 25 % apart
   or more: launches of one configuration differ by a few % on a shared host,
   speed classes by 2-3x), at least 6 pooled within-class standard deviations
   after the split (at least one class must hold two launches, so that there
   is a spread to compare with) and at least 4 standard errors of the
   difference of the two launches beside it.  Each class is split again the same way until no gap
   qualifies (binary segmentation).
4. Classes are described at the size where they stand furthest apart (the
   largest smallest ratio between the medians of neighbouring classes), with
   the number of sizes at which no two classes overlap.

On launches of one class (20 sizes, log-normal launch effects, 2 % more per
launch and size; 2000 sets each) the rule found two classes in none of the sets
with effects of 3 % or 5 % (3, 5 or 10 launches); with 10 %, in 5.8 % of
3-launch sets, 1.15 % of 5-launch and 0.05 % of 10-launch sets
(bench/speed_classes.py; docs/analysis.md).
"""
from __future__ import annotations

import math

from .lazy import numpy as np

from .compare import fmt_bytes
from .load import Run
from .samples import SampleSet
from .stats import median_summary

MIN_LAUNCHES = 3
MIN_GAP = math.log(1.25)       # neighbouring classes at least 25 % apart
SPREAD_FACTOR = 6.0            # gap >= 6 pooled within-class standard deviations
SE_FACTOR = 4.0                # gap >= 4 standard errors of the two launches' difference
RULE = ("launches sorted by their speed relative to the others (mean log median over the sizes every "
        "launch measured) and split where the gap is at least 25 %, 6 within-class standard deviations "
        "and 4 standard errors of the two launches beside it; 3 launches or more")


def _launch_medians(samples: SampleSet) -> tuple[list[str], list[int], np.ndarray, np.ndarray]:
    """Launch keys, the sizes every launch measured, and (launch x size) arrays
    of medians (ns) and their standard errors relative to the median."""
    keys = list(dict.fromkeys(samples.launches))
    by_launch = samples.by_launch()
    common = [b for b, d in by_launch.items() if len(d) == len(keys)]
    med = np.zeros((len(keys), len(common)))
    rel_se = np.zeros_like(med)
    for i, k in enumerate(keys):
        for j, b in enumerate(common):
            _, m, _, se = median_summary(by_launch[b][k])
            med[i, j] = m
            rel_se[i, j] = se / m if m > 0 else 0
    keep = (med > 0).all(axis=0)
    return keys, [b for b, k in zip(common, keep) if k], med[:, keep], rel_se[:, keep]


def split_classes(effect: np.ndarray, se: np.ndarray) -> list[np.ndarray]:
    """The classes (arrays of indexes into effect, slowest last) of launches with
    relative speeds `effect` (log) and their standard errors `se` (rule step 3)."""
    order = np.argsort(effect, kind="stable")
    e, u = effect[order], se[order]
    cuts = [0, e.size]
    while True:
        best = None
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            if hi - lo < 2:
                continue
            gaps = np.diff(e[lo:hi])
            k = int(np.argmax(gaps))
            trial = sorted(cuts + [lo + k + 1])
            segs = [e[a:b] for a, b in zip(trial[:-1], trial[1:])]
            dof = sum(s.size - 1 for s in segs)
            if dof < 1:
                continue
            within = math.sqrt(sum(float(((s - s.mean()) ** 2).sum()) for s in segs) / dof)
            gap = float(gaps[k])
            if (gap >= MIN_GAP and gap >= SPREAD_FACTOR * within
                    and gap >= SE_FACTOR * math.hypot(u[lo + k], u[lo + k + 1])
                    and (best is None or gap > best[0])):
                best = (gap, trial)
        if best is None:
            return [order[a:b] for a, b in zip(cuts[:-1], cuts[1:])]
        cuts = best[1]


def _us(v_ns: float) -> str:
    """Microseconds to 3 significant figures, trailing zeros kept (0.270, 12.0, 1 234)."""
    v = v_ns / 1e3
    if v <= 0:
        return "0"
    dec = max(2 - math.floor(math.log10(v)), 0)
    return f"{v:,.{dec}f}".replace(",", " ")


def speed_classes(runs: list[Run], samples: SampleSet | None = None) -> dict | None:
    """The speed classes of one configuration's launches, or None when there are
    fewer than 3 launches or no size every launch measured.  `count` 1 means one
    class; `text` says what a reader should know (None for one class).  samples:
    the runs' SampleSet, when the caller has it (else made here)."""
    if samples is None:
        samples = SampleSet.of(runs)
    if samples.n_launches < MIN_LAUNCHES:
        return None
    keys, sizes, med, rel_se = _launch_medians(samples)
    if len(keys) < MIN_LAUNCHES or not sizes:
        return None
    y = np.log(med)
    dev = y - y.mean(axis=0)
    effect = dev.mean(axis=1)
    se = np.sqrt((rel_se ** 2).sum(axis=1)) / len(sizes)
    classes = split_classes(effect, se)
    out = {"rule": RULE, "launches": len(keys), "sizes": len(sizes), "count": len(classes),
           "classes": [], "at_bytes": None, "apart_sizes": None, "text": None}
    if len(classes) < 2:
        out["classes"] = [{"launches": keys, "relative_speed": 1.0}]
        return out
    # where the classes stand furthest apart: per size, the smallest log ratio between the
    # fastest launch of a class and the slowest of the class before it
    sep = np.min([y[c].min(axis=0) - y[p].max(axis=0) for p, c in zip(classes[:-1], classes[1:])], axis=0)
    j = int(np.argmax(sep))
    out["at_bytes"] = sizes[j]
    out["apart_sizes"] = int((sep > 0).sum())
    for c in classes:
        out["classes"].append({"launches": [keys[i] for i in c],
                               "relative_speed": float(math.exp(effect[c].mean())),
                               "median_us": [float(med[c, j].min()) / 1e3, float(med[c, j].max()) / 1e3]})
    parts = [f"{len(c)} at {_us(med[c, j].min())}" + (f"–{_us(med[c, j].max())}" if len(c) > 1 else "") + " µs"
             for c in classes]
    out["text"] = (f"launches fall into {len(classes)} speed classes: {', '.join(parts)} "
                   f"(at {fmt_bytes(sizes[j])}; apart at {out['apart_sizes']} of {len(sizes)} sizes)")
    return out
