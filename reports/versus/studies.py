"""The tables of the seed studies, as data.

- `variant_table`  (seed 000): per variant, send and receive latency, buffer
  size (first transition) and bandwidth.  Records of an `overhead` pattern
  may carry `send_ns` / `recv_ns` arrays (time inside the send and the
  receive call); when present they are used, otherwise both columns come from
  the ping-pong one-way time (round trip / 2) and `source` says so.
- `run_statistics` (seeds 001 and 004): per run min, max, mean, median, std
  dev, std error of the round trip at one size, and across runs the same
  statistics of the per-run means.
- `control_limits` (seed 002): per run and size, mean and mean ± 3 sigma of
  the recorded samples and how many fall outside.
"""
from __future__ import annotations

import numpy as np

from .fit import fit_segmented
from .load import InputError, Run
from .stats import describe, summarise_size
from .transitions import classify
from .units import run_meaning


def _series_params(x: np.ndarray, y: np.ndarray) -> dict:
    """Latency, buffer size and bandwidth of one curve, seed 000 style: latency is
    the mean below the first transition, bandwidth the last regime's 1/r."""
    if x.size < 2:
        return {"latency_us": float(y.mean()) / 1e3 if y.size else None,
                "fitted_latency_us": None, "buffer_bytes": None, "buffer_between_bytes": None,
                "bandwidth_MBps": None}
    fit = fit_segmented(x, y)
    trans = classify(fit)
    first = fit.regimes[0]
    buffer_bytes = trans[0].bytes if trans else None
    buffer_between = [trans[0].after_bytes, trans[0].before_bytes] if trans else None
    flat = y[: first.last + 1] if trans else y
    last = fit.regimes[-1]
    return {"latency_us": float(flat.mean()) / 1e3,
            "fitted_latency_us": first.s_ns / 1e3,
            "buffer_bytes": buffer_bytes, "buffer_between_bytes": buffer_between,
            "bandwidth_MBps": 1e3 / last.r_ns_per_byte if last.r_ns_per_byte > 0 else None}


def variant_table(runs: list[Run]) -> list[dict]:
    """Seed 000's table: one row per run (variant).  Bandwidth in MB/s = bytes/us."""
    rows = []
    for run in runs:
        by = run.sizes_by_bytes()
        x = np.array(list(by), dtype=np.float64)
        have_calls = by and all("send_ns" in s.extra and "recv_ns" in s.extra for s in by.values())
        if have_calls:
            send = np.array([np.median(s.extra["send_ns"]) for s in by.values()], dtype=np.float64)
            recv = np.array([np.median(s.extra["recv_ns"]) for s in by.values()], dtype=np.float64)
            source = "send_ns / recv_ns (time inside the calls)"
        else:
            send = recv = np.array([np.median(s.samples_ns) / 2 for s in by.values()], dtype=np.float64)
            source = "ping-pong one-way time (round trip / 2) for both"
        row = {"run": run.label, "variant": run.variant, "source": source}
        for side, y in (("send", send), ("receive", recv)):
            for k, v in _series_params(x, y).items():
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
    """Seed 002: per run and size, mean and control limits of the recorded samples (us)."""
    out = []
    for r in runs:
        rows = []
        for b, s in r.sizes_by_bytes().items():
            st = summarise_size(b, s.samples_ns, s.batch)   # one-way; the table shows the samples
            rows.append({"bytes": b, "n": st.n, "mean_us": 2 * st.mean_ns / 1e3,
                         "std_us": 2 * st.std_ns / 1e3, "lcl_us": 2 * st.lcl_ns / 1e3,
                         "ucl_us": 2 * st.ucl_ns / 1e3, "outside": st.outside_limits})
        out.append({"run": r.label, "source": r.source, "sizes": rows})
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
    return {"variants": variant_table(runs), "run_statistics": run_statistics(runs, nbytes),
            "control_limits": control_limits(runs)}
