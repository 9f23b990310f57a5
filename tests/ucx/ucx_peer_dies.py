#!/usr/bin/env python3
"""A UCX run whose peer is killed mid-measurement ends on its own within the
timeout (no hang in UCX progress or endpoint close), exits 1 and says so in
its end record.  Checked over shared memory and over UCX_TLS=tcp."""
import os
import signal
import subprocess
import sys
import time

import vstest

TIMEOUT_S = 5


def children(pid):
    kids = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                kids += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return kids


def one(tls):
    env = {k: v for k, v in os.environ.items() if not k.startswith("UCX_")}
    if tls == "tcp":
        env.update(UCX_TLS="tcp", UCX_NET_DEVICES="lo")
    out = os.path.join(vstest.tmpdir(), "dies.jsonl")
    cmd = [vstest.RUNNER, "--transport", "ucx", "--launch", "local", "-n", "2", "--sizes", "8",
           "--iterations", "100000000", "--batch", "1", "--warmup", "10",
           "--timeout", str(TIMEOUT_S), "--quiet", "--out", out]
    vstest.log("$ " + " ".join(cmd))
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        kids = []
        while len(kids) < 2 and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.2)
            kids = children(p.pid)
        vstest.check(len(kids) == 2, f"two ranks started ({kids})")
        # wait until the measurement is under way (the run record is written)
        while time.monotonic() < deadline and (not os.path.exists(out) or os.path.getsize(out) == 0):
            time.sleep(0.1)
        time.sleep(1.0)
        victim = max(kids)  # forked second: rank 1
        os.kill(victim, signal.SIGKILL)
        t0 = time.monotonic()
        try:
            _, err = p.communicate(timeout=TIMEOUT_S + 25)
        except subprocess.TimeoutExpired:
            vstest.fail(f"versus-run still running {TIMEOUT_S + 25} s after its peer was killed")
        took = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    vstest.log(err)
    vstest.check(p.returncode == 1, f"exit code 1 after the peer died (got {p.returncode})")
    vstest.check(took < TIMEOUT_S + 15, f"ended {took:.1f} s after the peer died (timeout {TIMEOUT_S} s)")
    _, _, end = vstest.read_jsonl(out)
    vstest.check(end is not None and end["status"] in ("timeout", "error"),
                 f"end record says timeout or error ({end and end['status']})")


def main():
    vstest.need_module("ucx")
    one("default")
    one("tcp")
    return 0


if __name__ == "__main__":
    sys.exit(main())
