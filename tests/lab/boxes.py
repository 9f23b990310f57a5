"""What the lab tests share: the skip when this machine cannot make network namespaces, the
`versus lab` command, what a test may leave behind, one rank of versus-run on each box, the
analysis of a run, and whether a launch ran on a loaded host.

A truth test compares what the link imposes with what a launch measured; that holds while the
link sets the time.  With CPU-bound processes on the ranks' CPUs it does not: a 64 KiB round trip
over tbf took 12.0 ms at 100 and at 90.9 Mbit/s alike, tbf at 1 Gbit/s gave 820 Mbit/s for a
goodput of 956, and the 8880 B packet step at MTU 9000 went unseen in three launches.  versus-run
records the load itself (the end record's host_load_*: the ranks waited for a CPU 27-44 % of the
time there, under 1 % on a quiet host), and `launch_load` reads it with the rule `versus summary`
applies: a test re-measures a loaded launch instead of judging it.  The truth tests launch until
their launches judge the figure or their budget is spent (tests/lib/judged.py, shared with the
library ground truths); the others exit 77 with the figures (`skip_loaded`) when the host stays
loaded."""
import json
import os
import subprocess
import sys

import vstest as vt
from launchload import launch_load  # noqa: F401  (the lab tests import it from here)

VERSUS = [sys.executable, "-m", "versus"]
why = vt.netns_missing()
if why:
    print(f"SKIP: {why}", flush=True)
    sys.exit(vt.SKIP)


def lab(*args, check=True):
    p = vt.run_cmd(VERSUS + ["lab", *args], timeout=60)
    if check:
        vt.check(p.returncode == 0, f"versus lab {' '.join(args)} exits 0")
    return p


def summary(out):
    """`versus summary --json` of one run file: its run's analysis (regimes, transitions, staircases)."""
    p = vt.run_cmd(VERSUS + ["summary", "--json", out], timeout=60)
    vt.check(p.returncode == 0, f"versus summary {os.path.basename(out)} exits 0")
    return json.loads(p.stdout)["runs"][0]


def skip_loaded(what, loads, figures=()):
    """Exit 77: the host stayed loaded through the attempts, so `what` cannot be judged."""
    print(f"SKIP: the host stayed loaded, so {what} cannot be judged: {'; '.join(loads)}"
          + (f"; the figures, not judged: {'; '.join(figures)}" if figures else ""), flush=True)
    sys.exit(vt.SKIP)


def leftovers():
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    ours = [ln.split()[0] for ln in names.splitlines() if ln.startswith(("versus-box-", "versus-lab-"))]
    files = [d for d in os.listdir("/etc/netns")] if os.path.isdir("/etc/netns") else []
    return ours + [f"/etc/netns/{d}" for d in files if d.startswith("versus-box-")]


def refused_ups(cases):
    """Each (arguments, word): versus lab up with them exits 2 with the word in its message."""
    for args, what in cases:
        p = vt.run_cmd(VERSUS + ["lab", "up", *args], timeout=30)
        vt.check(p.returncode == 2 and what in p.stderr, f"versus lab up {' '.join(args)} exits 2 ({p.stderr.strip()})")


def down_and_check():
    """versus lab down, then: nothing of the lab is left."""
    lab("down", check=False)
    left = leftovers()
    vt.check(not left, f"down leaves no box, no switch and no host file ({left})")


def check_relay_down(down, pid):
    """After versus lab down (its result `down`) of a lab whose link was the relay (its pid): the
    relay reported both directions' counters with nothing dropped, it is gone, and nothing of the
    lab is left."""
    vt.log(down.stdout)
    lines = [ln for ln in down.stdout.splitlines() if ln.startswith("versus-link:")]
    vt.check(len(lines) == 2 and all(" 0 dropped" in ln for ln in lines),
             "down ends the relay, which reports its counters (nothing dropped)")
    vt.check(not (pid and os.path.exists(f"/proc/{pid}")) and not leftovers(),
             "no relay, namespace or host file is left")


def on_boxes(transport, out, extra=(), env=(), boxes=("a", "b"), timeout=120):
    """One rank of versus-run on each box (rank 0 on the first, where they meet through the
    rendezvous, writing out); returns rank 0's exit status, stderr and stdout and the others'
    exit statuses."""
    port = str(47000 + os.getpid() % 1000)
    first = "10.213.7.%d" % (ord(boxes[0]) - ord("a") + 1)
    common = ["-t", transport, "--rendezvous", f"{first}:{port}", "--timeout", "60", *extra]

    def start(rank, *more):
        return subprocess.Popen(VERSUS + ["lab", "run", boxes[rank], "--", "env", *env, f"VERSUS_RANK={rank}",
                                          f"VERSUS_SIZE={len(boxes)}", vt.RUNNER, *common, *more],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    r0 = start(0, "-O", out)
    others = [start(k, "-q") for k in range(1, len(boxes))]
    rcs = []
    for p in others:
        try:
            p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
        rcs.append(p.returncode)
    try:
        o0, e0 = r0.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        r0.kill()
        o0, e0 = r0.communicate()
    vt.log(f"rank 0 rc={r0.returncode}, others {rcs}\n{o0}{e0}")
    return r0.returncode, e0, o0, rcs


def across(transport, sizes, out, extra=(), env=(), boxes=("a", "b")):
    """One rank of versus-run on each of two boxes; returns the records and rank 0's stderr."""
    cpus = [] if "--cpus" in extra else ["--cpus", "0,1"]
    rc, e0, _, rcs = on_boxes(transport, out, ["-s", sizes, *cpus, *extra], env, boxes)
    vt.check(rc == 0 and rcs == [0], f"{transport} across the boxes: both ranks exit 0")
    return (*vt.read_jsonl(out), e0)
