#!/usr/bin/env python3
"""Every provider fi_info lists here either runs or is refused cleanly: exit 0,
77 (cannot run here) or 2 (bad name), with a message naming the providers that
do work, well within a timeout; never a hang.  Bad options are usage errors.

usage: ofi_refusal.py --case listed|named|options
  listed:  every provider printed by `fi_info -l`
  named:   sockets (refused: pathological here), psm2 and verbs (no hardware),
           an unknown name (exit 2)
  options: unknown key, bad inject/api values, a domain the provider does not offer,
           domain= and its other name iface= together
"""
import argparse
import os
import re
import subprocess
import sys
import time

import vstest

LIMIT_S = 45  # a refusal or a tiny run must finish well within this


def attempt(d, name, opts, sizes="8"):
    out = os.path.join(d, re.sub(r"[^A-Za-z0-9_]", "_", name) + ".jsonl")
    args = ["--transport", "ofi", "--launch", "local", "-n", "2", "--sizes", sizes,
            "--iterations", "20", "--warmup", "5", "--timeout", "20", "--quiet", "--out", out]
    for o in opts:
        args += ["--transport-opt", o]
    t0 = time.monotonic()
    p = vstest.run(args, timeout=LIMIT_S + 30)
    took = time.monotonic() - t0
    vstest.check(took < LIMIT_S, f"{name}: finished in {took:.1f} s (< {LIMIT_S} s)")
    return p


def check_refusal(p, name, codes):
    vstest.check(p.returncode in codes, f"{name}: exit code {p.returncode} in {sorted(codes)}")
    vstest.check("ofi:" in p.stderr, f"{name}: the message comes from the ofi module")
    if name not in ("options",):
        vstest.check("usable here:" in p.stderr and "tcp" in p.stderr.split("usable here:", 1)[1],
                     f"{name}: the message names the providers that work (tcp among them)")


def case_listed(d):
    fi_info = vstest.need_program("fi_info")
    listing = subprocess.run([fi_info, "-l"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, timeout=60).stdout
    names = re.findall(r"^([A-Za-z0-9_]+):\s*$", listing, re.M)
    vstest.check(len(names) >= 2, f"fi_info -l lists providers ({', '.join(names)})")
    worked = []
    for name in names:
        p = attempt(d, name, [f"provider={name}"])
        vstest.check(p.returncode in (0, 77, 2),
                     f"{name}: runs or is refused (exit {p.returncode}), not a failure or a hang")
        if p.returncode == 0:
            worked.append(name)
        else:
            check_refusal(p, name, {77, 2})
    vstest.check("tcp" in worked and "shm" in worked, f"tcp and shm work (working: {worked})")


def case_named(d):
    p = attempt(d, "sockets", ["provider=sockets"])
    check_refusal(p, "sockets", {77})
    vstest.check("sockets" in p.stderr and "refused" in p.stderr, "sockets: says it is refused and why")
    for name in ("psm2", "verbs"):
        p = attempt(d, name, [f"provider={name}"])
        check_refusal(p, name, {77})
        vstest.check(name in p.stderr, f"{name}: the message names it")
    p = attempt(d, "no_such_provider", ["provider=no_such_provider"])
    check_refusal(p, "no_such_provider", {2})
    vstest.check("unknown" in p.stderr, "an unknown provider name is called unknown")


def case_options(d):
    for opts, word in ((["no_such_key=1"], "no_such_key"), (["inject=sometimes"], "inject"),
                       (["api=rma"], "api"), (["provider=tcp", "domain=no_such_if"], "no_such_if"),
                       (["domain=lo", "iface=lo"], "give one of them")):
        p = attempt(d, opts[-1], opts)
        vstest.check(p.returncode == 2, f"{' '.join(opts)}: exit 2 (got {p.returncode})")
        vstest.check(word in p.stderr, f"{' '.join(opts)}: the message names {word}")
    # the options that exist are accepted and recorded
    out_opts = ["provider=tcp", "domain=lo", "inject=off", "api=msg"]
    p = attempt(d, "accepted", out_opts)
    vstest.check(p.returncode == 0, f"{' '.join(out_opts)}: runs (got {p.returncode})")
    run, sizes, end = vstest.read_jsonl(os.path.join(d, "accepted.jsonl"))
    vstest.check(end is not None and end["status"] == "ok", "end record says ok")
    attrs = run["transport"]["attrs"]
    vstest.check(attrs.get("domain") == "lo", f"domain=lo selected (got {attrs.get('domain')})")
    vstest.check(attrs.get("inject") == "off", "inject=off recorded")
    vstest.check(attrs.get("messages") == "plain", "api=msg uses plain messages")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", choices=["listed", "named", "options"], required=True)
    a = ap.parse_args()
    vstest.need_module("ofi")
    for k in [k for k in os.environ if k.startswith("FI_")]:
        del os.environ[k]
    d = vstest.tmpdir()
    {"listed": case_listed, "named": case_named, "options": case_options}[a.case](d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
