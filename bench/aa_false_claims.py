#!/usr/bin/env python3
"""A/A over real launches: how often does versus claim that a configuration is
faster or slower than itself?

Each round is a small campaign with two identical configurations, `a` and `b`
(the same transport, ping-pong, the sizes and repetitions of configs/local.toml),
three launches each, interleaved as campaigns run them (a b a b a b).  Per round:
  1 vs 1   a's first launch against b's first: versus must print no claim (its
           marks in parentheses compare two launches only); the launch-only
           differences are counted to show what a within-launch verdict would say
  3 vs 3   a's three launches against b's three (the default campaign's shape):
           a claim here is a false claim
A false claim is any '+' or '-' (a size or a regime statement) in the comparison.
Prints per transport the rates over the rounds, with the per-size rate, and exits 1
when a rate of comparisons with a claim exceeds the nominal 5 %.

With --hogs N the rounds run with N CPU-bound processes pinned on CPUs 0 and 1 (the
ranks' CPUs): a loaded node (bench/loaded_patterns.py's Hogs).

usage: bench/aa_false_claims.py [--build DIR] [--transports shm,tcp] [--rounds 20]
                                [--sizes 0:4M] [--keep DIR] [--hogs N]
"""
import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "reports"))
sys.path.insert(0, HERE)

from benchlib import loadavg  # noqa: E402
from versus.campaign import load_campaign, run_campaign  # noqa: E402
from versus.compare import compare_runs  # noqa: E402
from versus.load import load_file  # noqa: E402

NOMINAL = 0.05


def campaign_file(path: Path, transport: str, sizes: str) -> Path:
    runs = "".join(f'[[run]]\nid = "{c}"\ntransport = "{transport}"\n\n' for c in ("a", "b"))
    path.write_text(f'''title = "A/A {transport}"
launches = 3
timeout = 180
[defaults]
pattern = "pingpong"
sizes = "{sizes}"
iterations = 300
iterations_large = 40
warmup = 30
warmup_large = 5
placement = "auto"

{runs}''', encoding="utf-8")
    return path


def claims(c) -> tuple[bool, int, bool]:
    marks = [s.mark for s in c.sizes] + [r.mark for r in c.regimes]
    return (any(m in ("+", "-") for m in marks), sum(s.mark in ("+", "-") for s in c.sizes),
            any(m in ("(+)", "(-)") for m in marks))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--transports", default="shm,tcp")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--sizes", default="0:4M")
    ap.add_argument("--keep", help="keep the result files in this directory")
    ap.add_argument("--hogs", type=int, default=0, help="CPU-bound processes pinned on CPUs 0,1 meanwhile (0)")
    a = ap.parse_args()
    runner = os.path.join(a.build, "core", "versus-run")
    if not os.access(runner, os.X_OK):
        print(f"no runner at {runner}: build first (meson setup build && ninja -C build)", file=sys.stderr)
        return 2
    work = Path(a.keep or tempfile.mkdtemp(prefix="versus-aa-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"load average {loadavg()}; {a.rounds} rounds per transport; sizes {a.sizes}"
          + (f"; {a.hogs} busy processes on CPUs 0,1" if a.hogs else ""))
    worst = 0.0
    sys.path.insert(0, HERE)
    from loaded_patterns import Hogs
    stack = contextlib.ExitStack()
    try:
        stack.enter_context(Hogs(a.hogs))
        for tr in a.transports.split(","):
            one = dict(claim=0, diff=0, sizes=0, n=0)
            three = dict(claim=0, sizes=0, n=0)
            t0 = time.monotonic()
            for rnd in range(a.rounds):
                d = work / tr / f"round{rnd}"
                camp = load_campaign(campaign_file(work / f"{tr}.toml", tr, a.sizes))
                man = run_campaign(camp, d, runner, stream=open(os.devnull, "w"))
                if man["counts"].get("ok", 0) != len(camp.runs):
                    print(f"{tr}: round {rnd}: {man['counts']}", file=sys.stderr)
                    return 1
                side = {c: [load_file(d / f"{c}.L{k}.jsonl")[0] for k in range(3)] for c in ("a", "b")}
                got, k, diff = claims(compare_runs(side["a"][:1], side["b"][:1], seed=rnd))
                one["claim"] += got
                one["diff"] += diff
                got, k, _ = claims(c3 := compare_runs(side["a"], side["b"], seed=rnd))
                three["claim"] += got
                three["sizes"] += k
                three["n"] += len(c3.sizes)
            r1, r3 = one["claim"] / a.rounds, three["claim"] / a.rounds
            worst = max(worst, r1, r3)
            print(f"{tr}: 1 vs 1: {one['claim']}/{a.rounds} comparisons with a claim ({r1:.3f}); "
                  f"the two launches differed (marks in parentheses) in {one['diff']}/{a.rounds}")
            print(f"{tr}: 3 vs 3: {three['claim']}/{a.rounds} comparisons with a claim ({r3:.3f}); "
                  f"{three['sizes']}/{three['n']} sizes claimed; {time.monotonic() - t0:.0f} s")
    finally:
        stack.close()
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if worst > NOMINAL else 0


if __name__ == "__main__":
    sys.exit(main())
