"""Integration tests of launching without MPI: versus-run with a non-MPI
transport under the local launcher, mpirun and mpiexec, a peer that never
arrives, bad launcher environments, and a rank killed in the middle of a run.

Usage: launch_integration.py CASE --transport NAME
  CASE: launcher-local | launcher-mpirun | launcher-mpiexec | no-peer | bad-env | kill | stop | interrupt
  NAME: a module without its own bootstrap, or "auto" (the first such module that was built)
"""
import argparse
import os
import socket
import signal
import subprocess
import sys
import time

import backends
import vstest
from versus import modules as vsmod
from vstest import check, fail, log


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()   # nobody listens there now
    return port


def clean_env(extra=None):
    """The test's environment without any launcher variables, plus extra."""
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("OMPI_COMM_WORLD", "OMPI_MCA_ess", "PMIX_", "PMI_", "SLURM_", "VERSUS_RANK",
                              "VERSUS_SIZE", "VERSUS_JOB", "VERSUS_RENDEZVOUS", "VERSUS_LISTEN_FD",
                              "HYDI_", "MPI_LOCALRANKID"))}
    e.update(extra or {})
    return e


def run_timed(cmd, env, timeout):
    log("$ " + " ".join(cmd))
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout, env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as ex:
        fail(f"did not finish within {timeout} s (hang): {ex.stderr}")
    dt = time.monotonic() - t0
    log(f"rc={p.returncode} in {dt:.2f} s\n--- stdout\n{p.stdout}--- stderr\n{p.stderr}---")
    return p, dt


def case_launcher(args, which):
    tmp = vstest.tmpdir()
    out = os.path.join(tmp, "run.jsonl")
    launcher = None
    if which == "mpirun":
        launcher = [backends.launcher_of_kind("mpirun"), "--allow-run-as-root", "--oversubscribe",
                    "--bind-to", "none", "-np", "2"]
    elif which == "mpiexec":
        launcher = [backends.launcher_of_kind("mpiexec"), "-n", "2"]
    rv = ["--transport", args.transport, "--sizes", "8,1K,64K", "--iterations", "200", "--warmup", "20",
          "--timeout", "20", "--out", out, "--rendezvous-dir", tmp, "--quiet"]
    if which == "local":
        rv = ["--launch", "local", "-n", "2"] + rv
    cmd = (launcher or []) + [vstest.RUNNER] + rv
    p, dt = run_timed(cmd, clean_env(), 90)
    check(p.returncode == 0, f"{which}: versus-run over {args.transport} exits 0 (got {p.returncode})")
    run, sizes, end = vstest.read_jsonl(out)
    got = [s["bytes"] for s in sizes]
    check(got == [8, 1024, 65536], f"size records for 8, 1K, 64K (got {got})")
    # core may lower the count for large messages: each record must be complete by its own count
    check(all(len(s["samples_ns"]) == s["iterations"] >= 1 for s in sizes), "every size record is complete")
    check(end is not None and end.get("status") == "ok", f"end record says ok ({end})")
    lrec = run.get("launcher") or {}
    check(lrec.get("name") == which, f"run record names the launcher '{which}' (got {lrec})")
    check(lrec.get("bootstrap") == "tcp", f"the bootstrap recorded is tcp (got {lrec})")
    left = [f for f in os.listdir(tmp) if f.endswith(".addr") or f.endswith(".tmp")]
    check(not left, f"no rendezvous file is left behind (found {left})")


