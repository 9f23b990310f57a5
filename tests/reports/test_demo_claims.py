"""The demo's report makes only claims it can defend: the default local campaign
(configs/local.toml, reduced repetitions, three interleaved launches of every
configuration over every transport built here) is run for real, and every
comparative statement, every mark and every interval of its report is checked:

- a claim ('+', '-', '=') is made only where both sides have several launches;
  one launch a side prints marks in parentheses, never a claim;
- a mark and its interval agree: '+' has a ratio CI below 1, '-' above 1, and
  the printed percentages or factors of the interval do not cross zero;
- the inference and its caveat are said once per comparison, not per statement;
- no interval of a time, size or bandwidth reaches below zero or to infinity:
  such an interval is 'not determined' with its reason;
- the HTML and LaTeX carry no '∞' and no interval with a negative bound."""
import json
import math
import os
import re
import sys

from rtest import check, log, tmpdir, versus

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "reports"))
from versus.render import fmt_value  # noqa: E402
from versus.report import render_report  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLAIMS = {"+", "-", "="}
LAUNCH_ONLY = {"(+)", "(-)", "(=)"}
NONNEG = {"us_ci", "mbps_ci", "bytes_ci"}


def statement_interval_ok(s) -> str | None:
    """Why a statement's mark and interval disagree, or None."""
    m, lo_hi = s["mark"].strip("()"), s.get("ratio_ci")
    if m in ("+", "-", "="):
        if not lo_hi or None in lo_hi:
            return "a claim without an interval"
        lo, hi = lo_hi
        if not (hi < 1 or lo > 1):
            return f"mark {s['mark']} with a ratio CI [{lo:.3g}, {hi:.3g}] that includes 1"
        if m == "+" and not hi < 1 or m == "-" and not lo > 1:
            return f"mark {s['mark']} on the wrong side of 1: [{lo:.3g}, {hi:.3g}]"
    text = s["text"]
    pm = re.search(r"([\d.]+) % ± ([\d.]+) %", text)
    if pm and float(pm.group(2)) >= float(pm.group(1)):
        return "a ± as wide as the value"
    ci = re.search(r"95 % CI (−?-?[\d.]+) % to (−?-?[\d.]+) %", text)
    if ci and float(ci.group(1).replace("−", "-")) * float(ci.group(2).replace("−", "-")) <= 0:
        return "a percentage interval that crosses zero"
    return None


def check_cell(where, cell, fmt, problems):
    v = cell.get("v") if isinstance(cell, dict) else cell
    fmt = cell.get("f", fmt) if isinstance(cell, dict) else fmt
    if fmt == "limits" and isinstance(v, (list, tuple)) and v[0] is not None:
        if "[-" in fmt_value(v, fmt):
            problems.append(f"{where}: control limits printed below 0: {fmt_value(v, fmt)}")
        return 1
    if not fmt.endswith("_ci") or not isinstance(v, (list, tuple)) or v[0] is None:
        return 0
    val, lo, hi = v[0], v[1], v[2]
    note = v[3] if len(v) > 3 else None
    if lo is None or hi is None:
        if lo is not None or hi is not None:
            problems.append(f"{where}: a half-open interval {v}")
        elif fmt != "us_ci" or note:    # a median's CI is absent below 6 samples
            if not note:
                problems.append(f"{where}: an interval left out without a reason")
        return 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        problems.append(f"{where}: an infinite bound {v}")
    if fmt in NONNEG and lo < 0:
        problems.append(f"{where}: a negative bound {v}")
    if not lo <= val <= hi and fmt != "us_ci":
        problems.append(f"{where}: the value {val} outside its interval [{lo}, {hi}]")
    return 1


def check_table(t, problems):
    n = 0
    if not t:
        return 0
    cols = t.get("columns") or []
    for r, row in enumerate(t.get("rows") or []):
        for c, cell in enumerate(row):
            fmt = cols[c].get("fmt", "text") if c < len(cols) else "text"
            n += check_cell(f"{t.get('id')} row {r} col {c}", cell, fmt, problems)
    return n


