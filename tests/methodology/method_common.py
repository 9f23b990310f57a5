"""Shared helpers of the measurement-method tests: run the fake transport."""
import os

import vstest


def need_fake():
    for d in os.environ.get("VERSUS_MODULE_PATH", "").split(":"):
        if d and os.path.exists(os.path.join(d, "versus-fake.so")):
            return
    print("SKIP: the test transport 'fake' (tests/fake) was not found on VERSUS_MODULE_PATH", flush=True)
    raise SystemExit(vstest.SKIP)


def run_fake(out, args, topts=(), timeout=100):
    """One run over the fake transport, two local ranks; returns (run, sizes, end)."""
    cmd = ["--transport", "fake", "--launch", "local", "-n", "2", "--quiet", "--out", out,
           "--timeout", "30"]
    for kv in topts:
        cmd += ["--transport-opt", kv]
    vstest.run(cmd + list(args), timeout=timeout, check_rc=0)
    run, sizes, end = vstest.read_jsonl(out)
    vstest.check(end is not None and end.get("status") == "ok", f"{out}: run ended ok")
    return run, sizes, end


def by_size(sizes):
    out = {}
    for s in sizes:
        out.setdefault(s["bytes"], []).append(s)
    return out
