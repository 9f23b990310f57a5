"""A corrupted payload byte is caught by --validate and never passes silently.

usage: validate_fault.py BACKEND FAULT_INJECTION_BUILT(true|false)

The test build's fault-injection hook (VERSUS_FAULT_CORRUPT=1, honoured only
when compiled in) flips one byte of the payload rank 1 receives in the first
check after the 9000-byte size is measured.  Claims: the run still measures
every size, then exits 1 with end status "invalid"; exactly that size is
marked "valid": false with the place it differed (phase "after", direction
0->1, offset 4500, one differing byte, expected and received values that
differ in the lowest bit), the others stay valid; and the same run without
--validate, or with --validate but without the fault, exits 0.
"""
import os
import sys

import vstest as vt
from common import prepare

SPEC, SIZES, BAD = "8,9000,64K", [8, 9000, 65536], 9000


def main():
    label, built = sys.argv[1], sys.argv[2] == "true"
    if not built:
        print("SKIP: this build has no fault-injection hooks (meson option fault_injection=false)", flush=True)
        sys.exit(vt.SKIP)
    fault = {"VERSUS_FAULT_CORRUPT": "1", "VERSUS_FAULT_CORRUPT_SIZE": str(BAD)}
    _, launcher, base = prepare(label, env_keys=sorted(fault))
    d = vt.tmpdir()
    common = base + ["--pattern", "stream", "--window", "4", "--sizes", SPEC, "--iterations", "4",
                     "--iterations-large", "3", "--warmup", "1", "--warmup-large", "1", "--timeout", "40"]

    out = os.path.join(d, "bad.jsonl")
    p = vt.run(common + ["--validate", "--out", out], env=fault, launcher=launcher, timeout=90)
    vt.check(p.returncode == 1, f"a corrupted payload makes the run exit 1 (got {p.returncode})")
    vt.check("payload check failed" in p.stderr, "stderr says the payload check failed")
    run, sizes, end = vt.read_jsonl(out)
    vt.check(run["env"].get("VERSUS_FAULT_CORRUPT") == "1", "the injected fault is visible in the run record's env")
    vt.check(end is not None and end["status"] == "invalid", f"end record status is invalid (got {end and end['status']})")
    vt.check([s["bytes"] for s in sizes] == SIZES, "every size was still measured and recorded")
    for s in sizes:
        if s["bytes"] != BAD:
            vt.check(s.get("valid") is True, f"{s['bytes']} B stays valid")
            continue
        v = s.get("validation", {})
        vt.check(s.get("valid") is False, f"{BAD} B is marked invalid")
        vt.check(v.get("phase") == "after" and v.get("direction") == "0->1", f"where: after measuring, 0->1 ({v})")
        vt.check(v.get("offset") == BAD // 2 and v.get("differing_bytes") == 1, f"offset {BAD // 2}, one byte differs")
        vt.check(isinstance(v.get("expected"), int) and v["got"] == v["expected"] ^ 1, "expected and received values recorded")

    out2 = os.path.join(d, "novalidate.jsonl")
    p = vt.run(common + ["--out", out2], env=fault, launcher=launcher, timeout=90)
    run, sizes, end = vt.read_jsonl(out2)
    vt.check(p.returncode == 0 and end["status"] == "ok", "without --validate the hook does nothing (exit 0, ok)")
    vt.check(run["validate"] is False and all("valid" not in s for s in sizes), "no validity fields without --validate")

    out3 = os.path.join(d, "good.jsonl")
    p = vt.run(common + ["--validate", "--out", out3], launcher=launcher, timeout=90)
    run, sizes, end = vt.read_jsonl(out3)
    vt.check(p.returncode == 0 and end["status"] == "ok" and all(s["valid"] is True for s in sizes),
             "with --validate and no fault every size is valid and the run ok")


if __name__ == "__main__":
    main()
