"""The report beside the native tools and over time: a real Open MPI ping-pong under mpirun,
the real OSU 5.3 osu_latency output (imported), and a history store of a synthetic series
with one step.  The HTML shows the side-by-side table (versus's mean with its interval, OSU's
mean, the ratio) and plot, says that no claim can be made from a summary, and shows the over-
time page with the step's date; the LaTeX compiles and says the same."""
import json
import os
import re
import sys

import vstest as vt
from rtest import check, pdflatex, pdftotext, tmpdir, versus

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
import synth  # noqa: E402

vt.need_module("openmpi")
mpirun = vt.need_program("mpirun")
d = tmpdir()
res = os.path.join(d, "results")
os.makedirs(res)
out = os.path.join(res, "ompi.jsonl")
p = vt.run(["-t", "openmpi", "-s", "8,1K,64K", "-i", "2000", "-w", "200", "--timeout", "60", "--out", out,
            "--quiet"], launcher=[mpirun, "-n", "2"], timeout=180)
check(p.returncode == 0, "an Open MPI ping-pong at 8 B, 1 KiB, 64 KiB under mpirun exits 0")
osu = os.path.join(HERE, "..", "python", "data", "import", "osu_latency-5.3.txt")
versus(["import", osu, "-o", os.path.join(res, "osu.jsonl")])

db = os.path.join(d, "history.sqlite")
hist = os.path.join(d, "hist")
os.makedirs(hist)
paths = []
for k in range(20):
    lines = synth.make_lines(synth.hockney(2000.0 * (1.2 if k >= 12 else 1.0), 0.1), [8, 1024], count=200,
                             seed=k, rel_noise=0.01, outlier_frac=0, name="nightly", run_id=f"nightly-{k}")
    rec = json.loads(lines[0])
    rec["start_time"] = f"2026-05-{k + 1:02d}T03:00:00Z"
    lines[0] = json.dumps(rec)
    path = os.path.join(hist, f"n{k:02d}.jsonl")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    paths.append(path)
versus(["history", "add", *paths, "--db", db])

rep = os.path.join(d, "report")
versus(["report", res, "-o", rep, "--history", db])
html = open(os.path.join(rep, "index.html"), encoding="utf-8").read()
check('id="native"' in html, "the HTML has the section beside the native tools")
check("beside OSU Micro-Benchmarks osu_latency" in html, "... naming OSU's osu_latency beside the openmpi run")
check(html.count('id="native-0-0-table"') == 1, "... with its side-by-side table")
spec = re.search(r'<script type="application/json" id="chart-native-0-0-spec">([^<]*)</script>', html)
traces = json.loads(spec.group(1))["data"] if spec else []
versus_line = [t for t in traces if t["name"].startswith("versus") and t.get("showlegend", True)]
tool = [t for t in traces if "no interval" in t["name"]]
check('id="chart-native-0-0"' in html and len(versus_line) == 1 and len(versus_line[0]["x"]) >= 3
      and len(tool) == 1 and tool[0]["marker"]["symbol"] == "x" and len(tool[0]["x"]) >= 3,
      "... and its figure (versus with its band, OSU's figures as crosses, at 3 sizes or more)")
check(os.path.exists(os.path.join(rep, "fig-native-0-0.pdf")), "... and its PDF beside report.tex")
check("no interval of the difference" in html, "... saying that a summary allows no interval and no claim")
check("mean one-way time" in html, "... and that versus's figure is the same statistic as OSU's (the mean)")
check('id="history"' in html and "change point 2026-05-13T03:00:00Z" in html,
      "the over-time page marks the change point at the step's date (2026-05-13)")
spec = re.search(r'<script type="application/json" id="chart-history-0-spec">([^<]*)</script>', html)
layout = json.loads(spec.group(1))["layout"] if spec else {}
check(len(layout.get("shapes", [])) == 1 and layout["shapes"][0]["x0"] == 11.5,
      "... and its figure draws the change point between the 12th and 13th run")
tex = open(os.path.join(rep, "report.tex"), encoding="utf-8").read()
check("\\section{Beside the native tools}" in tex and "\\section{Over time}" in tex,
      "the LaTeX has both sections")
text = pdftotext(pdflatex(rep))
check("Beside the native tools" in text and "Over time" in text and "2026-05-13" in text,
      "the PDF shows both sections and the change point's date")
print("report: the native tool beside versus, and the history with its step")