d = tmpdir()
results, report = os.path.join(d, "results"), os.path.join(d, "report")
versus(["campaign", os.path.join(ROOT, "configs", "local.toml"), "--quick", "--results", results], timeout=900)
model = render_report([results], __import__("pathlib").Path(report))
problems, statements, intervals, comparisons = [], 0, 0, 0
launch_counts = set()
for g in model["groups"]:
    for t in [g.get("summary")] + [c.get("table") for c in g.get("details", [])] + \
             [c.get("regimes") for c in g.get("details", [])]:
        intervals += check_table(t, problems)
    for row in g.get("rows", []):
        launch_counts.add(row.get("launches"))
    for c in g.get("comparisons", []):
        comparisons += 1
        intervals += check_table(c["table"], problems)
        scope = c["scope"]
        if not scope:
            problems.append(f"{c['a']} vs {c['b']}: no statement of what the marks speak for")
        for s in c["statements"]:
            statements += 1
            if s["mark"] not in CLAIMS | LAUNCH_ONLY | {"~"}:
                problems.append(f"{c['a']} vs {c['b']}: unknown mark {s['mark']!r}")
            if s["mark"] in CLAIMS and not c["claims"]:
                problems.append(f"{c['a']} vs {c['b']}: claim {s['mark']} {s['text']} on one launch a side")
            why = statement_interval_ok(s)
            if why:
                problems.append(f"{c['a']} vs {c['b']}: {s['mark']} {s['text']}: {why}")
            if scope in s["text"] or re.search(r"across launches|these two launches|one launch a side", s["text"]):
                problems.append(f"{c['a']} vs {c['b']}: the caveat repeated in a statement: {s['text']}")
        for row in c["table"]["rows"]:
            if row[0] in CLAIMS and not c["claims"]:
                problems.append(f"{c['a']} vs {c['b']}: size {row[1]} marked {row[0]} on one launch a side")
        log(f"  {c['a']} vs {c['b']}: {c['scope'][:60]}…")
        for s in c["statements"]:
            log(f"    {s['mark']} {s['text']}")

html = open(os.path.join(report, "index.html"), encoding="utf-8").read()
details = open(os.path.join(report, "details.html"), encoding="utf-8").read()
tex = open(os.path.join(report, "report.tex"), encoding="utf-8").read()
# the figures' data (JSON in the pages): every hovered 95 % interval is finite, at or above 0 and ordered;
# the printed text is the pages without their scripts (a log axis' range in the JSON is below 0 for values
# < 1, and the library's code has its own brackets)
FIGURE = re.compile(r'<script type="application/json" id="chart-[\w-]+-spec">([^<]*)</script>')
hovered = 0
for name, text in (("HTML", html), ("HTML appendix", details)):
    for spec in FIGURE.findall(text):
        for t in json.loads(spec)["data"]:
            for lo, hi in t.get("customdata") or []:
                hovered += 1
                if not (math.isfinite(lo) and math.isfinite(hi) and 0 <= lo <= hi):
                    problems.append(f"{name}: figure {t['name']}: a hovered interval [{lo}, {hi}]")
CODE = re.compile(r'<script id="(plotly-library|chart-init)">.*?</script>', re.S)   # program text, not printed
html, details = (CODE.sub("", FIGURE.sub("", t)) for t in (html, details))
for name, text in (("HTML", html), ("HTML appendix", details), ("LaTeX", tex)):
    if "∞" in text or "infty" in text:
        problems.append(f"{name}: an interval to infinity is printed")
    neg = re.findall(r"\[(?:−|-|\$-\$)\s?\d[^\]]*\]", text)
    if neg:
        problems.append(f"{name}: intervals with a negative bound: {neg[:3]}")
for p in problems:
    log("  problem: " + p)
check(launch_counts == {3}, f"every configuration of the demo ran 3 launches ({sorted(launch_counts)})")
check(comparisons >= 2 and statements >= comparisons, f"{comparisons} comparisons, {statements} statements checked")
check(intervals >= 50, f"{intervals} intervals checked")
check(hovered >= 50, f"{hovered} intervals of the figures checked")
check(not problems, f"every statement, mark and interval of the demo report can be defended ({len(problems)} problems)")
