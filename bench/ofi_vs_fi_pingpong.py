#!/usr/bin/env python3
"""versus --transport ofi against libfabric's own fi_pingpong, side by side.

For each provider (tcp, shm by default) and each metric (8-byte one-way
latency, 1 MiB bandwidth) the two tools run back to back on the same two
cores, interleaved A B A B over several rounds, so that drift and the host
moving its vCPUs hit both alike.

What each launch yields, made comparable:
  fi_pingpong prints one figure per launch: total time / iterations / 2
  ("usec/xfer", a mean one-way time that includes its first iteration, hence
  the provider's connection set-up, since it has no warm-up).  From versus's
  JSONL (samples_ns are round trips, each the mean of `batch` consecutive
  ones) the same statistic is the mean of the samples / 2; the median of its
  samples / 2 is printed as well.
  Bandwidth = bytes / one-way time (1 MB = 1e6 B), as fi_pingpong computes it.
The table gives the median over rounds of each tool's per-launch figure, the
ratio versus / native of those medians, and the same for the best round of
each (the least disturbed launch, as NetPIPE keeps the best of its trials) (latency: < 1 means versus is faster; bandwidth:
> 1 means versus is faster).

usage: bench/ofi_vs_fi_pingpong.py [--versus PATH] [--providers tcp,shm] [--rounds 7]
                                    [--cpus 0,1] [--lat-iters 20000] [--bw-iters 500]
                                    [--api tagged|msg] [--keep DIR]
"""
import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

