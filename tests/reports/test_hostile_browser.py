"""A report built from results and a manifest whose every string carries markup, script, quotes, a
path, LaTeX commands and mathtext renders as text in the real browser and the real LaTeX: in
headless Chromium no element, attribute or script of a payload exists in the DOM after load (and
the payload that would mark the page never ran), and every payload is shown as written; pdflatex
compiles report.tex without running or reading anything a payload asks for, and the PDF shows the
payloads verbatim."""
import glob
import html
import json
import os
import re
import shutil

from rtest import EXAMPLE, check, chromium, pdflatex, pdftotext, tmpdir, versus

MARK = "document.body.setAttribute('data-owned','1')"
PAYLOADS = {
    "provider": f'"><img src=x onerror="{MARK}">',
    "library": f"<script>{MARK}</script>",
    "version": "<svg onload=alert(1)>1.0",
    "option": "</td></tr></table><iframe src=javascript:alert(1)>",
    "env": r"\immediate\write18{touch owned-by-latex}\input{/etc/hostname}",
    "host": "$\\frac{1}{0}$_^~%#&{}",
    "cpu": "{{ 7*7 }}{% raw %}<b>",
    "title": "<b onmouseover=alert(1)>T</b>&amp; \\ ~ ^",
    "name": "../../x<style>*{display:none}</style>",
}

out = tmpdir()
src_dir = os.path.join(out, "results")
os.makedirs(src_dir)
for path in sorted(glob.glob(os.path.join(EXAMPLE, "*.jsonl"))):
    with open(path, encoding="utf-8") as f, open(os.path.join(src_dir, os.path.basename(path)), "w",
                                                  encoding="utf-8") as g:
        for line in f:
            rec = json.loads(line)
            if rec["record"] == "run":
                t = rec["transport"]
                t["provider"], t["library"], t["version"] = PAYLOADS["provider"], PAYLOADS["library"], PAYLOADS["version"]
                t["options"] = {**(t.get("options") or {}), "x<y": PAYLOADS["option"]}
                rec["env"] = {**(rec.get("env") or {}), "UCX_TLS": PAYLOADS["env"]}
                rec["hosts"] = [PAYLOADS["host"]] * len(rec.get("hosts") or [0, 0])
                rec["topology"]["cpu_model"] = PAYLOADS["cpu"]
                rec["topology"]["host"] = PAYLOADS["host"]
            g.write(json.dumps(rec) + "\n")
with open(os.path.join(EXAMPLE, "campaign.json"), encoding="utf-8") as f:
    manifest = json.load(f)
manifest["title"] = PAYLOADS["title"]
manifest["description"] = PAYLOADS["library"]
for r in manifest["runs"]:
    r["config_id"] = r["id"] + PAYLOADS["name"]
with open(os.path.join(src_dir, "campaign.json"), "w", encoding="utf-8") as f:
    json.dump(manifest, f)

rep = os.path.join(out, "report")
versus(["report", src_dir, "-o", rep])
check(all(os.path.dirname(p) == rep for p in glob.glob(os.path.join(rep, "**", "*.*"), recursive=True)
          if not os.path.dirname(p).startswith(os.path.join(rep, "fig"))) and not os.path.exists(os.path.join(out, "x")),
      "no file is written outside the report's folder")

# the page's own scripts, whole: the Plotly library, the code that draws the figures, each figure's JSON
OWN_SCRIPTS = re.compile(r'<script id="plotly-library">.*?</script>|<script id="chart-init">.*?</script>|'
                         r'<script type="application/json" id="chart-[\w-]+-spec">[^<]*</script>', re.S)
for page, figures in (("index.html", 2), ("details.html", 3)):
    html_path = os.path.join(rep, page)
    p = chromium(["--virtual-time-budget=10000", "--dump-dom", f"file://{html_path}"])
    dom = p.stdout
    check(p.returncode == 0 and "<body" in dom, f"{page}: Chromium loads the hostile report and dumps its DOM")
    check(not re.search(r"<body[^>]*data-owned", dom), f"{page}: no payload ran: the page was not marked")
    check(f'data-charts-drawn="{figures}"' in dom and 'data-error="' not in dom,
          f"{page}: the {figures} figures were drawn, without error")
    own = OWN_SCRIPTS.findall(dom)
    check(len(own) == 2 + figures, f"{page}: the page's own scripts are whole ({len(own)})")
    rest = OWN_SCRIPTS.sub("", dom)
    for bad in ("script", "img", "iframe"):
        check(f"<{bad}" not in rest.lower(), f"{page}: no other <{bad}> element in the DOM")
    check(not re.search(r"<[^>]+\son(error|load|mouseover)\s*=", rest, re.I),
          f"{page}: no event-handler attribute in the DOM")
    check("<style>*{display:none}" not in rest, f"{page}: the name's <style> is text, not a style sheet")
    visible = re.sub(r"<[^>]+>", "", rest)
    visible = html.unescape(visible)
    for key in ("provider", "library", "option", "host", "title", "name") if page == "index.html" else ("name", "title"):
        check(PAYLOADS[key] in visible, f"{page}: the {key} payload is shown as written in the page")
    legend = [html.unescape(re.sub(r"<[^>]+>", "", t)) for t in re.findall(r'<text class="legendtext"[^>]*>(.*?)</text>', rest)]
    if page == "index.html":
        check(any(t.startswith("shm" + PAYLOADS["name"]) for t in legend),
              f"index.html: a figure's legend shows the name payload as written ({legend[:3]})")
        check("{{ 7*7 }}" in visible, "index.html: template syntax in a value is shown, not evaluated")

for name in ("owned-by-latex",):
    if os.path.exists(os.path.join(rep, name)):
        os.remove(os.path.join(rep, name))
pdf = pdflatex(rep)
check(not os.path.exists(os.path.join(rep, "owned-by-latex")), "pdflatex ran no command of a payload")


def plain(t):
    """Text as pdftotext gives it back: the underscore of LaTeX's \\_ comes out as a space and
    quotes as typographic ones; compare without spaces, with straight quotes."""
    for a, b in (("\u2019", "'"), ("\u201d", '"'), ("\u201c", '"'), ("_", " "), ("\n", "")):
        t = t.replace(a, b)
    return t.replace(" ", "")


text = plain(pdftotext(pdf))
for key in ("env", "host", "provider", "cpu"):
    check(plain(PAYLOADS[key]) in text, f"the PDF shows the {key} payload verbatim")
hostname = open("/etc/hostname", encoding="utf-8").read().strip() if os.path.exists("/etc/hostname") else ""
check(not hostname or r"\input{/etc/hostname}" in text, "the \\input of a payload is text, not a file read")
shutil.rmtree(out, ignore_errors=True)
print("hostile report: no payload ran in Chromium or pdflatex; every payload shown as written")
