#!/usr/bin/env python3
"""A stand-in for versus-run in the campaign tests: it knows one module,
'fake', and behaves as its --transport-opt behave=... says: ok (writes a
small valid result file), fail (exit 1), skip (exit 77), hang (sleeps past
any timeout), work (sleeps as long as its schedule asks and records it).  Every call is appended to $FAKE_RUNNER_LOG."""
import json
import os
import sys
import time

argv = sys.argv[1:]
log = os.environ.get("FAKE_RUNNER_LOG")
if log:
    with open(log, "a", encoding="utf-8") as f:
        f.write(json.dumps(argv) + "\n")
if "--list" in argv and "--json" in argv:
    print(json.dumps([{"name": "fake", "loads": True, "version": "1", "bootstrap": False, "launcher": None,
                       "env_prefixes": [], "env_wiring": [], "memory": "host", "options": []},
                      {"name": "broken", "loads": False, "reason": "cannot open libbroken.so"}]))
    sys.exit(0)
if "--list" in argv:
    print("TRANSPORT  LOADS  LIBRARY VERSION / REASON\nfake       yes    1\nbroken     no     cannot open libbroken.so")
    sys.exit(0)
if "--help" in argv and "--json" in argv:
    print(json.dumps({"program": "versus-run", "options": [],
                      "patterns": [{"name": "pingpong", "summary": "round trips", "variants": ["blocking"]}]}))
    sys.exit(0)
if "--help" in argv:
    print("Usage: versus-run --transport NAME [options]\n\nPatterns\n  pingpong     round trips\n")
    sys.exit(0)


def opt(name, default=None):
    return argv[argv.index(name) + 1] if name in argv else default


opts = dict(argv[i + 1].split("=", 1) for i, a in enumerate(argv) if a == "--transport-opt")
behave = opts.get("behave", "ok")
if behave == "fail":
    print("fake: the peer went away (simulated)", file=sys.stderr)
    sys.exit(1)
if behave == "skip":
    print("fake: cannot run here (simulated)", file=sys.stderr)
    sys.exit(77)
if behave == "hang":
    time.sleep(3600)
out = opt("--out")


def run_record() -> str:
    return json.dumps({"record": "run", "schema": 1, "run_id": f"fake-{os.getpid()}",
                       "launch_id": int(opt("--launch-id", "0")),
                       "transport": {"name": "fake", "library": "fake", "version": "1", "provider": "",
                                     "options": opts, "thresholds": {}},
                       "pattern": opt("--pattern", "pingpong"), "variant": opt("--variant", ""),
                       "ranks": 2, "hosts": ["h", "h"]}) + "\n"


if behave == "work":
    # takes as long as its schedule asks: per size (iterations + warm-up) units of
    # 20 us + 1 ns per byte each (batch 1), slept, and says so in elapsed_ns
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reports"))
    from versus.eta import schedule_sizes
    it, w = int(opt("--iterations", "1000")), int(opt("--warmup", "100"))
    with open(out, "w", encoding="utf-8") as f:
        f.write(run_record())
        time.sleep(0.2)                       # a launch's start-up
        sizes = schedule_sizes(opt("--sizes", "8"))
        for b in sizes:
            el = (it + w) * (20000 + b)
            time.sleep(el / 1e9)
            f.write(json.dumps({"record": "size", "bytes": b, "iterations": it, "warmup": w, "batch": 1,
                                "samples_ns": [20000 + b] * it, "elapsed_ns": el}) + "\n")
        f.write(json.dumps({"record": "end", "status": "ok", "message": "", "sizes_completed": len(sizes)})
                + "\n")
    sys.exit(0)
with open(out, "w", encoding="utf-8") as f:
    f.write(run_record())
    for b in (8, 64, 512):
        f.write(json.dumps({"record": "size", "bytes": b, "iterations": 5, "warmup": 0, "batch": 1,
                            "samples_ns": [1000 + b + k for k in range(5)]}) + "\n")
    f.write(json.dumps({"record": "end", "status": "ok", "message": "", "sizes_completed": 3}) + "\n")
