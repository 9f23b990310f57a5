#!/usr/bin/env python3
"""shm through versus-run: two ranks under the local launcher ping-pong from
0 B to 4 MiB (odd sizes and both sides of the eager limit included).

usage: shm_pingpong.py --variant blocking|nonblocking [--copy pipeline|single]

Claims: the run completes with a record per size holding the requested number
of positive samples; the run record names the versus shm transport, its
eager limit as a threshold and its slot/chunk/mode attributes; small messages
are faster than 4 MiB ones (the samples measure something); and the shared
segment is gone from /dev/shm once the run is over.
"""
import argparse
import glob
import os
import sys

import vstest

SPEC = "0,1,7,8,33,63,64,65,1000,4095,4096,4097,8191,8192,8193,65537,1M,4M"
SIZES = [0, 1, 7, 8, 33, 63, 64, 65, 1000, 4095, 4096, 4097, 8191, 8192, 8193, 65537,
         1 << 20, 4 << 20]
ITER, ITER_LARGE = 200, 20


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", choices=["blocking", "nonblocking"], required=True)
    ap.add_argument("--copy", choices=["pipeline", "single"], default="pipeline")
    a = ap.parse_args()
    vstest.need_module("shm")
    out = os.path.join(vstest.tmpdir(), "shm.jsonl")
    opts = []
    if a.copy == "single":
        opts = ["--transport-opt", "chunk=4M", "--transport-opt", "chunks=1"]
    vstest.run(vstest.pingpong_args("shm", a.variant, SPEC, ITER, ITER_LARGE, 20, 3, out)
               + ["--launch", "local", "-n", "2", "--validate"] + opts, timeout=240, check_rc=0)
    run, _, _ = vstest.check_pingpong_run(out, "shm", "versus", a.variant, SIZES, ITER, ITER_LARGE,
                                          launcher="local", faster=(8, 4 << 20))
    tr = run["transport"]
    vstest.check(tr["version"] == run["versus"]["version"], "module version is the build's version")
    mode = "cacheline+pipeline" if a.copy == "pipeline" else "cacheline+copy"
    vstest.check(tr["provider"] == "shm/" + mode, f"provider shm/{mode} (got {tr['provider']})")
    vstest.check(tr["attrs"].get("mode") == mode, "attr mode")
    vstest.check(tr["attrs"].get("slot_bytes") == "64", "attr slot_bytes=64")
    want_chunk = str(4 << 20) if a.copy == "single" else None
    vstest.check(tr["attrs"].get("chunk_bytes", "").isdigit() and
                 (want_chunk is None or tr["attrs"]["chunk_bytes"] == want_chunk), "attr chunk_bytes")
    eager = tr["thresholds"].get("eager_limit")
    vstest.check(isinstance(eager, int) and eager > 0, f"eager_limit threshold recorded ({eager})")
    pid0 = run["placement"]["ranks"][0]["pid"] if "placement" in run else None
    if pid0:
        left = glob.glob(f"/dev/shm/versus-shm-{pid0}-*")
        vstest.check(not left, f"no shared segment left behind ({left})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
