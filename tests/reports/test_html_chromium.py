"""The HTML report of the example results loads in headless Chromium: the
summary, detail and methods tables and a place for each figure are in the DOM,
it fetches nothing from the network, and a screenshot is taken."""
import os
import re

from rtest import EXAMPLE, check, chromium, tmpdir, versus

out = tmpdir()
versus(["report", EXAMPLE, "-o", out])
html_path = os.path.join(out, "index.html")
html = open(html_path, encoding="utf-8").read()
check(not re.search(r'<(script|link|img|iframe)\b[^>]*\b(src|href)\s*=\s*"(https?:)?//', html),
      "the page references nothing on the network")
check("<script" not in html, "the page carries no JavaScript")

p = chromium(["--dump-dom", f"file://{html_path}"])
dom = p.stdout
check(p.returncode == 0 and "<body" in dom, "Chromium loads the page and dumps its DOM")
check('id="summary-pingpong-blocking"' in dom, "the summary table is in the DOM")
rows = re.findall(r"<tr>", dom.split('id="summary-pingpong-blocking"')[1].split("</table>")[0])
check(len(rows) == 4, f"summary table: a header and one row per configuration (3), got {len(rows) - 1}")
for cfg in ("shm", "tcp-poll", "ucx-tcp"):
    check(f">{cfg}<" in dom, f"configuration {cfg} is named in the tables")
for kind in ("latency", "bandwidth"):
    check(f'id="fig-pingpong-blocking-{kind}"' in dom, f"the {kind} figure has its place in the DOM")
    check(f"pingpong blocking: {kind}, median with 95 % CI bands" in dom, f"... with its caption")
    check(os.path.exists(os.path.join(out, f"fig-pingpong-blocking-{kind}.pdf")),
          f"... and its PDF figure is beside report.tex")
check('id="methods"' in dom and "CLOCK_MONOTONIC" in dom, "the methods section lists the timer")
check("UCX_TLS=tcp" in dom, "the methods section lists the library environment")
check("Floor: <strong>shm</strong>" in dom, "the shm run is named as the floor")
pair = dom.split("<strong>ucx-tcp</strong> against")
check(len(pair) == 2, "the comparison of ucx-tcp is headed once by its pair")
check(re.search(r"<li[^>]*>\(?[+-]\)? (\d+(\.\d)? % ± \d+(\.\d)? % |\d+(\.\d)? % |[\d.]+× )(faster|slower) "
                r"(\(95 % CI [^)]*\) )?(for messages|at)", pair[1].split("</ul>")[0])
      is not None, "a comparative statement with its CI is shown")
check("a claim needs several launches a side" in pair[1].split("</p>")[0],
      "one launch a side: the comparison says once that its marks are no claim and what a claim needs")

shot = os.path.join(out, "shot.png")
p = chromium([f"--screenshot={shot}", "--window-size=1280,2000", f"file://{html_path}"])
check(os.path.exists(shot), "Chromium wrote a screenshot")
with open(shot, "rb") as f:
    head = f.read(8)
check(head == b"\x89PNG\r\n\x1a\n" and os.path.getsize(shot) > 20000,
      f"the screenshot is a non-empty PNG ({os.path.getsize(shot)} bytes)")