LAT_BYTES = 8
BW_BYTES = 1 << 20


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_versus(a, prov, nbytes, iters, out):
    warm = max(100, iters // 10)
    cmd = [a.versus, "--transport", "ofi", "--transport-opt", f"provider={prov}",
           "--transport-opt", f"api={a.api}", "--variant", a.variant,
           "--launch", "local", "-n", "2", "--cpus", a.cpus,
           "--sizes", str(nbytes), "--iterations", str(iters), "--iterations-large", str(iters),
           "--warmup", str(warm), "--warmup-large", str(warm), "--batch", a.batch,
           "--timeout", "60", "--quiet", "--out", out]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"versus-run failed (exit {p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    run, size = None, None
    with open(out, encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if rec["record"] == "run":
                run = rec
            elif rec["record"] == "size" and rec["bytes"] == nbytes:
                size = rec
    if not size:
        sys.exit(f"versus-run wrote no size record for {nbytes} B in {out}")
    s = size["samples_ns"]  # each the mean round trip of `batch` consecutive ones
    return {"mean_us": sum(s) / len(s) / 2e3, "median_us": statistics.median(s) / 2e3,
            "provider": run["transport"]["provider"], "domain": run["transport"]["attrs"].get("domain")}


PP_LINE = re.compile(r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+([\d.]+)s\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")


def run_fi_pingpong(a, prov, nbytes, iters):
    cpu0, cpu1 = a.cpus.split(",")[:2]
    common = ["-p", prov, "-e", "rdm", "-m", a.api, "-S", str(nbytes), "-I", str(iters)]
    if a.domain:
        common += ["-d", a.domain]
    for attempt in range(5):
        port = free_port()
        srv = subprocess.Popen(["taskset", "-c", cpu0, a.fi_pingpong] + common + ["-B", str(port)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)
        try:
            cli = subprocess.run(["taskset", "-c", cpu1, a.fi_pingpong] + common +
                                 ["-P", str(port), "127.0.0.1"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
            srv_out, srv_err = srv.communicate(timeout=60)
        finally:
            if srv.poll() is None:
                srv.kill()
                srv.wait()
        if cli.returncode == 0 and srv.returncode == 0:
            break
        if "failed to connect" not in cli.stderr:
            sys.exit(f"fi_pingpong failed (client {cli.returncode}, server {srv.returncode}):\n"
                     f"{cli.stdout}{cli.stderr}{srv_err}")
    else:
        sys.exit("fi_pingpong: the client never reached the server")
    for line in cli.stdout.splitlines():
        m = PP_LINE.match(line)
        if m:
            return {"mean_us": float(m.group(7))}
    sys.exit(f"cannot parse fi_pingpong output:\n{cli.stdout}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--versus", default=os.environ.get("VERSUS_RUN") or
                    shutil.which("versus-run") or os.path.join(here, "..", "build", "core", "versus-run"))
    ap.add_argument("--fi-pingpong", default=shutil.which("fi_pingpong") or "fi_pingpong")
    ap.add_argument("--providers", default="tcp,shm")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cpus", default="0,1", help="rank 0 / server core, rank 1 / client core")
    ap.add_argument("--lat-iters", type=int, default=20000)
    ap.add_argument("--bw-iters", type=int, default=500)
    ap.add_argument("--api", choices=["tagged", "msg"], default="tagged",
                    help="message API for both tools (fi_pingpong -m, versus api=)")
    ap.add_argument("--variant", choices=["blocking", "nonblocking"], default="nonblocking",
                    help="versus variant (nonblocking pre-posts the receive, as fi_pingpong does)")
    ap.add_argument("--domain", default=None, help="domain for both tools (e.g. lo)")
    ap.add_argument("--batch", default="auto",
                    help="versus --batch: auto keeps its clock reads under 1 %% of a sample")
    ap.add_argument("--keep", default=None, help="keep versus JSONL files in this directory")
    a = ap.parse_args()
    if not shutil.which(a.fi_pingpong) and not os.path.exists(a.fi_pingpong):
        print("fi_pingpong not found (Debian: libfabric-bin)", file=sys.stderr)
        return 77
    outdir = a.keep or tempfile.mkdtemp(prefix="versus-ofi-bench-")
    os.makedirs(outdir, exist_ok=True)

    try:
        load = os.getloadavg()[0]
        if load > 0.5:
            print(f"warning: load average {load:.2f}: other processes compete for the two cores; "
                  "figures will be noisy", file=sys.stderr)
    except OSError:
        pass

    metrics = [("lat", LAT_BYTES, a.lat_iters), ("bw", BW_BYTES, a.bw_iters)]
    res = {}
    selected = {}
    for r in range(a.rounds):
        for prov in a.providers.split(","):
            for name, nbytes, iters in metrics:
                out = os.path.join(outdir, f"{prov}-{name}-{r}.jsonl")
                v = run_versus(a, prov, nbytes, iters, out)          # A
                n = run_fi_pingpong(a, prov, nbytes, iters)          # B
                selected[prov] = (v["provider"], v["domain"])
                res.setdefault((prov, name), []).append((v, n))
                print(f"round {r} {prov:4s} {name}: versus mean {v['mean_us']:.3f} us "
                      f"(median {v['median_us']:.3f}), fi_pingpong {n['mean_us']:.3f} us",
                      file=sys.stderr, flush=True)

    print(f"# versus ofi ({a.variant}, api={a.api}) vs fi_pingpong -e rdm -m {a.api}; cores {a.cpus}; "
          f"{a.rounds} interleaved rounds; medians over rounds")
    print("# one-way time = round trip / 2; bandwidth = bytes / one-way time, 1 MB = 1e6 B")
    print(f"{'provider':20s} {'metric':17s} {'versus':>9s} {'native':>9s} {'ratio':>6s}"
          f" {'best v':>9s} {'best n':>9s} {'ratio':>6s} {'v median':>9s}")
    for prov in a.providers.split(","):
        for name, nbytes, _ in metrics:
            pairs = res[(prov, name)]
            vs = [p[0]["mean_us"] for p in pairs]
            ns = [p[1]["mean_us"] for p in pairs]
            row = [statistics.median(vs), statistics.median(ns), min(vs), min(ns),
                   statistics.median(p[0]["median_us"] for p in pairs)]
            label = f"{selected[prov][0]} ({selected[prov][1]})"
            if name == "lat":
                what, fmt = "8 B one-way [us]", "{:9.3f}"
            else:
                row = [nbytes / x for x in row]
                what, fmt = "1 MiB bw [MB/s]", "{:9.1f}"
            f = [fmt.format(x) for x in row]
            print(f"{label:20s} {what:17s} {f[0]} {f[1]} {row[0] / row[1]:6.3f}"
                  f" {f[2]} {f[3]} {row[2] / row[3]:6.3f} {f[4]}")
    if not a.keep:
        shutil.rmtree(outdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
