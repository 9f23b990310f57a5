#!/usr/bin/env python3
"""versus --transport tcp (mode=block) against NetPIPE's NPtcp: 8 B one-way latency and 1 MiB bandwidth.

Both sleep in blocking socket calls over loopback with TCP_NODELAY, on the same two cores (rank 0 /
NetPIPE's transmitter on the first, rank 1 / its receiver on the second), run back to back and
interleaved launch by launch because this kind of machine moves its virtual CPUs.

NPtcp is run with -p 0 (exact sizes) and -n N: after a timing loop of 100 round trips at the start size,
it times three trials of N round trips and reports RTT/2 of the best trial.  Each versus launch is shaped
the same: 100 untimed round trips (--warmup), then 3 N samples of one round trip each (--batch 1), cut
into three trials of N; its figure is the best trial mean.  A round is LAUNCHES launches of each tool and
size, alternating versus / NPtcp launch by launch (the first alternates every round), and takes the median
of each tool's launch figures; the result is the median over rounds of the per-round ratio.  Launches,
not samples, are the unit because this kind of machine moves its virtual CPUs between launches.

NetPIPE sends and receives through one buffer in its default (cache) mode, versus through two (as OSU
and IMB do); 20 rounds of each showed no difference this bench can resolve (1 MiB ratio 0.97 and 1.04).
The ratio is given with the distribution-free 95 % interval of its median over rounds when the project's
Python environment (.venv) runs the bench.
Target: within 5 %.

Usage: bench/tcp_vs_nptcp.py [--rounds N] [--versus PATH] [--cpus 0,1]
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import loadavg, median_interval_words

MIB = 1 << 20
SIZES = (8, MIB)
TRIAL = {8: 200, MIB: 30}  # round trips per NetPIPE trial
LAUNCHES = 5               # launches of each tool per size and round
WARMUP = 100               # NetPIPE's timing loop before the trials


def best_trial(samples, n):
    """NetPIPE's figure for one launch: the best mean of its consecutive n-sample trials."""
    return min(statistics.fmean(samples[i:i + n]) for i in range(0, len(samples) - n + 1, n))


def run_versus(runner, cpus, tmp, tag, size):
    """One launch of one size, shaped like one NPtcp launch: WARMUP untimed round trips (NetPIPE's
    own timing loop at the start size), then 3 trials of TRIAL[size]; returns (median, best trial)."""
    out = os.path.join(tmp, f"{tag}.jsonl")
    n = 3 * TRIAL[size]
    cmd = [runner, "--transport", "tcp", "--transport-opt", "mode=block", "--launch", "local", "-n", "2",
           "--cpus", cpus, "--sizes", str(size), "--iterations", str(n), "--iterations-large", str(n),
           "--warmup", str(WARMUP), "--warmup-large", str(WARMUP), "--batch", "1",
           "--timeout", "120", "--quiet", "--out", out]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit(f"versus-run failed ({p.returncode}): {p.stderr.strip()}")
    with open(out) as f:
        recs = [json.loads(x) for x in f if x.strip()]
    for r in recs:
        if r["record"] == "size" and r["bytes"] == size:
            s = [v / 2 for v in r["samples_ns"]]  # round trips -> one-way
            return statistics.median(s), best_trial(s, TRIAL[size])
    sys.exit(f"versus-run wrote no record for {size} B in {out}")


