#!/usr/bin/env python3
"""`versus report` at two campaign shapes: wall time per report and per configuration,
and the size of what it writes.

Shapes (both ten million samples, 450 sizes from 4 B to 1800 B every 4 B, one launch per
configuration, written by report_10m.write_results):
  20x1111   20 configurations, 1111 samples per size   target 10 s
  100x222   100 configurations, 222 samples per size   target 30 s

Each shape's report is timed --repeat times as a child process, end to end (load, statistics,
fits, comparisons, figures, HTML, LaTeX, samples.parquet); the median wall time is judged
against the target.  The host is shared: quote the medians and their ratios, never one run;
the CPU time of the report's processes, printed beside, depends less on what else runs.
Exits 1 when a target is missed.

usage: .venv/bin/python bench/report_scale.py [--shapes 20x1111,100x222] [--repeat 3] [--csv]
                                              [--targets 10,30] [--keep DIR]
"""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from benchlib import loadavg  # noqa: E402
from report_10m import write_results  # noqa: E402


def du(path: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", default="20x1111,100x222",
                    help="comma-separated CONFIGURATIONSxSAMPLES_PER_SIZE (default: %(default)s)")
    ap.add_argument("--targets", default="10,30", help="seconds per shape (default: %(default)s)")
    ap.add_argument("--sizes", type=int, default=450)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--csv", action="store_true", help="also write samples.csv (versus report --csv)")
    ap.add_argument("--keep", help="keep the results and the reports in this directory")
    a = ap.parse_args()
    shapes = [tuple(int(v) for v in s.split("x")) for s in a.shapes.split(",")]
    targets = [float(t) for t in a.targets.split(",")]
    if len(targets) < len(shapes):
        targets += [targets[-1]] * (len(shapes) - len(targets))
    work = a.keep or tempfile.mkdtemp(prefix="versus-scale-")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "reports"))
    ok = True
    try:
        for (nconf, samples), target in zip(shapes, targets):
            res = os.path.join(work, f"results-{nconf}x{samples}")
            out = os.path.join(work, f"report-{nconf}x{samples}")
            os.makedirs(res, exist_ok=True)
            t0 = time.monotonic()
            total = write_results(res, nconf, 1, a.sizes, samples)
            print(f"{nconf} configurations x {a.sizes} sizes x {samples} samples = {total:,} samples, "
                  f"written in {time.monotonic() - t0:.1f} s; load average {loadavg()}", flush=True)
            cmd = [sys.executable, "-m", "versus", "report", res, "-o", out] + (["--csv"] if a.csv else [])
            walls, cpus = [], []
            for _ in range(max(a.repeat, 1)):
                shutil.rmtree(out, ignore_errors=True)
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.monotonic()
                p = subprocess.run(cmd, env=env, capture_output=True, text=True)
                walls.append(time.monotonic() - t0)
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpus.append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
                if p.returncode != 0:
                    print(p.stderr[-3000:], file=sys.stderr)
                    return 1
            wall = float(np.median(walls))
            made = sorted(os.listdir(out))
            figs = sum(f.endswith(".pdf") for f in made)
            sizes = ", ".join(f"{f} {os.path.getsize(os.path.join(out, f)) / 1e6:.1f} MB" for f in made
                              if f.startswith(("samples.", "index.", "report.", "appendix.")))
            met = wall <= target
            ok &= met
            print(f"  versus report: median {wall:.1f} s of {', '.join(f'{w:.1f}' for w in walls)} "
                  f"({wall / nconf * 1e3:.0f} ms per configuration); target {target:g} s "
                  f"{'met' if met else 'missed'}; load average {loadavg()}")
            # the CPU time of the report and its workers: what the wall time would be on idle cores
            # is about this over the cores it keeps busy (2 here), whatever else the host runs
            print(f"  CPU time (user + system, all processes of the report): median "
                  f"{float(np.median(cpus)):.1f} s of {', '.join(f'{c:.1f}' for c in cpus)}")
            print(f"  wrote {du(out) / 1e6:.1f} MB: {sizes}; {figs} PDF figures", flush=True)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
