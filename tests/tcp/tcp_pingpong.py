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
    vstest.run(vstest.pingpong_args("tcp", a.variant, SPEC, ITER, ITER_LARGE, 10, 2, out)
               + ["--launch", "local", "-n", "2", "--validate"] + opts, timeout=240, check_rc=0)
    run, _, _ = vstest.check_pingpong_run(out, "tcp", "versus", a.variant, SIZES, ITER, ITER_LARGE,
                                          launcher="local", faster=(8, 4 << 20))
    tr = run["transport"]
    vstest.check(tr["provider"] == "tcp/" + a.mode, f"provider tcp/{a.mode} (got {tr['provider']})")
    at = tr["attrs"]
    vstest.check(at.get("mode") == a.mode, "attr mode")
    vstest.check(at.get("addr") == "127.0.0.1", "ranks on one host meet on loopback")
    vstest.check(at.get("sockbuf") == "auto", "socket buffers left to the kernel")
    vstest.check(at.get("nodelay") == "1", "TCP_NODELAY recorded")
    th = tr["thresholds"]
    vstest.check(th.get("so_sndbuf", 0) > 0 and th.get("so_rcvbuf", 0) > 0,
                 f"the kernel's socket buffer sizes are recorded ({th})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