def run_nptcp_once(size, cpus, tmp):
    """One NPtcp launch of one size: its one-way time (ns) of the best of its three trials."""
    c0, c1 = cpus.split(",")
    out = os.path.join(tmp, f"np{size}.out")
    err = ""
    for _ in range(5):  # a port that turns out to be taken: start over on another
        port = str(random.randint(20000, 60000))
        args = ["-l", str(size), "-u", str(size), "-p", "0", "-n", str(TRIAL[size]), "-P", port]
        rx = subprocess.Popen(["taskset", "-c", c1, "NPtcp"] + args, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(0.3)
            for attempt in range(20):
                if rx.poll() is not None:
                    break  # the receiver could not listen on this port
                tx = subprocess.run(["taskset", "-c", c0, "NPtcp", "-h", "127.0.0.1", "-o", out] + args,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=300)
                if tx.returncode == 0:
                    rx.wait(timeout=60)
                    with open(out) as f:
                        cols = f.read().split()
                    return float(cols[2]) * 1e9  # seconds, one-way -> ns
                err = tx.stderr.strip()
                time.sleep(0.2)  # receiver not listening yet
        finally:
            if rx.poll() is None:
                rx.kill()
            rx.wait()
    sys.exit(f"NPtcp failed on five ports; last transmitter error: {err}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=20, help="rounds (at least 6 for a 95 %% interval)")
    ap.add_argument("--versus", "--runner", dest="versus", default=os.environ.get("VERSUS_RUN")
                    or shutil.which("versus-run")
                    or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "core", "versus-run"))
    ap.add_argument("--cpus", default="0,1")
    a = ap.parse_args()
    if not shutil.which("NPtcp"):
        sys.exit("NPtcp not found (apt install netpipe-tcp)")
    if not os.access(a.versus, os.X_OK):
        sys.exit(f"versus-run not found at {a.versus} (give --versus)")
    tmp = tempfile.mkdtemp(prefix="versus-tcp-np-")
    ratios = {s: [] for s in SIZES}
    figs = {s: ([], [], []) for s in SIZES}   # versus best-trial, versus median, NPtcp (round medians)
    print(f"load average before: {loadavg()} (on an idle host it is near 0)", flush=True)
    for rnd in range(a.rounds):
        for size in SIZES:
            v, np_ = [], []
            for k in range(LAUNCHES):
                steps = ("v", "n") if (rnd + k) % 2 == 0 else ("n", "v")
                for st in steps:
                    if st == "v":
                        v.append(run_versus(a.versus, a.cpus, tmp, f"v{rnd}-{size}-{k}", size))
                    else:
                        np_.append(run_nptcp_once(size, a.cpus, tmp))
            vb = statistics.median(x[1] for x in v)
            vm = statistics.median(x[0] for x in v)
            nb = statistics.median(np_)
            figs[size][0].append(vb)
            figs[size][1].append(vm)
            figs[size][2].append(nb)
            ratios[size].append(vb / nb if size == 8 else nb / vb)
        print(f"round {rnd + 1}: 8 B one-way  versus {figs[8][0][-1] / 1e3:7.2f} us  NPtcp "
              f"{figs[8][2][-1] / 1e3:7.2f} us | 1 MiB  versus {MIB / figs[MIB][0][-1]:6.2f} GB/s  "
              f"NPtcp {MIB / figs[MIB][2][-1]:6.2f} GB/s", flush=True)

    print()

    lat_ratio = statistics.median(ratios[8])
    bw_ratio = statistics.median(ratios[MIB])
    print(f"# {a.rounds} rounds x {LAUNCHES} launches per tool and size")
    print(f"8 B one-way latency : versus {statistics.median(figs[8][0]) / 1e3:.2f} us best-trial "
          f"({statistics.median(figs[8][1]) / 1e3:.2f} us median), NPtcp {statistics.median(figs[8][2]) / 1e3:.2f} us; "
          f"versus/NPtcp = {lat_ratio:.3f} ({median_interval_words(ratios[8])})")
    print(f"1 MiB bandwidth     : versus {statistics.median(MIB / x for x in figs[MIB][0]):.2f} GB/s best-trial "
          f"({statistics.median(MIB / x for x in figs[MIB][1]):.2f} GB/s median), "
          f"NPtcp {statistics.median(MIB / x for x in figs[MIB][2]):.2f} GB/s; versus/NPtcp = {bw_ratio:.3f} "
          f"({median_interval_words(ratios[MIB])})")
    ok = lat_ratio <= 1.05 and bw_ratio >= 0.95
    print(f"within 5 % of NPtcp (latency not above, bandwidth not below, by more than 5 %): "
          f"{'yes' if ok else 'no'}")
    print(f"load average after: {loadavg()}")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
