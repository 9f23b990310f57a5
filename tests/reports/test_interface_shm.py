"""End to end over shm: a campaign of the blocking ping-pong and the ordered put-with-notification
(three launches each), its report's section across the interface, `versus compare` of the two,
and every figure of the section recomputed from the report's raw samples (samples.parquet)."""
import json
import math
import os
import re
import statistics
import sys

from rtest import check, log, tmpdir, versus

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from vstest import need_module  # noqa: E402

need_module("shm")
work = tmpdir()
cfg = os.path.join(work, "onesided.toml")
with open(cfg, "w", encoding="utf-8") as f:
    f.write("""
title = "across the interface over shm"
timeout = 60
launches = 3
[defaults]
transport = "shm"
sizes = "0,64,4K"
warmup = 20
iterations = 200
[[run]]
id = "shm-pingpong"
pattern = "pingpong"
variants = ["blocking"]
[[run]]
id = "shm-putnotify"
pattern = "putnotify"
variants = ["ordered"]
""")
results, report = os.path.join(work, "results"), os.path.join(work, "report")
versus(["campaign", cfg, "--results", results, "--report", report], timeout=300)
man = json.load(open(os.path.join(results, "campaign.json"), encoding="utf-8"))
st = {e["id"]: e["status"] for e in man["runs"]}
check(all(v == "ok" for v in st.values()) and len(st) == 6, f"six launches measured ({st})")

# versus compare: the put-with-notification against the ping-pong, said to cross the interface
pn = ",".join(os.path.join(results, f"shm-putnotify.L{k}.jsonl") for k in range(3))
pp = ",".join(os.path.join(results, f"shm-pingpong.L{k}.jsonl") for k in range(3))
out = versus(["compare", "--json", pn, pp]).stdout
c = json.loads(out)
check("crosses the transport interface" in c["crosses"] and c["claims"],
      "versus compare takes putnotify against pingpong, says it crosses the interface, three launches claim")
check(all(s["inference"] == "between-launch" for s in c["sizes"]) and len(c["sizes"]) == 3,
      "the launch is the unit at each of the three sizes")
for s in c["sizes"]:
    log(f"  {s['bytes']} B: put-with-notification {s['median_a_us']:.3f} us, ping-pong {s['median_b_us']:.3f} us, "
        f"A/B {s['ratio']:.3f} [{s['ratio_ci'][0]:.3f}, {s['ratio_ci'][1]:.3f}] {s['mark']}")
for r in c["regimes"]:
    log(f"  {r['mark']} {r['text']}")

# the report's section, recomputed from the raw samples
html = open(os.path.join(report, "index.html"), encoding="utf-8").read()
check('id="interface"' in html and "Across the interface" in html, "the report has the section across the interface")
check("shm-putnotify" in html and ("one-way latency (round trip / 2), median: geometric mean of the launch "
                                   "medians, 95 % CI band between launches (3 launches, Student&#39;s t)") in html,
      "the section names the pair and its figure's one statistic, the band between the launches")
tex = open(os.path.join(report, "report.tex"), encoding="utf-8").read()
check("Across the interface" in tex, "the LaTeX report has the section")
rows = re.findall(r"shm-putnotify \(A\) against shm-pingpong \(B\), size by size(.*?)</table>",
                  html[html.index('id="interface"'):], re.S)
check(len(rows) == 1, "one size-by-size table for the pair")
cells = [re.sub(r"<[^>]+>", "", x).strip() for x in re.findall(r"<td[^>]*>(.*?)</td>", rows[0], re.S)]
table = [cells[i:i + 7] for i in range(0, len(cells), 7)]
check(len(table) == 3, f"three sizes in it ({len(table)})")

import pyarrow.parquet as pq  # noqa: E402  (the report wrote samples.parquet: pyarrow is there)
t = pq.read_table(os.path.join(report, "samples.parquet"),
                  columns=["config", "run_id", "bytes", "reported_ns"]).to_pydict()
per = {}
for cfg_id, rid, b, v in zip(t["config"], t["run_id"], t["bytes"], t["reported_ns"]):
    per.setdefault((cfg_id, b), {}).setdefault(rid, []).append(v)


def gm(cfg_id, b):
    return math.exp(statistics.fmean(math.log(statistics.median(v)) for v in per[(cfg_id, b)].values()))


for s, row in zip(c["sizes"], table):
    a, b = gm("shm-putnotify", s["bytes"]), gm("shm-pingpong", s["bytes"])
    check(math.isclose(a / b, s["ratio"], rel_tol=1e-9) and math.isclose(a / 1e3, s["median_a_us"], rel_tol=1e-9),
          f"{s['bytes']} B: A/B {s['ratio']:.4f} is the ratio of the geometric means of the launch medians in "
          f"samples.parquet ({a:.1f} ns / {b:.1f} ns)")
    check(row[4].startswith(f"{s['ratio']:.3f}"), f"{s['bytes']} B: the report prints that ratio ({row[4]})")
log("PASS")
