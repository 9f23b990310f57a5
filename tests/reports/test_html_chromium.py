"""The HTML report of the example results loads in headless Chromium: the
summary and methods tables and the figures (drawn by the Plotly library the
page carries) are in index.html's DOM (details.html: test_html_charts.py),
the page fetches nothing from the network and runs no script but its own,
and a screenshot is taken."""
import os
import re

from rtest import EXAMPLE, check, chromium, tmpdir, versus

out = tmpdir()
versus(["report", EXAMPLE, "-o", out])
html_path = os.path.join(out, "index.html")
html = open(html_path, encoding="utf-8").read()
check(not re.search(r'<(script|link|img|iframe)\b[^>]*\b(src|href)\s*=\s*"(https?:)?//', html),
      "the page references nothing on the network")
OWN_SCRIPTS = r'<script id="plotly-library">|<script id="chart-init">|<script type="application/json" id="chart-[\w-]+-spec">'
check(len(re.findall(r"<script\b", html)) == len(re.findall(OWN_SCRIPTS, html)) == 2 + 2,
      "the page's only scripts are the Plotly library, the code that draws the figures and the two figures' data")

p = chromium(["--virtual-time-budget=10000", "--dump-dom", f"file://{html_path}"])
dom = p.stdout
check(p.returncode == 0 and "<body" in dom, "Chromium loads the page and dumps its DOM")
check('id="summary-pingpong-blocking"' in dom, "the summary table is in the DOM")
rows = re.findall(r"<tr>", dom.split('id="summary-pingpong-blocking"')[1].split("</table>")[0])
check(len(rows) == 4, f"summary table: a header and one row per configuration (3), got {len(rows) - 1}")
for cfg in ("shm", "tcp-poll", "ucx-tcp"):
    check(f">{cfg}<" in dom, f"configuration {cfg} is named in the tables")
check(len(re.findall(r'<div class="chart js-plotly-plot" id="chart-pingpong-blocking-(latency|bandwidth)"', dom)) == 2,
      "the latency and bandwidth figures are drawn by Plotly")
check(dom.index('id="chart-pingpong-blocking-latency"') < dom.index('id="summary-pingpong-blocking"'),
      "the figures come before the summary table")
check("one-way latency, median" in dom, "the latency figure's axis title is text in the DOM")
check('href="details.html"' in html, "index.html links the appendix details.html (loaded by test_html_charts.py)")
for kind in ("latency", "bandwidth"):
    check(os.path.exists(os.path.join(out, f"fig-pingpong-blocking-{kind}.pdf")),
          f"the {kind} figure's PDF is beside report.tex")
check('id="methods"' in dom and "CLOCK_MONOTONIC" in dom, "the methods section lists the timer")
check("UCX_TLS=tcp" in dom, "the methods section lists the library environment")
check("Floor: <strong>shm</strong>" in dom, "the shm run is named as the floor")
pair = dom.split("<strong>ucx-tcp</strong> against")
check(len(pair) == 2, "the comparison of ucx-tcp is headed once by its pair")
check(re.search(r"<li[^>]*>\(?[+-]\)? (\d+(\.\d)? % ± \d+(\.\d)? % |\d+(\.\d)? % |[\d.]+× )(faster|slower) "
                r"(\(95 % CI [^)]*\) )?(for messages|at)", pair[1].split("</ul>")[0])
      is not None, "a comparative statement with its CI is shown")
refs = re.findall(r'<a href="#(fn-[\w-]+)"', pair[1].split("</p>")[0])
said = [f for f in refs if "a claim needs several launches a side" in dom.split(f'<li id="{f}"')[1].split("</li>")[0]]
check(len(said) == 1 and dom.count("a claim needs several launches a side") == dom.count('<p class="pair">') == 2,
      "one launch a side: the comparison's footnote says once that its marks are no claim and what a claim needs")

shot = os.path.join(out, "shot.png")
p = chromium([f"--screenshot={shot}", "--window-size=1280,2000", "--virtual-time-budget=10000", f"file://{html_path}"])
check(os.path.exists(shot), "Chromium wrote a screenshot")
with open(shot, "rb") as f:
    head = f.read(8)
check(head == b"\x89PNG\r\n\x1a\n" and os.path.getsize(shot) > 20000,
      f"the screenshot is a non-empty PNG ({os.path.getsize(shot)} bytes)")
