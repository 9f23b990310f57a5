#!/usr/bin/env python3
"""The shm floor against the hardware's own limits, and against the other transports.

The report divides every transport by the shm transport ("one-way latency / shm floor"), so this bench
measures how far the shm transport itself is from what the two cores can do, on the same two CPUs (--cpus,
default 0,1), interleaved round by round (the order rotates every round: this kind of machine moves its
virtual CPUs, and a figure taken earlier is not comparable):

  cacheline : bench/cacheline_pingpong.c, two processes sharing one mapping, one 64 B line per
              direction (a sequence word stored with release, spun on with acquire loads), no payload:
              the transfer of a line from one core's cache to the other's and back, nothing else.  No
              software that moves a message through memory is faster, so it is the floor of the 8 B
              one-way latency.
  memcpy    : bench/memcpy_bw.c, one core copying 4 MiB into another 4 MiB buffer (8 MiB working set),
              median GB/s: the floor of one copy of the message, which a ping-pong must make per one-way
              trip.
  memcpy16  : the same going round two source/destination pairs (16 MiB working set), for the record.
  xcopy     : bench/xcore_copy.c, the bare large-message ping-pong: two processes sharing the buffers,
              each one-way trip one memcpy by the receiving process out of the sender's buffer and a
              flag handing the turn over, in both buffer modes (xcopy-shared: the receiver reads what the
              other core just wrote; xcopy-separate: a send buffer nobody writes after the first fill).
              What moving the bytes across cores costs with one core copying, nothing else.
  shm       : versus-run --launch local --transport shm, 8 B one-way latency (median round trip / 2)
              and 4 MiB bandwidth (4 MiB / (median round trip / 2)), separate send and receive buffers
  shm-shared: the same at 4 MiB with --buffers shared (one buffer per rank, NetPIPE's default)
  before    : with --baseline PATH, the same two shm runs of another versus-run (an older build),
              so that a change is measured before and after in the same rounds
  others    : the same versus-run measurement over openmpi (mpirun), mpich (mpiexec), ucx and ofi
              (provider=shm) where they are built and runnable (--only selects)

Targets: shm 8 B one-way within 1.2x the cache line; shm 4 MiB at least 0.8x memcpy for both buffer modes.
--large BYTES measures another size than 4 MiB (e.g. 256K, where a 512 KiB working set stays in the caches
and memcpy runs 3x faster than the cross-core copy with shared buffers).

Working sets.  memcpy touches 8 MiB on one core.  A ping-pong with --buffers shared touches 8 MiB in all,
every line of it crossing cores.  With separate buffers each rank's copy reads the partner's send buffer
(written once before the run, clean ever after) and writes its own receive buffer (which stays in its own
core's cache): 8 MiB per copy again, each core with its own L2, so memcpy (8 MiB) is its yardstick too;
memcpy16 (one core going round 16 MiB) is not, and a ping-pong can beat it.  --count-copies proves that
every byte moves: it runs each buffer mode once more under bench/copy_count.c (an LD_PRELOAD memcpy
counter) and prints the 4 MiB copies each rank made against the round trips it took part in.

Ratios are taken within a round (paired), then the median over rounds is reported.

Usage: bench/shm_floor.py [--rounds N] [--versus PATH] [--baseline PATH] [--cpus 0,1] [--large BYTES]
                          [--only shm,openmpi,...] [--count-copies]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from benchlib import loadavg, median_interval_words

MIB = 1 << 20
BIG = 4 * MIB
HERE = os.path.dirname(os.path.abspath(__file__))
SIZES_ARGS = ["--iterations", "20000", "--iterations-large", "100", "--warmup", "200", "--warmup-large", "10",
              "--timeout", "120", "--quiet", "--overwrite"]


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


def records(path):
    with open(path) as f:
        return [json.loads(x) for x in f if x.strip()]


def run_versus(cmd, out, sizes, env=None):
    """{bytes: median one-way ns} from versus's JSONL."""
    p = subprocess.run(cmd + ["--sizes", ",".join(str(s) for s in sizes), "--out", out] + SIZES_ARGS,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"exit {p.returncode}: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
    return {r["bytes"]: statistics.median(r["samples_ns"]) / 2 for r in records(out) if r["record"] == "size"}


def build(tmp):
    cc = os.environ.get("CC", "cc")
    exes = {}
    for name, extra in (("memcpy_bw", []), ("cacheline_pingpong", []), ("xcore_copy", [])):
        exes[name] = os.path.join(tmp, name)
        subprocess.run([cc, "-O2", "-o", exes[name], os.path.join(HERE, name + ".c")] + extra, check=True)
    exes["copy_count"] = os.path.join(tmp, "copy_count.so")
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", exes["copy_count"], os.path.join(HERE, "copy_count.c"),
                    "-ldl"], check=True)
    return exes


