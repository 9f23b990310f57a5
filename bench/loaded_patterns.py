#!/usr/bin/env python3
"""Every pattern over every transport on a loaded host: does each launch finish,
and how much slower than on the same host unloaded?

For each transport and pattern: one launch with the host as it is (the
reference time), then LAUNCHES launches with HOGS CPU-bound processes pinned on
the very CPUs the two ranks are bound to (--cpus 0,1), so that each rank shares
its CPU with a process that never yields.  The sizes cross every library's
eager/rendezvous switch (8 B to 64 KiB, powers of two, as a user's first sweep
would).  A launch fails when it exits non-zero or does not end within
--deadline seconds (a deadlock: versus-run's own --timeout is longer than the
deadline, so a stuck run is seen here, not resolved by the watchdog).

Prints one line per transport and pattern: launches, failures, the unloaded
time and the slowest loaded launch against it; --json writes them too.

usage: bench/loaded_patterns.py [--versus PATH] [--launches N] [--hogs N] [--full]
          [--transports a,b] [--patterns a,b] [--deadline S] [--json FILE]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

LOCAL = ["--launch", "local", "-n", "2"]
TRANSPORTS = {
    "openmpi": (["mpirun.openmpi", "--oversubscribe", "--bind-to", "none", "-np", "2"], ["--transport", "openmpi"]),
    "mpich": (["mpiexec.mpich", "-n", "2"], ["--transport", "mpich"]),
    "ucx": ([], ["--transport", "ucx"] + LOCAL),
    "ofi": ([], ["--transport", "ofi"] + LOCAL),
    "shm": ([], ["--transport", "shm"] + LOCAL),
    "tcp": ([], ["--transport", "tcp"] + LOCAL),
}
PATTERNS = ["pingpong", "overhead", "stream", "bistream", "doublebuffer"]
SIZES = "8:64K"
# few samples per size: what matters is how often the ranks leave the transport
# (after every size), not how precise a size is
MEASURE = ["--sizes", SIZES, "--iterations", "100", "--iterations-large", "50",
           "--warmup", "10", "--warmup-large", "5"]


HOG_WARM_S = 0.15
HOG_WAIT_S = 5.0


def cpu_s(pid, tick):
    """CPU seconds a process has used (user + system, /proc/PID/stat), 0 when it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick
    except (OSError, ValueError, IndexError):
        return 0.0


class Hogs:
    """n CPU-bound processes, one per CPU of cpus in turn, stopped on exit (also on failure)."""

    def __init__(self, n, cpus=(0, 1)):
        self.n, self.cpus, self.procs = n, cpus, []

    def __enter__(self):
        taskset = shutil.which("taskset")
        for i in range(self.n):
            cmd = [sys.executable, "-c", "while True: pass"]
            if taskset:
                cmd = [taskset, "-c", str(self.cpus[i % len(self.cpus)])] + cmd
            self.procs.append(subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL))
        # a launch begun before the hogs spin meets a quiet host: one CI run's first loaded launch
        # recorded its ranks waiting 0.1 % of the time where the next, beside the same hogs, waited
        # 29 %.  Wait until each has used HOG_WARM_S of CPU (at most HOG_WAIT_S), as /proc says.
        tick = os.sysconf("SC_CLK_TCK")
        deadline = time.monotonic() + HOG_WAIT_S
        while time.monotonic() < deadline and not all(cpu_s(p.pid, tick) >= HOG_WARM_S for p in self.procs):
            time.sleep(0.02)
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()
        self.procs = []
        return False


def launch(versus, transport, pattern, deadline, outdir, tag, measure=MEASURE, env=None, how=None):
    """One launch (env: variables added): (seconds, None) or (seconds, why it failed).  how:
    (launcher argv, versus-run arguments) when the caller has them from the module's own
    declaration (the test suite does), else this script's table."""
    launcher, base = how if how is not None else TRANSPORTS[transport]
    out = os.path.join(outdir, f"{transport}-{pattern}-{tag}.jsonl")
    cmd = launcher + [versus] + base + ["--pattern", pattern] + list(measure) + [
        "--cpus", "0,1", "--timeout", str(int(deadline) + 30), "--out", out, "--quiet"]
    # (mpirun passes OMPI_MCA_* on to the ranks by itself)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **(env or {}))
    t0 = time.monotonic()
    # a new session, so that a stuck launch is killed with all its ranks
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        _, err = p.communicate(timeout=deadline)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        p.communicate()
        return time.monotonic() - t0, f"did not end within {deadline:g} s (stuck): {' '.join(cmd)}"
    took = time.monotonic() - t0
    if p.returncode != 0:
        return took, f"exit {p.returncode}: {err.strip()[-400:]}"
    return took, None