def case_no_peer(args):
    tmp = vstest.tmpdir()
    timeout = 3
    margin = 4   # start-up, the watchdog's grace, a loaded machine
    port = closed_port()
    base = [vstest.RUNNER, "--transport", args.transport, "--sizes", "8", "--iterations", "10",
            "--timeout", str(timeout)]

    # rank 1 told to meet rank 0 at a port where nobody listens
    p, dt = run_timed(base + ["--rendezvous", f"127.0.0.1:{port}"],
                      clean_env({"VERSUS_RANK": "1", "VERSUS_SIZE": "2"}), 60)
    check(p.returncode == 1, f"rank 1 alone exits 1 (got {p.returncode})")
    check(timeout - 0.5 <= dt <= timeout + margin, f"... after its timeout of {timeout} s (took {dt:.2f} s)")
    want = f"rank 1 could not connect to rank 0 at 127.0.0.1:{port} within {timeout} s"
    check(want in p.stderr, f"stderr says '{want}'")

    # a launcher environment saying size 2, with one process: rank 0 waits for rank 1
    out = os.path.join(tmp, "alone.jsonl")
    p, dt = run_timed(base + ["--rendezvous-dir", tmp, "--out", out],
                      clean_env({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2",
                                 "OMPI_MCA_ess_base_jobid": f"alone{os.getpid()}"}), 60)
    check(p.returncode == 1, f"rank 0 of 2 alone exits 1 (got {p.returncode})")
    check(timeout - 0.5 <= dt <= timeout + margin, f"... after its timeout of {timeout} s (took {dt:.2f} s)")
    check(f"rank 1 did not connect within {timeout} s (rendezvous " in p.stderr,
          "stderr says 'rank 1 did not connect within 3 s (rendezvous HOST:PORT)'")
    left = [f for f in os.listdir(tmp) if f.startswith("versus-")]
    check(not left, f"rank 0 removed its address file (found {left})")

    # rank 1 of 2 alone with a rendezvous directory: no address file ever appears
    p, dt = run_timed(base + ["--rendezvous-dir", tmp],
                      clean_env({"SLURM_PROCID": "1", "SLURM_NTASKS": "2", "SLURM_JOB_ID": "4242",
                                 "SLURM_STEP_ID": "0"}), 60)
    check(p.returncode == 1, f"rank 1 of 2 alone (Slurm env) exits 1 (got {p.returncode})")
    check(dt <= timeout + margin, f"... within its timeout (took {dt:.2f} s)")
    check("found no rendezvous file" in p.stderr and "versus-slurm-4242.0.addr" in p.stderr,
          "stderr names the address file it waited for")


def case_bad_env(args):
    for env, var in [({"OMPI_COMM_WORLD_RANK": "one", "OMPI_COMM_WORLD_SIZE": "2"}, "OMPI_COMM_WORLD_RANK"),
                     ({"PMI_RANK": "3", "PMI_SIZE": "2"}, "PMI_RANK"),
                     ({"SLURM_PROCID": "0", "SLURM_NTASKS": "2x"}, "SLURM_NTASKS"),
                     ({"VERSUS_RANK": "0", "VERSUS_SIZE": "2", "VERSUS_RENDEZVOUS": "nowhere"}, "VERSUS_RENDEZVOUS")]:
        p, dt = run_timed([vstest.RUNNER, "--transport", args.transport, "--timeout", "5"], clean_env(env), 30)
        check(p.returncode == 2, f"{env}: exit 2 (got {p.returncode})")
        check(var in p.stderr, f"... and stderr names {var}")
        check(dt < 3, f"... at once ({dt:.2f} s)")


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def holds_file(pid, path):
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            if os.path.realpath(f"/proc/{pid}/fd/{fd}") == path:
                return True
    except OSError:
        pass
    return False


def size_records(path):
    try:
        with open(path) as f:
            return sum(1 for ln in f if '"record":"size"' in ln.replace(" ", ""))
    except OSError:
        return 0