def run_memcpy(exe, cpu, pairs=1):
    p = subprocess.run(["taskset", "-c", cpu, exe, str(BIG), "300", str(pairs)], check=True,
                       stdout=subprocess.PIPE, text=True, timeout=120)
    fields = dict(kv.split("=") for kv in p.stdout.split())
    return float(fields["median_GBps"])


def run_xcopy(exe, cpus, mode):
    c0, c1 = cpus.split(",")[:2]
    p = subprocess.run([exe, str(BIG), c0, c1, "200", mode], check=True, stdout=subprocess.PIPE, text=True,
                       timeout=120)
    fields = dict(kv.split("=") for kv in p.stdout.split())
    return float(fields["median_GBps"])


def size_bytes(text):
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.strip().upper().rstrip("B").rstrip("I")
    num, unit = (t[:-1], t[-1]) if t and t[-1] in units else (t, "")
    try:
        v = int(num) * units[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (give e.g. 4M, 256K, 65536)")
    if v < 64 * 1024:
        raise argparse.ArgumentTypeError(f"--large {text}: give at least 64K (a large message)")
    return v


def run_cacheline(exe, cpus):
    c0, c1 = cpus.split(",")[:2]
    p = subprocess.run([exe, c0, c1, "20000", "16", "0"], check=True, stdout=subprocess.PIPE, text=True,
                       timeout=120)
    fields = dict(kv.split("=") for kv in p.stdout.split())
    return float(fields["one_way_median_ns"])


def paired(series, ref):
    """Median of the per-round ratios and the ratios themselves (rounds where both were measured)."""
    per = [s / r for s, r in zip(series, ref) if s is not None and r is not None]
    return (statistics.median(per) if per else float("nan")), per


def count_copies(cmd, exe, tmp, shared):
    """Copies of >= 1 MiB per rank in one 4 MiB ping-pong, and the round trips each rank took part in."""
    out = os.path.join(tmp, "count.txt")
    if os.path.exists(out):
        os.unlink(out)
    env = dict(os.environ, LD_PRELOAD=exe, COPY_COUNT_OUT=out, COPY_COUNT_MIN=str(MIB if BIG >= MIB else 65536))
    jl = os.path.join(tmp, "count.jsonl")
    run_versus(cmd + (["--buffers", "shared"] if shared else []), jl, [BIG], env=env)
    size = next(r for r in records(jl) if r["record"] == "size")
    trips = size["warmup"] + size["iterations"] * size["batch"]
    with open(out) as f:
        counts = [dict(kv.split("=") for kv in line.split()) for line in f if line.strip()]
    ranks = [c for c in counts if int(c["calls"]) > 0]
    return trips, [(int(c["calls"]), int(c["bytes"])) for c in ranks]


def main():
    global BIG
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--versus", "--runner", dest="runner", default=os.environ.get("VERSUS_RUN")
                    or shutil.which("versus-run") or os.path.join(HERE, "..", "build", "core", "versus-run"))
    ap.add_argument("--baseline", metavar="PATH", help="another versus-run measured as 'before' in the same rounds")
    ap.add_argument("--cpus", default="0,1")
    ap.add_argument("--only", default="shm,openmpi,mpich,ucx,ofi",
                    help="comma-separated transports (shm is always measured)")
    ap.add_argument("--large", type=size_bytes, default=BIG, metavar="BYTES",
                    help="the large message size (default 4M)")
    ap.add_argument("--count-copies", action="store_true",
                    help="afterwards, count each rank's 4 MiB copies in one run of each buffer mode")
    a = ap.parse_args()
    BIG = a.large
    for path in [a.runner] + ([a.baseline] if a.baseline else []):
        if not os.access(path, os.X_OK):
            print(f"shm_floor: versus-run not found at {path} (give --versus / --baseline)", file=sys.stderr)
            return 2
    if a.rounds < 1 or len(a.cpus.split(",")) < 2:
        print("shm_floor: --rounds must be at least 1 and --cpus name two CPUs", file=sys.stderr)
        return 2
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    others = [n for n in a.only.split(",") if n and n != "shm"]
    tmp = tempfile.mkdtemp(prefix="versus-shm-floor-")
    exes = build(tmp)
    cmds = {"shm": versus_cmd("shm", a.runner, a.cpus)}
    if a.baseline:
        cmds["before"] = versus_cmd("shm", a.baseline, a.cpus)
    for n in others:
        cmds[n] = versus_cmd(n, a.runner, a.cpus)
    skipped = {n: "launcher not found" for n, c in cmds.items() if c is None}
    lat = {n: [] for n in cmds}      # 8 B one-way ns per round (None: failed)
    bw = {n: [] for n in cmds}       # 4 MiB GB/s, separate buffers
    bw_shared = {n: [] for n in ("shm", "before")}
    ref = {"cacheline": [], "memcpy": [], "memcpy16": [], "xcopy-shared": [], "xcopy-separate": []}
    tools = ["cacheline", "memcpy", "memcpy16", "xcopy-shared", "xcopy-separate", "shm", "shm-shared"]
    if a.baseline:
        tools += ["before", "before-shared"]
    tools += others
    cpu0 = a.cpus.split(",")[0]
    print(f"load average before: {loadavg()} (on an idle host it is near 0)", flush=True)
    for rnd in range(a.rounds):
        order = tools[rnd % len(tools):] + tools[:rnd % len(tools)]
        got = {}
        for tool in order:
            if tool in skipped:
                continue
            if tool == "cacheline":
                got[tool] = run_cacheline(exes["cacheline_pingpong"], a.cpus)
            elif tool == "memcpy":
                got[tool] = run_memcpy(exes["memcpy_bw"], cpu0)
            elif tool == "memcpy16":
                got[tool] = run_memcpy(exes["memcpy_bw"], cpu0, pairs=2)
            elif tool.startswith("xcopy-"):
                got[tool] = run_xcopy(exes["xcore_copy"], a.cpus, tool[len("xcopy-"):])
            elif tool.endswith("-shared"):
                base = "shm" if tool == "shm-shared" else "before"
                med = run_versus(cmds[base] + ["--buffers", "shared"], os.path.join(tmp, f"{tool}.jsonl"), [BIG])
                got[tool] = BIG / med[BIG]
            else:
                try:
                    med = run_versus(cmds[tool], os.path.join(tmp, f"{tool}.jsonl"), [8, BIG])
                except (RuntimeError, subprocess.TimeoutExpired, KeyError) as e:
                    if tool in ("shm", "before"):
                        print(f"shm_floor: {tool} failed: {e}", file=sys.stderr)
                        return 1
                    skipped[tool] = str(e)[:120]
                    continue
                got[tool] = (med[8], BIG / med[BIG])
        for k in ref:
            ref[k].append(got.get(k))
        for n in cmds:
            v = got.get(n)
            lat[n].append(v[0] if v else None)
            bw[n].append(v[1] if v else None)
        for n in bw_shared:
            bw_shared[n].append(got.get(n + "-shared"))
        words = [f"cacheline {got['cacheline']:.0f} ns", f"memcpy {got['memcpy']:.2f} GB/s",
                 f"memcpy16 {got['memcpy16']:.2f} GB/s", f"xcopy-shared {got['xcopy-shared']:.2f} GB/s",
                 f"xcopy-separate {got['xcopy-separate']:.2f} GB/s"]
        words += [f"{n} {got[n][0]:.0f} ns {got[n][1]:.2f} GB/s" for n in cmds if n in got]
        words += [f"{n}-shared {got[n + '-shared']:.2f} GB/s" for n in bw_shared if n + "-shared" in got]
        print(f"round {rnd + 1}: " + " | ".join(words), flush=True)

    def med(xs):
        xs = [x for x in xs if x is not None]
        return statistics.median(xs) if xs else float("nan")

    print()
    print("medians over rounds; x/ref is the median of the per-round ratios (same round, so same phase")
    print("of the host as far as interleaving can make it), per-round ratios in brackets")
    big = f"{BIG // MIB} MiB" if BIG % MIB == 0 else f"{BIG // 1024} KiB"
    print(f"{'':12} {'8 B one-way [ns]':>17} {big + ' [GB/s]':>13}")
    print(f"{'cacheline':12} {med(ref['cacheline']):>17.1f} {'':>13}  (one line per direction, no payload)")
    print(f"{'memcpy':12} {'':>17} {med(ref['memcpy']):>13.2f}  (one core, 2 x {big} working set)")
    print(f"{'memcpy16':12} {'':>17} {med(ref['memcpy16']):>13.2f}  (one core, 4 x {big} working set)")
    print(f"{'xcopy-shared':12} {'':>17} {med(ref['xcopy-shared']):>13.2f}  (bare cross-core copy ping-pong)")
    print(f"{'xcopy-sep':12} {'':>17} {med(ref['xcopy-separate']):>13.2f}  (the same, separate buffers)")
    for n in cmds:
        if n in skipped and not any(lat[n]):
            print(f"{n:12} skipped: {skipped[n]}")
            continue
        print(f"{n:12} {med(lat[n]):>17.1f} {med(bw[n]):>13.2f}  (separate buffers)")
        if n in bw_shared:
            print(f"{n + '-shared':12} {'':>17} {med(bw_shared[n]):>13.2f}  (--buffers shared)")
    print()
    verdict = {}
    for n in [x for x in ("shm", "before") if x in cmds]:
        label = "shm" if n == "shm" else "shm (baseline)"
        r, per = paired(lat[n], ref["cacheline"])
        verdict[n] = r <= 1.2
        print(f"{label} 8 B one-way / cache line: {r:.3f} [{' '.join(f'{x:.2f}' for x in per)}] "
              f"{median_interval_words(per)} -> {'within' if r <= 1.2 else 'NOT within'} 1.2x")
        for what, series, rname in (("--buffers shared", bw_shared[n], "memcpy"),
                                    ("separate buffers", bw[n], "memcpy"),
                                    ("--buffers shared", bw_shared[n], "xcopy-shared"),
                                    ("separate buffers", bw[n], "xcopy-separate"),
                                    ("separate buffers", bw[n], "memcpy16")):
            r, per = paired(series, ref[rname])
            target = rname == "memcpy"
            tail = (f" -> {'at least' if r >= 0.8 else 'NOT at least'} 0.8x" if target else "")
            print(f"{label} {big} {what} / {rname}: {r:.3f} [{' '.join(f'{x:.2f}' for x in per)}]{tail}")
    for n in others:
        if n in skipped and not any(lat[n]):
            continue
        r, per = paired(lat["shm"], lat[n])
        print(f"shm / {n} 8 B one-way: {r:.3f} [{' '.join(f'{x:.2f}' for x in per)}]")
    if a.count_copies:
        print()
        for shared in (False, True):
            trips, ranks = count_copies(cmds["shm"], exes["copy_count"], tmp, shared)
            mode = "--buffers shared" if shared else "separate buffers"
            each = ", ".join(f"{c} copies, {b / MIB:.1f} MiB" for c, b in ranks)
            print(f"copies of at least {MIB if BIG >= MIB else 65536} B, {big} ping-pong ({mode}): {trips} timed "
                  f"and warm-up round trips (plus 2 untimed per visit of the size); per rank: {each}")
    print(f"load average after: {loadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
