#!/usr/bin/env python3
"""versus's one-sided patterns over ofi beside fabtests' fi_rma_bw, on the same cores.

Debian packages no fabtests; build them from libfabric's own source at the installed
version (fi_info --version), against the installed library, and give the directory
holding fi_rma_bw (the build's top directory or its benchmarks/).  libfabric 1.17's
fabtests have one RMA benchmark, fi_rma_bw; its window option -W 1 gives a time per
operation, the nearest thing to a latency (there is no RMA ping-pong in 1.17).

Pairs, per provider (tcp;ofi_rxm and shm) and size (8 B, 4 KiB, 1 MiB):
  put_bw   versus put bandwidth --window W      fi_rma_bw -o write -W W, three ways:
                                                  plain   fabtests' defaults
                                                  dc      -U -j 0 (delivery complete, no inject)
                                                  wdata   -o writedata -U -j 0 (one direction)
  get_bw   versus get bandwidth --window W      fi_rma_bw -o read -W W
  put_lat  versus put latency                   fi_rma_bw -o write -W 1 -j 0, with and
                                                without -U (dc, plain); wdata as above
                                                with -W 1 (a put and the target's answer)
  get_lat  versus get latency                   fi_rma_bw -o read -W 1

What differs (fabtests 1.17's benchmarks/benchmark_shared.c, bandwidth_rma):
  completion  versus's put is fi_writemsg with FI_DELIVERY_COMPLETE; fi_rma_bw's fi_write
              takes the provider's default (tcp: complete once the bytes are in the socket;
              shm: once it has copied or queued them), FI_DELIVERY_COMPLETE only with -U.
  inject      below the provider's inject size fi_rma_bw writes with fi_inject_write, which
              raises no completion: its window then waits for nothing.  versus never injects
              a put.  -j 0 turns inject off.
  direction   fi_rma_bw -o write and -o read run the loop on both processes at once: each
              writes into (reads from) the other, and each reports its own direction.
              versus's rank 0 alone is the origin; rank 1 is the target and only calls
              BEGIN and END.  -o writedata is one direction (the client writes with remote
              CQ data, the server counts them and sends a 4-byte message per window, which
              the client waits for).
  window      both post W operations then wait for all their completions; versus times each
              window (BEGIN .. END) as one sample; fi_rma_bw times all its iterations at
              once (after its -w warm-up) and prints MB/s = bytes / elapsed (1 MB = 1e6 B)
              and usec/xfer = elapsed / iterations.  The figure compared for versus is the
              same: all bytes of its samples over their summed time (the median sample is
              printed beside it).  Both write to offset 0 of the peer's buffer every time.
  progress    fi_rma_bw's target is in libfabric all the time (its own loop); versus's
              target calls the module between units (docs/patterns.md, "Progress").

The tools run alternately (the order flips each round), rank 0 / the client on the first
of --cpus, rank 1 / the server on the second.  Prints every round, then per pair the
medians over the rounds and the ratio versus / fabtests of those medians (bandwidth: above
1 means versus moved more; latency: above 1 means versus took longer).
Figures from 4 rounds on a 2-CPU machine, and what they show: docs/patterns.md ("Beside
libfabric's fabtests").  Against wdata, the one pair doing the same thing, put bandwidth came
out at 1.04, 1.18, 1.23 over tcp (8 B, 4 KiB, 1 MiB) and 0.96 at 4 KiB over shm.

usage: bench/ofi_rma_vs_fabtests.py --fabtests-dir DIR [--providers tcp,shm] [--rounds 3]
                                    [--sizes 8,4096,1048576] [--window 64] [--cpus 0,1]
                                    [--pairs put_bw,get_bw,put_lat,get_lat] [--versus PATH]
                                    [--show-commands]
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import ToolFailed, free_port, loadavg, server_client  # noqa: E402

MIB = 1 << 20
# versus's provider= value -> fabtests' -p (the same layering fi_getinfo gives versus)
PROVIDERS = {"tcp": "tcp;ofi_rxm", "shm": "shm"}
# pair: (versus pattern, versus variant, [(fabtests label, fi_rma_bw options)])
PAIRS = {
    "put_bw": ("put", "bandwidth", [("plain", ["-o", "write"]), ("dc", ["-o", "write", "-U", "-j", "0"]),
                                    ("wdata", ["-o", "writedata", "-U", "-j", "0"])]),
    "get_bw": ("get", "bandwidth", [("plain", ["-o", "read"])]),
    "put_lat": ("put", "latency", [("plain", ["-o", "write", "-j", "0"]),
                                   ("dc", ["-o", "write", "-U", "-j", "0"]),
                                   ("wdata", ["-o", "writedata", "-U", "-j", "0"])]),
    "get_lat": ("get", "latency", [("plain", ["-o", "read"])]),
}
ROW = re.compile(r"([\d.]+)s\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")


def operations(pair, size, window):
    """(timed, warm-up) operations per launch, the same for both tools; bandwidth counts are
    whole windows."""
    if pair.endswith("_bw"):
        w = 10 if size >= MIB else 300
        return w * window, window
    return (500, 20) if size >= MIB else (10000, 100)


def run_versus(a, prov, pair, size, tmp, rnd):
    """One versus-run launch: (figure by all samples, figure by the median sample, provider,
    domain, command); MB/s for bandwidth, us per operation for latency."""
    pattern, variant, _ = PAIRS[pair]
    n, warm = operations(pair, size, a.window)
    w = a.window if variant == "bandwidth" else 1
    units, wunits = str(n // w), str(max(1, warm // w))
    out = os.path.join(tmp, f"{prov}-{pair}-{size}-{rnd}.jsonl")
    cmd = [a.versus, "--transport", "ofi", "--transport-opt", f"provider={prov}", "--launch", "local", "-n", "2",
           "--cpus", a.cpus, "--pattern", pattern, "--variant", variant, "--sizes", str(size),
           "--iterations", units, "--iterations-large", units, "--warmup", wunits, "--warmup-large", wunits,
           "--timeout", "120", "--quiet", "--out", out]
    if w > 1:
        cmd += ["--window", str(w)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300,
                       stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        raise ToolFailed(f"versus-run failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-2000:]}")
    with open(out, encoding="utf-8") as f:
        recs = [json.loads(x) for x in f if x.strip()]
    run = next(r for r in recs if r["record"] == "run")
    sizes = [r for r in recs if r["record"] == "size" and r["bytes"] == size]
    if not sizes:
        raise ToolFailed(f"versus-run recorded no {size} B in {out}")
    s = sizes[0]["samples_ns"]
    tr = run["transport"]
    if variant == "bandwidth":  # bytes / ns = GB/s; x 1e3 = MB/s
        fig, med = w * size * len(s) / sum(s) * 1e3, w * size / statistics.median(s) * 1e3
    else:
        fig, med = sum(s) / len(s) / 1e3, statistics.median(s) / 1e3
    return fig, med, tr.get("provider", "?"), tr.get("attrs", {}).get("domain"), " ".join(cmd)


def run_fabtests(a, prov, pair, opts, size, domain):
    """One fi_rma_bw server/client pair: (the client's figure, command); MB/s for bandwidth
    (its MB/sec column), us per operation for latency (its usec/xfer)."""
    n, warm = operations(pair, size, a.window)
    w = a.window if pair.endswith("_bw") else 1
    c0, c1 = a.cpus.split(",")[:2]
    common = ["-p", PROVIDERS[prov], "-e", "rdm", "-S", str(size), "-I", str(n), "-w", str(warm),
              "-W", str(w)] + opts
    if domain and prov != "shm":
        common += ["-d", domain]
    def commands():
        # the addresses go over a socket (-E; shm's names are no host:port), and each side
        # gets its own source port (-B): with -E both ask fi_getinfo for FI_SOURCE
        oob, sport, cport = free_port(), free_port(), free_port()
        return (["taskset", "-c", c1, a.fi_rma_bw] + common + [f"-E={oob}", "-B", str(sport)],
                ["taskset", "-c", c0, a.fi_rma_bw] + common + [f"-E={oob}", "-B", str(cport), "127.0.0.1"])

    cli, cli_cmd = server_client(commands, "fi_rma_bw")
    for line in cli.stdout.splitlines():
        m = ROW.search(line)
        if m:
            mbs, usec = float(m.group(2)), float(m.group(3))
            return (mbs if pair.endswith("_bw") else usec), " ".join(cli_cmd)
    raise ToolFailed(f"no result row in fi_rma_bw's output: {' '.join(cli_cmd)}\n{cli.stdout}")


def find_fi_rma_bw(d):
    for cand in (os.path.join(d, "fi_rma_bw"), os.path.join(d, "benchmarks", "fi_rma_bw"),
                 os.path.join(d, "bin", "fi_rma_bw")):
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fabtests-dir", required=True, help="where the built fi_rma_bw is")
    ap.add_argument("--versus", "--runner", dest="versus",
                    default=os.environ.get("VERSUS_RUN") or shutil.which("versus-run") or "build/core/versus-run")
    ap.add_argument("--providers", default="tcp,shm")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", default=f"8,4096,{MIB}")
    ap.add_argument("--window", type=int, default=64)
    ap.add_argument("--cpus", default="0,1", help="rank 0 / client core, rank 1 / server core")
    ap.add_argument("--pairs", default=",".join(PAIRS))
    ap.add_argument("--show-commands", action="store_true", help="print the first round's commands")
    a = ap.parse_args()
    provs = [p for p in a.providers.split(",") if p]
    pairs = [p for p in a.pairs.split(",") if p]
    bad = [p for p in provs if p not in PROVIDERS] + [p for p in pairs if p not in PAIRS]
    try:
        sizes = [int(x) for x in a.sizes.split(",") if x]
    except ValueError:
        sizes = []
    if bad or not sizes or min(sizes) < 1 or a.rounds < 1 or a.window < 1 or len(a.cpus.split(",")) < 2:
        ap.print_usage(sys.stderr)
        sys.stderr.write(f"ofi_rma_vs_fabtests.py: bad {', '.join(bad) or 'sizes, rounds, window or cpus'} "
                         f"(providers: {', '.join(PROVIDERS)}; pairs: {', '.join(PAIRS)}; sizes in bytes, "
                         f"at least 1)\n")
        return 2
    a.fi_rma_bw = find_fi_rma_bw(a.fabtests_dir)
    if not a.fi_rma_bw:
        sys.stderr.write(f"ofi_rma_vs_fabtests.py: no fi_rma_bw in {a.fabtests_dir} (nor its benchmarks/): "
                         "build libfabric's fabtests for the installed libfabric\n")
        return 2
    if not os.access(a.versus, os.X_OK):
        sys.stderr.write(f"ofi_rma_vs_fabtests.py: versus-run not found ({a.versus}); give --versus\n")
        return 2
    try:
        fiv = subprocess.run(["fi_info", "--version"], stdout=subprocess.PIPE, text=True).stdout.split()
        fiv = fiv[fiv.index("libfabric:") + 1] if "libfabric:" in fiv else "?"
    except OSError:
        fiv = "?"
    tmp = tempfile.mkdtemp(prefix="versus-fabtests-")
    la0 = loadavg()
    got, chosen = {}, {}
    try:
        for rnd in range(a.rounds):
            print(f"# round {rnd + 1}: load {loadavg()}", flush=True)
            for prov in provs:
                for pair in pairs:
                    for size in sizes:
                        key = (prov, pair, size)
                        row = got.setdefault(key, {"versus": [], "vmed": []})
                        order = ("v", "f") if rnd % 2 == 0 else ("f", "v")
                        for tool in order:
                            if tool == "v":
                                fig, med, vp, dom, cmd = run_versus(a, prov, pair, size, tmp, rnd)
                                chosen[prov] = (vp, dom)
                                row["versus"].append(fig)
                                row["vmed"].append(med)
                                cmds = [cmd]
                            else:
                                dom = chosen.get(prov, (None, None))[1]
                                cmds = []
                                for label, opts in PAIRS[pair][2]:
                                    fig, cmd = run_fabtests(a, prov, pair, opts, size, dom)
                                    row.setdefault(label, []).append(fig)
                                    cmds.append(cmd)
                            if a.show_commands and rnd == 0:
                                for c in cmds:
                                    print(f"#   $ {c}")
                        unit = "MB/s" if pair.endswith("_bw") else "us"
                        fab = "  ".join(f"{lb} {row[lb][-1]:.3f}" for lb, _ in PAIRS[pair][2])
                        print(f"  {prov:4s} {pair:8s} {size:>8d} B  versus {row['versus'][-1]:.3f} "
                              f"(median sample {row['vmed'][-1]:.3f})  fabtests {fab} {unit}", flush=True)
    except ToolFailed as e:
        sys.stderr.write(f"{e}\n")
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n# libfabric {fiv}; versus ofi provider= {', '.join(f'{p}: {v} ({d})' for p, (v, d) in chosen.items())};"
          f" cpus {a.cpus}; window {a.window}; {a.rounds} rounds; load {la0} -> {loadavg()}")
    print("# medians over the rounds.  versus: all bytes (operations) over all the samples' time, as fabtests"
          "\n# computes its figure (v.med: the median sample's).  ratio = versus / fabtests of the medians;"
          "\n# bandwidth: above 1 means versus moved more, latency: above 1 means versus took longer")
    print(f"{'provider':8s} {'pair':8s} {'size [B]':>9s} {'unit':>5s} {'versus':>10s} {'v.med':>10s}  "
          f"{'fabtests':>18s} {'ratio':>6s}")
    for (prov, pair, size), row in got.items():
        unit = "MB/s" if pair.endswith("_bw") else "us"
        v, vm = statistics.median(row["versus"]), statistics.median(row["vmed"])
        for i, (label, _) in enumerate(PAIRS[pair][2]):
            f = statistics.median(row[label])
            head = f"{prov:8s} {pair:8s} {size:>9d} {unit:>5s} {v:10.3f} {vm:10.3f}" if i == 0 else " " * 55
            print(f"{head}  {label:>7s} {f:10.3f} {v / f:6.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
