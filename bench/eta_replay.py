#!/usr/bin/env python3
"""Replay a finished campaign's forecast: how far the ETA made after each run was from what
the rest of the campaign took.

    python3 bench/eta_replay.py RESULTS_DIR [RESULTS_DIR ...]

For every campaign result directory (its campaign.json and results files), the runs that
executed are taken in the order they ran; after the k-th, the runs after it are forecast
with versus's estimator (reports/versus/eta.py) from the k runs before only, and set beside
the sum of their measured durations.  Printed: per point the forecast, the actual and their
ratio; per campaign the ratio after the first run and the worst ratio after any run.  The
old estimate (mean duration so far x runs left) is printed beside it.

What a run asked for (sizes, iterations, warm-ups, batch) is read from the runner command
line its run record keeps, so a --quick campaign is replayed as it ran.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reports"))

from versus.campaign import runner_arguments  # noqa: E402
from versus.eta import Estimator, plan_of, read_costs  # noqa: E402


class Asked:
    """A RunSpec's fields from a runner command line."""

    def __init__(self, argv: list, entry: dict):
        a = runner_arguments(argv[1:])
        self.sizes = a.get("sizes", "0:4M")
        self.iterations = a.get("iterations")
        self.iterations_large = a.get("iterations-large")
        self.warmup = a.get("warmup")
        self.warmup_large = a.get("warmup-large")
        self.batch = a.get("batch")
        self.extra_args = [f"--{k}={a[k]}" for k in ("large-from", "adaptive-max-sizes") if k in a]
        self.extra_args += ["--adaptive"] if a.get("adaptive") is True else []
        self.transport = a.get("transport", entry.get("transport"))
        self.pattern = a.get("pattern", entry.get("pattern", "pingpong"))
        self.variant = a.get("variant", entry.get("variant", ""))
        self.options = a.get("transport-opt", {})
        self.nodes = 2 if len(set(entry.get("hosts") or [])) > 1 else None


def _run_record(path: Path) -> dict | None:
    try:
        with open(path, encoding="utf-8") as f:
            rec = json.loads(f.readline())
    except (OSError, ValueError):
        return None
    return rec if rec.get("record") == "run" else None


def replay(results: Path) -> dict:
    man = json.loads((results / "campaign.json").read_text(encoding="utf-8"))
    runs = []
    for e in man["runs"]:
        if e.get("status") not in ("ok", "failed", "timeout") or not e.get("duration_s") or e.get("resumed"):
            continue
        rec = _run_record(results / e["file"])
        if rec is None:
            continue
        spec = Asked(rec.get("command_line") or [], {**e, "hosts": rec.get("hosts")})
        plan = plan_of(spec)
        runs.append({"id": e["id"], "plan": plan, "file": results / e["file"], "seconds": e["duration_s"]})
    points = []
    for k in range(1, len(runs)):
        est = Estimator()
        for r in runs[:k]:
            est.add(read_costs(r["file"], r["plan"].key, r["seconds"]))
        guesses = [est.predict(r["plan"]) for r in runs[k:]]
        if any(g is None for g in guesses):
            continue
        actual = sum(r["seconds"] for r in runs[k:])
        old = sum(r["seconds"] for r in runs[:k]) / k * (len(runs) - k)
        points.append({"after": runs[k - 1]["id"], "forecast_s": sum(guesses), "actual_s": actual,
                       "old_s": old})
    return {"campaign": str(results), "runs": len(runs), "points": points}


def _ratio(a: float, b: float) -> float:
    return max(a, b) / min(a, b) if min(a, b) > 0 else float("inf")


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    for d in argv:
        r = replay(Path(d))
        print(f"{r['campaign']}: {r['runs']} runs executed")
        for p in r["points"]:
            print(f"  after {p['after']:<40} forecast {p['forecast_s']:9.1f} s  actual {p['actual_s']:9.1f} s  "
                  f"x{_ratio(p['forecast_s'], p['actual_s']):5.2f}   (mean-of-runs {p['old_s']:9.1f} s "
                  f"x{_ratio(p['old_s'], p['actual_s']):6.2f})")
        if r["points"]:
            first = r["points"][0]
            worst = max(_ratio(p["forecast_s"], p["actual_s"]) for p in r["points"])
            worst_old = max(_ratio(p["old_s"], p["actual_s"]) for p in r["points"])
            print(f"  after the first run: x{_ratio(first['forecast_s'], first['actual_s']):.2f} "
                  f"(mean-of-runs x{_ratio(first['old_s'], first['actual_s']):.2f}); worst after any run: "
                  f"x{worst:.2f} (mean-of-runs x{worst_old:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
