#!/usr/bin/env python3
"""versus --transport openmpi vs NetPIPE's NPopenmpi: 8-byte one-way latency and 1 MiB bandwidth.

Same launcher, same binding (mpirun --bind-to core: ranks on cores 0 and 1), run back to back and
interleaved (versus, NetPIPE, versus, NetPIPE, ...) because this kind of machine moves its virtual CPUs.
Each round gives one figure per tool; the script prints every round, the median over rounds and the ratio.

  versus  : median of its samples (each the mean of K round trips), halved: one-way latency
  NetPIPE : its own figure, the best of three trials of N round trips, RTT/2 (from the time column)

Usage: bench/openmpi_vs_netpipe.py [--rounds N] [--versus PATH]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

MIB = 1 << 20


def mpirun():
    cmd = ["mpirun.openmpi", "-np", "2", "--bind-to", "core", "--map-by", "core"]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    return cmd


def versus(runner, size, iters, tmp):
    out = os.path.join(tmp, f"v{size}.jsonl")
    subprocess.run(mpirun() + [runner, "--transport", "openmpi", "--sizes", str(size), "--iterations", str(iters),
                               "--iterations-large", str(iters), "--warmup", "200", "--warmup-large", "20",
                               "--quiet", "--out", out], check=True, timeout=300)
    with open(out) as f:
        recs = [json.loads(x) for x in f if x.strip()]
    s = next(r for r in recs if r["record"] == "size")
    return statistics.median(s["samples_ns"]) / 2 / 1e3  # one-way, us


def netpipe(size, repeats, tmp):
    out = os.path.join(tmp, f"np{size}.out")
    subprocess.run(mpirun() + ["NPopenmpi", "-l", str(size), "-u", str(size), "-p", "0", "-n", str(repeats), "-o", out],
                   check=True, timeout=300, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out) as f:
        cols = f.read().split()
    return float(cols[2]) * 1e6  # seconds one-way -> us


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--versus", "--runner", dest="runner", default=os.environ.get("VERSUS_RUN") or shutil.which("versus-run") or "build/core/versus-run")
    a = ap.parse_args()
    for prog in ("mpirun.openmpi", "NPopenmpi"):
        if not shutil.which(prog):
            sys.exit(f"{prog} not found (apt install openmpi-bin netpipe-openmpi)")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    tmp = tempfile.mkdtemp(prefix="versus-bench-")
    lat_v, lat_n, bw_v, bw_n = [], [], [], []
    print(f"{'round':>5} {'versus 8B us':>13} {'NetPIPE 8B us':>14} {'versus 1MiB MB/s':>17} {'NetPIPE 1MiB MB/s':>18}")
    for i in range(a.rounds):
        lat_v.append(versus(a.runner, 8, 20000, tmp))
        lat_n.append(netpipe(8, 20000, tmp))
        bw_v.append(MIB / versus(a.runner, MIB, 200, tmp))   # bytes/us = MB/s
        bw_n.append(MIB / netpipe(MIB, 200, tmp))
        print(f"{i + 1:>5} {lat_v[-1]:>13.3f} {lat_n[-1]:>14.3f} {bw_v[-1]:>17.0f} {bw_n[-1]:>18.0f}", flush=True)
    mv, mn = statistics.median(lat_v), statistics.median(lat_n)
    bv, bn = statistics.median(bw_v), statistics.median(bw_n)
    print(f"median  8 B one-way latency: versus {mv:.3f} us, NetPIPE {mn:.3f} us, versus/NetPIPE = {mv / mn:.3f}")
    print(f"median  1 MiB bandwidth:     versus {bv:.0f} MB/s, NetPIPE {bn:.0f} MB/s, versus/NetPIPE = {bv / bn:.3f}")
    target = mv <= 1.05 * mn
    print(f"target (latency within 5 % of NetPIPE): {'met' if target else 'NOT met'}")


if __name__ == "__main__":
    main()
