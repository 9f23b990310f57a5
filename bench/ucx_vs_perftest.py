#!/usr/bin/env python3
"""versus --transport ucx against ucx_perftest, side by side on the same cores.

Runs, interleaved A B A B ... (the host moves vCPUs, so a figure taken earlier
is not comparable):
  latency   versus pingpong 8 B       vs  ucx_perftest -t tag_lat -s 8
  bandwidth versus pingpong 1 MiB     vs  ucx_perftest -t tag_lat -s 1M  (same ping-pong pattern)
  streaming versus stream 1 MiB, windows of W sends
                                      vs  ucx_perftest -t tag_bw -s 1M -O W (W outstanding sends)
Both get the same UCX_TLS / UCX_NET_DEVICES, the same CPUs (rank 0 / client on
the first, rank 1 / server on the second), the same message sizes, warm-up
and round-trip counts.  versus figures come from its JSONL (median of the
recorded samples; one-way = round trip / 2); ucx_perftest figures from its
CSV output (-f -v): the 50th percentile one-way latency; for tag_lat the
bandwidth is computed from that median as for versus (bytes / one-way time),
for tag_bw it is the printed overall figure (MB/s that are MiB/s, converted
here to MB/s = 10^6 B/s), set against versus stream's total bytes / total time.

usage: bench/ucx_vs_perftest.py [--versus PATH] [--rounds N] [--cpus 0,1]
                                [--tls tcp|shm|...] [--quick]
Exit: 0 when both ratios are within --tolerance (default 5 %), 1 otherwise,
77 when a tool is missing.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import free_port

MIB = 1 << 20


def find_versus(arg):
    if arg:
        return arg
    env = os.environ.get("VERSUS_RUN")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in sorted(os.listdir(os.path.join(here, ".."))):
        p = os.path.join(here, "..", cand, "core", "versus-run")
        if cand.startswith("build") and os.access(p, os.X_OK):
            return os.path.normpath(p)
    return shutil.which("versus-run")


def run_versus(exe, size, iters, warmup, batch, cpus, env, tmp):
    out = os.path.join(tmp, f"v{size}-{time.monotonic_ns()}.jsonl")
    cmd = [exe, "--transport", "ucx", "--launch", "local", "-n", "2", "--cpus", cpus,
           "--sizes", str(size), "--iterations", str(iters), "--iterations-large", str(iters),
           "--warmup", str(warmup), "--warmup-large", str(warmup), "--batch", str(batch),
           "--out", out, "--quiet", "--timeout", "120"]
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=300, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        sys.exit(f"versus-run failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    with open(out, encoding="utf-8") as f:
        recs = [json.loads(ln) for ln in f if ln.strip()]
    run = recs[0]
    rec = [r for r in recs if r.get("record") == "size" and r["bytes"] == size][0]
    one_way_us = statistics.median(rec["samples_ns"]) / 2 / 1000.0
    return one_way_us, run["transport"].get("provider", "")


def run_versus_stream(exe, size, windows, warmup, window, cpus, env, tmp):
    out = os.path.join(tmp, f"s{size}-{time.monotonic_ns()}.jsonl")
    cmd = [exe, "--transport", "ucx", "--launch", "local", "-n", "2", "--cpus", cpus,
           "--pattern", "stream", "--window", str(window), "--sizes", str(size),
           "--iterations", str(windows), "--iterations-large", str(windows),
           "--warmup", str(warmup), "--warmup-large", str(warmup), "--batch", "1",
           "--out", out, "--quiet", "--timeout", "120"]
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=300, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        sys.exit(f"versus-run failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    with open(out, encoding="utf-8") as f:
        recs = [json.loads(ln) for ln in f if ln.strip()]
    rec = [r for r in recs if r.get("record") == "size" and r["bytes"] == size][0]
    # a rate is total bytes / total time (one sample = one window)
    return window * size * len(rec["samples_ns"]) / sum(rec["samples_ns"]) * 1e3


def run_perftest(test, size, iters, warmup, cpus, env, outstanding=None):
    c0, c1 = cpus.split(",")[:2]
    port = str(free_port())
    srv = subprocess.Popen(["ucx_perftest", "-p", port, "-c", c1], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           stdin=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        cmd = ["ucx_perftest", "127.0.0.1", "-p", port, "-t", test, "-s", str(size),
               "-n", str(iters), "-w", str(warmup), "-c", c0, "-f", "-v"]
        if outstanding:
            cmd += ["-O", str(outstanding)]
        for attempt in range(20):
            p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, timeout=300, stdin=subprocess.DEVNULL)
            # UCX prints its own errors on stdout, so both streams are read
            if p.returncode == 0 or "connect" not in (p.stdout + p.stderr).lower() or srv.poll() is not None:
                break
            time.sleep(0.2)  # server not listening yet
        if p.returncode != 0:
            sys.exit(f"ucx_perftest failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}{p.stdout[-2000:]}")
        srv.wait(timeout=60)
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.wait()
    lines = [ln.strip() for ln in p.stdout.splitlines() if ln.strip()[:1].isdigit()]
    if not lines:
        sys.exit(f"no result line from ucx_perftest: {' '.join(cmd)}\n{p.stdout}")
    f = lines[-1].split(",")
    # iterations, p50 one-way latency (us), avg, overall, avg_bw, overall_bw (MiB/s), avg_mr, overall_mr
    p50_us, overall_mib_s = float(f[1]), float(f[5])
    if test.endswith("_lat"):
        # a ping-pong's bandwidth from the median one-way time, as for versus
        return p50_us, size / (p50_us * 1e-6) / 1e6
    return p50_us, overall_mib_s * MIB / 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--versus", help="versus-run executable (default: $VERSUS_RUN, build*/core/versus-run, PATH)")
    ap.add_argument("--rounds", type=int, default=8, help="A B pairs per measurement (default 8)")
    ap.add_argument("--cpus", default="0,1", help="two CPUs: rank 0 / client, rank 1 / server")
    ap.add_argument("--tls", help="UCX_TLS for both (tcp also sets UCX_NET_DEVICES=lo)")
    ap.add_argument("--tolerance", type=float, default=5.0, help="allowed difference in percent")
    ap.add_argument("--lat-batch", type=int, default=50,
                    help="round trips per versus sample at 8 B (1: per-round-trip samples, "
                         "like ucx_perftest's percentile, but each pays one clock read)")
    ap.add_argument("--window", type=int, default=16, help="stream window / tag_bw outstanding sends")
    ap.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    a = ap.parse_args()

    exe = find_versus(a.versus)
    if not exe or not shutil.which("ucx_perftest"):
        print("SKIP: need versus-run and ucx_perftest", file=sys.stderr)
        return 77
    env = dict(os.environ)
    if a.tls:
        env["UCX_TLS"] = a.tls
        if a.tls == "tcp":
            env.setdefault("UCX_NET_DEVICES", "lo")
    # latency: versus samples are means of `batch` round trips
    lat_batch = a.lat_batch
    lat_samples = (10000 if a.quick else 100000) // lat_batch
    lat_rt, lat_warm = lat_batch * lat_samples, 10000
    bw_rt, bw_warm = (200, 20) if a.quick else (1000, 100)
    tmp = tempfile.mkdtemp(prefix="versus-bench-")

    st_windows, st_warm = (20, 2) if a.quick else (100, 10)
    res = {k: [] for k in ("v_lat", "p_lat", "v_bw", "p_bw_pp", "v_bw_stream", "p_bw_stream")}
    provider = ""
    load_before = os.getloadavg()[0]
    for i in range(a.rounds):
        lat, provider = run_versus(exe, 8, lat_samples, lat_warm, lat_batch, a.cpus, env, tmp)
        res["v_lat"].append(lat)
        res["p_lat"].append(run_perftest("tag_lat", 8, lat_rt, lat_warm, a.cpus, env)[0])
        lat_mib, _ = run_versus(exe, MIB, bw_rt, bw_warm, 1, a.cpus, env, tmp)
        res["v_bw"].append(MIB / (lat_mib * 1e-6) / 1e6)
        res["p_bw_pp"].append(run_perftest("tag_lat", MIB, bw_rt, bw_warm, a.cpus, env)[1])
        res["v_bw_stream"].append(run_versus_stream(exe, MIB, st_windows, st_warm, a.window,
                                                    a.cpus, env, tmp))
        res["p_bw_stream"].append(run_perftest("tag_bw", MIB, st_windows * a.window,
                                               st_warm * a.window, a.cpus, env, a.window)[1])
        print(f"round {i + 1}: 8 B one-way versus {res['v_lat'][-1]:.3f} us, perftest "
              f"{res['p_lat'][-1]:.3f} us; 1 MiB versus {res['v_bw'][-1]:.0f} MB/s, perftest "
              f"ping-pong {res['p_bw_pp'][-1]:.0f} MB/s; stream versus {res['v_bw_stream'][-1]:.0f} MB/s, "
              f"perftest {res['p_bw_stream'][-1]:.0f} MB/s",
              flush=True)

    med = {k: statistics.median(v) for k, v in res.items()}
    pair = lambda x, y: statistics.median([p / q for p, q in zip(res[x], res[y])])
    print(f"\nUCX_TLS={env.get('UCX_TLS', '(default)')}  provider: {provider}  cpus {a.cpus}  "
          f"rounds {a.rounds} (interleaved)  load average {load_before:.1f} -> "
          f"{os.getloadavg()[0]:.1f} (other work on these cores makes both tools noisy)")
    print(f"8 B one-way latency   versus {med['v_lat']:.3f} us   ucx_perftest tag_lat "
          f"{med['p_lat']:.3f} us   ratio {med['v_lat'] / med['p_lat']:.3f} "
          f"(median of per-round ratios {pair('v_lat', 'p_lat'):.3f})")
    print(f"1 MiB bandwidth       versus {med['v_bw']:.0f} MB/s   ucx_perftest tag_lat "
          f"{med['p_bw_pp']:.0f} MB/s   ratio {med['v_bw'] / med['p_bw_pp']:.3f} "
          f"(median of per-round ratios {pair('v_bw', 'p_bw_pp'):.3f})")
    print(f"1 MiB streaming W={a.window}  versus {med['v_bw_stream']:.0f} MB/s   ucx_perftest tag_bw "
          f"{med['p_bw_stream']:.0f} MB/s   ratio {med['v_bw_stream'] / med['p_bw_stream']:.3f} "
          f"(median of per-round ratios {pair('v_bw_stream', 'p_bw_stream'):.3f})")
    # The verdict uses the paired ratios: A and B of one round ran back to back,
    # so they mostly share the host's current vCPU placement.
    tol = a.tolerance / 100
    ok = (pair("v_lat", "p_lat") <= 1 + tol and pair("v_bw", "p_bw_pp") >= 1 - tol
          and pair("v_bw_stream", "p_bw_stream") >= 1 - tol)
    print("within tolerance" if ok else f"NOT within {a.tolerance:g} %")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
