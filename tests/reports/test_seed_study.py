"""A seed-study config runs end to end at reduced repetitions: every run
measured (none failed or timed out), the report renders the study's own
section with its tables filled, and the LaTeX compiles.

A study with two-box runs (nodes = 2) is given --lab[=UP,ARGS]: the test brings up the two boxes of
`versus lab` (with those `versus lab up` arguments), runs the campaign with --lab, and takes the
lab down again, also when it fails.  Where this machine cannot make network namespaces (not
root), the two-box runs must be skipped with the reason and their tables (ids with "boxes") are
not asked for.

usage: test_seed_study.py CONFIG.toml [--lab[=UP,ARGS]] TABLE_ID..."""
import json
import os
import re
import sys

from rtest import check, fail, log, pdflatex, pdftotext, tmpdir, versus

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from vstest import BUILT, SKIP, netns_missing  # noqa: E402

config, tables = sys.argv[1], sys.argv[2:]
lab_up, lab_asked = None, False
if tables and tables[0].startswith("--lab"):
    lab_asked = True
    lab_up = [a for a in tables.pop(0).partition("=")[2].split(",") if a]
    why = netns_missing()
    if why:
        log(f"{why}: the two-box runs must be skipped")
        lab_up = None
        tables = [t for t in tables if "boxes" not in t]
work = tmpdir()
results, report = os.path.join(work, "results"), os.path.join(work, "report")
try:
    if lab_up is not None:
        versus(["lab", "up", *lab_up], timeout=60)
    p = versus(["campaign", config, "--results", results, "--report", report] + (["--lab"] if lab_up is not None else []),
               timeout=900, env={"VERSUS_CAMPAIGN_SCALE": os.environ.get("VERSUS_CAMPAIGN_SCALE", "0.05")},
               check_rc=None)
finally:
    if lab_up is not None:
        versus(["lab", "down"], timeout=60, check_rc=None)
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
unmet = [e for e in man["runs"] if e["status"] == "skipped" and (e.get("note") or "").startswith("needs 2 nodes")]
check(all(e["status"] == "ok" for e in man["runs"] if e not in unmet),
      "every run of the study was measured: " + ", ".join(f"{e['id']}={e['status']}" for e in man["runs"]))
if lab_asked:
    check(not unmet if lab_up is not None else bool(unmet),
          f"two-box runs: {'all measured on the lab' if lab_up is not None else 'skipped, saying why'} "
          f"({len(unmet)} skipped)")
else:
    check(not unmet, "no run of this study needs more nodes than there are")

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
