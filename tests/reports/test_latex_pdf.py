"""The LaTeX report of the example results compiles with pdflatex, and the
PDF shows the summary table with the figures computed from the data."""
import json
import os
import re

from rtest import EXAMPLE, check, pdflatex, pdftotext, tmpdir, versus

out = tmpdir()
versus(["report", EXAMPLE, "-o", out])
tex = open(os.path.join(out, "report.tex"), encoding="utf-8").read()
check(r"\toprule" in tex and r"\midrule" in tex and r"\bottomrule" in tex, "tables are in booktabs style")
for fig in re.findall(r"\\includegraphics\[[^]]*\]\{([^}]+)\}", tex):
    check(os.path.exists(os.path.join(out, fig)), f"figure {fig} is next to report.tex")
text = pdftotext(pdflatex(out))
check("pingpong blocking: summary" in text, "the summary table's caption is in the PDF")

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
