#!/usr/bin/env python3
"""versus --transport tcp (mode=block) against NetPIPE's NPtcp: 8 B one-way latency and 1 MiB bandwidth.

Both sleep in blocking socket calls over loopback with TCP_NODELAY, on the same two cores (rank 0 /
NetPIPE's transmitter on the first, rank 1 / its receiver on the second), run back to back and
interleaved (the order alternates every round) because this kind of machine moves its virtual CPUs.

  versus  : samples_ns from its JSONL are round trips (--batch 1: one round trip each); halved
  NPtcp   : -p 0 (exact sizes), -n N round trips per trial; it reports RTT/2 of the best of three trials

NetPIPE's estimator (mean of a trial of N round trips, best of three) is applied to both: NPtcp is started
GROUPS times per round and the median of its figures taken; versus's samples are cut into consecutive
trials of N, grouped by three, and the median of the groups' best trial means taken.  Short trials keep a
busy host's occasional long stall from deciding a whole figure.  versus's plain median is printed too.
Target: within 5 %.

Usage: bench/tcp_vs_nptcp.py [--rounds N] [--runner PATH] [--cpus 0,1]
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

MIB = 1 << 20
SIZES = (8, MIB)
TRIAL = {8: 200, MIB: 30}  # round trips per NetPIPE trial
GROUPS = 5                 # NPtcp runs per size and round; versus trials come in as many groups of 3


def netpipe_estimate(samples, n):
    """Median over groups of three consecutive n-sample trials of the best trial mean."""
    trials = [statistics.fmean(samples[i:i + n]) for i in range(0, len(samples) - n + 1, n)]
    groups = [min(trials[i:i + 3]) for i in range(0, len(trials) - 2, 3)]
    return statistics.median(groups)


def run_versus(runner, cpus, tmp, tag):
    out = os.path.join(tmp, f"{tag}.jsonl")
    cmd = [runner, "--transport", "tcp", "--transport-opt", "mode=block", "--launch", "local", "-n", "2",
           "--cpus", cpus, "--sizes", ",".join(str(s) for s in SIZES),
           "--iterations", str(3 * GROUPS * TRIAL[8]), "--iterations-large", str(3 * GROUPS * TRIAL[MIB]),
           "--large-from", str(MIB), "--warmup", "500", "--warmup-large", "20", "--batch", "1",
           "--timeout", "120", "--quiet", "--out", out]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit(f"versus-run failed ({p.returncode}): {p.stderr.strip()}")
    with open(out) as f:
        recs = [json.loads(x) for x in f if x.strip()]
    res = {}
    for r in recs:
        if r["record"] == "size":
            s = [v / 2 for v in r["samples_ns"]]  # round trips -> one-way
            res[r["bytes"]] = (statistics.median(s), netpipe_estimate(s, TRIAL[r["bytes"]]))
    return res


def run_nptcp_once(size, cpus, tmp):
    c0, c1 = cpus.split(",")
    port = str(random.randint(20000, 60000))
    out = os.path.join(tmp, f"np{size}.out")
    args = ["-l", str(size), "-u", str(size), "-p", "0", "-n", str(TRIAL[size]), "-P", port]
    rx = subprocess.Popen(["taskset", "-c", c1, "NPtcp"] + args, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        for attempt in range(20):
            tx = subprocess.run(["taskset", "-c", c0, "NPtcp", "-h", "127.0.0.1", "-o", out] + args,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=300)
            if tx.returncode == 0:
                break
            time.sleep(0.2)  # receiver not listening yet
        else:
            sys.exit(f"NPtcp transmitter failed: {tx.stderr.strip()}")
        rx.wait(timeout=60)
    finally:
        if rx.poll() is None:
            rx.kill()
    with open(out) as f:
        cols = f.read().split()
    return float(cols[2]) * 1e9  # seconds, one-way -> ns


def run_nptcp(size, cpus, tmp):
    return statistics.median(run_nptcp_once(size, cpus, tmp) for _ in range(GROUPS))


def loadavg():
    """The host's 1-minute load average: figures taken on a busy host are not floors."""
    try:
        with open("/proc/loadavg") as f:
            return f.read().split()[0]
    except OSError:
        return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runner", default=os.environ.get("VERSUS_RUN") or shutil.which("versus-run")
                    or "build/core/versus-run")
    ap.add_argument("--cpus", default="0,1")
    a = ap.parse_args()
    if not shutil.which("NPtcp"):
        sys.exit("NPtcp not found (apt install netpipe-tcp)")
    if not os.access(a.runner, os.X_OK):
        sys.exit(f"versus-run not found at {a.runner} (give --runner)")
    tmp = tempfile.mkdtemp(prefix="versus-tcp-np-")
    vs = {s: [] for s in SIZES}
    np_ = {s: [] for s in SIZES}
    print(f"load average before: {loadavg()} (on an idle host it is near 0)", flush=True)
    for rnd in range(a.rounds):
        def do_versus():
            r = run_versus(a.runner, a.cpus, tmp, f"v{rnd}")
            for s in SIZES:
                vs[s].append(r[s])

        def do_np():
            for s in SIZES:
                np_[s].append(run_nptcp(s, a.cpus, tmp))

        for step in ((do_versus, do_np) if rnd % 2 == 0 else (do_np, do_versus)):
            step()
        v8, v1m = vs[8][-1], vs[MIB][-1]
        print(f"round {rnd + 1}: 8 B one-way  versus {v8[0] / 1e3:7.2f} us (median) {v8[1] / 1e3:7.2f} us "
              f"(NetPIPE-style)  NPtcp {np_[8][-1] / 1e3:7.2f} us | 1 MiB  versus {MIB / v1m[1]:6.2f} GB/s  "
              f"NPtcp {MIB / np_[MIB][-1]:6.2f} GB/s", flush=True)

    print()
    lat_ratio = statistics.median(v[1] / n for v, n in zip(vs[8], np_[8]))
    bw_ratio = statistics.median(n / v[1] for v, n in zip(vs[MIB], np_[MIB]))  # versus BW / NPtcp BW
    print(f"8 B one-way latency : versus {statistics.median(v[1] for v in vs[8]) / 1e3:.2f} us NetPIPE-style "
          f"({statistics.median(v[0] for v in vs[8]) / 1e3:.2f} us median), "
          f"NPtcp {statistics.median(np_[8]) / 1e3:.2f} us; versus/NPtcp = {lat_ratio:.3f}")
    print(f"1 MiB bandwidth     : versus {statistics.median(MIB / v[1] for v in vs[MIB]):.2f} GB/s NetPIPE-style "
          f"({statistics.median(MIB / v[0] for v in vs[MIB]):.2f} GB/s median), "
          f"NPtcp {statistics.median(MIB / n for n in np_[MIB]):.2f} GB/s; versus/NPtcp = {bw_ratio:.3f}")
    ok = lat_ratio <= 1.05 and bw_ratio >= 0.95
    print(f"within 5 % of NPtcp (latency not above, bandwidth not below, by more than 5 %): "
          f"{'yes' if ok else 'no'}")
    print(f"load average after: {loadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
