#!/usr/bin/env python3
"""Aggregate bandwidth of 1, 2 and 4 pairs (2, 4 and 8 local ranks, stream) per transport, beside
the figure osu_mbw_mr would print, computed here by hand from the same runs' per-pair records.

For each run: versus's aggregate (every pair's bytes over the span from the first pair's start to
the last pair's end, one host), the pairs' overlap, and by hand from the size records: the bytes
over the slowest pair's time, and osu_mbw_mr's figure, the bytes over the mean of the pairs' times
(one pair: its own bandwidth, all three agree).  More ranks than cores make the pairs take turns,
and then only the span-based figure is a rate that some moment saw.

    .venv/bin/python bench/multipair.py [--transports shm,tcp] [--sizes 8,64K,1M] [--pairs 1,2,4]
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import loadavg  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def figures(path):
    """Per size: (pairs, versus aggregate, overlap, by hand over the slowest time, by hand osu)."""
    sizes, aggs, window = collections.defaultdict(list), {}, None
    with open(path, encoding="utf-8") as f:
        for ln in f:
            r = json.loads(ln)
            if r["record"] == "run":
                window = int(r["pattern_params"]["window"])
            elif r["record"] == "size":
                sizes[r["bytes"]].append(r)
            elif r["record"] == "aggregate":
                aggs[r["bytes"]] = r
    out = {}
    for b, recs in sorted(sizes.items()):
        # each sample is a window of messages, batch samples per timing
        moved = sum(window * len(s["samples_ns"]) * s["batch"] * b for s in recs)
        el = [s["elapsed_ns"] for s in recs]
        by_max = moved / max(el) * 1e3
        osu = moved / (sum(el) / len(el)) * 1e3
        a = aggs.get(b)
        out[b] = (len(recs), a["bandwidth_MBps"] if a else by_max, a["overlap"] if a else 1.0, by_max, osu)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--transports", default="shm,tcp")
    ap.add_argument("--sizes", default="8,64K,1M")
    ap.add_argument("--pairs", default="1,2,4")
    ap.add_argument("--runner", default=os.path.join(ROOT, "build", "core", "versus-run"))
    a = ap.parse_args()
    env = dict(os.environ)
    env.setdefault("VERSUS_MODULE_PATH", os.path.join(ROOT, "build", "transports"))
    print(f"# multi-pair stream, load {loadavg()}, {os.cpu_count()} CPUs; MB/s")
    print(f"{'transport':9} {'bytes':>8} {'pairs':>5} {'versus (span)':>14} {'overlap':>8} "
          f"{'by hand: slowest':>17} {'by hand: osu_mbw_mr':>20}")
    with tempfile.TemporaryDirectory() as d:
        for t in a.transports.split(","):
            for npairs in [int(x) for x in a.pairs.split(",")]:
                out = f"{d}/{t}-{npairs}.jsonl"
                p = subprocess.run([a.runner, "-t", t, "-p", "stream", "--launch", "local", "-n", str(2 * npairs),
                                    "-s", a.sizes, "-O", out, "-q"], env=env, capture_output=True, text=True,
                                   timeout=600)
                if p.returncode:
                    sys.exit(f"{t} with {2 * npairs} ranks failed ({p.returncode}):\n{p.stderr[-2000:]}")
                for b, (n, agg, ov, by_max, osu) in figures(out).items():
                    print(f"{t:9} {b:>8} {n:>5} {agg:>14.1f} {ov:>8.2f} {by_max:>17.1f} {osu:>20.1f}")


if __name__ == "__main__":
    main()
