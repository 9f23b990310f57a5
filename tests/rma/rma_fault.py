"""A corrupted byte is caught by the one-sided patterns' own payload checks.

usage: rma_fault.py BACKEND FAULT_INJECTION_BUILT(true|false)

The test build's fault-injection hook (VERSUS_FAULT_CORRUPT=1) flips one byte of what
rank 1 expects in the first check after the chosen size is measured: the payload a put
or a put-with-notification left in its buffer (9000 B: offset 4500), the word the
atomics left (8 B: offset 4).  Claims, per pattern: the run still measures every size,
then exits 1 with end status "invalid"; exactly that size is "valid": false, found
after measuring, in the direction 0->1, at that offset, one byte, with expected and
found values one bit apart; the others stay valid.  Skips (77) for a module without
one-sided operations (rma_backend.py checks its refusal) or a build without the hook.
"""
import os
import sys

import vstest as vt
from backends import declaration, prepare, split


def case(launcher, base, d, pattern, variant, spec, sizes, bad):
    fault = {"VERSUS_FAULT_CORRUPT": "1", "VERSUS_FAULT_CORRUPT_SIZE": str(bad)}
    out = os.path.join(d, f"{pattern}-{variant}.jsonl")
    p = vt.run(base + ["--pattern", pattern, "--variant", variant, "--sizes", spec, "--iterations", "4",
                       "--iterations-large", "3", "--warmup", "1", "--warmup-large", "1", "--timeout", "40",
                       "--validate", "--out", out], env=fault, launcher=launcher, timeout=90)
    what = f"{pattern} {variant}"
    vt.check(p.returncode == 1 and "payload check failed" in p.stderr,
             f"{what}: a corrupted byte makes the run exit 1, saying so (got {p.returncode})")
    _, recs, end = vt.read_jsonl(out)
    vt.check(end is not None and end["status"] == "invalid", f"{what}: end status invalid")
    vt.check([s["bytes"] for s in recs] == sizes, f"{what}: every size still measured")
    for s in recs:
        if s["bytes"] != bad:
            vt.check(s.get("valid") is True, f"{what}: {s['bytes']} B stays valid")
            continue
        v = s.get("validation", {})
        vt.check(s.get("valid") is False and v.get("phase") == "after" and v.get("direction") == "0->1",
                 f"{what}: {bad} B invalid, after measuring, 0->1 ({v})")
        vt.check(v.get("offset") == bad // 2 and v.get("differing_bytes") == 1,
                 f"{what}: offset {bad // 2}, one byte differs ({v})")
        vt.check(isinstance(v.get("expected"), int) and v.get("got") == v["expected"] ^ 1,
                 f"{what}: expected and found values one bit apart")


def main():
    spec, built = sys.argv[1], sys.argv[2] == "true"
    if not built:
        print("SKIP: this build has no fault-injection hooks (meson option fault_injection=false)", flush=True)
        sys.exit(vt.SKIP)
    module, _ = split(spec)
    mod, _ = declaration(module)
    if not mod.get("rma"):
        print(f"SKIP: {module} has no one-sided operations (its refusal is checked by rma_backend.py)", flush=True)
        sys.exit(vt.SKIP)
    _, launcher, base = prepare(spec, env_keys=["VERSUS_FAULT_CORRUPT", "VERSUS_FAULT_CORRUPT_SIZE"])
    d = vt.tmpdir()
    case(launcher, base, d, "put", "latency", "8,9000,64K", [8, 9000, 65536], 9000)
    if mod.get("memory") != "module":
        case(launcher, base, d, "putnotify", "ordered", "8,9000,64K", [8, 9000, 65536], 9000)
    if mod.get("atomics"):
        case(launcher, base, d, "atomic", "fadd", "8", [8], 8)


if __name__ == "__main__":
    main()
