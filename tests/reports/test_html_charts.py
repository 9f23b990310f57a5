"""The interactive figures of the example report in headless Chromium: index.html shows a figure
on its first screen (the top 900 px of a 1280 px wide window hold the lines of the latency and
bandwidth figures, before any table), every figure of index.html and details.html is drawn with
its data points (Plotly's points counted in the DOM after it drew), neither page writes a message
to the console (no error, no warning, nothing), and details.html holds each configuration's
tables."""
import json
import os
import re

import numpy as np

from rtest import EXAMPLE, check, chromium, log, tmpdir, versus

COLORS = {"tcp-poll": (0xd6, 0x27, 0x28), "ucx-tcp": (0x2c, 0xa0, 0x2c)}   # the series' line colours


def load(path):
    """The DOM after every figure was drawn, and the page's console messages."""
    p = chromium(["--enable-logging=stderr", "--v=0", "--virtual-time-budget=15000", "--dump-dom",
                  f"file://{path}"])
    console = [ln for ln in p.stderr.splitlines() if ":CONSOLE" in ln and "file://" in ln]
    return p, p.stdout, console


def figures(dom):
    """Each figure's element: (id, its attributes, its DOM up to the next figure)."""
    starts = list(re.finditer(r'<div class="chart[^"]*" id="([^"]+)"([^>]*)>', dom))
    return [(m.group(1), m.group(2), dom[m.end():starts[k + 1].start() if k + 1 < len(starts) else len(dom)])
            for k, m in enumerate(starts)]


out = tmpdir()
versus(["report", EXAMPLE, "-o", out])
expected = {"index.html": 2, "details.html": 3}   # latency and bandwidth; one per configuration
for page, want in expected.items():
    path = os.path.join(out, page)
    html = open(path, encoding="utf-8").read()
    p, dom, console = load(path)
    check(p.returncode == 0 and "<body" in dom, f"{page}: Chromium loads the page")
    specs = re.findall(r'<script type="application/json" id="([^"]+)-spec">(.*?)</script>', html, re.S)
    check(len(specs) == want, f"{page}: {want} figures carried as JSON ({len(specs)})")
    for name, body in specs:
        spec = json.loads(body)
        check(spec["data"] and spec["layout"]["xaxis"]["type"] == "log" and
              len(spec["layout"]["yaxis"]["tickvals"]) >= 4,
              f"{page}: {name}: log axes with at least 4 labelled value ticks "
              f"({len(spec['layout']['yaxis']['tickvals'])})")
        check("95 % CI" in spec["layout"]["title"]["text"], f"{page}: {name} names its statistic in its title")
    figs = figures(dom)
    check(len(figs) == want, f"{page}: {want} figure elements in the DOM ({len(figs)})")
    check(f'data-charts-drawn="{want}"' in dom, f"{page}: the page drew all {want} figures")
    for name, attrs, body in figs:
        n = re.search(r'data-points="(\d+)"', attrs)
        drawn = len(re.findall(r'class="point[" ]', body))
        check("js-plotly-plot" in dom.split(f'id="{name}"')[0][-60:] and "data-error" not in attrs,
              f"{page}: {name} is drawn by Plotly, without error")
        check(n is not None and int(n.group(1)) >= 10 and drawn >= int(n.group(1)),
              f"{page}: {name}: {n.group(1) if n else 0} data points, {drawn} point marks in its SVG")
        check(body.count('class="trace scatter') >= 3, f"{page}: {name}: its traces are in the SVG")
    for ln in console:
        log("  console: " + ln)
    check(not console, f"{page}: no console message ({len(console)})")
    check("<noscript>" in html, f"{page}: a <noscript> line says the figures need JavaScript")
    if page == "details.html":
        for cfg in ("shm", "tcp-poll", "ucx-tcp"):
            check(f'id="detail-{cfg}"' in dom and f'id="regimes-{cfg}"' in dom,
                  f"details.html: {cfg}'s per-size and regime tables are in the DOM")
        check("one-way latency (µs)" in dom, "details.html: the detail figures' axis title is text in the DOM")
        check("Control limits: the 0.135th" in dom, "details.html: the per-size table's note is a footnote there")

# index.html's first screen: the lines of the summary figures, and no table above them
head = open(os.path.join(out, "index.html"), encoding="utf-8").read().split('<div class="chart"', 1)[0]
check("<table" not in head, "no table comes before the first figure in index.html")
shot = os.path.join(out, "first-screen.png")
chromium(["--window-size=1280,900", "--hide-scrollbars", "--virtual-time-budget=15000", f"--screenshot={shot}",
          f"file://{os.path.join(out, 'index.html')}"])
import matplotlib.image  # noqa: E402

img = (matplotlib.image.imread(shot)[:, :, :3] * 255).astype(int)
check(img.shape[0] == 900, f"the screenshot is the first screen (900 px high, got {img.shape[0]})")
for cfg, rgb in COLORS.items():
    near = int((np.abs(img - np.array(rgb)).max(axis=2) <= 12).sum())
    check(near >= 300, f"the first screen shows {cfg}'s lines ({near} pixels of its colour)")
print("figures: drawn with their points on both pages, the first screen shows them, the console is quiet")
