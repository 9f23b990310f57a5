#!/usr/bin/env python3
"""How fast the HTML report of 10,000 sizes opens: size of index.html and details.html, and the
time headless Chromium takes to load each page and draw all its figures.

Writes a synthetic result directory like seed 001's staircase sweeps (tests/python/synth_dense.py:
every 4 B from 4 to 40000 B, 10,000 sizes, 20 to 50 samples each; --configs configurations of one
launch each, told apart by an option, the packet step height differing), renders `versus report DIR -o OUT` once (timed),
then loads each page --repeat times in headless Chromium (software WebGL: the series of 10,000
points are drawn with scattergl) with --dump-dom after a virtual-time budget, which returns once
the page is idle, i.e. after the last figure was drawn (the page marks <html data-charts-drawn=N>;
a load that does not reach it counts as failed).  The time quoted is the median wall time of the
Chromium process minus the median of the same on an empty page (start and exit of the browser),
so the figure is the page's own: parse, script, layout and drawing.  Exits 1 when a page misses
--seconds (default 10) or a figure is not drawn.

usage: .venv/bin/python bench/report_html_load.py [--configs 3] [--repeat 3] [--seconds 10] [--keep DIR]
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
from benchlib import loadavg  # noqa: E402
import synth_dense  # noqa: E402


def chromium(url: str, profile: str) -> tuple[float, str]:
    exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not exe:
        sys.exit("no chromium on PATH")
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--enable-unsafe-swiftshader",
           "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
           f"--user-data-dir={profile}", "--window-size=1280,900", "--virtual-time-budget=60000",
           "--dump-dom", url]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    return time.monotonic() - t0, p.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--keep", help="keep the results and the report in this directory")
    a = ap.parse_args()
    work = a.keep or tempfile.mkdtemp(prefix="versus-html-load-")
    res, out, profile = (os.path.join(work, n) for n in ("results", "report", "profile"))
    os.makedirs(res, exist_ok=True)
    try:
        for k in range(a.configs):     # configurations of their own: an option tells them apart
            lines = synth_dense.dense_lines(seed=k, height_ns=synth_dense.HEIGHT_NS * (1 + k))
            rec = json.loads(lines[0])
            rec["transport"]["options"] = {"step": f"{k + 1}x"}
            lines[0] = json.dumps(rec)
            with open(os.path.join(res, f"dense{k}.jsonl"), "w", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "reports"))
        shutil.rmtree(out, ignore_errors=True)
        t0 = time.monotonic()
        p = subprocess.run([sys.executable, "-m", "versus", "report", res, "-o", out, "--title", "10,000 sizes"],
                           env=env, capture_output=True, text=True)
        render = time.monotonic() - t0
        if p.returncode != 0:
            print(p.stderr[-3000:], file=sys.stderr)
            return 1
        print(f"load average {loadavg()}; {a.configs} configurations of {len(synth_dense.SIZES):,} sizes; "
              f"versus report took {render:.1f} s")
        blank = os.path.join(work, "blank.html")
        with open(blank, "w", encoding="utf-8") as f:
            f.write("<!DOCTYPE html><html><body><p>empty</p></body></html>")
        base = statistics.median(chromium(f"file://{blank}", profile)[0] for _ in range(a.repeat))
        ok = True
        for page in ("index.html", "details.html"):
            path = os.path.join(out, page)
            want = len(re.findall(r'<div class="chart" id=', open(path, encoding="utf-8").read()))
            walls, drawn = [], []
            for _ in range(a.repeat):
                wall, dom = chromium(f"file://{path}", profile)
                walls.append(wall)
                m = re.search(r'data-charts-drawn="(\d+)"', dom)
                drawn.append(int(m.group(1)) if m else 0)
                shutil.rmtree(profile, ignore_errors=True)
            own = statistics.median(walls) - base
            good = min(drawn) == want and own <= a.seconds
            ok &= good
            print(f"{page}: {os.path.getsize(path) / 1e6:.1f} MB, {want} figures; loaded and drawn in "
                  f"{own:.1f} s (median of {', '.join(f'{w:.1f}' for w in walls)} s, minus {base:.1f} s for an "
                  f"empty page); figures drawn {min(drawn)} of {want}{'' if good else ' -- MISSED'}")
        print(f"target {a.seconds:g} s per page: {'met' if ok else 'missed'}")
        return 0 if ok else 1
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
