"""Usage: test_refusal.py BACKEND

Claim: a placement this machine cannot satisfy exits 2 before measuring
anything (no size record), with a message naming what is missing; one it can
satisfy runs.  What the machine has is read from sysfs, not from versus.
"""
import os
import sys

import vstest as vt
import placement_common as pc

backend = sys.argv[1]
module, launcher, extra = pc.need_backend(backend)
facts = pc.machine_facts()
vt.log(f"machine (sysfs): {facts}")
cases = [  # policy, can this machine do it, words the refusal must contain
    ("same-core", facts["smt"] >= 2, ["SMT"]),
    ("cross-package", facts["packages"] >= 2, ["package"]),
    ("cross-numa", facts["numa"] >= 2, ["NUMA"]),
    ("cross-node", False, ["different hosts"]),
]
tmp = vt.tmpdir()
for policy, possible, words in cases:
    out = os.path.join(tmp, policy + ".jsonl")
    p = vt.run(["--transport", module, "--sizes", "8", "--iterations", "10", "--out", out,
                "--quiet", "--timeout", "30", "--placement", policy] + extra,
               launcher=launcher, timeout=90)
    if possible:
        vt.check(p.returncode == 0, f"{policy}: this machine can do it and the run succeeds")
        continue
    vt.check(p.returncode == 2, f"{policy}: exit code 2 (got {p.returncode})")
    for w in words:
        vt.check(w in p.stderr, f"{policy}: stderr names what is missing ({w!r})")
    if os.path.exists(out):
        with open(out, encoding="utf-8") as f:
            text = f.read()
        vt.check('"record":"size"' not in text, f"{policy}: no size record was written")
