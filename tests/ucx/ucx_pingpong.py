#!/usr/bin/env python3
"""Two-rank ping-pong over UCX: the run completes and its JSONL is complete and sane.

usage: ucx_pingpong.py --launcher local|mpirun|mpiexec --tls default|tcp --variant blocking|nonblocking
                       [--rndv-thresh BYTES]

Claims checked: every requested size has a record with the requested number of
positive samples, the end record says ok, the run record names UCX, its version
and the transports UCX selected (tcp when UCX_TLS=tcp, shared memory otherwise),
1 MiB takes longer than 8 bytes (data really moved), and a rendezvous
threshold imposed through UCX_RNDV_THRESH is the one recorded.
"""
import argparse
import os
import sys

import vstest

SIZES = [0, 8, 100, 9000, 65536, 1 << 20]
SPEC = "0,8,100,9000,64K,1M"
ITER, ITER_LARGE = 200, 20
SHM_TLS = ("sysv", "posix", "cma", "xpmem", "knem")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launcher", choices=["local", "mpirun", "mpiexec"], required=True)
    ap.add_argument("--tls", choices=["default", "tcp"], required=True)
    ap.add_argument("--variant", choices=["blocking", "nonblocking"], required=True)
    ap.add_argument("--rndv-thresh", type=int, default=None)
    a = ap.parse_args()

    vstest.need_module("ucx")
    # start from a clean UCX_* slate: only what this test sets reaches UCX
    for k in [k for k in os.environ if k.startswith("UCX_")]:
        del os.environ[k]
    env = {}
    if a.tls == "tcp":
        env["UCX_TLS"] = "tcp"
        env["UCX_NET_DEVICES"] = "lo"
    if a.rndv_thresh is not None:
        env["UCX_RNDV_THRESH"] = str(a.rndv_thresh)

    d = vstest.tmpdir()
    out = os.path.join(d, "ucx.jsonl")
    args = vstest.pingpong_args("ucx", a.variant, SPEC, ITER, ITER_LARGE, 20, 5, out)
    launcher = None
    if a.launcher == "local":
        args += ["--launch", "local", "-n", "2"]
    elif a.launcher == "mpirun":
        launcher = [vstest.need_program("mpirun.openmpi"), "-np", "2"]
    else:
        launcher = [vstest.need_program("mpiexec.mpich"), "-n", "2"]
    vstest.run(args, timeout=150, env=env, launcher=launcher, check_rc=0)
    run, _, _ = vstest.check_pingpong_run(out, "ucx", "UCX", a.variant, SIZES, ITER, ITER_LARGE,
                                          launcher=a.launcher)

    tr = run["transport"]
    vstest.check(tr["version"].count(".") >= 1, f"UCX version recorded ({tr['version']})")
    prov = tr["provider"]
    vstest.check(prov != "", f"provider is not empty ({prov!r})")
    if a.tls == "tcp":
        vstest.check("tcp/lo" in prov, f"UCX_TLS=tcp UCX_NET_DEVICES=lo selects tcp/lo ({prov})")
        vstest.check(tr["attrs"].get("tls") == "tcp", "attr tls records UCX_TLS=tcp")
        vstest.check(tr["attrs"].get("devices") == "lo", "attr devices records lo")
    else:
        vstest.check(any(t in prov for t in SHM_TLS),
                     f"default UCX_TLS selects a shared-memory transport ({prov})")
        vstest.check("tcp" not in prov, "no tcp lane between two local ranks by default")
    th = tr["thresholds"]
    vstest.check("rndv_thresh" in th, "rndv_thresh threshold recorded")
    if a.rndv_thresh is not None:
        vstest.check(th["rndv_thresh"] == a.rndv_thresh,
                     f"rndv_thresh = UCX_RNDV_THRESH = {a.rndv_thresh} (got {th['rndv_thresh']})")
        vstest.check(tr["attrs"].get("rndv_thresh") == str(a.rndv_thresh),
                     "configured UCX_RNDV_THRESH kept as attr")
        vstest.check(run["env"].get("UCX_RNDV_THRESH") == str(a.rndv_thresh),
                     "UCX_RNDV_THRESH recorded in env")
    else:
        vstest.check(th["rndv_thresh"] > 0, f"effective rndv_thresh is positive ({th['rndv_thresh']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
