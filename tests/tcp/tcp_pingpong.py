#!/usr/bin/env python3
"""tcp through versus-run: two ranks under the local launcher ping-pong from
0 B to 4 MiB (odd sizes included) in one mode and variant.

usage: tcp_pingpong.py --mode poll|block --variant blocking|nonblocking

Claims: the run completes with a record per size holding the requested number
of positive samples; the run record names the versus tcp transport, the mode
as provider (tcp/poll, tcp/block) and attribute, loopback as the address
(both ranks share this host), socket buffers left to the kernel ("auto") with
the sizes it chose recorded; and 8 B round trips are faster than 4 MiB ones.
"""
import argparse
import os
import sys

import vstest

SPEC = "0,1,7,8,15,16,17,1000,4097,65535,65537,100003,1M,4M"
SIZES = [0, 1, 7, 8, 15, 16, 17, 1000, 4097, 65535, 65537, 100003, 1 << 20, 4 << 20]
ITER, ITER_LARGE = 100, 10


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["poll", "block"], required=True)
    ap.add_argument("--variant", choices=["blocking", "nonblocking"], required=True)
    a = ap.parse_args()
    vstest.need_module("tcp")
    out = os.path.join(vstest.tmpdir(), "tcp.jsonl")
    opts = [] if a.mode == "poll" else ["--transport-opt", "mode=block"]
    vstest.run(["--transport", "tcp", "--launch", "local", "-n", "2", "--variant", a.variant,
                "--sizes", SPEC, "--iterations", str(ITER), "--iterations-large", str(ITER_LARGE),
                "--warmup", "10", "--warmup-large", "2", "--timeout", "60", "--quiet", "--validate",
                "--out", out] + opts, timeout=240, check_rc=0)
    run, sizes, end = vstest.read_jsonl(out)
    vstest.check(end is not None and end["status"] == "ok", "end record says ok")
    vstest.check([s["bytes"] for s in sizes] == SIZES, "a record for every size, in order")
    for s in sizes:
        n = ITER_LARGE if s["bytes"] >= 65536 else ITER
        vstest.check(len(s["samples_ns"]) == n and all(isinstance(v, int) and v > 0
                                                       for v in s["samples_ns"]),
                     f"{s['bytes']} B: {n} positive samples")
    tr = run["transport"]
    vstest.check(tr["name"] == "tcp" and tr["library"] == "versus", "transport is versus tcp")
    vstest.check(tr["provider"] == "tcp/" + a.mode, f"provider tcp/{a.mode} (got {tr['provider']})")
    at = tr["attrs"]
    vstest.check(at.get("mode") == a.mode, "attr mode")
    vstest.check(at.get("addr") == "127.0.0.1", "ranks on one host meet on loopback")
    vstest.check(at.get("sockbuf") == "auto", "socket buffers left to the kernel")
    vstest.check(at.get("nodelay") == "1", "TCP_NODELAY recorded")
    th = tr["thresholds"]
    vstest.check(th.get("so_sndbuf", 0) > 0 and th.get("so_rcvbuf", 0) > 0,
                 f"the kernel's socket buffer sizes are recorded ({th})")
    med = {s["bytes"]: sorted(s["samples_ns"])[len(s["samples_ns"]) // 2] for s in sizes}
    vstest.check(med[8] < med[4 << 20], f"8 B round trip ({med[8]} ns) is faster than 4 MiB ({med[4 << 20]} ns)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
