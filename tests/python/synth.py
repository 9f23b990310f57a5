"""Synthetic versus result files with known parameters (for tests and examples).

Round-trip samples are 2 * T(n) * (1 + noise), with T the one-way model; a
small fraction of samples gets a large positive delay (like an interrupt), so
means and medians differ as they do on a real machine.
"""
import json

import numpy as np

from versus.load import PATTERN_VARIANTS


def hockney(s_ns, r_ns_per_byte):
    return lambda n: s_ns + r_ns_per_byte * n


def piecewise(*parts):
    """parts: (from_bytes, model) ascending; the model of the last part whose
    from_bytes <= n applies."""
    def f(n):
        m = parts[0][1]
        for lo, model in parts:
            if n >= lo:
                m = model
        return m(n)
    return f


def staircase(s_ns, r_ns_per_byte, period, height_ns):
    return lambda n: s_ns + r_ns_per_byte * n + height_ns * (n // period)


def run_record(name="synthetic", pattern="pingpong", variant=None, thresholds=None,
               launch_id=0, sizes=(), provider="", run_id=None, page_bytes=None):
    if variant is None:   # the pattern's default, as versus-run writes it
        variant = PATTERN_VARIANTS.get(pattern, ("blocking",))[0]
    return {"record": "run", "schema": 1, **({"topology": {"page_bytes": page_bytes}} if page_bytes else {}),
            "versus": {"version": "0.1.0", "revision": "unknown"},
            "run_id": run_id or f"synthetic-{name}-{launch_id}",
            "launch_id": launch_id,
            "transport": {"name": name, "library": "synthetic", "version": "1",
                          "provider": provider, "options": {},
                          "thresholds": dict(thresholds or {}), "attrs": {}},
            "pattern": pattern, "variant": variant, "ranks": 2, "hosts": ["n1", "n1"],
            "launcher": {"name": "local", "bootstrap": "fork"},
            "command_line": ["versus-run"], "start_time": "2026-01-01T00:00:00Z",
            "timer": {"clock": "CLOCK_MONOTONIC", "resolution_ns": 20, "cost_ns": 23},
            "schedule": {"spec": "synthetic", "sizes": list(sizes), "order": "sequential"},
            "iterations": {"measured": 0, "measured_large": 0, "warmup": 0, "warmup_large": 0,
                           "large_from_bytes": 0, "batch": 1},
            "timeout_s": 60, "env": {}}


def samples(model, n, count, rng, rel_noise=0.02, outlier_frac=0.01):
    base = 2.0 * model(n)
    x = base * (1 + rel_noise * rng.standard_normal(count))
    out = rng.random(count) < outlier_frac
    x[out] += base * rng.uniform(0.5, 3.0, out.sum())
    return np.maximum(np.rint(x), 1).astype(np.int64)


def make_lines(model, sizes, count=100, seed=0, rel_noise=0.02, outlier_frac=0.01,
               end=True, status="ok", extra=None, **run_kw):
    """JSONL lines (list of str) of one synthetic run."""
    rng = np.random.default_rng(seed)
    sizes = list(sizes)
    lines = [json.dumps(run_record(sizes=sizes, **run_kw))]
    for n in sizes:
        sm = samples(model, n, count, rng, rel_noise, outlier_frac)
        rec = {"record": "size", "bytes": int(n), "iterations": count, "warmup": 10, "batch": 1,
               "samples_ns": sm.tolist(), "elapsed_ns": int(sm.sum())}
        if extra:
            for key, fn in extra.items():
                rec[key] = samples(fn, n, count, rng, rel_noise, outlier_frac).tolist()
        lines.append(json.dumps(rec, separators=(",", ":")))
    if end:
        lines.append(json.dumps({"record": "end", "status": status,
                                 "message": "" if status == "ok" else "peer died",
                                 "sizes_completed": len(sizes), "end_time": "2026-01-01T00:00:10Z"}))
    return lines


def write_run(path, model, sizes, **kw):
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(make_lines(model, sizes, **kw)) + "\n")
    return path


def pow2(hi, zero=True):
    out = [0] if zero else []
    n = 1
    while n <= hi:
        out.append(n)
        n *= 2
    return out
