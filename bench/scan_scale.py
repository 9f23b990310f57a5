#!/usr/bin/env python3
"""The all-pairs scan at scale: wall time per round, core's own cost per round, bytes written and
rank 0's peak memory at 2, 8, 32 and 128 local ranks, with the fake transport, then a projection to
10,000 and 100,000 ranks.

Each count runs twice (--passes 1 and enough passes for at least 40 more rounds, the scan's defaults
otherwise: 8 B and 1 MiB, 50 / 10 iterations, 10 / 2 warm-up) and the per-round time is the
difference over the extra rounds, so start-up and teardown (launch, rendezvous, placement) cancel.  The fake is run with sleep=1: a
wait sleeps to its deadline instead of spinning, so that 128 ranks on a small machine measure at
once as they would on 128 cores, and what grows with the rank count is core's work (the schedule,
the barrier, the gather to rank 0, the records) and the operating system's wake-ups, not the CPU
count.  "Pair work" is the time a round's slowest pair spent in its timed loops and warm-up (from
its records), "core" the rest of the round.

    .venv/bin/python bench/scan_scale.py [--ranks 2,8,32,128] [--runner build/core/versus-run]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import loadavg  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(runner, n, passes, out, env):
    cmd = [runner, "-t", "fake", "-o", "sleep=1", "--launch", "local", "-n", str(n), "--scan",
           "--passes", str(passes), "-O", out, "-q"]
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
    wall = time.monotonic() - t0
    if p.returncode:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    pairs, end = [], None
    with open(out, encoding="utf-8") as f:
        for ln in f:
            rec = json.loads(ln)
            if rec["record"] == "pair":
                pairs.append(rec)
            elif rec["record"] == "end":
                end = rec
    return wall, pairs, end, os.path.getsize(out)


def pair_work_per_round(pairs):
    """Median over rounds of the slowest pair's time in its loops (all sizes of the round)."""
    per = {}
    for p in pairs:
        key = (p["pass"], p["round"], tuple(p["ranks"]))
        warm = p["elapsed_ns"] * p["warmup"] / max(p["iterations"], 1)
        per[key] = per.get(key, 0.0) + p["elapsed_ns"] + warm
    rounds = {}
    for (ps, rd, _), ns in per.items():
        rounds[(ps, rd)] = max(rounds.get((ps, rd), 0.0), ns)
    xs = sorted(rounds.values())
    return xs[len(xs) // 2] / 1e6 if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", default="2,8,32,128", help="rank counts (even), comma-separated")
    ap.add_argument("--runner", default=os.path.join(ROOT, "build", "core", "versus-run"))
    ap.add_argument("--json", metavar="FILE", help="also write the table as JSON")
    a = ap.parse_args()
    env = dict(os.environ)
    env["VERSUS_MODULE_PATH"] = os.pathsep.join([os.path.join(ROOT, "build", "tests", "fake"),
                                                 env.get("VERSUS_MODULE_PATH", "")])
    rows = []
    print(f"# scan scale bench, fake transport (sleep=1), load {loadavg()}, {os.cpu_count()} CPUs")
    print(f"{'ranks':>6} {'rounds':>7} {'wall/round ms':>14} {'pair work ms':>13} {'core ms':>8} "
          f"{'core us/rank':>13} {'B/pair rec':>11} {'rank0 peak KiB':>15}")
    with tempfile.TemporaryDirectory() as d:
        for n in [int(x) for x in a.ranks.split(",")]:
            w1, p1, e1, b1 = run(a.runner, n, 1, f"{d}/p1.jsonl", env)
            rounds = n - 1
            passes = max(3, -(-40 // rounds) + 1)
            w3, p3, e3, b3 = run(a.runner, n, passes, f"{d}/p3.jsonl", env)
            per_round = (w3 - w1) / ((passes - 1) * rounds) * 1e3
            work = pair_work_per_round(p3)
            rec_bytes = (b3 - b1) / max(len(p3) - len(p1), 1)
            row = {"ranks": n, "rounds_per_pass": rounds, "wall_per_round_ms": per_round,
                   "pair_work_ms": work, "core_ms": per_round - work,
                   "core_us_per_rank": (per_round - work) * 1e3 / n, "bytes_per_pair_record": rec_bytes,
                   "pair_records_per_pass": len(p1), "rank0_peak_rss_kib": e3.get("peak_rss_kib"),
                   "wall_1_pass_s": w1, "passes": passes, "wall_passes_s": w3}
            rows.append(row)
            print(f"{n:>6} {rounds:>7} {per_round:>14.2f} {work:>13.2f} {row['core_ms']:>8.2f} "
                  f"{row['core_us_per_rank']:>13.1f} {rec_bytes:>11.0f} {row['rank0_peak_rss_kib']:>15}")
    # projection: core's cost per round taken as linear in the rank count (least squares over the
    # measured counts), the pair work as measured, every pair record as long as measured
    xs = [r["ranks"] for r in rows]
    ys = [r["core_ms"] for r in rows]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    icpt = my - slope * mx
    work = rows[-1]["pair_work_ms"]
    rec = rows[-1]["bytes_per_pair_record"]
    print(f"# core per round ~ {icpt:.2f} ms + {slope * 1e3:.1f} us x ranks (least squares); pair work "
          f"{work:.1f} ms; {rec:.0f} B per pair record (two sizes per pair per pass)")
    print(f"{'ranks':>8} {'rounds':>8} {'per round s':>12} {'one pass':>12} {'bytes/pass':>12} {'rank0 gather':>13}")
    for n in (10_000, 100_000):
        per = (work + icpt + slope * n) / 1e3
        total = per * (n - 1)
        nbytes = n * (n - 1) / 2 * 2 * rec
        gather = n * (1 + 50) * 8
        print(f"{n:>8} {n - 1:>8} {per:>12.3f} {total / 3600:>10.1f} h {nbytes / 1e12:>10.2f} TB "
              f"{gather / 2**20:>10.1f} MiB")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"rows": rows, "core_ms_intercept": icpt, "core_ms_per_rank": slope}, f, indent=1)


if __name__ == "__main__":
    main()
