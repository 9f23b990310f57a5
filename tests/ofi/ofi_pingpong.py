#!/usr/bin/env python3
"""Two-rank ping-pong over libfabric: the run completes, its JSONL is complete
and sane, and the provider that was asked for is the one recorded.

usage: ofi_pingpong.py --launcher local|mpirun --provider tcp|shm|udp
                       --variant blocking|nonblocking [--rxm-buffer-size BYTES] [--inject off]

Claims checked: every requested size has a record with the requested number
of positive samples; the end record says ok; the run record names libfabric,
its version, the provider actually used (tcp -> tcp;ofi_rxm, shm -> shm,
udp -> udp;ofi_rxd), the message API (tagged or plain) and the inject size;
1 MiB takes longer than 8 bytes (data really moved); an rxm buffer size
imposed through FI_OFI_RXM_BUFFER_SIZE is the eager limit recorded.
"""
import argparse
import os
import sys

import vstest

SIZES = [0, 8, 100, 9000, 65536, 1 << 20]
SPEC = "0,8,100,9000,64K,1M"
ITER, ITER_LARGE = 200, 20
EXPECT_PROVIDER = {"tcp": "tcp;ofi_rxm", "shm": "shm", "udp": "udp;ofi_rxd"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launcher", choices=["local", "mpirun"], required=True)
    ap.add_argument("--provider", choices=sorted(EXPECT_PROVIDER), required=True)
    ap.add_argument("--variant", choices=["blocking", "nonblocking"], required=True)
    ap.add_argument("--rxm-buffer-size", type=int, default=None)
    ap.add_argument("--inject", choices=["auto", "off"], default="auto")
    a = ap.parse_args()

    vstest.need_module("ofi")
    # only what this test sets reaches libfabric
    for k in [k for k in os.environ if k.startswith("FI_")]:
        del os.environ[k]
    env = {}
    if a.rxm_buffer_size is not None:
        env["FI_OFI_RXM_BUFFER_SIZE"] = str(a.rxm_buffer_size)

    d = vstest.tmpdir()
    out = os.path.join(d, "ofi.jsonl")
    opts = ["--transport-opt", f"provider={a.provider}"]
    if a.inject != "auto":
        opts += ["--transport-opt", f"inject={a.inject}"]
    args = vstest.pingpong_args("ofi", a.variant, SPEC, ITER, ITER_LARGE, 20, 5, out) + opts
    launcher = None
    if a.launcher == "local":
        args += ["--launch", "local", "-n", "2"]
    else:
        mpirun = vstest.need_program("mpirun.openmpi")
        launcher = [mpirun, "-np", "2", "--oversubscribe"]
        for k, v in env.items():
            launcher += ["-x", f"{k}={v}"]
    vstest.run(args, timeout=150, env=env, launcher=launcher, check_rc=0)
    run, _, _ = vstest.check_pingpong_run(out, "ofi", "libfabric", a.variant, SIZES, ITER, ITER_LARGE,
                                          launcher=a.launcher)

    tr = run["transport"]
    vstest.check("provider " + EXPECT_PROVIDER[a.provider] in tr["version"]
                 and tr["version"][:1].isdigit(),
                 f"library and provider versions recorded ({tr['version']})")
    vstest.check(tr["provider"] == EXPECT_PROVIDER[a.provider],
                 f"provider={a.provider} selects {EXPECT_PROVIDER[a.provider]} (got {tr['provider']!r})")
    vstest.check(tr["options"].get("provider") == a.provider, "the provider option is recorded")
    attrs = tr["attrs"]
    vstest.check(attrs.get("endpoint") == "FI_EP_RDM", "reliable-datagram endpoint recorded")
    vstest.check(attrs.get("messages") in ("tagged", "plain"),
                 f"message API recorded ({attrs.get('messages')})")
    vstest.check(attrs.get("fabric", "") != "" and attrs.get("domain", "") != "",
                 f"fabric and domain recorded ({attrs.get('fabric')}, {attrs.get('domain')})")
    th = tr["thresholds"]
    vstest.check(th.get("inject_size", -1) >= 0, f"inject_size recorded ({th.get('inject_size')})")
    if a.inject == "off":
        vstest.check(attrs.get("inject") == "off", "inject=off recorded")
    else:
        vstest.check(str(th["inject_size"]) in attrs.get("inject", ""),
                     f"inject attr states the inject limit ({attrs.get('inject')})")
    if "ofi_rxm" in tr["provider"]:
        want = a.rxm_buffer_size if a.rxm_buffer_size is not None else 16384
        vstest.check(th.get("rxm_buffer_size") == want and th.get("eager_limit") == want,
                     f"rxm buffer size / eager limit recorded as {want} "
                     f"(got {th.get('rxm_buffer_size')}, {th.get('eager_limit')})")
        vstest.check(th.get("sar_limit", 0) > 0, "rxm SAR limit recorded")
    if a.rxm_buffer_size is not None:
        vstest.check(run["env"].get("FI_OFI_RXM_BUFFER_SIZE") == str(a.rxm_buffer_size),
                     "FI_OFI_RXM_BUFFER_SIZE recorded in env")
    if a.provider == "shm":
        vstest.check(th.get("eager_limit", 0) > 0, f"shm eager limit recorded ({th.get('eager_limit')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
