"""--precision: measuring stops for the documented reasons.

The fake transport adds up to 20 % of uniform noise, so the median's interval
narrows like 1/sqrt(n): a loose target is reached, an impossible one stops at
--max-iterations or at --max-seconds-per-size."""
import os

import vstest
from method_common import by_size, need_fake, run_fake

need_fake()
d = vstest.tmpdir()
NOISE = ["noise_pct=20"]

def totals(sizes):
    out = {}
    for b, recs in by_size(sizes).items():
        out[b] = (sum(len(r["samples_ns"]) for r in recs), recs[-1])
    return out

# reachable target: every size stops on precision, at or above the minimum
run, sizes, _ = run_fake(os.path.join(d, "prec.jsonl"),
                         ["--sizes", "64,1K,8K", "--precision", "2", "--min-iterations", "50"], NOISE)
it = run["iterations"]
vstest.check(it["mode"] == "precision" and it["precision_pct"] == 2 and it["min_iterations"] == 50,
             "run record: precision mode, target and bounds")
for b, (n, last) in totals(sizes).items():
    vstest.check(last.get("stop") == "precision" and last["precision_pct"] <= 2.0,
                 f"{b} B: stop 'precision' at {last['precision_pct']:.3f} % <= 2 %")
    vstest.check(n >= 50, f"{b} B: at least --min-iterations samples ({n})")
    vstest.check(n < 100000, f"{b} B: stopped well before --max-iterations ({n})")

# a tighter target takes more samples (the rule counts samples, not luck)
run, sizes2, _ = run_fake(os.path.join(d, "prec2.jsonl"),
                          ["--sizes", "64,1K,8K", "--precision", "0.25", "--min-iterations", "50"], NOISE)
n1 = sum(n for n, _ in totals(sizes).values())
n2 = sum(n for n, _ in totals(sizes2).values())
vstest.check(all(last["precision_pct"] <= 0.25 for _, last in totals(sizes2).values()), "0.25 % reached at every size")
vstest.check(n2 > 3 * n1, f"an 8x tighter target needs far more samples ({n1} -> {n2})")

# impossible target, small cap: max-iterations, exactly the cap
run, sizes, _ = run_fake(os.path.join(d, "maxit.jsonl"),
                         ["--sizes", "64,1K", "--precision", "0.001", "--min-iterations", "20",
                          "--max-iterations", "300"], NOISE)
for b, (n, last) in totals(sizes).items():
    vstest.check(last.get("stop") == "max-iterations" and n == 300,
                 f"{b} B: stop 'max-iterations' after exactly 300 samples ({n}, {last.get('stop')})")

# impossible target, big cap: the time budget ends it (a long, very noisy
# round trip: integer samples of a short one would pile up on a few values
# and the interval would close)
run, sizes, _ = run_fake(os.path.join(d, "time.jsonl"),
                         ["--sizes", "8K", "--precision", "0.001", "--max-iterations", "100000000",
                          "--max-seconds-per-size", "0.3"], ["noise_pct=100"])
for b, (n, last) in totals(sizes).items():
    spent = sum(r["elapsed_ns"] for r in by_size(sizes)[b]) / 1e9
    vstest.check(last.get("stop") == "time", f"{b} B: stop 'time' ({last.get('stop')})")
    vstest.check(0.3 <= spent < 0.75, f"{b} B: measured for {spent:.3f} s against a 0.3 s budget")

# interleaved with a precision target: rounds until every size stops
run, sizes, _ = run_fake(os.path.join(d, "inter.jsonl"),
                         ["--sizes", "64,1K,8K", "--order", "interleaved", "--precision", "1",
                          "--min-iterations", "50"], NOISE)
per = by_size(sizes)
vstest.check(all(recs[-1].get("stop") == "precision" for recs in per.values()),
             "interleaved: every size ends on precision")
vstest.check(all(all("stop" not in r for r in recs[:-1]) for recs in per.values()),
             "only a size's last record says why it stopped")
vstest.check(all([r["round"] for r in recs] == list(range(len(recs))) for recs in per.values()),
             "interleaved: a size's records are rounds 0, 1, 2, ...")
