"""The LaTeX report of the example results compiles with pdflatex, and the
PDF shows the summary table with the figures computed from the data; no table or line runs
past the margin (pdflatex's overfull boxes), a '~' comes back as '~', the appendix compiles on
its own, and a report on 10,000 sizes keeps its body short (the long tables in the appendix)."""
import json
import os
import re

import numpy as np

from rtest import EXAMPLE, check, overfull, pages, pdflatex, pdftotext, tmpdir, versus

out = tmpdir()
versus(["report", EXAMPLE, "-o", out, "--title", "example~results ~ 1"])
tex = open(os.path.join(out, "report.tex"), encoding="utf-8").read()
check(r"\toprule" in tex and r"\midrule" in tex and r"\bottomrule" in tex, "tables are in booktabs style")
for fig in re.findall(r"\\includegraphics\[[^]]*\]\{([^}]+)\}", tex):
    check(os.path.exists(os.path.join(out, fig)), f"figure {fig} is next to report.tex")
text = pdftotext(pdflatex(out))
check("pingpong blocking: summary" in text, "the summary table's caption is in the PDF")
check("example~results ~ 1" in text, "'~' prints as a tilde (pdftotext gives it back), not as an accent")
MARGIN_PT = 3.0
wide = overfull(out)
check(max(wide, default=0) <= MARGIN_PT, f"nothing in report.tex runs past the margin by more than {MARGIN_PT} pt "
      f"(overfull boxes: {wide})")
appendix = pdftotext(pdflatex(out, name="appendix"))
check("per-size statistics" in appendix and "fitted regimes" in appendix,
      "appendix.tex compiles on its own and holds the per-size and regime tables")
wide = overfull(out, "appendix")
check(max(wide, default=0) <= MARGIN_PT, f"nor in appendix.tex (overfull boxes: {wide})")
check("appendix.tex" in text, "the report names its appendix")
with open(os.path.join(out, "appendix.tex"), encoding="utf-8") as f:
    details = re.findall(r"\\includegraphics\[[^]]*\]\{(fig-detail-[^}]+)\}", f.read())
check(len(details) == 3 and all(os.path.exists(os.path.join(out, d)) for d in details),
      f"the appendix shows each configuration's own figure (3 configurations: {details})")

# The same summary figures as the analysis computes them, formatted the same way.
from versus.render import fmt_value  # noqa: E402
p = versus(["summary", "--json"] + sorted(os.path.join(EXAMPLE, f) for f in os.listdir(EXAMPLE)
                                          if f.endswith(".jsonl")))
doc = json.loads(p.stdout)
for run in doc["runs"]:
    first = run["sizes"][0]
    want = fmt_value(first["median_us"], "us")
    check(want in text, f"{run['transport']['name']}: latency {want} us at {first['bytes']} B is in the PDF")
    if run["regimes"] and run["regimes"][-1]["bandwidth_MBps"]:
        bw = fmt_value(run["regimes"][-1]["bandwidth_MBps"], "mbps")
        check(bw in text, f"{run['transport']['name']}: asymptotic bandwidth {bw} MB/s is in the PDF")
check("Methods" in text and "CLOCK" in text and "MONOTONIC" in text, "the methods section is in the PDF")

# 10,000 sizes (seed 001's one-integer staircase has as many): the body stays a few pages, the
# per-size table goes to the appendix.
big = tmpdir()
sizes = [4 * (i + 1) for i in range(10000)]
rng = np.random.default_rng(1)
with open(os.path.join(big, "stairs.jsonl"), "w", encoding="utf-8") as f:
    f.write(json.dumps({
        "record": "run", "schema": 1, "versus": {"version": "0.1.0", "revision": "test"}, "run_id": "stairs",
        "launch_id": 0, "transport": {"name": "tcp", "library": "t", "version": "1", "provider": "", "options": {},
                                      "thresholds": {}, "attrs": {}},
        "pattern": "pingpong", "variant": "blocking", "ranks": 2, "hosts": ["n1", "n1"],
        "launcher": {"name": "local"}, "schedule": {"sizes": sizes, "order": "sequential"},
        "timer": {"clock": "CLOCK_MONOTONIC", "resolution_ns": 20, "cost_ns": 23},
        "iterations": {"measured": 5}, "env": {}}) + "\n")
    for pos, n in enumerate(sizes):
        x = np.rint(2 * (20000 + 0.5 * n + 3000 * (n // 16384)) * (1 + 0.01 * rng.standard_normal(5))).astype(int)
        f.write(json.dumps({"record": "size", "bytes": n, "iterations": 5, "batch": 1, "round": 0, "position": pos,
                            "samples_ns": x.tolist(), "elapsed_ns": int(x.sum())}) + "\n")
    f.write(json.dumps({"record": "end", "status": "ok", "sizes_completed": len(sizes)}) + "\n")
rep = os.path.join(big, "report")
versus(["report", os.path.join(big, "stairs.jsonl"), "-o", rep])
n_pages = pages(pdflatex(rep))
check(n_pages <= 12, f"the body of a 10,000-size report is {n_pages} pages (at most 12)")
check(max(overfull(rep), default=0) <= MARGIN_PT, "and runs past no margin")
with open(os.path.join(rep, "appendix.tex"), encoding="utf-8") as f:
    rows = sum(1 for line in f if line.rstrip().endswith(r"\\") and " & " in line)
check(rows >= 10000, f"appendix.tex holds every size's row ({rows} table rows)")
