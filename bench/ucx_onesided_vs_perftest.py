#!/usr/bin/env python3
"""versus's one-sided patterns over UCX against ucx_perftest's one-sided tests, on the same cores.

Each pair measures the same thing as far as the two loops allow (transports/ucx/README.md says
what still differs):

  put latency    versus putnotify ordered, size S      vs  ucp_put_lat -s S  (one-way, p50)
                 (versus at 0 B too: its flag alone is one 8-byte put, as perftest's 8 B put)
  get latency    versus get latency, size S            vs  ucp_get -s S      (per get, p50)
  put bandwidth  versus put bandwidth --window W, S    vs  ucp_put_bw -s S -O W (total bytes /
                                                           total time)
  fadd latency   versus atomic fadd                    vs  ucp_fadd          (per op, p50)

Rounds are interleaved (versus, perftest, versus, ...): the host moves vCPUs and other work
comes and goes, so only figures taken back to back are compared.  Rank 0 / the client on the
first CPU, rank 1 / the server on the second.  versus runs with --transport-opt memory=ucx (the
buffers from ucp_mem_map(UCP_MEM_MAP_ALLOCATE), as perftest's) unless --memory core.

usage: bench/ucx_onesided_vs_perftest.py [--versus PATH] [--rounds N] [--cpus 0,1]
                                         [--memory ucx|core] [--tls ...] [--quick]
                                         [--pairs put_lat,get_lat,put_bw,fadd_lat]
Prints each round, then per pair and size the medians and the median of the per-round ratios
(versus / perftest; for bandwidth perftest / versus, so that above 1 always means versus is the
slower).  Exit 0, or 77 when a tool is missing.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import free_port, loadavg  # noqa: E402

MIB = 1 << 20
SIZES_ALL = [8, 64, 512, 4096, 32768, 262144, MIB, 4 * MIB]


class ToolFailed(RuntimeError):
    pass


def find_versus(arg=None):
    if arg:
        return arg
    if os.environ.get("VERSUS_RUN"):
        return os.environ["VERSUS_RUN"]
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in sorted(os.listdir(os.path.join(here, ".."))):
        p = os.path.join(here, "..", cand, "core", "versus-run")
        if cand.startswith("build") and os.access(p, os.X_OK):
            return os.path.normpath(p)
    return shutil.which("versus-run")


def iters_for(size, quick=False, scale=1):
    """(measured, warm-up) operations for a size: about the same time at every size (scale times
    as many)."""
    n = min(20000, max(200, int(2e9 / max(size, 1)))) * scale
    if quick:
        n = max(100, n // 4)
    return n, max(10, n // 10)


def versus(exe, pattern, variant, size, n, warm, cpus, env, tmp, memory="ucx", window=1, batch=1, keep=None):
    """One versus-run launch; returns (its size record, run record, end record).  keep: a list
    that receives the JSONL's path (kept), else the file is removed."""
    out = os.path.join(tmp, f"v-{pattern}-{variant}-{size}-{time.monotonic_ns()}.jsonl")
    units = max(1, n // window)
    cmd = [exe, "--transport", "ucx", "--transport-opt", f"memory={memory}", "--launch", "local",
           "-n", "2", "--cpus", cpus, "--pattern", pattern, "--variant", variant, "--sizes", str(size),
           "--iterations", str(units), "--iterations-large", str(units),
           "--warmup", str(max(1, warm // window)), "--warmup-large", str(max(1, warm // window)),
           "--batch", str(batch), "--out", out, "--quiet", "--timeout", "120"]
    if window > 1:
        cmd += ["--window", str(window)]
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=300, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        raise ToolFailed(f"versus-run failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-2000:]}")
    with open(out, encoding="utf-8") as f:
        recs = [json.loads(ln) for ln in f if ln.strip()]
    if keep is None:
        os.unlink(out)
    else:
        keep.append(out)
    rec = [r for r in recs if r.get("record") == "size" and r["bytes"] == size][0]
    end = [r for r in recs if r.get("record") == "end"]
    return rec, recs[0], end[0] if end else {}


def batch_for(size):
    """Operations per versus sample for get and fadd: 50 below 4 KiB, so that the clock read
    (CLOCK_MONOTONIC, some 20 ns here, against ucx_perftest's 8 ns time-stamp counter) is spread
    over them; 1 above.  putnotify takes 1: ucx_perftest times every round trip of ucp_put_lat
    alone and so does versus with --batch 1 (a clock read per round trip, some 300 ns)."""
    return 50 if size < 4096 else 1


def versus_figure(kind, exe, size, cpus, env, tmp, memory="ucx", window=16, quick=False, keep=None, scale=1):
    """The versus side of a pair: a time in us (latencies) or MB/s (put_bw); and the run's
    provider, memory and load (the end record's waited share)."""
    n, warm = iters_for(size, quick, scale)
    b = batch_for(size)
    if kind == "put_lat":
        rec, run, end = versus(exe, "putnotify", "ordered", size, n, warm, cpus, env, tmp, memory, keep=keep)
        val = statistics.median(rec["samples_ns"]) / 2 / 1000
    elif kind == "put_lat_extra":
        # what putnotify does per message beyond ucp_put_lat's one put: a put, its wait, the END
        # (ucp_ep_flush_nbx), timed alone (versus's put latency)
        rec, run, end = versus(exe, "put", "latency", size, n // b, warm, cpus, env, tmp, memory, batch=b,
                               keep=keep)
        val = statistics.median(rec["samples_ns"]) / 1000
    elif kind == "get_lat":
        rec, run, end = versus(exe, "get", "latency", size, n // b, warm, cpus, env, tmp, memory, batch=b,
                               keep=keep)
        val = statistics.median(rec["samples_ns"]) / 1000
    elif kind == "fadd_lat":
        rec, run, end = versus(exe, "atomic", "fadd", 8, n // 50, warm, cpus, env, tmp, memory, batch=50,
                               keep=keep)
        val = statistics.median(rec["samples_ns"]) / 1000
    elif kind == "put_bw":
        rec, run, end = versus(exe, "put", "bandwidth", size, n, warm, cpus, env, tmp, memory, window,
                               keep=keep)
        s = rec["samples_ns"]
        val = window * size * len(s) / sum(s) * 1e3
    else:
        raise ValueError(kind)
    tr = run.get("transport", {})
    return val, {"provider": tr.get("provider", ""), "memory": tr.get("attrs", {}).get("memory"),
                 "waited": end.get("host_load_waited"), "others": end.get("host_load_others")}


PERFTEST = {"put_lat": "ucp_put_lat", "get_lat": "ucp_get", "put_bw": "ucp_put_bw", "fadd_lat": "ucp_fadd"}


def perftest(test, size, n, warm, cpus, env, outstanding=None):
    """One ucx_perftest client/server pair; returns (p50 latency us, overall MiB/s as MB/s)."""
    c0, c1 = cpus.split(",")[:2]
    port = str(free_port())
    srv = subprocess.Popen(["ucx_perftest", "-p", port, "-c", c1], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
    try:
        cmd = ["ucx_perftest", "127.0.0.1", "-p", port, "-t", test, "-s", str(size), "-n", str(n),
               "-w", str(warm), "-c", c0, "-f", "-v"]
        if outstanding:
            cmd += ["-O", str(outstanding)]
        time.sleep(0.1)
        for _ in range(50):
            p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=300, stdin=subprocess.DEVNULL)
            # UCX prints its own errors on stdout, so both streams are read
            said = (p.stdout + p.stderr).lower()
            if p.returncode == 0 or "connect" not in said or srv.poll() is not None:
                break
            time.sleep(0.1)  # the server is not listening yet
        if p.returncode != 0:
            why = (p.stderr + p.stdout)[-2000:]
            if srv.poll() is not None:
                why += f"\nthe server ended first ({srv.returncode}): {srv.stdout.read()[-1000:]}"
            raise ToolFailed(f"ucx_perftest failed ({p.returncode}): {' '.join(cmd)}\n{why}")
        srv.wait(timeout=60)
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.wait()
    lines = [ln.strip() for ln in p.stdout.splitlines() if ln.strip()[:1].isdigit()]
    if not lines:
        raise ToolFailed(f"no result line from ucx_perftest: {' '.join(cmd)}\n{p.stdout}")
    f = lines[-1].split(",")
    # iterations, p50 latency (us), avg, overall, avg_bw, overall_bw (MiB/s), avg_mr, overall_mr
    return float(f[1]), float(f[5]) * MIB / 1e6


def perftest_figure(kind, size, cpus, env, window=16, quick=False, scale=1):
    n, warm = iters_for(size, quick, scale)
    if kind == "put_bw":
        return perftest("ucp_put_bw", size, n, warm, cpus, env, outstanding=window)[1]
    if kind == "fadd_lat":
        return perftest("ucp_fadd", 8, n, warm, cpus, env)[0]
    return perftest(PERFTEST[kind], size, n, warm, cpus, env)[0]


def ratio(kind, v, p):
    """Above 1: versus is the slower (a longer time, or a lower bandwidth)."""
    return p / v if kind == "put_bw" else v / p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--versus", help="versus-run (default: $VERSUS_RUN, build*/core/versus-run, PATH)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    ap.add_argument("--cpus", default="0,1")
    ap.add_argument("--memory", choices=("ucx", "core"), default="ucx", help="the ucx module's memory=")
    ap.add_argument("--tls", help="UCX_TLS for both")
    ap.add_argument("--window", type=int, default=16, help="puts per versus window / perftest -O")
    ap.add_argument("--pairs", default="put_lat,get_lat,put_bw,fadd_lat")
    ap.add_argument("--sizes", help="comma-separated bytes (default 8 B .. 4 MiB by 8x; fadd is 8 B)")
    ap.add_argument("--quick", action="store_true", help="a quarter of the operations")
    a = ap.parse_args()
    exe = find_versus(a.versus)
    if not exe or not shutil.which("ucx_perftest"):
        print("SKIP: need versus-run and ucx_perftest (Debian: ucx-utils)", file=sys.stderr)
        return 77
    env = dict(os.environ)
    if a.tls:
        env["UCX_TLS"] = a.tls
    sizes = [int(x) for x in a.sizes.split(",")] if a.sizes else SIZES_ALL
    pairs = [k for k in a.pairs.split(",") if k]
    bad = [k for k in pairs if k not in PERFTEST]
    if bad or a.rounds < 1:
        print(f"bad --pairs {bad} (known: {', '.join(PERFTEST)}) or --rounds", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="versus-bench-")
    la0 = loadavg()
    res, info = {}, {}
    for rnd in range(a.rounds):
        for kind in pairs:
            for size in ([8] if kind == "fadd_lat" else sizes):
                v0 = None
                if kind == "put_lat" and size == 8:  # the flag alone: one 8-byte put
                    v0, _ = versus_figure(kind, exe, 0, a.cpus, env, tmp, a.memory, a.window, a.quick)
                v, info[kind] = versus_figure(kind, exe, size, a.cpus, env, tmp, a.memory, a.window, a.quick)
                p = perftest_figure(kind, size, a.cpus, env, a.window, a.quick)
                res.setdefault((kind, size), []).append((v, p))
                if v0 is not None:
                    res.setdefault(("put_lat_0", 8), []).append((v0, p))
                unit = "MB/s" if kind == "put_bw" else "us"
                print(f"round {rnd + 1} {kind:8s} {size:>8d} B  versus {v:10.3f} {unit}  perftest {p:10.3f} "
                      f"{unit}  ratio {ratio(kind, v, p):.3f}", flush=True)
    print(f"\nUCX_TLS={env.get('UCX_TLS', '(default)')}  memory={a.memory}  provider: "
          f"{next(iter(info.values()), {}).get('provider', '')}  cpus {a.cpus}  rounds {a.rounds}  "
          f"load average {la0} -> {loadavg()}")
    print("put_lat 0B: versus's putnotify of 0 B (the flag alone, one 8-byte put) against ucp_put_lat 8 B")
    print(f"{'pair':10s} {'size':>8s}  {'versus':>10s} {'perftest':>10s} {'unit':5s} {'ratio':>6s}  (median of "
          f"per-round ratios; above 1: versus slower)")
    for (kind, size), xs in res.items():
        k = "put_bw" if kind == "put_bw" else "lat"
        vs = [x[0] for x in xs]
        ps = [x[1] for x in xs]
        r = statistics.median(ratio(k, x, y) for x, y in xs)
        name = "put_lat 0B" if kind == "put_lat_0" else kind
        print(f"{name:10s} {size:>8d}  {statistics.median(vs):10.3f} {statistics.median(ps):10.3f} "
              f"{'MB/s' if k == 'put_bw' else 'us':5s} {r:6.3f}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ToolFailed as e:
        sys.exit(str(e))
