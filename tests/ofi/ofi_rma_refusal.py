#!/usr/bin/env python3
"""The ofi module without one-sided operations says so and exits 77, quickly and on
both ranks; the two-sided patterns are not touched by it.

usage: ofi_rma_refusal.py HARNESS MODULE_PATH

Claims: with --transport-opt rma=off (the provider not asked for FI_RMA) the
one-sided check (transport_check --rma) skips with 77 on both ranks, the module's
message naming the provider and the reason; put and atomic through versus-run exit
77 within seconds on both ranks with that message and record no size (the end
record, when written, gives the reason);
pingpong with rma=off still runs.  Where the provider offers FI_RMA but not the
atomics (libfabric's net provider in 1.17, when this libfabric has it), a put
runs and the atomic pattern exits 77 on both ranks within seconds (core's probe
atomic before measuring: the target does not wait for its --timeout), naming the
provider and fi_fetch_atomicvalid's answer.
"""
import os
import shutil
import subprocess
import sys
import time

import vstest

LIMIT_S = 20  # a refusal on both ranks takes well under a second here


def versus(d, name, pattern, variant, opts, timeout_s=5):
    out = os.path.join(d, name + ".jsonl")
    args = ["--transport", "ofi", "--launch", "local", "-n", "2", "--pattern", pattern, "--sizes", "8",
            "--iterations", "10", "--warmup", "2", "--timeout", str(timeout_s), "--out", out]
    if variant:
        args += ["--variant", variant]
    for o in opts:
        args += ["--transport-opt", o]
    t0 = time.monotonic()
    p = vstest.run(args, timeout=LIMIT_S + 60)
    took = time.monotonic() - t0
    vstest.check(took < LIMIT_S, f"{name}: finished in {took:.1f} s (< {LIMIT_S} s)")
    return p, out


def main():
    harness, module = sys.argv[1:3]
    vstest.need_module("ofi")
    for k in [k for k in os.environ if k.startswith("FI_")]:
        del os.environ[k]
    d = vstest.tmpdir()

    cmd = [harness, module, "--rma", "provider=shm", "rma=off"]
    vstest.log("$ " + " ".join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    vstest.log(f"rc={p.returncode}\n{p.stdout}{p.stderr}")
    vstest.check(p.returncode == 77, f"transport_check --rma with rma=off exits 77 (got {p.returncode})")
    skips = [ln for ln in p.stdout.splitlines() if ln.startswith("SKIP")]
    vstest.check(len(skips) == 2, f"both ranks say why they skip ({len(skips)} SKIP lines)")
    vstest.check("no one-sided operations: provider shm" in p.stderr and "rma=off" in p.stderr,
                 "the module's message names the provider and the reason")

    for pattern, variant in (("put", "latency"), ("atomic", "fadd"), ("putnotify", "ordered")):
        name = f"{pattern}-off"
        p, out = versus(d, name, pattern, variant, ["provider=tcp", "rma=off"])
        vstest.check(p.returncode == 77, f"{pattern} with rma=off exits 77 (got {p.returncode})")
        vstest.check(p.stderr.count("not asked for them (--transport-opt rma=off)") == 2,
                     f"{pattern} with rma=off: both ranks give the module's reason")
        vstest.check("rank 0 exited with code 77" in p.stderr and "rank 1 exited with code 77" in p.stderr,
                     f"{pattern} with rma=off: both ranks exit 77, neither waits for the other")
        if os.path.exists(out):
            _, sizes, end = vstest.read_jsonl(out)
            vstest.check(not sizes and end is not None and end["status"] == "error" and "rma=off" in end["message"],
                         f"{pattern} with rma=off: no size record, the end record gives the reason")
    p, _ = versus(d, "pingpong-off", "pingpong", None, ["provider=tcp", "rma=off"])
    vstest.check(p.returncode == 0, f"pingpong with rma=off runs (got {p.returncode})")

    listing = subprocess.run(["fi_info", "-l"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             timeout=60).stdout if shutil.which("fi_info") else ""
    if "net:" not in listing:
        vstest.log("libfabric's net provider is not in this build: its refusal of the atomics is not checked")
        return 0
    p, _ = versus(d, "net-put", "put", "latency", ["provider=net"])
    vstest.check(p.returncode == 0, f"put over provider=net runs (got {p.returncode})")
    # a --timeout longer than the limit: the target must learn the refusal from the origin,
    # not from its own deadline
    p, out = versus(d, "net-atomic", "atomic", "fadd", ["provider=net"], timeout_s=LIMIT_S * 3)
    vstest.check(p.returncode == 77, f"atomic over provider=net exits 77 (got {p.returncode})")
    vstest.check("rank 0 exited with code 77" in p.stderr and "rank 1 exited with code 77" in p.stderr,
                 "atomic over provider=net: both ranks exit 77, the target told by the origin")
    vstest.check("no one-sided atomics: provider net" in p.stderr and "fi_fetch_atomicvalid" in p.stderr,
                 "the atomic's refusal names the provider and fi_fetch_atomicvalid's answer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
