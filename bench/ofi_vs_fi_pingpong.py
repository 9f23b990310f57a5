#!/usr/bin/env python3
"""versus --transport ofi against libfabric's own fi_pingpong, side by side.

For each provider (tcp, shm by default) and size (8 B latency, 1 MiB
bandwidth), both tools are launched on the same two cores, alternating launch
by launch, LAUNCHES times each per round; launches are the unit because a host
like this one keeps a launch's processes on the same virtual CPUs for the
launch's whole life and moves them between launches.

Each launch is shaped alike:
  fi_pingpong -e rdm -m tagged -S SIZE -I N: after a control-socket sync it
    times N round trips with no warm-up (injecting when SIZE < inject size) and
    prints total time / N / 2 ("usec/xfer", a mean one-way time).
  versus-run --sizes SIZE --warmup 0 --batch B --iterations N/B: the same N
    round trips with no warm-up (after versus's own two untimed resync round
    trips); the same statistic is the mean of the samples / 2.
N is 10000 round trips at 8 B and 1000 at 1 MiB by default.
A round's figure per tool is the median of its launches; the result is the
median over rounds of the per-round ratio versus / fi_pingpong (latency: < 1
means versus is faster; bandwidth = bytes / one-way time, 1 MB = 1e6 B, ratio
> 1 means versus is faster), with the distribution-free 95 % interval of that
median when the project's Python environment (.venv) runs the bench.
Target: within 5 %.

usage: bench/ofi_vs_fi_pingpong.py [--versus PATH] [--providers tcp,shm] [--rounds 10]
                                    [--launches 5] [--cpus 0,1] [--iters-lat 10000]
                                    [--iters-bw 1000] [--api tagged|msg] [--keep DIR]
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

from benchlib import ToolFailed, free_port, loadavg, median_interval_words, server_client

LAT_BYTES = 8
BW_BYTES = 1 << 20


def run_versus(a, prov, size, iters, out):
    """One launch of one size; returns (mean one-way us, selected provider, domain)."""
    batch = a.batch if size == LAT_BYTES else 1
    samples = str(-(-iters // batch))
    cmd = a.prefix + [a.versus, "--transport", "ofi", "--transport-opt", f"provider={prov}",
                      "--transport-opt", f"api={a.api}", "--variant", a.variant,
                      "--launch", "local", "-n", "2", "--cpus", a.cpus, "--sizes", str(size),
                      "--iterations", samples, "--iterations-large", samples, "--warmup", "0",
                      "--warmup-large", "0", "--batch", str(batch), "--timeout", "60", "--quiet",
                      "--out", out]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"versus-run failed (exit {p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    run, mean = None, None
    with open(out, encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if rec["record"] == "run":
                run = rec
            elif rec["record"] == "size" and rec["bytes"] == size:
                s = rec["samples_ns"]  # each the mean round trip of `batch` consecutive ones
                mean = sum(s) / len(s) / 2e3
    if mean is None:
        sys.exit(f"versus-run did not record {size} B in {out}")
    return mean, run["transport"]["provider"], run["transport"]["attrs"].get("domain")


PP_LINE = re.compile(r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+([\d.]+)s\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")


def run_fi_pingpong(a, prov, size, iters):
    """One fi_pingpong launch of one size: its mean one-way time in us."""
    cpu0, cpu1 = a.cpus.split(",")[:2]
    common = ["-p", prov, "-e", "rdm", "-m", a.api, "-S", str(size), "-I", str(iters)]
    if a.domain:
        common += ["-d", a.domain]
    def commands():
        port = free_port()
        return (a.prefix + ["taskset", "-c", cpu0, a.fi_pingpong] + common + ["-B", str(port)],
                a.prefix + ["taskset", "-c", cpu1, a.fi_pingpong] + common + ["-P", str(port), "127.0.0.1"])

    try:
        cli, _ = server_client(commands, "fi_pingpong", client_timeout=300)
    except ToolFailed as e:
        sys.exit(str(e))
    for line in cli.stdout.splitlines():
        m = PP_LINE.match(line)
        if m:  # the one result row (the header has no "<time>s" column)
            return float(m.group(7))
    sys.exit(f"cannot find the result row in fi_pingpong's output:\n{cli.stdout}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--versus", "--runner", dest="versus", default=os.environ.get("VERSUS_RUN") or
                    shutil.which("versus-run") or os.path.join(here, "..", "build", "core", "versus-run"))
    ap.add_argument("--fi-pingpong", default=shutil.which("fi_pingpong") or "fi_pingpong")
    ap.add_argument("--providers", default="tcp,shm")
    ap.add_argument("--rounds", type=int, default=10, help="rounds (at least 6 for a 95 %% interval)")
    ap.add_argument("--launches", type=int, default=5, help="launches of each tool per size and round")
    ap.add_argument("--cpus", default="0,1", help="rank 0 / server core, rank 1 / client core")
    ap.add_argument("--iters-lat", type=int, default=10000, help="round trips per 8 B launch, both tools")
    ap.add_argument("--iters-bw", type=int, default=1000, help="round trips per 1 MiB launch, both tools")
    ap.add_argument("--api", choices=["tagged", "msg"], default="tagged",
                    help="message API for both tools (fi_pingpong -m, versus api=)")
    ap.add_argument("--variant", choices=["blocking", "nonblocking"], default="nonblocking",
                    help="versus variant (nonblocking posts the receive before sending, as fi_pingpong does)")
    ap.add_argument("--domain", default=None, help="domain for both tools (e.g. lo)")
    ap.add_argument("--batch", type=int, default=10,
                    help="versus round trips per sample at 8 B (clock reads stay a small share of a sample)")
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
    if loadavg() != "?" and float(loadavg()) > 0.5:
        print(f"warning: load average {loadavg()}: other processes compete for the two cores; "
              "figures will be noisy", file=sys.stderr)

    metrics = [("lat", LAT_BYTES, a.iters_lat), ("bw", BW_BYTES, a.iters_bw)]
    provs = a.providers.split(",")
    ratios, figs, selected = {}, {}, {}
    for r in range(a.rounds):
        for prov in provs:
            for name, size, iters in metrics:
                v, n = [], []
                for k in range(a.launches):
                    for tool in (("v", "n") if (r + k) % 2 == 0 else ("n", "v")):
                        if tool == "v":
                            out = os.path.join(outdir, f"{prov}-{name}-{r}-{k}.jsonl")
                            mean, vprov, vdom = run_versus(a, prov, size, iters, out)
                            selected[prov] = (vprov, vdom)
                            v.append(mean)
                        else:
                            n.append(run_fi_pingpong(a, prov, size, iters))
                vm, nm = statistics.median(v), statistics.median(n)
                figs.setdefault((prov, name), []).append((vm, nm))
                ratios.setdefault((prov, name), []).append(vm / nm if name == "lat" else nm / vm)
                print(f"round {r} {prov:4s} {name}: versus {vm:.3f} us, fi_pingpong {nm:.3f} us "
                      f"(medians of {a.launches} launches' mean one-way times)", file=sys.stderr, flush=True)

    print(f"# versus ofi ({a.variant}, api={a.api}) vs fi_pingpong -e rdm -m {a.api}; cores {a.cpus}; "
          f"{a.rounds} rounds x {a.launches} launches per tool, size and provider; "
          f"{a.iters_lat} / {a.iters_bw} round trips per 8 B / 1 MiB launch"
          + (f"; nice {a.nice}" if a.nice is not None else ""))
    print("# one-way time = round trip / 2; bandwidth = bytes / one-way time, 1 MB = 1e6 B; "
          "ratio = median over rounds of the per-round ratio (versus / native; bandwidth: native time / versus time)")
    print(f"{'provider':20s} {'metric':17s} {'versus':>9s} {'native':>9s} {'ratio':>6s}  interval")
    for prov in provs:
        for name, size, _ in metrics:
            vs = statistics.median(f[0] for f in figs[(prov, name)])
            ns = statistics.median(f[1] for f in figs[(prov, name)])
            if name == "lat":
                what, row = "8 B one-way [us]", f"{vs:9.3f} {ns:9.3f}"
            else:
                what, row = "1 MiB bw [MB/s]", f"{size / vs:9.1f} {size / ns:9.1f}"
            label = f"{selected[prov][0]} ({selected[prov][1]})"
            rs = ratios[(prov, name)]
            print(f"{label:20s} {what:17s} {row} {statistics.median(rs):6.3f}  {median_interval_words(rs)}")
    if not a.keep:
        shutil.rmtree(outdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
