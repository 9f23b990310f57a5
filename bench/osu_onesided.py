#!/usr/bin/env python3
"""versus's one-sided patterns over Open MPI or MPICH beside OSU's one-sided benchmarks (OSU
7.x, built with the same MPI's mpicc): the same operations, windows and synchronisation, the
same sizes, the same launcher and binding, run in interleaved A/B rounds (the order flips
every round).  Prints every round and, per case and size, the medians over the rounds and
the ratio versus/OSU.
  --mpi openmpi (default)  mpirun.openmpi -np 2 --bind-to core --map-by core, versus
                           --transport openmpi, OSU built with mpicc.openmpi;
  --mpi mpich              mpiexec.mpich -n 2 -bind-to core, versus --transport mpich, OSU
                           built with mpicc.mpich.
An OSU program linked with the other MPI is refused (exit 2): under the other launcher it
would run as two one-rank jobs.

Measured on a 2-CPU machine (docs/patterns.md, "Beside OSU's one-sided benchmarks", has the
tables), sync=lock, versus/OSU of the medians over the rounds:
  Open MPI 4.1.4, 15 rounds: latency and atomics 0.94-1.06; put bandwidth 0.92, 1.17 and
    3.13 at 8 B, 4 KiB and 1 MiB.
  MPICH 4.0.2 (ch4:ucx), 9 rounds (--rounds 9 --cases put_lat,get_lat,fop,cas): put latency
    1.02, 1.00, 0.97 and get latency 0.98, 0.98, 1.00 at 8 B, 4 KiB, 1 MiB,
    fetch-and-add 0.98, compare-and-swap 1.02; 5 rounds of put bandwidth: 1.03, 1.06, 1.81.
  The 1 MiB bandwidth gap is OSU's W distinct slots (below): over MPICH a copy of osu_put_bw
  putting all W into slot 0 measured 10761 MB/s, versus 10449, the unchanged OSU 7830.

What is timed, per iteration (OSU) and per sample unit (versus), with -s flush <-> sync=lock:
  put, get latency   OSU: MPI_Put (MPI_Get) + MPI_Win_flush inside one MPI_Win_lock of the
                     target; versus put/get latency: the same two calls (the module's wait
                     flushes, the epoch's end then has nothing left to flush) inside one
                     MPI_Win_lock_all taken when the window is made.
  put, get bandwidth OSU: W operations + one MPI_Win_flush (-W, 64 by default); versus
                     --variant bandwidth --window W: the same.
  fetch-and-op       OSU osu_fop_latency: MPI_Fetch_and_op(MPI_SUM) + flush, on an MPI_INT
                     (-T MPI_INT; MPI_CHAR by default); versus atomic fadd: on an MPI_UINT64_T.
  compare-and-swap   osu_cas_latency (MPI_INT) <-> atomic cswap (MPI_UINT64_T).
  Both create the window with MPI_Win_create over their own buffer (OSU -w create).
  put bandwidth: OSU's W operations go to W different slots (a window of W x size bytes on
  each side), versus's all to offset 0 of one buffer: at 1 MiB, W = 64, OSU streams 64 MiB
  through memory per window where versus rewrites the same 1 MiB (the cache's).
Statistics: OSU prints the mean over its timed iterations, and with -z (used here) the
median of the single iterations (P50; for bandwidth the P50 of the windows' bandwidths);
versus records samples, each the mean of a batch of units when a unit is short.  Both are
compared: versus's median against OSU's P50 ("ratio") and versus's mean against OSU's mean
("mean ratio").  On a loaded machine the means carry the scheduler's time slices (a 4 ms
preemption in 20,000 iterations of 1 us adds 20 %); the medians do not.
With --sync fence or pscw, OSU's bandwidth loops are versus's: per window, the origin
fences (starts) before and after (completes) W operations and the target fences twice
(posts and waits).  OSU's fence and pscw *latency* loops are not versus's: OSU puts from
0 to 1 and back in one iteration (three fences per iteration; start/complete then
post/wait on each side) and halves it, versus times one direction (two fences; start/
complete against post/wait); the ratio there compares two different loops.

usage: bench/osu_onesided.py --osu-dir DIR [--mpi openmpi|mpich] [--rounds N] [--sync lock,fence,pscw]
                             [--cases put_lat,get_lat,put_bw,get_bw,fop,cas] [--versus PATH]
  DIR holds the built osu_put_latency, osu_get_latency, osu_put_bw, osu_get_bw,
  osu_fop_latency and osu_cas_latency (c/mpi/one-sided of an OSU build).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

MIB = 1 << 20
LAT_SIZES = [8, 4096, MIB]
BW_SIZES = [8, 4096, MIB]
WINDOW = 64

# case: (OSU program, versus pattern, variant, kind, sizes)
CASES = {
    "put_lat": ("osu_put_latency", "put", "latency", "lat", LAT_SIZES),
    "get_lat": ("osu_get_latency", "get", "latency", "lat", LAT_SIZES),
    "put_bw": ("osu_put_bw", "put", "bandwidth", "bw", BW_SIZES),
    "get_bw": ("osu_get_bw", "get", "bandwidth", "bw", BW_SIZES),
    "fop": ("osu_fop_latency", "atomic", "fadd", "amo", [8]),
    "cas": ("osu_cas_latency", "atomic", "cswap", "amo", [8]),
}
OSU_SYNC = {"lock": "flush", "fence": "fence", "pscw": "pscw"}


# --mpi: the launcher (two ranks, one per core), versus's module, and the library an OSU
# program built with that MPI's mpicc names in its dynamic section
MPIS = {
    "openmpi": (["mpirun.openmpi", "-np", "2", "--bind-to", "core", "--map-by", "core"], "openmpi",
                b"libmpi.so", "Open MPI's mpicc (mpicc.openmpi)", "openmpi-bin"),
    "mpich": (["mpiexec.mpich", "-n", "2", "-bind-to", "core"], "mpich",
              b"libmpich.so", "MPICH's mpicc (mpicc.mpich)", "mpich"),
}
MPI = "openmpi"


def mpirun():
    cmd = list(MPIS[MPI][0])
    if MPI == "openmpi" and os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    return cmd


def linked_mpi(path):
    """Which MPI library the program at path is linked with (by the name in its dynamic
    section), or None when neither name is in it."""
    with open(path, "rb") as f:
        data = f.read()
    for name, spec in MPIS.items():  # "libmpich.so" does not contain "libmpi.so"
        if spec[2] in data:
            return name
    return None


def iterations(kind, size):
    """(timed, warm-up) iterations: about the same time per launch for both tools."""
    if kind == "bw":
        return (100, 10) if size >= MIB else (2000, 100)
    return (500, 50) if size >= MIB else (20000, 500)


def run(cmd, timeout=300):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        sys.exit(f"no end after {timeout} s (killed): {' '.join(cmd)}\n{err[-2000:]}")
    if p.returncode:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-2000:]}")
    return p.stdout


def osu(osu_dir, case, sync, size):
    prog, _, _, kind, _ = CASES[case]
    n, skip = iterations(kind, size)
    cmd = mpirun() + [os.path.join(osu_dir, prog), "-w", "create", "-s", OSU_SYNC[sync], "-i", str(n), "-x", str(skip)]
    if kind == "amo":
        cmd += ["-T", "MPI_INT"]
    else:
        cmd += ["-m", f"{size}:{size}"]
    if kind == "bw":
        cmd += ["-W", str(WINDOW)]
    cmd += ["-z"]  # P50, P90, P99 of the single iterations after the mean
    rows = [ln.split() for ln in run(cmd).splitlines() if ln.strip() and not ln.startswith("#")]
    rows = [r for r in rows if len(r) >= 3 and r[0].isdigit()]
    if not rows:
        sys.exit(f"no result line from {' '.join(cmd)}")
    return (float(rows[-1][2]), float(rows[-1][1])), " ".join(cmd)  # (P50, mean): us, or MB/s


def versus(runner, case, sync, size, tmp, rnd):
    _, pattern, variant, kind, _ = CASES[case]
    n, skip = iterations(kind, size)
    if kind == "bw":  # versus's sample is one window of W operations
        n, skip = max(n // 4, 20), max(skip // 4, 2)
    else:
        n, skip = max(n // 10, 50), skip
    out = os.path.join(tmp, f"{case}-{sync}-{size}-{rnd}.jsonl")
    cmd = mpirun() + [runner, "--transport", MPIS[MPI][1], "--transport-opt", f"sync={sync}", "--pattern", pattern,
                      "--variant", variant, "--sizes", str(size), "--iterations", str(n), "--iterations-large",
                      str(n), "--warmup", str(skip), "--warmup-large", str(skip), "--quiet", "--out", out]
    if kind == "bw":
        cmd += ["--window", str(WINDOW)]
    run(cmd)
    with open(out, encoding="utf-8") as f:
        recs = [json.loads(x) for x in f if x.strip()]
    run_rec = next(r for r in recs if r["record"] == "run")
    if run_rec["transport"].get("name", MPIS[MPI][1]) != MPIS[MPI][1]:
        sys.exit(f"versus ran transport {run_rec['transport'].get('name')}, not {MPIS[MPI][1]}")
    if run_rec["transport"]["attrs"].get("rma_sync") != sync:
        sys.exit(f"versus ran sync={run_rec['transport']['attrs'].get('rma_sync')}, not {sync}")
    s = next(r for r in recs if r["record"] == "size")
    # the median of the samples (versus's figure) and their mean (OSU's statistic: all the
    # timed time over all the iterations; every sample holds the same number of units)
    med, mean = statistics.median(s["samples_ns"]), statistics.fmean(s["samples_ns"])
    if kind == "bw":  # bytes/ns -> MB/s (1e6 B)
        return (WINDOW * size / med * 1e3, WINDOW * size / mean * 1e3), " ".join(cmd)
    return (med / 1e3, mean / 1e3), " ".join(cmd)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--osu-dir", required=True)
    ap.add_argument("--mpi", choices=sorted(MPIS), default="openmpi",
                    help="the MPI under both tools (default openmpi); OSU must be built with its mpicc")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sync", default="lock")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--versus", "--runner", dest="runner",
                    default=os.environ.get("VERSUS_RUN") or shutil.which("versus-run") or "build/core/versus-run")
    ap.add_argument("--show-commands", action="store_true", help="print the first round's commands")
    a = ap.parse_args()
    syncs = [s for s in a.sync.split(",") if s]
    cases = [c for c in a.cases.split(",") if c]
    bad = [s for s in syncs if s not in OSU_SYNC] + [c for c in cases if c not in CASES]
    if bad or a.rounds < 1:
        ap.print_usage(sys.stderr)
        sys.stderr.write(f"osu_onesided.py: unknown {', '.join(bad) or 'rounds'} (sync: lock, fence, pscw; "
                         f"cases: {', '.join(CASES)})\n")
        sys.exit(2)
    global MPI
    MPI = a.mpi
    launcher, _, _, mpicc, pkg = MPIS[MPI]
    missing = [CASES[c][0] for c in cases if not os.access(os.path.join(a.osu_dir, CASES[c][0]), os.X_OK)]
    if missing:
        sys.stderr.write(f"osu_onesided.py: not in {a.osu_dir}: {', '.join(missing)} (build OSU's c/mpi/one-sided "
                         f"with {mpicc})\n")
        sys.exit(2)
    # a program of the other MPI under this launcher runs as two one-rank jobs
    other = sorted({(CASES[c][0], m) for c in cases
                    for m in [linked_mpi(os.path.join(a.osu_dir, CASES[c][0]))] if m and m != MPI})
    if other:
        sys.stderr.write(f"osu_onesided.py: {', '.join(p for p, _ in other)} in {a.osu_dir} linked with "
                         f"{other[0][1]}, not {MPI} (build OSU with {mpicc}, or give --mpi {other[0][1]})\n")
        sys.exit(2)
    if not shutil.which(launcher[0]):
        sys.stderr.write(f"osu_onesided.py: {launcher[0]} not found (apt install {pkg})\n")
        sys.exit(2)
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    tmp = tempfile.mkdtemp(prefix="versus-osu-")
    keys = [(c, s, z) for s in syncs for c in cases for z in CASES[c][4]]
    got = {k: ([], [], [], []) for k in keys}  # versus median, versus mean, OSU P50, OSU mean
    print(f"# {MPI}: {' '.join(mpirun())} ...", flush=True)
    for i in range(a.rounds):
        print(f"# round {i + 1}: load {os.getloadavg()[0]:.2f}", flush=True)
        for k in keys:
            c, s, z = k
            first_versus = i % 2 == 0
            for tool in (("versus", "osu") if first_versus else ("osu", "versus")):
                if tool == "versus":
                    (v, m), cmd = versus(a.runner, c, s, z, tmp, i)
                    got[k][0].append(v)
                    got[k][1].append(m)
                else:
                    (v, m), cmd = osu(a.osu_dir, c, s, z)
                    got[k][2].append(v)
                    got[k][3].append(m)
                if a.show_commands and i == 0:
                    print(f"#   $ {cmd}")
            unit = "MB/s" if CASES[c][3] == "bw" else "us"
            print(f"  {c:8} {s:5} {z:>8} B  versus {got[k][0][-1]:10.3f} (mean {got[k][1][-1]:10.3f})  "
                  f"OSU {got[k][2][-1]:10.3f} (mean {got[k][3][-1]:10.3f}) {unit}", flush=True)
    print("\n# medians over the rounds.  versus: the median of its samples, OSU: the P50 of its iterations;"
          "\n# ratio = versus / OSU (of the medians over rounds), r.med = the median of the rounds' own ratios;"
          "\n# mean ratio = versus's mean / OSU's mean (latency: > 1 means versus measured"
          "\n# longer; bandwidth: > 1 means versus measured more)")
    print(f"{'case':8} {'sync':5} {'size [B]':>9} {'versus':>10} {'OSU':>10} {'unit':>5} {'ratio':>6} {'r.med':>6}  "
          f"{'vs mean':>10} {'OSU mean':>10} {'m.ratio':>7}  {'ratio per round':>15}")
    for k in keys:
        c, s, z = k
        v, m, o, om = got[k]
        mv, mm, mo, mom = (statistics.median(x) for x in (v, m, o, om))
        unit = "MB/s" if CASES[c][3] == "bw" else "us"
        ratios = [x / y for x, y in zip(v, o)]  # each round's pair, run back to back
        per = " ".join(f"{r:.2f}" for r in ratios)
        print(f"{c:8} {s:5} {z:>9} {mv:10.3f} {mo:10.3f} {unit:>5} {mv / mo:6.3f} {statistics.median(ratios):6.3f}  "
              f"{mm:10.3f} {mom:10.3f} {mm / mom:7.3f}  {per}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
