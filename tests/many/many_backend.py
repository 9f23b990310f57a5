"""More than two ranks over one backend (argv[1]): every pair at once (stream,
4 ranks: two pairs, a size record per pair and an aggregate per size whose
figures follow from the pairs' own records) and the all-pairs scan (4 ranks,
--serial: every pair once per pass and size, in N - 1 rounds, hosts named,
read back by `versus scan-report`)."""
import json
import os
import subprocess
import sys

import vstest as vt
from common import prepare

label = sys.argv[1]
module, launcher, args = prepare(label, np=4)
d = vt.tmpdir()


def records(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(ln) for ln in f if ln.strip()]


# every pair at once
out = os.path.join(d, "multi.jsonl")
vt.run(args + ["--pattern", "stream", "--sizes", "8,64K", "--iterations", "12", "--iterations-large", "6",
               "--warmup", "4", "--warmup-large", "2", "--window", "16", "--out", out, "--timeout", "60"],
       launcher=launcher, timeout=180, check_rc=0)
recs = records(out)
run = recs[0]
vt.check(run["ranks"] == 4 and run["pairing"]["pairs"] == [[0, 2], [1, 3]],
         f"the run record names the pairs rank i with i + N/2 (got {run.get('pairing')})")
sizes = [r for r in recs if r["record"] == "size"]
aggs = [r for r in recs if r["record"] == "aggregate"]
vt.check(sorted((s["bytes"], tuple(s["pair"]["ranks"])) for s in sizes)
         == [(8, (0, 2)), (8, (1, 3)), (65536, (0, 2)), (65536, (1, 3))],
         "one size record per pair and size, with the pair's ranks")
vt.check(all(len(s["pair"]["hosts"]) == 2 and s["pair"]["same_host"] is True for s in sizes),
         "each size record names the pair's hosts (one host here)")
vt.check([a["bytes"] for a in aggs] == [8, 65536] and all(a["pairs"] == 2 for a in aggs),
         "one aggregate record per size over 2 pairs")
for a in aggs:
    mine = [s for s in sizes if s["bytes"] == a["bytes"]]
    el = [s["elapsed_ns"] for s in mine]
    msgs = a["messages_per_pair"]
    vt.check(msgs == 16 * len(mine[0]["samples_ns"]) * mine[0]["batch"],
             f"{a['bytes']} B: messages per pair = window x samples x batch ({msgs})")
    vt.check(a["span_ns"] >= max(el) and 0 <= a["overlap"] <= 1,
             f"{a['bytes']} B: on one host the span from the first start to the last end ({a['span_ns']:.0f} ns) "
             f"covers the slowest pair ({max(el)} ns), overlap {a['overlap']:.2f} in [0, 1]")
    want = 2 * msgs * a["bytes"] / a["span_ns"] * 1e3
    vt.check(abs(a["bandwidth_MBps"] - want) <= 1e-6 * want and a["elapsed_max_ns"] == max(el),
             f"{a['bytes']} B: aggregate = both pairs' bytes over the span ({want:.1f} MB/s)")
    osu = 2 * msgs * a["bytes"] / (sum(el) / 2) * 1e3
    vt.check(abs(a["mean_time_bandwidth_MBps"] - osu) <= 1e-6 * osu and a["mean_time_bandwidth_MBps"] >= a["bandwidth_MBps"],
             f"{a['bytes']} B: osu_mbw_mr's figure divides by the mean time ({osu:.1f} MB/s), never below")
end = recs[-1]
vt.check(end["record"] == "end" and end["status"] == "ok" and end["sizes_completed"] == 2,
         "the run ends ok with 2 sizes completed (not one per pair)")

# the all-pairs scan, one pair at a time
out = os.path.join(d, "scan.jsonl")
p = vt.run(args + ["--scan", "--serial", "--sizes", "8,64K", "--iterations", "10", "--iterations-large", "4",
                   "--out", out, "--timeout", "60"], launcher=launcher, timeout=240, check_rc=0)
recs = records(out)
pairs = [r for r in recs if r["record"] == "pair"]
run = recs[0]
vt.check(run["pairing"]["kind"] == "round-robin" and run["pairing"]["rounds"] == 3 and run["pairing"]["passes"] == 2,
         "the scan's run record: round-robin, 3 rounds, 2 passes")
seen = {}
for r in pairs:
    seen.setdefault((r["pass"], r["bytes"]), []).append(tuple(sorted(r["ranks"])))
every = sorted((a, b) for a in range(4) for b in range(a + 1, 4))
vt.check(sorted(seen) == [(0, 8), (0, 65536), (1, 8), (1, 65536)]
         and all(sorted(v) == every for v in seen.values()),
         "every pair exactly once per pass and size")
vt.check(all(len(r["samples_ns"]) == (10 if r["bytes"] == 8 else 4) and min(r["samples_ns"]) > 0 for r in pairs),
         "each pair record holds its samples")
vt.check(all(r["hosts"][0] and r["same_host"] is True and "slot" in r for r in pairs),
         "pair records name the hosts, mark pairs on one host, and the serial slot")
rounds = {}
for r in pairs:
    rounds.setdefault((r["pass"], r["round"], r["bytes"]), set()).update(r["ranks"])
vt.check(all(v == {0, 1, 2, 3} for v in rounds.values()), "each round pairs every rank once")
vt.check("all-pairs scan" in p.stdout, "rank 0 prints the scan's slowest pairs")
q = vt.run_cmd([sys.executable, "-m", "versus", "scan-report", out, "--json"], timeout=120, check_rc=0)
doc = json.loads(q.stdout)
vt.check([s["bytes"] for s in doc["sizes"]] == [8, 65536] and all(s["pairs"] == 6 for s in doc["sizes"]),
         "versus scan-report reads the scan: 6 pairs at each size")
