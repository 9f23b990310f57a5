"""Bad input gets a clear message and exit code 2 before anything is measured."""
import os

import vstest as vt

CASES = [
    (["--transport", "no-such-transport"], "unknown transport 'no-such-transport'"),
    (["--transport", "openmpi", "--sizes", "1:x"], "bad size 'x'"),
    (["--transport", "openmpi", "--sizes", "64:8"], "ends below its start"),
    (["--transport", "openmpi", "--iterations", "-5"], "--iterations expects an integer >= 1"),
    (["--transport", "openmpi", "--warmup", "-1"], "--warmup expects an integer >= 0"),
    (["--transport", "openmpi", "--pattern", "zigzag"], "unknown pattern 'zigzag'"),
    (["--sizes", "8"], "--transport NAME is required"),
    (["--transport", "openmpi", "--launch", "cluster"], "--launch supports 'local' only"),
    (["--transport", "openmpi", "extra-argument"], "unexpected argument"),
]

d = vt.tmpdir()
for args, msg in CASES:
    out = os.path.join(d, "r.jsonl")
    p = vt.run(args + ["--out", out], timeout=30)
    vt.check(p.returncode == 2, f"{' '.join(args)}: exit code 2 (got {p.returncode})")
    vt.check(msg in p.stderr, f"{' '.join(args)}: stderr says \"{msg}\"")
    vt.check(not os.path.exists(out), f"{' '.join(args)}: no results file written")

p = vt.run(["--help"], timeout=10, check_rc=0)
for opt in ["--transport", "--transport-opt", "--sizes", "--iterations", "--warmup", "--batch", "--out",
            "--timeout", "--launch", "--rendezvous", "--placement", "--cpus", "--list", "--topology", "--variant"]:
    vt.check(opt in p.stdout, f"--help documents {opt}")
print("bad input is refused with exit code 2")
