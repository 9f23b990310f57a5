"""Shuffled and interleaved orders: every sample traces to its size, round,
position in the visiting order and launch; the loader merges rounds."""
import os
import subprocess
import sys

import vstest
from method_common import by_size, need_fake, run_fake

need_fake()
d = vstest.tmpdir()
SIZES = [0, 1, 2, 4, 8, 16, 32, 64, 128, 256]

# interleaved: 3 rounds of every size, ascending within a round
run, sizes, _ = run_fake(os.path.join(d, "inter.jsonl"),
                         ["--sizes", "0:256", "--order", "interleaved", "--rounds", "3", "--iterations", "50",
                          "--launch-id", "4"])
vstest.check(run["schedule"]["order"] == "interleaved" and run["schedule"]["rounds"] == 3,
             "run record: order interleaved, 3 rounds")
vstest.check(run["launch_id"] == 4, "run record: launch id")
vstest.check([s["position"] for s in sizes] == list(range(len(sizes))), "positions count the visits in order")
vstest.check(len(sizes) == 3 * len(SIZES), f"one record per size and round ({len(sizes)})")
for r in range(3):
    block = sizes[r * len(SIZES):(r + 1) * len(SIZES)]
    vstest.check([s["round"] for s in block] == [r] * len(SIZES) and [s["bytes"] for s in block] == SIZES,
                 f"round {r}: every size once, ascending")
per = by_size(sizes)
vstest.check(all(sum(len(s["samples_ns"]) for s in v) == 50 for v in per.values()),
             "the 50 samples of each size are spread over its rounds")
vstest.check(all(len({s["batch"] for s in v}) == 1 for v in per.values()), "a size keeps its batch across rounds")
vstest.check(all(v[0]["warmup"] == 100 and all(s["warmup"] == 10 for s in v[1:]) for v in per.values()),
             "full warm-up at the first visit, a tenth at later ones")

# shuffled: a seeded order, reproducible, a new permutation per round
def shuffled(seed, name):
    run, sizes, _ = run_fake(os.path.join(d, name),
                             ["--sizes", "0:256", "--order", "shuffled", "--seed", str(seed), "--rounds", "2",
                              "--iterations", "20"])
    vstest.check(run["schedule"]["order"] == "shuffled" and run["schedule"]["seed"] == seed,
                 f"run record: shuffled, seed {seed}")
    return [(s["round"], s["bytes"]) for s in sizes]

a = shuffled(11, "s11a.jsonl")
b = shuffled(11, "s11b.jsonl")
c = shuffled(12, "s12.jsonl")
vstest.check(a == b, "same seed, same visiting order")
vstest.check(a != c, "another seed, another order")
for r in range(2):
    order = [x for (rr, x) in a if rr == r]
    vstest.check(sorted(order) == SIZES, f"round {r} visits every size once")
vstest.check([x for (_, x) in a] != SIZES * 2, "the order is not the ascending one")

# the analysis loader pools the rounds of a size (run by the interpreter that
# has the analysis package's dependencies: this one, or the repository's venv)
CHECK = """
import sys
from versus.load import load_file
m = load_file(sys.argv[1])[0].sizes_by_bytes()
assert sorted(m) == %r, sorted(m)
assert all(len(x.samples_ns) == 50 and x.rounds == 3 for x in m.values()), [(len(x.samples_ns), x.rounds) for x in m.values()]
assert all(x.elapsed_ns > 0 and x.position is not None for x in m.values())
print("merged")
""" % SIZES
py = sys.executable
try:
    import numpy  # noqa: F401
except ImportError:
    venv = os.path.join(os.environ.get("VERSUS_SOURCE_ROOT", ""), ".venv", "bin", "python")
    py = venv if os.path.exists(venv) else None
if py is None:
    vstest.log("note: no interpreter with numpy here; the loader check is left to the python suite")
else:
    p = subprocess.run([py, "-c", CHECK, os.path.join(d, "inter.jsonl")], capture_output=True, text=True,
                       timeout=60, env=dict(os.environ))
    vstest.check(p.returncode == 0 and "merged" in p.stdout,
                 f"loader: one entry per size, 3 rounds and 50 samples each ({p.stderr.strip()[-300:]})")
