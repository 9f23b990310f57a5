"""A seed-study config runs end to end at reduced repetitions: every run
measured (none failed or timed out), the report renders the study's own
section with its tables filled, and the LaTeX compiles.

usage: test_seed_study.py CONFIG.toml TABLE_ID..."""
import json
import os
import re
import sys

from rtest import check, fail, log, pdflatex, pdftotext, tmpdir, versus

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from vstest import BUILT, SKIP  # noqa: E402

config, tables = sys.argv[1], sys.argv[2:]
work = tmpdir()
results, report = os.path.join(work, "results"), os.path.join(work, "report")
p = versus(["campaign", config, "--results", results, "--report", report], timeout=900,
           env={"VERSUS_CAMPAIGN_SCALE": os.environ.get("VERSUS_CAMPAIGN_SCALE", "0.05")}, check_rc=None)
man = json.load(open(os.path.join(results, "campaign.json"), encoding="utf-8"))
for e in man["runs"]:
    log(f"{e['id']}: {e['status']} {e.get('note') or ''}")
bad = [e for e in man["runs"] if e["status"] in ("failed", "timeout")]
check(not bad, "no run failed or timed out: "
      + "; ".join(f"{e['id']} {e['status']}: {(e.get('stderr_tail') or e.get('note') or '')[-300:]}" for e in bad))
if not any(e["status"] == "ok" for e in man["runs"]):
    notes = "; ".join(f"{e['id']}: {e.get('note')}" for e in man["runs"])
    print(f"SKIP: nothing of this study can run here (built: {', '.join(BUILT)}): {notes}", flush=True)
    sys.exit(SKIP)
check(p.returncode == 0, "versus campaign exits 0")
check(all(e["status"] == "ok" for e in man["runs"]),
      "every run of the study was measured: " + ", ".join(f"{e['id']}={e['status']}" for e in man["runs"]))

html = open(os.path.join(report, "index.html"), encoding="utf-8").read()
check(f'<h2 id="study">Seed {man["study"][4:]}' in html, f"the report has the {man['study']} section")
numbers = 0
for tid in tables:
    m = re.search(rf'<table id="{re.escape(tid)}" class="data">(.*?)</table>', html, re.S)
    if not m:
        fail(f"study table {tid} is missing")
    body = m.group(1).split("<tbody>")[1]
    n = body.count("<tr>")
    cells = re.findall(r'<td class="num">([^<]*)</td>', body)
    check(n >= 1, f"study table {tid} has {n} rows")
    numbers += sum(c not in ("–", "") for c in cells)
check(numbers > 0, f"the study tables hold {numbers} figures")
text = pdftotext(pdflatex(report))
check(man["title"].split(":")[0] in text, "the LaTeX report compiles and carries the study")
