"""--adaptive over a transport with a known step: sizes gather around the step.

The fake transport's round trip is 1 us + 1 ns/B, plus 5 us from 3000 B on.
Starting from powers of two 64 B..16 KiB, refinement must bracket the step
tightly and add few sizes elsewhere; without a step it must stop after the
first pass (bar noise)."""
import os

import vstest
from method_common import by_size, need_fake, run_fake

need_fake()
d = vstest.tmpdir()
common = ["--sizes", "64:16K", "--iterations", "100", "--warmup", "20", "--adaptive",
          "--adaptive-min-gap", "8", "--adaptive-tol", "5"]

run, sizes, _ = run_fake(os.path.join(d, "step.jsonl"), common)
sched = run["schedule"]
vstest.check(isinstance(sched.get("adaptive"), dict) and sched["adaptive"]["tol_pct"] == 5
             and sched["adaptive"]["min_gap_bytes"] == 8, "run record describes the refinement")
base = set(sched["sizes"])
vstest.check(all((s["bytes"] in base) == (not s["adaptive"]) for s in sizes),
             "added sizes, and only they, are marked adaptive")
vstest.check(all((s["pass"] > 0) == s["adaptive"] for s in sizes), "added sizes carry their pass (>= 1)")
added = sorted(s["bytes"] for s in sizes if s["adaptive"])
vstest.log(f"added sizes: {added}")
near = [b for b in added if 2900 <= b <= 3100]
far = [b for b in added if b < 2048 or b > 4096]
below = max(b for b in sorted(base | set(added)) if b < 3000)
above = min(b for b in sorted(base | set(added)) if b >= 3000)
vstest.check(len(near) >= 4, f"dense around the step: {len(near)} sizes within 100 B of 3000 (want >= 4)")
vstest.check(len(far) <= 10, f"sparse elsewhere: {len(far)} sizes added outside 2K..4K (want <= 10)")
vstest.check(above - below <= 16, f"the step is bracketed within 16 B ({below}..{above})")
vstest.check(len(sizes) <= 200, "within the default budget of 200 sizes")
vstest.check(len(by_size(sizes)) == len(sizes), "each size measured once")

# the same schedule without a step: nothing departs from the line
run, sizes, _ = run_fake(os.path.join(d, "flat.jsonl"), common, topts=["step_ns=0"])
later = [s["bytes"] for s in sizes if s["pass"] >= 2]
vstest.check(len(later) <= 4, f"no step, no refinement after the first pass (got {later})")

# a small budget is respected
run, sizes, _ = run_fake(os.path.join(d, "budget.jsonl"), common + ["--adaptive-max-sizes", "12"])
vstest.check(len(sizes) == 12, f"--adaptive-max-sizes 12 gives 12 sizes (got {len(sizes)})")