def start_and_find_rank1(args, timeout, name):
    """Start a local two-rank run that lasts, wait for rank 0's first size record and find
    rank 1 (the child that does not hold the results file).  Returns (proc, rank1 pid, out,
    sizes written so far), or None when every try ended first."""
    for iterations in (2000, 20000):
        tmp = vstest.tmpdir()
        out = os.path.realpath(os.path.join(tmp, name))
        cmd = [vstest.RUNNER, "--launch", "local", "-n", "2", "--transport", args.transport,
               "--sizes", "1:64K", "--iterations", str(iterations), "--timeout", str(timeout), "--out", out]
        log("$ " + " ".join(cmd))
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=clean_env(), stdin=subprocess.DEVNULL)
        t_end = time.monotonic() + 60
        while time.monotonic() < t_end and proc.poll() is None:
            kids = children(proc.pid)
            if len(kids) == 2 and size_records(out) >= 1:
                rank0 = [k for k in kids if holds_file(k, out)]
                if len(rank0) == 1:
                    return proc, [k for k in kids if k != rank0[0]][0], out, size_records(out)
            time.sleep(0.002)
        proc.kill()
        proc.communicate()
        log(f"the run ended before rank 1 could be reached at {iterations} iterations; trying longer")
    return None


def ended(proc, within, what):
    """Wait for the launch to end; (stdout, stderr, seconds) or a failure naming the hang."""
    t0 = time.monotonic()
    try:
        stdout, stderr = proc.communicate(timeout=within)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
        fail(f"the run did not end after {what} (hang)\n{stderr}")
    dt = time.monotonic() - t0
    log(f"rc={proc.returncode} {dt:.2f} s after {what}\n--- stdout\n{stdout}--- stderr\n{stderr}---")
    return stdout, stderr, dt


def check_kept(out):
    """The results file keeps the finished sizes, complete, and ends with a non-ok end record."""
    run, sizes, end = vstest.read_jsonl(out)
    check(len(sizes) >= 1, f"the results file holds the sizes completed before the fault ({len(sizes)})")
    check(all(len(s["samples_ns"]) == s["iterations"] >= 1 for s in sizes), "every size record is complete")
    check(end is not None, "the results file ends with an end record "
          "(written by rank 0's error path or its watchdog)")
    check(end.get("status") not in (None, "ok"), f"the end record's status is not ok ({end.get('status')})")
    check(bool(end.get("message")), f"the end record carries a message ({end.get('message')!r})")
    return end


def case_kill(args):
    """Kill rank 1 mid-run: the run ends within its deadline, says so, and keeps its results."""
    timeout = 5
    grace = 5      # the local launcher's grace beyond --timeout
    margin = 5
    found = start_and_find_rank1(args, timeout, "killed.jsonl")
    if found is None:
        fail("the run always finished before rank 1 could be killed")
    proc, victim, out, done_before = found
    os.kill(victim, 9)
    log(f"killed rank 1 (pid {victim}) after {done_before} size record(s)")
    stdout, stderr, dt = ended(proc, timeout + grace + margin + 30, "the kill")
    check(proc.returncode != 0, f"the run exits non-zero (got {proc.returncode})")
    check(dt <= timeout + grace + margin, f"... within the deadline + margin ({dt:.2f} s after the kill)")
    check("rank 1 was killed by signal 9" in stderr, "stderr says 'rank 1 was killed by signal 9'")
    check_kept(out)


def case_stop(args):
    """Stop rank 1 (SIGSTOP) mid-run: rank 0 reaches its timeout, and the launcher then kills the
    stopped rank at once (it can neither act on the notice nor time out) instead of waiting out
    its own grace of timeout + 8 s."""
    timeout = 4
    found = start_and_find_rank1(args, timeout, "stopped.jsonl")
    if found is None:
        fail("the run always finished before rank 1 could be stopped")
    proc, victim, out, done_before = found
    os.kill(victim, signal.SIGSTOP)
    log(f"stopped rank 1 (pid {victim}) after {done_before} size record(s)")
    stdout, stderr, dt = ended(proc, timeout + 30, "the stop")
    check(proc.returncode == 1, f"the run exits 1 (got {proc.returncode})")
    check(timeout - 0.5 <= dt <= timeout + 3,
          f"... at rank 0's timeout of {timeout} s, not timeout + the launcher's grace ({dt:.2f} s after the stop)")
    check("rank 1 is stopped" in stderr, "stderr says 'rank 1 is stopped'")
    end = check_kept(out)
    check(end.get("status") == "timeout", f"the end record says timeout ({end.get('status')})")


