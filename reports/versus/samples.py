"""The one view of a run's samples every consumer reads: per size, the samples
pooled over repeated visits, sorted, as float64 in ns of the pattern's reported
time (units.py: a ping-pong's round trip / 2, a stream's time per message, ...).
Computed once per run and kept on it; statistics, fits, comparisons, launch
spreads, study tables, plots and exports read it instead of converting again.

    reported(run)        {bytes: sorted float64 ns}, sizes ascending
    light_stats(run)     {bytes: (n, median, sd, median standard error)} for launch spreads
"""
from __future__ import annotations

from .lazy import numpy as np

from .units import run_meaning


def _cache(run) -> dict:
    c = run.__dict__.get("_view")
    if c is None:
        c = run.__dict__["_view"] = {}
    return c


def reported(run) -> dict[int, np.ndarray]:
    """Sorted samples per size in ns of the reported time (read-only arrays)."""
    c = _cache(run)
    if "reported" not in c:
        div = run_meaning(run).divisor
        out = {}
        for b, s in sorted(run.sizes_by_bytes().items()):
            x = np.sort(np.asarray(s.samples_ns, dtype=np.float64)) / div
            x.flags.writeable = False
            out[b] = x
        c["reported"] = out
    return c["reported"]


def sorted_median(x: np.ndarray) -> float:
    """The median of an ascending array, without sorting it again."""
    n = x.size
    h = n // 2
    return float(x[h]) if n % 2 else float(0.5 * (x[h - 1] + x[h]))


def light_stats(run) -> dict[int, tuple[int, float, float, float]]:
    """Per size (n, median, sd, standard error of the median) of the reported
    time, without the tests summarise_size runs (what a launch spread needs)."""
    c = _cache(run)
    if "light" not in c:
        from .stats import MEDIAN_SE_FACTOR, median_ci_sorted, se_from_ci
        out = {}
        for b, x in reported(run).items():
            n = int(x.size)
            sd = float(x.std(ddof=1)) if n > 1 else 0.0
            out[b] = (n, sorted_median(x), sd, se_from_ci(median_ci_sorted(x), sd, n, MEDIAN_SE_FACTOR))
        c["light"] = out
    return c["light"]


def for_runs(runs, what: str, compute):
    """compute() for this exact list of runs, once: kept on the first run's view
    under `what` and the identity of every run (a configuration's launches are
    pooled or spread by several consumers of one report)."""
    if not runs:
        return compute()
    key = (what, tuple(id(r) for r in runs))
    c = _cache(runs[0])
    if key not in c:
        c[key] = compute()
    return c[key]