def available(transport, versus):
    launcher, _ = TRANSPORTS[transport]
    if launcher and not shutil.which(launcher[0]):
        return False
    p = subprocess.run([versus, "--list"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    return any(ln.split()[:2] == [transport, "yes"] for ln in p.stdout.splitlines())


def measure(versus, transports, patterns, launches, hogs, deadline, log=print, measure_args=MEASURE):
    """Rows: transport, pattern, launches, failures, unloaded s, slowest loaded s, failures' reasons."""
    outdir = tempfile.mkdtemp(prefix="versus-loaded-")
    rows = []
    for tr in transports:
        for pat in patterns:
            ref, why = launch(versus, tr, pat, deadline, outdir, "unloaded", measure_args)
            row = {"transport": tr, "pattern": pat, "launches": launches, "failures": 0, "unloaded_s": ref,
                   "loaded_s": [], "reasons": []}
            if why:
                row["reasons"].append("unloaded: " + why)
            with Hogs(hogs):
                for i in range(launches):
                    took, why = launch(versus, tr, pat, deadline, outdir, f"loaded{i}", measure_args)
                    row["loaded_s"].append(took)
                    if why:
                        row["failures"] += 1
                        row["reasons"].append(why)
            slowest = max(row["loaded_s"]) if row["loaded_s"] else float("nan")
            log(f"{tr:8} {pat:12} launches {launches:3}  failed {row['failures']:3}  unloaded {ref:6.2f} s  "
                f"slowest loaded {slowest:6.2f} s (x{slowest / ref:.1f})")
            for w in row["reasons"]:
                log("    " + w)
            rows.append(row)
    shutil.rmtree(outdir, ignore_errors=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--versus", default=shutil.which("versus-run") or "versus-run", help="versus-run to test")
    ap.add_argument("--launches", type=int, default=12, help="loaded launches per transport and pattern (12)")
    ap.add_argument("--hogs", type=int, default=2, help="CPU-bound processes on the ranks' CPUs (2)")
    ap.add_argument("--transports", default=",".join(TRANSPORTS), help="comma-separated (all)")
    ap.add_argument("--patterns", default=",".join(PATTERNS), help="comma-separated (all)")
    ap.add_argument("--deadline", type=float, default=60, help="seconds before a launch counts as stuck (60)")
    ap.add_argument("--full", action="store_true",
                    help="versus-run's default repetitions per size (about 5 s a launch) instead of a few")
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args()
    trs = [t for t in a.transports.split(",") if t]
    bad = [t for t in trs if t not in TRANSPORTS]
    if bad:
        ap.error(f"unknown transport(s) {', '.join(bad)}; known: {', '.join(TRANSPORTS)}")
    pats = [p for p in a.patterns.split(",") if p]
    if any(p not in PATTERNS for p in pats):
        ap.error(f"patterns are among {', '.join(PATTERNS)}")
    missing = [t for t in trs if not available(t, a.versus)]
    for t in missing:
        print(f"# {t}: not built or its launcher is missing; left out")
    print(f"# {a.versus}: {a.launches} loaded launches each, {a.hogs} CPU-bound processes on CPUs 0,1; "
          f"sizes {SIZES}; load average now {os.getloadavg()[0]:.2f}")
    margs = ["--sizes", SIZES] if a.full else MEASURE
    rows = measure(a.versus, [t for t in trs if t not in missing], pats, a.launches, a.hogs, a.deadline,
                   measure_args=margs)
    total = sum(r["launches"] for r in rows)
    failed = sum(r["failures"] for r in rows)
    print(f"# all: {failed} of {total} loaded launches failed")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
