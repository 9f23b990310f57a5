"""Two runs given one --out at once (a run started twice, a job array writing one name): one writes
the file, the other exits 2 saying another run is writing it, and the file is the first run's alone,
every line of it whole (`versus summary` reads it).  Five tries, each started as close together as
two Popen calls allow; a sixth run after them, with the file full, is refused as before, and with
--overwrite replaces it."""
import os
import subprocess
import sys

import vstest as vt

vt.need_module("shm")
d = vt.tmpdir()
out = os.path.join(d, "o.jsonl")
ARGS = ["-t", "shm", "-L", "local", "-s", "0:64K", "-i", "300", "--timeout", "60", "--quiet"]
for attempt in range(5):
    if os.path.exists(out):
        os.unlink(out)
    procs = [subprocess.Popen([vt.RUNNER, *ARGS, "-O", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, stdin=subprocess.DEVNULL) for _ in range(2)]
    res = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    codes = sorted(rc for rc, _, _ in res)
    vt.log(f"try {attempt}: exit codes {codes}; stderr: {[e.strip()[-200:] for _, _, e in res]}")
    vt.check(codes == [0, 2], f"try {attempt}: one run exits 0 and the other 2 (got {codes})")
    loser = next(e for rc, _, e in res if rc == 2)
    vt.check("another run is writing it" in loser or "holds" in loser or "filled while" in loser,
             f"try {attempt}: the refused run says why ({loser.strip()[-160:]!r})")
    vt.read_jsonl(out)   # fails on any malformed line
    s = vt.run_cmd([sys.executable, "-m", "versus", "summary", out], timeout=120)
    vt.check(s.returncode == 0, f"try {attempt}: versus summary reads the file (exit {s.returncode})")
p = vt.run([*ARGS, "-O", out], timeout=120)
vt.check(p.returncode == 2 and "add --overwrite" in p.stderr, "a full file is refused without --overwrite")
p = vt.run([*ARGS, "-O", out, "--overwrite"], timeout=120)
vt.check(p.returncode == 0, "and replaced with --overwrite")
vt.read_jsonl(out)
subprocess.run(["rm", "-rf", d])
print("one --out, two runs: one writes it, the other is refused")
