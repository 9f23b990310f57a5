"""Transport options are declared once per module: `versus-run --list` prints each
module's table, the README's table says the same, and the runner refuses an
unknown key (listing the known ones), a key given twice and a value of the wrong
kind with exit code 2 before any rank starts."""
import os
import re

import vstest as vt

p = vt.run(["--list"], timeout=60, check_rc=0)
listed, cur = {}, None
for line in p.stdout.splitlines():
    m = re.match(r"^(\S+)\s+(yes|no)\s", line)
    if m:
        cur = m.group(1)
        continue
    m = re.match(r"^\s+--transport-opt (\S+)\s+(.*) \(default: (.*)\)$", line)
    if m and cur:
        listed[(cur, m.group(1))] = (m.group(3), m.group(2))
built = set(filter(None, os.environ.get("VERSUS_BUILT_MODULES", "").split(",")))
for name in ("shm", "tcp", "ucx", "ofi"):
    if name in built:
        vt.check(any(t == name for t, _ in listed), f"--list prints the options of {name}")

readme = open(os.path.join(os.environ["VERSUS_SOURCE_ROOT"], "README.md"), encoding="utf-8").read()
documented = {}
for t, k, d, h in re.findall(r"^\| `(\w+)` \| `([^`]+)` \| ([^|]+) \| (.+) \|$", readme, re.M):
    documented[(t, k.replace("\\|", "|"))] = (d.strip(), h.strip())
for key, val in listed.items():
    if key[0] not in built:        # the test suite's fake transport is on the module path too
        continue
    vt.check(documented.get(key) == val, f"README documents {key[0]} {key[1]} as --list does "
             f"(README: {documented.get(key)}, --list: {val})")
for key in documented:
    if key[0] in built:
        vt.check(key in listed, f"README's {key[0]} {key[1]} is an option the module declares")

d = vt.tmpdir()
out = os.path.join(d, "r.jsonl")
local = ["--launch", "local", "-n", "2", "--sizes", "8", "--out", out]
cases = [
    (["--transport", "tcp", "--transport-opt", "nosuch=1"], "has no option 'nosuch' (it takes: mode=poll|block, sockbuf=BYTES, addr=TEXT, iface=TEXT, delay_ns=N"),
    (["--transport", "tcp", "--transport-opt", "mode=fast"], "expected mode=poll|block"),
    (["--transport", "shm", "--transport-opt", "ring=1024", "--transport-opt", "ring=2048"], "option 'ring' given twice"),
    (["--transport", "shm", "--transport-opt", "eager_limit=lots"], "expected eager_limit=BYTES (digits with an optional K or M"),
    (["--transport", "shm", "--transport-opt", "chunks=5000"], "at most 4096"),
    (["--transport", "tcp", "--transport-opt", "iface="], "expected iface=TEXT"),
]
if "ucx" in built:
    cases.append((["--transport", "ucx", "--transport-opt", "err_mode=maybe"], "expected err_mode=none|peer"))
if "openmpi" in built:
    cases.append((["--transport", "openmpi", "--transport-opt", "x=1"], "has no option 'x' (it takes: sync=lock|fence|pscw"))
    cases.append((["--transport", "openmpi", "--transport-opt", "sync=lazy"], "expected sync=lock|fence|pscw"))
for args, msg in cases:
    p = vt.run(args + local, timeout=30)
    vt.check(p.returncode == 2, f"{' '.join(args)}: exit code 2 (got {p.returncode})")
    vt.check(msg in p.stderr, f"{' '.join(args)}: stderr says \"{msg}\" (got {p.stderr.strip()[:300]})")
    vt.check(not os.path.exists(out), f"{' '.join(args)}: no results file")
p = vt.run(["--transport", "shm", "--transport-opt", "ring=1024", "--quiet"] + local, timeout=60)
vt.check(p.returncode == 0, f"a valid option still runs (exit {p.returncode}: {p.stderr[-300:]})")
print("transport options: one table per module, listed, documented and checked")