def case_interrupt(args):
    """Ctrl-C mid-run (SIGINT to the whole process group, as a terminal sends it): every rank's
    watchdog ends it at once with status "interrupted", the sizes done are kept, and nothing
    else is said: the measuring thread once went on to write a record after the watchdog's
    end record and reported "cannot write the results file", then closed the file while the
    watchdog still used it (ThreadSanitizer)."""
    tmp = vstest.tmpdir()
    out = os.path.realpath(os.path.join(tmp, "interrupted.jsonl"))
    cmd = [vstest.RUNNER, "--launch", "local", "-n", "2", "--transport", args.transport,
           "--sizes", "1:4M", "--iterations", "200000", "--timeout", "10", "--out", out, "--quiet"]
    log("$ " + " ".join(cmd))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=clean_env(), stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        t_end = time.monotonic() + 60
        while time.monotonic() < t_end and proc.poll() is None and size_records(out) < 2:
            time.sleep(0.01)
        if proc.poll() is not None:
            fail(f"the run ended (rc={proc.returncode}) before it could be interrupted")
        done_before = size_records(out)
        os.killpg(proc.pid, signal.SIGINT)
        t_int = time.monotonic()
        try:
            stdout, stderr = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            fail(f"the run did not end within 30 s of Ctrl-C\n{stderr}")
    finally:
        if proc.poll() is None:   # the test itself ended (meson's timeout): its run goes with it
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    dt = time.monotonic() - t_int
    log(f"interrupted after {done_before} size record(s); rc={proc.returncode} {dt:.2f} s later\n"
        f"--- stderr\n{stderr}---")
    check(proc.returncode == 1, f"the run exits 1 (got {proc.returncode})")
    check(dt < 3, f"... within a second or two of Ctrl-C ({dt:.2f} s)")
    check("interrupted by signal 2" in stderr, "stderr says 'interrupted by signal 2'")
    check("cannot write the results file" not in stderr,
          "nothing reports a write after the end record (the measuring thread waits for the watchdog's exit)")
    run, sizes, end = vstest.read_jsonl(out)
    check(len(sizes) >= done_before, f"the sizes done before Ctrl-C are kept ({len(sizes)} >= {done_before})")
    check(all(len(s["samples_ns"]) == s["iterations"] >= 1 for s in sizes), "every size record is complete")
    check(end is not None and end.get("status") == "interrupted",
          f"the file ends with an end record of status interrupted ({end and end.get('status')})")
    with open(out, encoding="utf-8") as f:
        last = f.read().rstrip("\n").rsplit("\n", 1)[-1]
    check('"record":"end"' in last.replace(" ", ""), "the end record is the file's last line")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=["launcher-local", "launcher-mpirun", "launcher-mpiexec",
                                     "no-peer", "bad-env", "kill", "stop", "interrupt"])
    ap.add_argument("--transport", required=True, help="a module without its own bootstrap, or 'auto' for the first one built")
    args = ap.parse_args()
    if args.transport == "auto":   # the case needs some transport versus-run's launchers start, any one
        declared = vsmod.declared(vstest.RUNNER)
        mine = [m for m in vstest.BUILT if m in declared and declared[m].get("loads")
                and not declared[m].get("bootstrap")]
        if not mine:
            print(f"SKIP: no built module is started by versus-run's launchers (built: {', '.join(vstest.BUILT)})",
                  flush=True)
            return vstest.SKIP
        args.transport = mine[0]
    if backends.own_bootstrap(args.transport):
        print(f"SKIP: {args.transport} is started by its own launcher; these cases are about versus-run's",
              flush=True)
        return vstest.SKIP
    if args.case.startswith("launcher-"):
        case_launcher(args, args.case.split("-", 1)[1])
    elif args.case == "no-peer":
        case_no_peer(args)
    elif args.case == "bad-env":
        case_bad_env(args)
    elif args.case == "interrupt":
        case_interrupt(args)
    elif args.case == "stop":
        case_stop(args)
    else:
        case_kill(args)
    log("PASS")


if __name__ == "__main__":
    sys.exit(main())
