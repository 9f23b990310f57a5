#!/usr/bin/env python3
"""The fault matrix: for each transport, a rank killed (SIGKILL) or stopped (SIGSTOP) in the middle of a
run, rank 0 or rank 1: how long the run takes to end after the fault, its exit status, the end record's
status and how many sizes were kept on disk.

Each run measures 8 B, 1 KiB and 64 KiB with many iterations under its own launcher (the MPI transports
under mpirun / mpiexec, the others under --launch local) with --timeout T; the fault comes once the first
size is on disk.  A stopped rank is not dead, so nobody can tell it from a slow one: the others end at
the timeout.  A killed one is reported by the local launcher at once.

    .venv/bin/python bench/fault_matrix.py [--transports shm,tcp,ucx,ofi,openmpi,mpich] [--timeout 5]
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def command(t, out, timeout, runner):
    args = [runner, "-t", t, "-s", "8,1K,64K", "-i", "200000", "--iterations-large", "200000",
            "-T", str(timeout), "-O", out, "-q"]
    if t == "openmpi":
        return ["mpirun.openmpi", "--oversubscribe", "-np", "2"] + args
    if t == "mpich":
        return ["mpiexec.mpich", "-n", "2"] + args
    return args + ["--launch", "local", "-n", "2"]


def ranks_of(launcher_pid, runner):
    """The pids of the two ranks (processes running the runner, below the launcher), rank order."""
    out = subprocess.run(["ps", "-eo", "pid,ppid,args"], capture_output=True, text=True).stdout
    procs = [ln.split(None, 2) for ln in out.splitlines()[1:]]
    kids = {}
    for pid, ppid, args in procs:
        kids.setdefault(int(ppid), []).append((int(pid), args))
    found, todo = [], [launcher_pid]
    while todo:
        p = todo.pop()
        for c, args in kids.get(p, []):
            if runner in args and "mpirun" not in args and "mpiexec" not in args:
                found.append(c)
            todo.append(c)
    return sorted(found)


def one(t, sig, victim, timeout, runner, d):
    out = os.path.join(d, f"{t}-{sig}-{victim}.jsonl")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.Popen(command(t, out, timeout, runner), env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60:
        if os.path.exists(out) and '"record":"size"' in open(out, encoding="utf-8").read():
            break
        time.sleep(0.05)
    pids = ranks_of(p.pid, os.path.basename(runner))
    if len(pids) < 2:
        p.kill()
        return None
    # rank order: rank 0 writes the file; the lowest pid is not always rank 0 under MPI
    victim_pid = pids[victim] if len(pids) > victim else pids[-1]
    fault = time.monotonic()
    os.kill(victim_pid, signal.SIGKILL if sig == "kill" else signal.SIGSTOP)
    try:
        _, err = p.communicate(timeout=timeout + 60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        _, err = p.communicate()
    took = time.monotonic() - fault
    if sig == "stop":
        try:
            os.kill(victim_pid, signal.SIGCONT)
            os.kill(victim_pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    recs = [json.loads(ln) for ln in open(out, encoding="utf-8") if ln.strip()]
    end = next((r for r in recs if r["record"] == "end"), None)
    sizes = sum(1 for r in recs if r["record"] == "size")
    return took, p.returncode, end["status"] if end else "(none)", sizes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--transports", default="shm,tcp,ucx,ofi,openmpi,mpich")
    ap.add_argument("--timeout", type=float, default=5)
    ap.add_argument("--runner", default=os.path.join(ROOT, "build", "core", "versus-run"))
    a = ap.parse_args()
    os.environ.setdefault("VERSUS_MODULE_PATH", os.path.join(ROOT, "build", "transports"))
    print(f"# fault matrix, --timeout {a.timeout:g} s; time from the fault to the end of the run")
    print(f"{'transport':9} {'fault':5} {'rank':>4} {'ends after':>11} {'exit':>5} {'end status':>12} {'sizes kept':>11}")
    with tempfile.TemporaryDirectory() as d:
        for t in a.transports.split(","):
            for sig in ("kill", "stop"):
                for victim in (0, 1):
                    r = one(t, sig, victim, a.timeout, a.runner, d)
                    if r is None:
                        print(f"{t:9} {sig:5} {victim:>4}  (ranks not found)")
                        continue
                    took, rc, status, sizes = r
                    print(f"{t:9} {sig:5} {victim:>4} {took:>9.2f} s {rc:>5} {status:>12} {sizes:>11}")


if __name__ == "__main__":
    sys.exit(main())
