#!/usr/bin/env python3
"""The shm floor: versus --transport shm against a plain memcpy and against the other transports.

Measured on the same two cores (--cpus, default 0,1), interleaved round by round (the order rotates every
round) because this kind of machine moves its virtual CPUs and a figure taken earlier is not comparable:

  memcpy  : bench/memcpy_bw.c, one process copying 4 MiB into another 4 MiB buffer, median GB/s
            (8 MiB working set)
  memcpy16: the same going round two source/destination pairs (16 MiB working set)
  shm     : versus-run --launch local --transport shm, 8 B one-way latency (median round trip / 2)
            and 4 MiB bandwidth (4 MiB / (median round trip / 2)), separate send and receive buffers
  shm-shared: the same with --buffers shared (one buffer per rank, NetPIPE's default)
  others  : the same versus-run measurement over openmpi (mpirun), mpich (mpiexec), ucx and ofi
            (provider=shm) where they are built and runnable

Targets: shm 4 MiB bandwidth within 20 % of memcpy's; shm 8 B latency at or below every other transport's.

Footprint: memcpy touches 8 MiB (source and destination).  A ping-pong with separate buffers touches 16 MiB
(a send and a receive buffer on each of two ranks), and where the last-level cache the two cores see holds
less than that, every copy runs slower, memcpy's too: memcpy16 is that yardstick.  With --buffers shared the
ping-pong touches 8 MiB like memcpy.  Both pairings are printed: shm-shared / memcpy and shm / memcpy16
(the like-for-like ones), and shm / memcpy for the record.  Ratios are taken within a round (paired),
then the median over rounds is reported.

Usage: bench/shm_floor.py [--rounds N] [--versus PATH] [--cpus 0,1] [--only shm,openmpi,...]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from benchlib import loadavg

MIB = 1 << 20
BIG = 4 * MIB
HERE = os.path.dirname(os.path.abspath(__file__))


def versus_cmd(name, runner, cpus):
    """Command line for one transport, or None when its launcher is missing."""
    base = [runner, "--transport", name, "--cpus", cpus]
    if name == "openmpi":
        if not shutil.which("mpirun.openmpi"):
            return None
        return ["mpirun.openmpi", "-np", "2", "--bind-to", "core", "--map-by", "core"] + base
    if name == "mpich":
        if not shutil.which("mpiexec.mpich"):
            return None
        return ["mpiexec.mpich", "-n", "2", "-bind-to", "core"] + base
    local = ["--launch", "local", "-n", "2"]
    if name == "ofi":
        return base + local + ["--transport-opt", "provider=shm"]
    return base + local


def run_versus(cmd, tmp, tag):
    """8 B one-way latency (ns) and 4 MiB bandwidth (GB/s) from versus's JSONL."""
    out = os.path.join(tmp, f"{tag}.jsonl")
    if os.path.exists(out):
        os.unlink(out)
    p = subprocess.run(cmd + ["--sizes", f"8,{BIG}", "--iterations", "2000", "--iterations-large", "100",
                              "--warmup", "200", "--warmup-large", "10", "--timeout", "120", "--quiet",
                              "--out", out],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"exit {p.returncode}: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
    with open(out) as f:
        recs = [json.loads(x) for x in f if x.strip()]
    med = {r["bytes"]: statistics.median(r["samples_ns"]) / 2 for r in recs if r["record"] == "size"}
    return med[8], BIG / med[BIG]


def build_memcpy(tmp):
    exe = os.path.join(tmp, "memcpy_bw")
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-O2", "-o", exe, os.path.join(HERE, "memcpy_bw.c")], check=True)
    return exe


def run_memcpy(exe, cpu, pairs=1):
    p = subprocess.run(["taskset", "-c", cpu, exe, str(BIG), "300", str(pairs)], check=True,
                       stdout=subprocess.PIPE, text=True, timeout=120)
    fields = dict(kv.split("=") for kv in p.stdout.split())
    return float(fields["median_GBps"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--versus", "--runner", dest="runner", default=os.environ.get("VERSUS_RUN")
                    or shutil.which("versus-run") or os.path.join(HERE, "..", "build", "core", "versus-run"))
    ap.add_argument("--cpus", default="0,1")
    ap.add_argument("--only", default="shm,openmpi,mpich,ucx,ofi",
                    help="comma-separated transports (shm is always measured)")
    a = ap.parse_args()
    if not os.access(a.runner, os.X_OK):
        sys.exit(f"versus-run not found at {a.runner} (give --runner)")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    names = ["shm"] + [n for n in a.only.split(",") if n and n != "shm"]
    tmp = tempfile.mkdtemp(prefix="versus-shm-floor-")
    exe = build_memcpy(tmp)
    cmds = {n: versus_cmd(n, a.runner, a.cpus) for n in names}
    skipped = {n: "launcher not found" for n, c in cmds.items() if c is None}
    lat = {n: [] for n in names}
    bw = {n: [] for n in names}
    mem = []
    mem16 = []
    tools = ["memcpy", "memcpy16"] + names
    print(f"load average before: {loadavg()} (on an idle host it is near 0)", flush=True)
    shared_bw = []
    tools.insert(3, "shm-shared")
    for rnd in range(a.rounds):
        order = tools[rnd % len(tools):] + tools[:rnd % len(tools)]
        line = []
        for tool in order:
            if tool in skipped:
                continue
            if tool == "shm-shared":
                _, b4 = run_versus(cmds["shm"] + ["--buffers", "shared"], tmp, f"shared{rnd}")
                shared_bw.append(b4)
                line.append(f"shm-shared {b4:.2f} GB/s")
                continue
            if tool == "memcpy":
                mem.append(run_memcpy(exe, a.cpus.split(",")[0]))
                line.append(f"memcpy {mem[-1]:.2f} GB/s")
                continue
            if tool == "memcpy16":
                mem16.append(run_memcpy(exe, a.cpus.split(",")[0], pairs=2))
                line.append(f"memcpy16 {mem16[-1]:.2f} GB/s")
                continue
            try:
                l8, b4 = run_versus(cmds[tool], tmp, f"{tool}{rnd}")
            except (RuntimeError, subprocess.TimeoutExpired, KeyError, StopIteration) as e:
                if tool == "shm":
                    sys.exit(f"shm failed: {e}")
                skipped[tool] = str(e)[:120]
                lat[tool] = []
                bw[tool] = []
                continue
            lat[tool].append(l8)
            bw[tool].append(b4)
            line.append(f"{tool} {l8:.0f} ns {b4:.2f} GB/s")
        print(f"round {rnd + 1}: " + " | ".join(line), flush=True)

    print()
    print("medians over rounds; shm/x is the median of the per-round ratios (same round, so same phase")
    print("of the host as far as interleaving can make it), per-round ratios in brackets")
    print(f"{'':10} {'8 B one-way [ns]':>17} {'4 MiB [GB/s]':>13} {'shm/x latency':>14}")
    print(f"{'memcpy':10} {'':>17} {statistics.median(mem):>13.2f}  (8 MiB working set)")
    print(f"{'memcpy16':10} {'':>17} {statistics.median(mem16):>13.2f}  (16 MiB working set)")
    ok_lat = True
    for n in names:
        if n in skipped or not lat[n]:
            print(f"{n:10} skipped: {skipped.get(n, 'no data')}")
            continue
        ratio = ""
        if n != "shm":
            per = [s / o for s, o in zip(lat["shm"], lat[n])]
            r = statistics.median(per)
            ratio = f"{r:.2f} [" + " ".join(f"{x:.2f}" for x in per) + "]"
            ok_lat &= r <= 1.0
        print(f"{n:10} {statistics.median(lat[n]):>17.0f} {statistics.median(bw[n]):>13.2f}  {ratio}")
    print(f"{'shm-shared':10} {'':>17} {statistics.median(shared_bw):>13.2f}  (--buffers shared)")
    print()
    for label, series, ref, ref_label in (
            ("shm --buffers shared (8 MiB)", shared_bw, mem, "memcpy (8 MiB)"),
            ("shm separate buffers (16 MiB)", bw["shm"], mem16, "memcpy16 (16 MiB)"),
            ("shm separate buffers (16 MiB)", bw["shm"], mem, "memcpy (8 MiB)")):
        bw_per = [s / m for s, m in zip(series, ref)]
        bw_ratio = statistics.median(bw_per)
        print(f"{label} / {ref_label}, 4 MiB bandwidth (paired, median over rounds): {bw_ratio:.3f} "
              f"[{' '.join(f'{x:.2f}' for x in bw_per)}] -> {'within' if bw_ratio >= 0.8 else 'NOT within'} 20 %")
    print(f"shm 8 B latency at or below every other transport measured: {'yes' if ok_lat else 'no'}")
    print(f"load average after: {loadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
