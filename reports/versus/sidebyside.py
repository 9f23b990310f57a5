"""A measured run beside an imported one (another tool's printed figures): per common
size, versus's figure of the same statistic the tool printed, with the 95 % interval
versus can give from its samples, the tool's figure, and their ratio.

What can be said: whether the tool's figure lies inside versus's interval for that
statistic (the two tools agree within versus's own uncertainty), and by how much they
differ.  What cannot: a confidence interval of the difference, or a claim that one
is faster.  The imported side is one number per size with no samples; its own
spread is unknown, so a difference may be the other tool's noise.
"""
from __future__ import annotations

from .lazy import numpy as np

from .samples import SampleSet
from .load import InputError, Run
from .launches import BETWEEN, WITHIN, launch_figures

NO_CLAIM = ("the imported side is a summary without samples: no interval of the difference and no "
            "claim of which is faster can be made; 'inside' says the tool's figure falls in versus's "
            "95 % interval of the same statistic")


MEAN_DRAWS = 2000        # bootstrap resamples of the mean
MEAN_INTERVAL = "95 % bootstrap percentile interval of the mean (2000 resamples): never below the fastest sample"


def _mean_ci(x: np.ndarray, seed: int = 0) -> tuple[float, float] | None:
    """95 % percentile bootstrap interval of the mean of x.  Not mean ± 1.96 standard
    errors: on timing samples with a long upper tail (a few descheduled samples) that
    interval reaches below 0 (3.206 [-1.746, 8.157] us beside an OSU run); every
    resampled mean lies between the smallest and largest sample, so this one cannot,
    and it is longer on the side of the tail, as the mean's uncertainty is."""
    if x.size < 3:
        return None
    rng = np.random.default_rng(seed)
    means = np.empty(MEAN_DRAWS)
    step = max(1, min(MEAN_DRAWS, 4_000_000 // x.size))      # bound the index array's memory
    for i in range(0, MEAN_DRAWS, step):
        k = min(step, MEAN_DRAWS - i)
        means[i:i + k] = x[rng.integers(0, x.size, (k, x.size))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def _statistic_kind(imp: dict) -> str:
    st = str(imp.get("statistic", "")).lower()
    if "percentile" in st or "median" in st:
        return "median"
    if "best" in st:
        return "best"
    return "mean"


def side_by_side(measured: list[Run], imported: Run) -> dict:
    """Rows per size common to both: versus's figure (and interval) of the tool's statistic,
    the tool's figure, the ratio tool / versus.  The measured launches are pooled."""
    imp = imported.imported
    if imp is None:
        raise InputError(f"{imported.source}: not an imported run")
    patterns = {r.pattern for r in measured}
    if len(patterns) != 1:
        raise InputError("the measured side mixes patterns: " + ", ".join(sorted(patterns)))
    pattern = patterns.pop()
    if pattern != imported.pattern:
        raise InputError(f"{imported.source}: {imp.get('tool')}'s {imp.get('test')} is a {imported.pattern}, "
                         f"the measured side a {pattern}: they measure different things")
    sset = SampleSet.of(measured)
    pooled = sset.pooled()
    figs = launch_figures(sset)
    kind = _statistic_kind(imp)
    latency = pattern == "pingpong"
    rows = []
    for s in sorted(imported.summaries, key=lambda s: s["bytes"]):
        b = int(s["bytes"])
        if b not in pooled:
            continue
        x = pooled[b]
        f = figs[b]
        # the median's figure is the configuration's: between its launches where several measured
        # the size (launches.launch_figures); the mean and the fastest sample are of the samples pooled
        between = f.kind == BETWEEN and (kind == "median" or not latency)
        if latency:
            tool = s.get("one_way_ns")
            if kind == "median":
                ours, ci = f.median_ns, f.ci_ns
            elif kind == "best":
                ours, ci = float(x[0]), None
            else:
                ours, ci = float(x.mean()), _mean_ci(x)
            unit = "ns"
        else:
            tool = s.get("bandwidth_MBps")
            t_med = f.median_ns
            ours = b / t_med * 1e3 if t_med > 0 else None
            c = f.ci_ns
            ci = (b / c[1] * 1e3, b / c[0] * 1e3) if c and c[0] > 0 else None
            unit = "MB/s"
        if tool is None or ours is None:
            continue
        rows.append({"bytes": b, "versus": ours, "versus_ci": list(ci) if ci else None, "tool": float(tool),
                     "ratio": float(tool) / ours if ours else None,
                     "inside": bool(ci and ci[0] <= tool <= ci[1]) if ci else None,
                     "samples": int(x.size), "launches": f.launches,
                     "interval_kind": BETWEEN if between else WITHIN if f.launches == 1 else "pooled samples",
                     **({"tool_valid": s["valid"]} if "valid" in s else {})})
    if not rows:
        have = sorted(pooled)
        raise InputError(f"{imported.source}: no size in common with the measured runs "
                         f"(imported {[s['bytes'] for s in imported.summaries][:8]}..., measured {have[:8]}...)")
    return {"tool": imp.get("tool"), "test": imp.get("test"), "version": imp.get("version"),
            "statistic": imp.get("statistic"), "versus_statistic": "bandwidth from the median time"
            if not latency else {"median": "median one-way time", "best": "fastest sample",
                                 "mean": "mean one-way time"}[kind],
            "versus_interval": _interval_words(rows, kind if latency else "bandwidth"),
            "unit": unit, "measured": [r.source for r in measured], "imported": imported.source,
            "conversions": imp.get("conversions") or [], "unknown": imp.get("unknown") or [],
            "note": NO_CLAIM, "rows": rows}


def _interval_words(rows: list[dict], kind: str) -> str | None:
    """Which interval versus's figures carry (the rows' interval_kind)."""
    if kind == "best":
        return None
    if kind == "mean":
        return MEAN_INTERVAL + (", of every launch's samples together" if any(r["launches"] > 1 for r in rows)
                                else "")
    ls = sorted({r["launches"] for r in rows if r["interval_kind"] == BETWEEN})
    within = "distribution-free 95 % interval of the median within one launch (order statistics)"
    if not ls:
        words = within
    else:
        n = f"{ls[0]}" if len(ls) == 1 else f"{ls[0]}-{ls[-1]}"
        words = (f"geometric mean of the launch medians, 95 % CI between launches ({n} launches, Student's t)"
                 + (f"; a size one launch measured: {within}" if len(ls) < len(rows) and
                    any(r["interval_kind"] == WITHIN for r in rows) else ""))
    return words if kind == "median" else f"bytes over the median time and over its interval's ends ({words})"


def format_side_by_side(d: dict) -> str:
    from .console import table
    unit = d["unit"]
    scale, shown = (1e-3, "us") if unit == "ns" else (1.0, "MB/s")
    rows = []
    for r in d["rows"]:
        ci = r["versus_ci"]
        rows.append([str(r["bytes"]), f"{r['versus'] * scale:.3f}",
                     f"[{ci[0] * scale:.3f}, {ci[1] * scale:.3f}]" if ci else "-",
                     f"{r['tool'] * scale:.3f}", f"{r['ratio']:.3f}" if r["ratio"] else "-",
                     {True: "inside", False: "outside", None: "-"}[r["inside"]]
                     + (" (tool's validation: Fail)" if r.get("tool_valid") is False else "")])
    head = (f"versus ({d['versus_statistic']}) beside {d['tool']} {d['test']}"
            f"{' ' + d['version'] if d['version'] else ''} ({d['statistic']}), {shown}\n")
    out = head + table(["bytes", "versus", "versus 95% CI", d["test"] or "tool", "tool/versus", "tool's figure"],
                       rows)
    out += "\nnote: " + d["note"] + "\n"
    bad = [r["bytes"] for r in d["rows"] if r.get("tool_valid") is False]
    if bad:
        out += (f"invalid: {d['tool']} reported its validation failed at {', '.join(map(str, bad))} B "
                "(the data received was not what was sent): its figure there is not a correct transfer's\n")
    if d.get("versus_interval"):
        out += "versus 95% CI: " + d["versus_interval"] + "\n"
    if d["conversions"]:
        out += "conversions: " + "; ".join(d["conversions"]) + "\n"
    if d["unknown"]:
        out += "not known of the imported run: " + "; ".join(d["unknown"]) + "\n"
    return out
