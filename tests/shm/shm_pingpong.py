#!/usr/bin/env python3
"""shm through versus-run: two ranks under the local launcher ping-pong from
0 B to 4 MiB (odd sizes and both sides of the eager limit included).

usage: shm_pingpong.py --variant blocking|nonblocking [--copy single|pipeline|staged]

--copy names the large-message path: single (the default options: from 16 KiB
the receiver copies straight out of the sender's registered buffer), pipeline
(single=0: the payload streams through the staging slots) or staged (single=0,
one 4 MiB slot: copy in, then copy out).

Claims: the run completes with a record per size holding the requested number
of positive samples; the run record names the versus shm transport, its
eager limit as a threshold, its slot/chunk/mode attributes and whether single
copy is on (with its threshold) or why it is off; --validate finds every
payload intact; small messages
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
    ap.add_argument("--copy", choices=["single", "pipeline", "staged"], default="single")
    a = ap.parse_args()
    vstest.need_module("shm")
    out = os.path.join(vstest.tmpdir(), "shm.jsonl")
    opts = {"single": [], "pipeline": ["--transport-opt", "single=0"],
            "staged": ["--transport-opt", "chunk=4M", "--transport-opt", "chunks=1",
                       "--transport-opt", "single=0"]}[a.copy]
    vstest.run(vstest.pingpong_args("shm", a.variant, SPEC, ITER, ITER_LARGE, 20, 3, out)
               + ["--launch", "local", "-n", "2", "--validate"] + opts, timeout=240, check_rc=0)
    run, _, _ = vstest.check_pingpong_run(out, "shm", "versus", a.variant, SIZES, ITER, ITER_LARGE,
                                          launcher="local", faster=(8, 4 << 20))
    tr = run["transport"]
    vstest.check(tr["version"] == run["versus"]["version"], "module version is the build's version")
    mode = "cacheline+copy" if a.copy == "staged" else "cacheline+pipeline"
    provider = "shm/" + mode + ("+single" if a.copy == "single" else "")
    vstest.check(tr["provider"] == provider, f"provider {provider} (got {tr['provider']})")
    vstest.check(tr["attrs"].get("mode") == mode, "attr mode")
    vstest.check(tr["attrs"].get("slot_bytes") == "64", "attr slot_bytes=64")
    single = tr["attrs"].get("single_copy", "")
    if a.copy == "single":
        vstest.check(single.startswith("from 16384 B") and tr["thresholds"].get("single_copy") == 16384,
                     f"single copy on from 16 KiB, recorded as attr and threshold ({single!r})")
    else:
        vstest.check(single == "off (single=0)" and "single_copy" not in tr["thresholds"],
                     f"single copy recorded as off (single=0) ({single!r})")
    want_chunk = str(4 << 20) if a.copy == "staged" else None
    vstest.check(tr["attrs"].get("chunk_bytes", "").isdigit() and
                 (want_chunk is None or tr["attrs"]["chunk_bytes"] == want_chunk), "attr chunk_bytes")
    eager = tr["thresholds"].get("eager_limit")
    vstest.check(isinstance(eager, int) and eager > 0, f"eager_limit threshold recorded ({eager})")
    pid0 = run.get("placement", {}).get("ranks", [{}])[0].get("pid")
    vstest.check(isinstance(pid0, int) and pid0 > 0, f"the run record names rank 0's pid ({pid0})")
    left = glob.glob(f"/dev/shm/versus-shm-{pid0}-*")
    vstest.check(not left, f"no shared segment left behind ({left})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
