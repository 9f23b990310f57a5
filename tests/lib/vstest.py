"""Helpers for versus integration tests: run versus-run, read its JSONL, check it.

A test script calls `need_module(name)` first: when that transport module was
not built it exits 77 (Meson's skip) and says why.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
RUNNER = os.environ.get("VERSUS_RUN", "versus-run")
BUILT = [m for m in os.environ.get("VERSUS_BUILT_MODULES", "").split(",") if m]


def log(*a):
    print(*a, flush=True)


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    log("ok: " + msg)


def need_module(name):
    if name not in BUILT:
        print(f"SKIP: transport module '{name}' was not built in this build "
              f"(built: {', '.join(BUILT) or 'none'}); see the Transports section of 'meson setup'",
              flush=True)
        sys.exit(SKIP)


def need_program(prog):
    path = shutil.which(prog)
    if not path:
        print(f"SKIP: program '{prog}' not found on PATH", flush=True)
        sys.exit(SKIP)
    return path


def tmpdir():
    return tempfile.mkdtemp(prefix="versus-test-")


def run(args, timeout=120, env=None, launcher=None, check_rc=None):
    """Run versus-run (optionally under a launcher command list).  Returns CompletedProcess."""
    cmd = (launcher or []) + [RUNNER] + list(args)
    e = dict(os.environ)
    if env:
        e.update(env)
    log("$ " + " ".join(cmd))
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=timeout, env=e, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as ex:
        fail(f"command did not finish within {timeout} s (hang): {' '.join(cmd)}\n{ex.stdout}\n{ex.stderr}")
    log(f"rc={p.returncode}\n--- stdout\n{p.stdout}--- stderr\n{p.stderr}---")
    if check_rc is not None and p.returncode != check_rc:
        fail(f"expected exit code {check_rc}, got {p.returncode}")
    return p


def read_jsonl(path):
    """Parse every line; fail on any malformed line.  Returns (run, sizes, end_or_None)."""
    with open(path, encoding="utf-8") as f:
        lines = [ln for ln in f.read().split("\n") if ln.strip()]
    recs = []
    for i, ln in enumerate(lines, 1):
        try:
            recs.append(json.loads(ln))
        except json.JSONDecodeError as ex:
            fail(f"{path}:{i}: not JSON: {ex}")
    check(len(recs) >= 1 and recs[0].get("record") == "run", f"{path}: first record is 'run'")
    run_rec = recs[0]
    check(run_rec.get("schema") == 1, "schema version is 1")
    sizes = [r for r in recs[1:] if r.get("record") == "size"]
    ends = [r for r in recs if r.get("record") == "end"]
    check(len(ends) <= 1, "at most one end record")
    if ends:
        check(recs[-1].get("record") == "end", "end record is last")
    return run_rec, sizes, (ends[0] if ends else None)


def check_size_records(sizes, expect_bytes, iterations):
    got = [s["bytes"] for s in sizes]
    check(got == list(expect_bytes), f"size records for {list(expect_bytes)} (got {got})")
    for s in sizes:
        n = len(s["samples_ns"])
        check(n == iterations and s["iterations"] == n,
              f"{s['bytes']} B: {iterations} samples (got {n})")
        check(all(isinstance(v, int) and v > 0 for v in s["samples_ns"]),
              f"{s['bytes']} B: every sample is a positive integer")
        check(isinstance(s["batch"], int) and s["batch"] >= 1, f"{s['bytes']} B: batch >= 1")
