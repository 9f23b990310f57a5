#!/usr/bin/env python3
"""Repetitions to a precision target against a fixed count, over several launches.

The shm ping-pong is measured over the same sizes by two kinds of launch:
  fixed      --iterations 10000 per size (OSU's default count; each sample is
             a batch of K round trips, K chosen per size as always)
  precision  --precision 1: a size is measured until the 95 % interval of its
             median is within 1 % of the median
L launches of each (default 5), interleaved A B B A A B ... so that a slow or
fast phase of the host falls on both alike.

Two launches of one configuration on a host like this one can differ by more
than their within-launch intervals (which process pair lands on which vCPUs
lasts for a whole launch), so the agreement of the two medians is judged the
way `versus compare` judges launches: per size, the ratio precision / fixed of
the geometric means of the launch medians and its 95 % between-launch
interval (launches are the unit).  The medians agree when that interval holds 1.

Prints per size: samples, round trips and measuring time of each mode (summed
over its launches), the per-launch medians, the ratio with its interval; then
totals and wall times.  Exits 1 if the precision launches needed as many round
trips as the fixed ones, or if a size's interval excludes 1.

usage: bench/precision_vs_fixed.py [--build DIR] [--sizes 8,256,4K,64K] [--launches 5]
                                   [--precision 1] [--fixed 10000] [--keep DIR]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def launch(a, mode, i, outdir):
    """One launch of versus-run over all sizes; returns its file and wall time."""
    out = os.path.join(outdir, f"{mode}-{i}.jsonl")
    reps = (["--precision", str(a.precision)] if mode == "precision"
            else ["--iterations", str(a.fixed), "--iterations-large", str(a.fixed)])
    cmd = [a.runner, "--transport", "shm", "--launch", "local", "-n", "2", "--cpus", a.cpus,
           "--sizes", a.sizes, "--launch-id", str(i), "--quiet", "--out", out] + reps
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"versus-run failed (exit {p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    return out, wall


def size_records(path):
    """Per size: samples, round trips, measuring ns, stop reason, achieved precision."""
    res = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["record"] != "size":
                continue
            s = res.setdefault(r["bytes"], {"n": 0, "rt": 0, "ns": 0, "stop": None, "prec": None})
            s["n"] += r["iterations"]
            s["rt"] += r["iterations"] * r["batch"]
            s["ns"] += r["elapsed_ns"]
            s["stop"] = r.get("stop") or s["stop"]
            s["prec"] = r.get("precision_pct")
    return res


def launch_medians(path):
    """Per size, this launch's median one-way time in us (versus summary)."""
    p = subprocess.run([a_py(), "-m", "versus", "summary", "--json", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, cwd=ROOT, env=py_env())
    if p.returncode != 0:
        sys.exit(f"versus summary failed: {p.stderr}")
    return {s["bytes"]: s["median_us"] for s in json.loads(p.stdout)["runs"][0]["sizes"]}


def a_py():
    venv = os.path.join(ROOT, ".venv", "bin", "python")
    return venv if os.access(venv, os.X_OK) else sys.executable


def py_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "reports") + os.pathsep + env.get("PYTHONPATH", "")
    return env


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="meson build directory")
    ap.add_argument("--sizes", default="8,256,4K,64K")
    ap.add_argument("--launches", type=int, default=5, help="launches of each mode (at least 2)")
    ap.add_argument("--precision", type=float, default=1.0, help="target, percent of the median")
    ap.add_argument("--fixed", type=int, default=10000, help="samples per size of the fixed launches")
    ap.add_argument("--cpus", default="0,1")
    ap.add_argument("--keep", default=None, help="keep the JSONL files in this directory")
    a = ap.parse_args()
    a.runner = os.path.join(a.build, "core", "versus-run")
    if not os.access(a.runner, os.X_OK):
        print(f"no {a.runner}: build first (meson setup build && ninja -C build)", file=sys.stderr)
        return 2
    if a.launches < 2:
        print("--launches must be at least 2 (the between-launch interval needs a spread)", file=sys.stderr)
        return 2
    outdir = a.keep or tempfile.mkdtemp(prefix="versus-precision-")
    os.makedirs(outdir, exist_ok=True)

    files = {"fixed": [], "precision": []}
    wall = {"fixed": 0.0, "precision": 0.0}
    for i in range(a.launches):
        order = ("fixed", "precision") if i % 2 == 0 else ("precision", "fixed")
        for mode in order:
            path, w = launch(a, mode, i, outdir)
            files[mode].append(path)
            wall[mode] += w
            print(f"launch {i} {mode:9s} {w:6.2f} s wall", file=sys.stderr, flush=True)

    recs = {m: [size_records(p) for p in files[m]] for m in files}
    meds = {m: [launch_medians(p) for p in files[m]] for m in files}
    cmp = subprocess.run([a_py(), "-m", "versus", "compare", "--json", ",".join(files["precision"]),
                          ",".join(files["fixed"])], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd=ROOT, env=py_env())
    if cmp.returncode != 0:
        sys.exit(f"versus compare failed: {cmp.stderr}")
    by_size = {s["bytes"]: s for s in json.loads(cmp.stdout)["sizes"]}

    def total(mode, b, key):
        return sum(r[b][key] for r in recs[mode])

    print(f"# shm ping-pong, cores {a.cpus}: {a.launches} launches of each mode, interleaved; "
          f"fixed = {a.fixed} samples per size, precision = --precision {a.precision:g}")
    print("# samples, round trips, measuring time: summed over a mode's launches; medians: one-way, "
          "per launch; ratio: precision / fixed with its 95 % between-launch interval")
    bad = 0
    for b in sorted(by_size):
        s = by_size[b]
        lo, hi = s["ratio_ci"]
        agree = lo <= 1.0 <= hi
        bad += not agree
        stops = sorted({r[b]["stop"] for r in recs["precision"]})
        precs = [r[b]["prec"] for r in recs["precision"]]
        print(f"{b:>7} B  fixed: {total('fixed', b, 'n'):>6} samples {total('fixed', b, 'rt'):>8} round trips "
              f"{total('fixed', b, 'ns') / 1e9:6.3f} s | precision: {total('precision', b, 'n'):>6} samples "
              f"{total('precision', b, 'rt'):>8} round trips {total('precision', b, 'ns') / 1e9:6.3f} s, "
              f"achieved {min(precs):.2f}-{max(precs):.2f} %, stop {'/'.join(stops)}")
        fm = " ".join(f"{m[b]:.3f}" for m in meds["fixed"])
        pm = " ".join(f"{m[b]:.3f}" for m in meds["precision"])
        print(f"{'':>9}  medians us  fixed [{fm}]  precision [{pm}]")
        print(f"{'':>9}  ratio {s['ratio']:.3f} [{lo:.3f}, {hi:.3f}] ({s.get('inference', '?')}): "
              f"{'agree' if agree else 'DIFFER'}")
    tf = sum(total("fixed", b, "rt") for b in by_size)
    tp = sum(total("precision", b, "rt") for b in by_size)
    nf = sum(total("fixed", b, "n") for b in by_size)
    np_ = sum(total("precision", b, "n") for b in by_size)
    mf = sum(total("fixed", b, "ns") for b in by_size) / 1e9
    mp = sum(total("precision", b, "ns") for b in by_size) / 1e9
    print(f"total fixed:     {nf} samples, {tf} round trips, {mf:.3f} s measuring, {wall['fixed']:.2f} s wall")
    print(f"total precision: {np_} samples, {tp} round trips, {mp:.3f} s measuring, "
          f"{wall['precision']:.2f} s wall")
    print(f"precision/fixed: samples {np_ / nf:.3f}, round trips {tp / tf:.3f}, measuring {mp / mf:.3f}, "
          f"wall {wall['precision'] / wall['fixed']:.3f}")
    ok = tp < tf and bad == 0
    if tp >= tf:
        print("FAIL: the precision launches needed as many round trips as the fixed ones")
    if bad:
        print(f"FAIL: at {bad} size(s) the between-launch interval of precision / fixed excludes 1")
    print("medians agree within their between-launch intervals at every size" if not bad else "")
    if not a.keep:
        shutil.rmtree(outdir, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
