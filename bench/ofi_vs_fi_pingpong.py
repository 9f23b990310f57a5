#!/usr/bin/env python3
"""versus --transport ofi against libfabric's own fi_pingpong, side by side.

For each provider (tcp, shm by default) the two tools run back to back on the
same two cores, interleaved A B A B over several rounds (8-byte one-way
latency and 1 MiB bandwidth from each launch), so that drift and the host
moving its vCPUs hit both alike.

What each launch yields, made comparable:
  fi_pingpong prints one figure per size and launch: total time / iterations
  / 2 ("usec/xfer", a mean one-way time).  It has no warm-up, so it runs all
  its sizes (-S all) and the smaller sizes before 8 B take the provider's
  connection set-up; versus measures 8 B and 1 MiB after its own warm-up.  From versus's
  JSONL (samples_ns are round trips, each the mean of `batch` consecutive
  ones, with as many round trips per size as fi_pingpong's -I) the same
  statistic is the mean of the samples / 2; the median of its samples / 2 is
  printed as well.
  Bandwidth = bytes / one-way time (1 MB = 1e6 B), as fi_pingpong computes it.
The table gives the median over rounds of each tool's per-launch figure, the
ratio versus / native of those medians, and the same for the best round of
each (the least disturbed launch, as NetPIPE keeps the best of its trials) (latency: < 1 means versus is faster; bandwidth:
> 1 means versus is faster).

usage: bench/ofi_vs_fi_pingpong.py [--versus PATH] [--providers tcp,shm] [--rounds 7]
                                    [--cpus 0,1] [--iters 200] [--warmup 100]
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


def run_versus(a, prov, out):
    """One launch measuring both sizes; returns {bytes: {mean_us, median_us}}, provider, domain."""
    # the same number of round trips per size as fi_pingpong's -I: batch K
    # round trips per sample, iters / K samples (a longer window would catch
    # more of the host's scheduling stalls and make the mean incomparable)
    samples = str(-(-a.iters // a.batch))
    cmd = a.prefix + [a.versus, "--transport", "ofi", "--transport-opt", f"provider={prov}",
           "--transport-opt", f"api={a.api}", "--variant", a.variant,
           "--launch", "local", "-n", "2", "--cpus", a.cpus,
           "--sizes", f"{LAT_BYTES},{BW_BYTES}", "--iterations", samples,
           "--iterations-large", samples, "--warmup", str(a.warmup),
           "--warmup-large", str(a.warmup), "--batch", str(a.batch),
           "--timeout", "60", "--quiet", "--out", out]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"versus-run failed (exit {p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    run, res = None, {}
    with open(out, encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if rec["record"] == "run":
                run = rec
            elif rec["record"] == "size":
                s = rec["samples_ns"]  # each the mean round trip of `batch` consecutive ones
                res[rec["bytes"]] = {"mean_us": sum(s) / len(s) / 2e3,
                                     "median_us": statistics.median(s) / 2e3}
    if set(res) != {LAT_BYTES, BW_BYTES}:
        sys.exit(f"versus-run did not record both sizes in {out}")
    return res, run["transport"]["provider"], run["transport"]["attrs"].get("domain")


PP_LINE = re.compile(r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+([\d.]+)s\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")
PP_LABEL = {LAT_BYTES: "8", BW_BYTES: "1m"}


def run_fi_pingpong(a, prov):
    """One launch over all of fi_pingpong's sizes (-S all): the sizes before 8 B
    absorb the connection set-up, so the 8 B and 1 MiB rows are warm."""
    cpu0, cpu1 = a.cpus.split(",")[:2]
    common = ["-p", prov, "-e", "rdm", "-m", a.api, "-S", "all", "-I", str(a.iters)]
    if a.domain:
        common += ["-d", a.domain]
    for _ in range(5):
        port = free_port()
        srv = subprocess.Popen(a.prefix + ["taskset", "-c", cpu0, a.fi_pingpong] + common +
                               ["-B", str(port)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)
        try:
            cli = subprocess.run(a.prefix + ["taskset", "-c", cpu1, a.fi_pingpong] + common +
                                 ["-P", str(port), "127.0.0.1"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
            _, srv_err = srv.communicate(timeout=60)
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
    res = {}
    for line in cli.stdout.splitlines():
        m = PP_LINE.match(line)
        for nbytes, label in PP_LABEL.items():
            if m and m.group(1) == label:
                res[nbytes] = {"mean_us": float(m.group(7))}
    if set(res) != {LAT_BYTES, BW_BYTES}:
        sys.exit(f"cannot find the 8 B and 1 MiB rows in fi_pingpong's output:\n{cli.stdout}")
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--versus", default=os.environ.get("VERSUS_RUN") or
                    shutil.which("versus-run") or os.path.join(here, "..", "build", "core", "versus-run"))
    ap.add_argument("--fi-pingpong", default=shutil.which("fi_pingpong") or "fi_pingpong")
    ap.add_argument("--providers", default="tcp,shm")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cpus", default="0,1", help="rank 0 / server core, rank 1 / client core")
    ap.add_argument("--iters", type=int, default=200,
                    help="round trips per size and launch, both tools (fi_pingpong -S all runs every size up to 6 MiB this often)")
    ap.add_argument("--warmup", type=int, default=100, help="versus warm-up round trips per size")
    ap.add_argument("--api", choices=["tagged", "msg"], default="tagged",
                    help="message API for both tools (fi_pingpong -m, versus api=)")
    ap.add_argument("--variant", choices=["blocking", "nonblocking"], default="nonblocking",
                    help="versus variant (nonblocking pre-posts the receive, as fi_pingpong does)")
    ap.add_argument("--domain", default=None, help="domain for both tools (e.g. lo)")
    ap.add_argument("--batch", type=int, default=10,
                    help="versus round trips per sample (clock reads stay a small share of a sample)")
    ap.add_argument("--keep", default=None, help="keep versus JSONL files in this directory")
    ap.add_argument("--nice", type=int, default=None,
                    help="run both tools under `nice -n N` (e.g. -20 on a host busy with other work)")
    a = ap.parse_args()
    a.prefix = ["nice", "-n", str(a.nice)] if a.nice is not None else []
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

    metrics = [("lat", LAT_BYTES), ("bw", BW_BYTES)]
    res = {}
    selected = {}
    for r in range(a.rounds):
        for prov in a.providers.split(","):
            v, vprov, vdom = run_versus(a, prov, os.path.join(outdir, f"{prov}-{r}.jsonl"))  # A
            n = run_fi_pingpong(a, prov)                                                  # B
            selected[prov] = (vprov, vdom)
            for name, nbytes in metrics:
                res.setdefault((prov, name), []).append((v[nbytes], n[nbytes]))
                print(f"round {r} {prov:4s} {name}: versus mean {v[nbytes]['mean_us']:.3f} us "
                      f"(median {v[nbytes]['median_us']:.3f}), fi_pingpong {n[nbytes]['mean_us']:.3f} us",
                      file=sys.stderr, flush=True)

    print(f"# versus ofi ({a.variant}, api={a.api}) vs fi_pingpong -e rdm -m {a.api}; cores {a.cpus}; "
          f"{a.rounds} interleaved rounds; medians over rounds"
          + (f"; nice {a.nice}" if a.nice is not None else ""))
    print("# one-way time = round trip / 2; bandwidth = bytes / one-way time, 1 MB = 1e6 B")
    print(f"{'provider':20s} {'metric':17s} {'versus':>9s} {'native':>9s} {'ratio':>6s}"
          f" {'best v':>9s} {'best n':>9s} {'ratio':>6s} {'v median':>9s}")
    for prov in a.providers.split(","):
        for name, nbytes in metrics:
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
