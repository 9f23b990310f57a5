"""Two-rank ping-pong over an MPI module, 0 B - 4 MiB, writes the documented JSONL."""
import os
import sys

import vstest as vt
from launchers import LAUNCH

flavour, variant = sys.argv[1], sys.argv[2]
vt.need_module(flavour)
vt.need_program(LAUNCH[flavour][0])

d = vt.tmpdir()
out = os.path.join(d, "pp.jsonl")
p = vt.run(["--transport", flavour, "--variant", variant, "--sizes", "0:4M",
            "--iterations", "30", "--iterations-large", "8", "--warmup", "10", "--warmup-large", "2",
            "--out", out, "--timeout", "60"], launcher=LAUNCH[flavour], timeout=240)
vt.check(p.returncode == 0, f"{flavour} {variant} ping-pong exits 0")
run, sizes, end = vt.read_jsonl(out)
expect = [0] + [1 << k for k in range(23)]
large = 64 * 1024
got = [s["bytes"] for s in sizes]
vt.check(got == expect, f"one size record per size 0..4 MiB in order (got {got})")
for s in sizes:
    want = 8 if s["bytes"] >= large else 30
    vt.check(len(s["samples_ns"]) == want == s["iterations"], f"{s['bytes']} B has {want} samples")
    vt.check(all(isinstance(v, int) and v > 0 for v in s["samples_ns"]), f"{s['bytes']} B samples are positive integers")
    vt.check(s["batch"] >= 1 and s["warmup"] == (2 if s["bytes"] >= large else 10), f"{s['bytes']} B batch and warm-up recorded")
vt.check(end is not None and end["status"] == "ok" and end["sizes_completed"] == len(expect), "end record says ok")
tr = run["transport"]
vt.check(tr["name"] == flavour, "transport name recorded")
vt.check(tr["library"] == {"openmpi": "Open MPI", "mpich": "MPICH"}[flavour], "library recorded")
vt.check(len(tr["version"]) > 3, "library version recorded")
vt.check(run["pattern"] == "pingpong" and run["variant"] == variant, "pattern and variant recorded")
vt.check(run["ranks"] == 2 and len(run["hosts"]) == 2, "two ranks and their hosts recorded")
vt.check(run["launcher"]["name"] == {"openmpi": "mpirun", "mpich": "mpiexec"}[flavour],
         f"launcher recorded ({run['launcher']})")
vt.check(run["timer"]["resolution_ns"] > 0 and run["timer"]["cost_ns"] > 0, "timer resolution and cost recorded")
vt.check(isinstance(run["env"], dict) and isinstance(run["command_line"], list), "env and command line recorded")
if flavour == "openmpi":
    vt.check("btl_vader_eager_limit" in tr["thresholds"], "Open MPI's shared-memory eager limit recorded")
# the table on stdout: one row per size
rows = [ln for ln in p.stdout.splitlines() if ln and not ln.startswith("#")]
vt.check(len(rows) == len(expect), "stdout table has one row per size")
# small messages: batch chosen so the clock costs < 1 % of a sample
cost = run["timer"]["cost_ns"]
s8 = next(s for s in sizes if s["bytes"] == 8)
import statistics
med = statistics.median(s8["samples_ns"])
vt.check(cost / (med * s8["batch"]) < 0.02, f"8 B: clock cost {cost:.0f} ns is < 2 % of a sample "
         f"({s8['batch']} x {med} ns)")
