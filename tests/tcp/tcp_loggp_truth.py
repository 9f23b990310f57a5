#!/usr/bin/env python3
"""Truth for LogGP (docs/loggp.md): a send overhead imposed from outside is recovered in o_s,
and not in o_r, g or L.

The tcp module's test hook delay_ns busy-waits before each blocking send, inside the send call:
an overhead of exactly that much on every blocking send of both ranks.  The pingpong, the
overhead pattern's delayed variant and the stream with two windows run with the hook off and at
20 us; `versus loggp` must find o_s larger by 20 us (within 3 us), and o_r, g and L changed by
less than 3 us (the stream's sends are non-blocking: only its acknowledgement pays the hook,
which g, the growth of the window with W, does not see; a one-way time grows by the
sender's 20 us, which o_s takes).  About 15 s.
"""
import importlib.util
import json
import os
import subprocess
import sys

import vstest as vt

DELAY_NS = 20000
TOL_US = 3.0
RUNS = [("pingpong", ["--pattern", "pingpong", "--variant", "blocking"], "0,8"),
        ("overhead", ["--pattern", "overhead", "--variant", "delayed"], "0,8"),
        ("stream16", ["--pattern", "stream", "--window", "16"], "0,64K,256K"),
        ("stream64", ["--pattern", "stream", "--window", "64"], "0,64K,256K")]


def main():
    vt.need_module("tcp")
    missing = [m for m in ("numpy", "scipy") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"SKIP: {sys.executable} lacks {', '.join(missing)} (the analysis package's dependencies)", flush=True)
        raise SystemExit(vt.SKIP)
    d = vt.tmpdir()
    files = []
    for delay in (0, DELAY_NS):
        for name, pat, sizes in RUNS:
            out = os.path.join(d, f"d{delay}-{name}.jsonl")
            vt.run(["--launch", "local", "-n", "2", "--transport", "tcp", "--transport-opt", f"delay_ns={delay}",
                    *pat, "--sizes", sizes, "--iterations", "200", "--iterations-large", "20", "--warmup", "20",
                    "--warmup-large", "3", "--out", out, "--timeout", "60", "--quiet"], timeout=120, check_rc=0)
            files.append(out)
    p = vt.run_cmd([sys.executable, "-m", "versus", "loggp", "--json", *files], timeout=120, check_rc=0)
    doc = json.loads(p.stdout)
    by = {("delay" if "delay_ns=20000" in s["stack"] else "none"): s for s in doc["stacks"]}
    vt.check(sorted(by) == ["delay", "none"], f"two stacks told apart by the hook ({[s['stack'] for s in doc['stacks']]})")
    diff = {k: by["delay"][k]["value"] - by["none"][k]["value"] for k in ("L", "o_s", "o_r", "g")}
    vt.check(abs(diff["o_s"] - DELAY_NS / 1e3) < TOL_US,
             f"o_s grows by the imposed {DELAY_NS / 1e3:g} us (by {diff['o_s']:.2f} us)")
    for k in ("o_r", "g", "L"):
        vt.check(abs(diff[k]) < TOL_US, f"{k} does not take the imposed overhead (changed by {diff[k]:+.2f} us)")
    vt.check("against W (16, 64)" in by["delay"]["g"]["from"], "g from the growth of the window with W")
    subprocess.run(["rm", "-rf", d])


if __name__ == "__main__":
    main()
