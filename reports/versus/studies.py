"""The tables of the seed studies, as data.

- `variant_table`  (seed 000): per variant, send and receive latency, buffer
  size (first transition) and bandwidth.  Records of an `overhead` pattern
  may carry `send_ns` / `recv_ns` arrays (time inside the send and the
  receive call); when present they are used, otherwise both columns come from
  the ping-pong one-way time (round trip / 2) and `source` says so.
- `run_statistics` (seeds 001 and 004): per run min, max, mean, median, std
  dev, std error of the round trip at one size, and across runs the same
  statistics of the per-run means.
- `control_limits` (seed 002): per run and size, mean, sd, and the control
  limits of the recorded samples (their 0.135th and 99.865th percentiles;
  the seed's mean ± 3 sigma went below 0 on skewed times) and how many fall
  outside.
"""
from __future__ import annotations

from .lazy import numpy as np

from .fit import fit_segmented
from .analysis import headline_bandwidth
from .load import InputError, Run, group_launches, pool_launches
from .samples import SampleSet
from .stats import LIMITS_RULE, describe, summarise_size
from .transitions import classify
from .units import run_meaning


def _series_params(x: np.ndarray, y: np.ndarray) -> dict:
    """Latency, buffer size and bandwidth of a curve of the time inside one call
    (send_ns or recv_ns of the overhead pattern), read as the run's own analysis
    reads its times: the median at the smallest size, the first transition of the
    segmented fit, the bytes over the median time at the best size."""
    if x.size == 0:
        return {"latency_us": None, "buffer_bytes": None, "buffer_between_bytes": None,
                "bandwidth_MBps": None, "bandwidth_kind": None}
    fit = fit_segmented(x, y) if x.size >= 2 else None
    trans = classify(fit) if fit is not None else []
    first = trans[0] if trans else None
    bw = [b / t * 1e3 for b, t in zip(x, y) if b > 0 and t > 0]
    peak = max(bw) if bw else None
    last = fit.regimes[-1] if fit is not None and fit.regimes else None
    asym = 1e3 / last.r_ns_per_byte if last is not None and last.r_ns_per_byte > 0 else None
    top = float(x[-1]) / float(y[-1]) * 1e3 if x[-1] > 0 and y[-1] > 0 else None
    value, kind = headline_bandwidth(asym, peak, top)
    return {"latency_us": float(y[0]) / 1e3,
            "buffer_bytes": first.bytes if first else None,
            "buffer_between_bytes": [first.after_bytes, first.before_bytes] if first else None,
            "bandwidth_MBps": value, "bandwidth_kind": kind}


def _analysis_params(a) -> dict:
    """Latency, buffer size and bandwidth from the run's analysis, the one every other
    output reads: the median at the smallest size measured (with its 95 % CI), the first
    reported transition, and the analysis' headline bandwidth (analysis.bandwidth)."""
    usable = [s for s in a.sizes if a.invalid_included or s.valid is not False]
    first = usable[0] if usable else None
    t = min(a.transitions, key=lambda t: t.bytes) if a.transitions else None
    bw = a.bandwidth()
    return {"latency_us": first.median_ns / 1e3 if first else None,
            "latency_ci_us": [v / 1e3 for v in first.median_ci_ns] if first and first.median_ci_ns else None,
            # which interval: within one launch, or between the launches of a configuration
            "latency_interval_kind": first.interval_kind if first else None,
            "latency_launches": first.launches if first else None,
            "latency_bytes": first.bytes if first else None,
            "buffer_bytes": t.bytes if t else None,
            "buffer_between_bytes": [t.after_bytes, t.before_bytes] if t else None,
            "bandwidth_MBps": bw["headline_MBps"], "bandwidth_kind": bw["headline"]}


