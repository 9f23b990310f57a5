#!/usr/bin/env python3
"""Which backends move large messages while the application computes, and how
close windowed streaming comes to a plain memcpy.

1. doublebuffer at large sizes (default 256 KiB, 1 MiB, 4 MiB) over every
   backend, --progress none against --progress poll=N, interleaved
   (none, poll, none, poll, ... per backend: the host moves vCPUs, so a figure
   taken earlier is not comparable).  Per backend, size and mode: medians of
   the pooled samples of total (receive + sum two buffers), compute-only and
   communication-only time, the overlap fraction
   (compute + comm - total) / min(compute, comm) and CPU availability
   compute / total (definitions: docs/patterns.md).  A backend that progresses
   large messages without library calls shows about the same overlap with
   none as with poll; one that does not shows a clearly lower overlap with none.
2. stream bandwidth at 4 MiB (window 64) over shm and ucx (UCX's own choice of
   shared-memory transports), beside memcpy of 4 MiB on one core
   (bench/memcpy_bw.c, compiled here), interleaved per round.
   Bandwidth = W x size x samples / sum of window times (GB/s = 1e9 B/s);
   also the best single window (and best single copy), least disturbed by load.

usage: bench/patterns_progress.py [--versus PATH] [--rounds N] [--poll N]
                                  [--sizes SPEC] [--backends a,b,...] [--quick]
Every subprocess has a timeout; a backend that fails is reported and skipped.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LOCAL = ["--launch", "local", "-n", "2"]
BACKENDS = {
    "openmpi": (["mpirun.openmpi", "--oversubscribe", "--bind-to", "none", "-np", "2"], ["--transport", "openmpi"]),
    "mpich": (["mpiexec.mpich", "-n", "2"], ["--transport", "mpich"]),
    "ucx": ([], ["--transport", "ucx"] + LOCAL),
    "ofi-tcp": ([], ["--transport", "ofi", "--transport-opt", "provider=tcp"] + LOCAL),
    "ofi-shm": ([], ["--transport", "ofi", "--transport-opt", "provider=shm"] + LOCAL),
    "shm": ([], ["--transport", "shm"] + LOCAL),
    "tcp": ([], ["--transport", "tcp"] + LOCAL),
}


def run_versus(versus, backend, args, out, timeout):
    launcher, base = BACKENDS[backend]
    cmd = launcher + [versus] + base + args + ["--out", out, "--quiet", "--cpus", "0,1", "--timeout", "60"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout, env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s: {' '.join(cmd)}"
    if p.returncode != 0:
        return None, f"exit {p.returncode}: {p.stderr.strip()[-300:]}"
    with open(out, encoding="utf-8") as f:
        recs = [json.loads(ln) for ln in f if ln.strip()]
    return [r for r in recs if r.get("record") == "size"], ""


def doublebuffer(a, d):
    pooled = {}   # (backend, mode, bytes) -> {series: [samples]}
    failed = {}
    modes = ["none", f"poll={a.poll}"]
    for backend in a.backends:
        for rnd in range(a.rounds):
            for mode in modes:
                if backend in failed:
                    continue
                out = os.path.join(d, f"db-{backend}-{mode.replace('=', '')}-{rnd}.jsonl")
                args = ["--pattern", "doublebuffer", "--progress", mode, "--sizes", a.sizes,
                        "--iterations", str(a.iterations), "--iterations-large", str(a.iterations),
                        "--warmup", "3", "--warmup-large", "3"]
                sizes, why = run_versus(a.versus, backend, args, out, 300)
                if sizes is None:
                    failed[backend] = why
                    continue
                for s in sizes:
                    slot = pooled.setdefault((backend, mode, s["bytes"]), {"samples_ns": [], "compute_ns": [], "comm_ns": []})
                    for k in slot:
                        slot[k] += s[k]
    print(f"\n== doublebuffer: --progress none vs {modes[1]} (doubles summed between tests); "
          f"{a.rounds} interleaved launches x {a.iterations} samples; medians in us")
    print("   overlap from medians (the definition); 'best' = the same formula on the fastest samples, "
          "which other load on the machine disturbs least")
    print(f"{'backend':8} {'size':>8} {'comm':>9} {'compute':>9} | {'total':>9} {'overlap':>8} {'best':>6} {'CPU':>5} |"
          f" {'total':>9} {'overlap':>8} {'best':>6} {'CPU':>5}")
    print(f"{'':8} {'':>8} {'':>9} {'':>9} | {'none':^31} | {'poll':^31}")
    for backend in a.backends:
        if backend in failed:
            print(f"{backend:8} failed: {failed[backend]}")
            continue
        for b in sorted({k[2] for k in pooled if k[0] == backend}):
            row = f"{backend:8} {b // 1024:>6}Ki"
            cells = []
            for mode in modes:
                s = pooled[(backend, mode, b)]
                tot, comp, comm = (statistics.median(s[k]) for k in ("samples_ns", "compute_ns", "comm_ns"))
                ov = (comp + comm - tot) / min(comp, comm)
                btot, bcomp, bcomm = (min(s[k]) for k in ("samples_ns", "compute_ns", "comm_ns"))
                best = (bcomp + bcomm - btot) / min(bcomp, bcomm)
                cells.append((tot, comp, comm, ov, comp / tot, best))
            comm = statistics.median([c[2] for c in cells])
            comp = statistics.median([c[1] for c in cells])
            row += f" {comm / 1e3:9.1f} {comp / 1e3:9.1f}"
            for tot, _, _, ov, cpu, best in cells:
                row += f" | {tot / 1e3:9.1f} {100 * ov:7.0f}% {100 * best:5.0f}% {100 * cpu:4.0f}%"
            print(row)


def stream_vs_memcpy(a, d):
    memcpy = os.path.join(d, "memcpy_bw")
    cc = shutil.which("cc") or shutil.which("gcc")
    subprocess.run([cc, "-O2", "-o", memcpy, os.path.join(HERE, "memcpy_bw.c")], check=True, timeout=60)
    res = {"memcpy": [], "shm": [], "ucx": []}
    best = {}
    size = 4 << 20
    for rnd in range(a.rounds):
        p = subprocess.run(["taskset", "-c", "0", memcpy, str(size), "200"], stdout=subprocess.PIPE, text=True,
                           timeout=60, check=True)
        m = re.search(r"median_ns=(\d+)", p.stdout)
        res["memcpy"].append(size / float(m.group(1)))
        best.setdefault("memcpy", []).append(size / float(re.search(r"best_ns=(\d+)", p.stdout).group(1)))
        for backend in ("shm", "ucx"):
            out = os.path.join(d, f"st-{backend}-{rnd}.jsonl")
            sizes, why = run_versus(a.versus, backend, ["--pattern", "stream", "--sizes", "4M", "--window", "64",
                                                        "--iterations-large", "10", "--warmup-large", "2"], out, 300)
            if sizes is None:
                print(f"stream over {backend} failed: {why}")
                continue
            s = sizes[0]
            res[backend].append(64 * size * len(s["samples_ns"]) / sum(s["samples_ns"]))
            best.setdefault(backend, []).append(64 * size / min(s["samples_ns"]))
    print(f"\n== stream at 4 MiB (window 64) beside memcpy of 4 MiB on one core; GB/s per round, median")
    base = statistics.median(res["memcpy"]) if res["memcpy"] else None
    for k, v in res.items():
        if not v:
            continue
        med = statistics.median(v)
        ratio = f"  ({100 * med / base:.0f} % of memcpy)" if base and k != "memcpy" else ""
        print(f"{k:8} {med:7.2f} GB/s   rounds: {', '.join(f'{x:.2f}' for x in v)}{ratio}"
              f"   best window/copy: {max(best[k]):.2f} GB/s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--versus", default=os.path.join(HERE, "..", "build", "core", "versus-run"))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--poll", type=int, default=4096)
    ap.add_argument("--sizes", default="256K,1M,4M")
    ap.add_argument("--backends", default=",".join(BACKENDS))
    ap.add_argument("--quick", action="store_true", help="one round, 10 samples, 1 MiB only")
    a = ap.parse_args()
    a.backends = [b for b in a.backends.split(",") if b]
    unknown = [b for b in a.backends if b not in BACKENDS]
    if unknown:
        ap.error(f"unknown backend(s) {unknown}; known: {', '.join(BACKENDS)}")
    if a.quick:
        a.rounds, a.iterations, a.sizes = 1, 10, "1M"
    if not os.access(a.versus, os.X_OK):
        print(f"versus-run not found at {a.versus} (use --versus)", file=sys.stderr)
        return 77
    d = tempfile.mkdtemp(prefix="versus-bench-")
    print("load average at start: %.1f %.1f %.1f (other work on the machine disturbs every figure)" % os.getloadavg())
    doublebuffer(a, d)
    stream_vs_memcpy(a, d)
    print("load average at end: %.1f %.1f %.1f" % os.getloadavg())
    return 0


if __name__ == "__main__":
    sys.exit(main())
