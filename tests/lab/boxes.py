"""What the lab tests share: the skip when this machine cannot make network namespaces, the
`versus lab` command, what a test may leave behind, and one rank of versus-run on each box."""
import os
import subprocess
import sys

import vstest as vt

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


def leftovers():
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    ours = [ln.split()[0] for ln in names.splitlines() if ln.startswith(("versus-box-", "versus-lab-"))]
    files = [d for d in os.listdir("/etc/netns")] if os.path.isdir("/etc/netns") else []
    return ours + [f"/etc/netns/{d}" for d in files if d.startswith("versus-box-")]


def across(transport, sizes, out, extra=(), env=(), boxes=("a", "b")):
    """One rank of versus-run on each of two boxes (rank 0 on the first, where they meet through
    the rendezvous); returns the records and rank 0's stderr."""
    port = str(47000 + os.getpid() % 1000)
    first = "10.213.7.%d" % (ord(boxes[0]) - ord("a") + 1)
    cpus = [] if "--cpus" in extra else ["--cpus", "0,1"]
    common = ["-t", transport, "--rendezvous", f"{first}:{port}", "-s", sizes, *cpus,
              "--timeout", "60", *extra]
    r0 = subprocess.Popen(VERSUS + ["lab", "run", boxes[0], "--", "env", *env, "VERSUS_RANK=0", "VERSUS_SIZE=2",
                                    vt.RUNNER, *common, "-O", out],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p1 = vt.run_cmd(VERSUS + ["lab", "run", boxes[1], "--", "env", *env, "VERSUS_RANK=1", "VERSUS_SIZE=2", vt.RUNNER,
                              *common, "-q"], timeout=120)
    o0, e0 = r0.communicate(timeout=120)
    vt.log(f"rank 0 rc={r0.returncode}\n{o0}{e0}")
    vt.check(r0.returncode == 0 and p1.returncode == 0, f"{transport} across the boxes: both ranks exit 0")
    return (*vt.read_jsonl(out), e0)