def variant_table(runs: list[Run], analyses: list | None = None) -> list[dict]:
    """Seed 000's table: one row per run (variant).  Bandwidth in MB/s = bytes/us.
    With the ping-pong's times both columns are the run's analysis (`analyses`, made
    here when not given), so every figure is the one the summary prints."""
    if analyses is None:
        from .analysis import analyse_run
        analyses = [analyse_run(r) for r in runs]
    rows = []
    for run, a in zip(runs, analyses):
        by = run.sizes_by_bytes()
        x = np.array(list(by), dtype=np.float64)
        have_calls = by and all("send_ns" in s.extra and "recv_ns" in s.extra for s in by.values())
        row = {"run": run.label, "variant": run.variant}
        if have_calls:
            send = np.array([np.median(s.extra["send_ns"]) for s in by.values()], dtype=np.float64)
            recv = np.array([np.median(s.extra["recv_ns"]) for s in by.values()], dtype=np.float64)
            row["source"] = "send_ns / recv_ns (time inside the calls)"
            sides = (("send", _series_params(x, send)), ("receive", _series_params(x, recv)))
        else:
            row["source"] = (f"{run_meaning(run).time_label} for both: the run's analysis, as in the summary")
            params = _analysis_params(a)
            sides = (("send", params), ("receive", params))
        for side, d in sides:
            for k, v in d.items():
                row[f"{side}_{k}"] = v
        rows.append(row)
    return rows


def run_statistics(runs: list[Run], nbytes: int | None = None) -> dict:
    """Seeds 001/004: statistics of each run's round trips at one size (us),
    and the statistics of the per-run means across runs."""
    if nbytes is None:
        common = set.intersection(*(set(r.sizes_by_bytes()) for r in runs)) if runs else set()
        nbytes = min(common) if common else None
    per_run = []
    for r in runs:
        s = r.sizes_by_bytes().get(nbytes)
        if s is None:
            continue
        d = describe(s.samples_ns / 1e3)
        d.update({"run": r.label, "source": r.source, "launch_id": r.launch_id})
        per_run.append(d)
    unit = f"us, {run_meaning(runs[0]).sample_label}" if runs else "us"
    return {"bytes": nbytes, "unit": unit, "runs": per_run,
            "across_runs": describe([d["mean"] for d in per_run])}


def control_limits(runs: list[Run]) -> list[dict]:
    """Seed 002: per run and size, mean and control limits of the recorded samples (us):
    percentiles (stats.LIMITS_RULE), which scale with the samples, so twice the one-way
    limits are the samples' own."""
    out = []
    for r in runs:
        rows = []
        for b, s in r.sizes_by_bytes().items():
            st = summarise_size(b, s.samples_ns, s.batch)   # one-way; the table shows the samples
            rows.append({"bytes": b, "n": st.n, "mean_us": 2 * st.mean_ns / 1e3,
                         "std_us": 2 * st.std_ns / 1e3, "lcl_us": 2 * st.lcl_ns / 1e3,
                         "ucl_us": 2 * st.ucl_ns / 1e3, "outside": st.outside_limits})
        out.append({"run": r.label, "source": r.source, "rule": LIMITS_RULE, "sizes": rows})
    return out


def study_tables(runs: list[Run], nbytes: int | None = None) -> dict:
    """The three tables over runs of one pattern (their samples mean one thing; variants of it may
    differ, that is what seed 000 compares)."""
    patterns = sorted({r.pattern or "pingpong" for r in runs})
    if len(patterns) > 1:
        which = "; ".join(f"{p}: {', '.join(r.label for r in runs if (r.pattern or 'pingpong') == p)}"
                          for p in patterns)
        raise InputError(f"the tables take runs of one pattern (their samples must mean one thing); these "
                         f"mix {', '.join(patterns)} ({which}): give the runs of one pattern")
    return {"variants": configuration_variants(runs), "run_statistics": run_statistics(runs, nbytes),
            "control_limits": control_limits(runs)}


def configuration_variants(runs: list[Run]) -> list[dict]:
    """variant_table with one row per configuration: its launches pooled and analysed as the
    report does, so that with several launches the latency and its interval are the
    configuration's between its launches (analysis.analyse_run with their SampleSet)."""
    from .analysis import analyse_run
    groups = group_launches(runs)
    pooled = [pool_launches(g) for g in groups]
    sets = [SampleSet.of(g) for g in groups]
    analyses = [analyse_run(p, samples=s if s.n_launches > 1 else None) for p, s in zip(pooled, sets)]
    rows = variant_table(pooled, analyses)
    for row, s in zip(rows, sets):
        row["launches"] = s.n_launches
        if s.n_launches > 1:
            row["run"] = f"{row['run']} ({s.n_launches} launches)"
    return rows
