"""Interactive figures of the HTML report: Plotly figure specifications
(`{"data": [...], "layout": {...}}`, plain JSON) built from the same per-size
dicts the report's model holds, and the Plotly library itself, inlined once
per page so that the report stays one file that works offline.

Nothing here computes a statistic: the medians, their 95 % intervals, the
control limits, the fitted regimes and the transitions come from the model.
A series of more than GL_POINTS points is drawn with WebGL (`scattergl`),
which keeps a page of 10,000 sizes responsive.  Every label that comes from
a results file is HTML-escaped before it reaches Plotly (which reads a few
tags in its strings), and the JSON is embedded with <, > and & written as
\\u003c, \\u003e and \\u0026, so that no string can end its <script> element.
"""
from __future__ import annotations

import functools
import html
import json
import math
from pathlib import Path

from .compare import fmt_bytes
from .launches import band_words

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
          "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#637939", "#843c39", "#7b4173"]
GL_POINTS = 2000      # above this many points a series is drawn with WebGL
FONT = {"family": "system-ui, sans-serif", "size": 12, "color": "#222"}


def text(label) -> str:
    """A label as Plotly shows it: as written (its markup escaped, Plotly decodes the entities)."""
    return html.escape(str(label), quote=False)


def _num(v):
    """A finite float at 5 significant figures (more than a figure or its hover shows), else None (a gap)."""
    if v is None:
        return None
    v = float(v)
    return float(f"{v:.5g}") if math.isfinite(v) else None


def _rgba(color: str, alpha: float) -> str:
    c = color.lstrip("#")
    return f"rgba({int(c[0:2], 16)},{int(c[2:4], 16)},{int(c[4:6], 16)},{alpha})"


def _bytes_label(v: int) -> str:
    for unit, k in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if v >= k and v % k == 0:
            return f"{v // k}{unit}"
    return str(v)


def size_ticks(lo: float, hi: float, most: int = 12) -> dict:
    """Tick values and labels of a log size axis: powers of two from lo to hi, every
    k-th so that at most `most` are labelled."""
    if not (lo > 0 and hi >= lo):
        return {}
    e0, e1 = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
    step = max(1, math.ceil((e1 - e0 + 1) / most))
    vals = [1 << e for e in range(max(e0, 0), e1 + 1, step)]
    return {"tickmode": "array", "tickvals": vals, "ticktext": [_bytes_label(v) for v in vals]}


MANTISSAS = ([1], [1, 3], [1, 2, 5], [1, 1.5, 2, 3, 5, 7], [1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9],
             [1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.8, 2, 2.2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9])


def value_ticks(lo: float, hi: float, least: int = 5, most: int = 14) -> dict:
    """Tick values and labels of a log value axis from lo to hi: the sparsest of
    1; 1-3; 1-2-5; 1-1.5-2-3-5-7; ... per decade that labels at least `least` ticks in the
    range, else (a range within one decade) evenly spaced round values."""
    if not (lo > 0 and hi > lo):
        return {}
    d0, d1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    best = []
    for mant in MANTISSAS:
        vals = [m * 10.0 ** d for d in range(d0, d1 + 1) for m in mant]
        vals = [float(f"{v:.6g}") for v in vals if lo <= v <= hi]
        if len(vals) > most and best:
            break
        best = vals
        if len(vals) >= least:
            break
    if len(best) < least:      # a narrow range (6.2 to 8.9): evenly spaced round values
        raw = (hi - lo) / least
        unit = 10.0 ** math.floor(math.log10(raw))
        step = max(m * unit for m in (1, 2, 5) if m * unit <= raw * 1.001)   # at most (hi - lo) / least
        first = math.ceil(lo / step - 1e-9)
        best = [float(f"{k * step:.6g}") for k in range(first, first + 3 * least) if k * step <= hi * (1 + 1e-9)]
    return {"tickmode": "array", "tickvals": best, "ticktext": [f"{v:g}" for v in best]}


def _log_axis(title: str, lo: float, hi: float, ticks: dict) -> dict:
    pad = 0.04 * (math.log10(hi) - math.log10(lo)) if hi > lo else 0.1
    return {"type": "log", "title": {"text": text(title)}, "range": [math.log10(lo) - pad, math.log10(hi) + pad],
            "showgrid": True, "gridcolor": "#e5e5e5", "zeroline": False, "showline": True,
            "linecolor": "#888", "ticks": "outside", **ticks}


def _layout(title: str, height: int = 470) -> dict:
    # the legend sits under the plot, so that no label inside the plot area is hidden by it
    return {"title": {"text": text(title), "x": 0, "xanchor": "left", "y": 0.98, "yanchor": "top",
                      "font": {"size": 13}},
            "height": height, "margin": {"l": 70, "r": 20, "t": 64, "b": 60},
            "font": FONT, "paper_bgcolor": "white", "plot_bgcolor": "white", "hovermode": "closest",
            "legend": {"orientation": "h", "x": 0, "xanchor": "left", "y": -0.2, "yanchor": "top",
                       "font": {"size": 11}},
            "showlegend": True}


def _points(sizes: list[dict], key: str, ci_key: str):
    """Sizes above 0 B with a positive value (a log axis has no place for the others):
    bytes, value, interval low, interval high."""
    x, y, lo, hi = [], [], [], []
    for s in sizes:
        v = s.get(key)
        if s["bytes"] <= 0 or v is None or not v > 0:
            continue
        ci = s.get(ci_key) or [v, v]
        x.append(s["bytes"])
        y.append(_num(v))
        lo.append(_num(ci[0]) if ci[0] is not None and ci[0] > 0 else None)
        hi.append(_num(ci[1]) if ci[1] is not None and ci[1] > 0 else None)
    return x, y, lo, hi


def _extent(*lists) -> tuple[float, float]:
    vals = [v for values in lists for v in values if v is not None and v > 0]
    return (min(vals), max(vals)) if vals else (1.0, 10.0)


def _hover(unit: str, what: str) -> str:
    return ("<b>%{fullData.name}</b><br>%{x:,} B<br>" + what + " %{y:.4g} " + unit
            + "<br>95 % CI %{customdata[0]:.4g} to %{customdata[1]:.4g} " + unit + "<extra></extra>")


def _series_traces(label: str, x, y, lo, hi, color: str, dash: bool, unit: str, what: str) -> list[dict]:
    """A series' line with its 95 % interval per point (customdata, shown on hover).  Its `band`
    key asks the page to draw that interval as a filled band behind the line (two traces the
    page makes from x and customdata, so that the figure's JSON carries each number once)."""
    kind = "scattergl" if len(x) > GL_POINTS else "scatter"
    line = {"type": kind, "x": x, "y": y, "name": text(label), "legendgroup": str(label),
            "mode": "lines" if kind == "scattergl" else "lines+markers",    # thousands of markers hide the line
            "line": {"color": color, "width": 2 if dash else 1.3, "dash": "dash" if dash else "solid"},
            "marker": {"size": 3 if dash else 4, "color": color},
            "customdata": [[a if a is not None else v, b if b is not None else v] for a, b, v in zip(lo, hi, y)],
            "hovertemplate": _hover(unit, what), "meta": "points", "band": _rgba(color, 0.18)}
    return [line]


def comparison_charts(name: str, title: str, series: list[dict], floor: dict | None,
                      time_label: str = "one-way latency",
                      kinds: tuple[str, ...] = ("latency", "bandwidth")) -> list[dict]:
    """Latency and bandwidth (`kinds`) of every configuration of one pattern and variant, median
    with its 95 % interval as a band (series and floor as plots.comparison_plots takes them)."""
    out = []
    for kind in kinds:
        traces, xs, ys = [], [], []
        for i, s in enumerate(series):
            is_floor = floor is not None and s is floor
            color = "#000000" if is_floor else COLORS[i % len(COLORS)]
            if kind == "latency":
                x, y, lo, hi = _points(s["sizes"], "median_us", "median_ci_us")
            else:
                x, y, lo, hi = _points(s["sizes"], "bandwidth_MBps", "bw_ci_MBps")
            if not x:
                continue
            label = str(s["label"]) + (" (floor: upper bound)" if is_floor and kind == "bandwidth"
                                  else " (floor: lower bound)" if is_floor else "")
            traces += _series_traces(label, x, y, lo, hi, color, is_floor,
                                     "µs" if kind == "latency" else "MB/s",
                                     "median" if kind == "latency" else "bandwidth")
            xs += x
            ys += [v for v in y + lo + hi if v is not None]
        if not traces:
            continue
        band = band_words([x for s in series for x in s["sizes"]])
        statistic = (band.replace("95 % CI", "95 % CI band", 1) if kind == "latency"
                     else f"bytes over that time; {band.replace('95 % CI', '95 % CI band', 1)}")
        layout = _layout(f"{kind}: {statistic}")
        x0, x1 = _extent(xs)
        y0, y1 = _extent(ys)
        layout["xaxis"] = _log_axis("message size (bytes)", x0, x1, size_ticks(x0, x1))
        layout["yaxis"] = _log_axis(f"{time_label}, median (µs)" if kind == "latency"
                                    else "bandwidth (MB/s): bytes / median time",
                                    y0, y1, value_ticks(y0, y1))
        out.append({"kind": kind, "name": f"chart-{name}-{kind}", "statistic": statistic,
                    "spec": {"data": traces, "layout": layout}})
    return out


def detail_chart(name: str, label: str, sizes: list[dict], regimes: list[dict], transitions: list[dict],
                 time_label: str = "one-way latency") -> dict | None:
    """One configuration: median with its 95 % band, control limits (a limit at or below 0 has no
    place on the log axis and is left out), sizes whose payload check failed, the fitted regimes
    T(n) = s + r·n and the detected transitions, each a vertical line labelled at the top of the
    plot (the legend is under the plot)."""
    x, y, lo, hi = _points(sizes, "median_us", "median_ci_us")
    if not x:
        return None
    pts = [s for s in sizes if s["bytes"] > 0 and s.get("median_us") is not None and s["median_us"] > 0]
    kind = "scattergl" if len(x) > GL_POINTS else "scatter"
    traces = _series_traces("median", x, y, lo, hi, COLORS[0], False, "µs", "median")
    traces[-1]["hovertemplate"] = traces[-1]["hovertemplate"].replace("%{fullData.name}", text(label))
    ucl = [_num(p["ucl_us"]) if p.get("ucl_us") and p["ucl_us"] > 0 else None for p in pts]
    lcl = [_num(p["lcl_us"]) if p.get("lcl_us") and p["lcl_us"] > 0 else None for p in pts]
    limits = {"type": kind, "x": x, "mode": "lines", "line": {"color": COLORS[1], "width": 1, "dash": "dot"},
              "legendgroup": "limits", "hovertemplate": "%{x:,} B<br>control limit %{y:.4g} µs<extra></extra>"}
    # over thousands of sizes the limits are a thicket hiding the medians: shown on a legend click
    shown = True if kind == "scatter" else "legendonly"
    traces.append({**limits, "y": ucl, "name": "control limits (0.135th, 99.865th percentile)", "visible": shown})
    traces.append({**limits, "y": lcl, "name": "lower control limit", "showlegend": False, "visible": shown})
    bad = [p for p in pts if p.get("valid") is False]
    if bad:
        traces.append({"type": "scatter", "x": [p["bytes"] for p in bad], "y": [_num(p["median_us"]) for p in bad],
                       "mode": "markers", "name": "payload check failed (not fitted)",
                       "marker": {"symbol": "x", "size": 9, "color": COLORS[1]},
                       "text": [fmt_bytes(p["bytes"]) for p in bad],
                       "hovertemplate": "%{text}: payload check failed<extra></extra>"})
    meds = [v for v in y if v is not None]
    ylo, yhi = min(meds) / 3, max(meds) * 10       # the curve decides the scale, not wild limits
    for k, g in enumerate(regimes):
        xs = [b for b in x if g["from_bytes"] <= b <= g["to_bytes"]]
        if len(xs) < 2 or g.get("latency_us") is None or g.get("inverse_bandwidth_ns_per_byte") is None:
            continue
        s_us, r = g["latency_us"], g["inverse_bandwidth_ns_per_byte"] / 1e3
        traces.append({"type": kind, "x": xs, "y": [_num(max(s_us + r * b, 1e-3)) for b in xs], "mode": "lines",
                       "line": {"color": COLORS[2], "width": 3}, "opacity": 0.6, "legendgroup": "fit",
                       "name": "fitted T(n) = s + r·n", "showlegend": k == 0,
                       "hovertemplate": (f"regime {k + 1}: s = {s_us:.4g} µs, 1/r = "
                                         f"{(1e3 / r / 1e6 if r > 0 else float('inf')):.4g} MB/s"
                                         "<br>%{x} B: %{y:.4g} µs<extra></extra>")})
    layout = _layout(f"{label}: {time_label}, median with 95 % CI band", height=440)
    marks = [t for t in transitions if t.get("bytes", 0) > 0]
    if marks:
        vx, vy, hover = [], [], []
        for t in marks:
            words = text(f"{t['kind']} at {fmt_bytes(t['bytes'])}: {t.get('label', '')}")
            vx += [t["bytes"], t["bytes"], None]
            vy += [ylo, yhi, None]
            hover += [words, words, ""]
        traces.append({"type": "scatter", "x": vx, "y": vy, "mode": "lines", "name": "detected transition",
                       "line": {"color": COLORS[4], "width": 1.2, "dash": "dashdot"}, "text": hover,
                       "hovertemplate": "%{text}<extra></extra>", "legendgroup": "transitions"})
        # labels along the top edge of the plot, rotated, left of their line; a label closer than
        # 4 % of the axis to the previous one is left out (its line stays, and says itself on hover)
        span = max(math.log10(max(x)) - math.log10(min(x)), 1e-9)
        labelled, last = [], -math.inf
        for t in sorted(marks, key=lambda t: t["bytes"]):
            at = math.log10(t["bytes"])
            if at - last >= 0.04 * span:
                labelled.append(t)
                last = at
        layout["annotations"] = [{"x": math.log10(t["bytes"]), "xref": "x", "y": 1, "yref": "paper",
                                  "text": text(f"{t['kind']} {_bytes_label(t['bytes'])}B"), "textangle": -90,
                                  "xanchor": "right", "yanchor": "top", "showarrow": False,
                                  "font": {"size": 10, "color": COLORS[4]}} for t in labelled]
    x0, x1 = _extent(x)
    layout["xaxis"] = _log_axis("message size (bytes)", x0, x1, size_ticks(x0, x1))
    layout["yaxis"] = _log_axis(f"{time_label} (µs)", ylo, yhi, value_ticks(ylo, yhi))
    return {"name": f"chart-{name}", "statistic": band_words(sizes).replace("95 % CI", "95 % CI band", 1),
            "spec": {"data": traces, "layout": layout}}


def native_chart(name: str, title: str, sbs: dict) -> dict:
    """versus's figure with its 95 % interval and the imported tool's figures (crosses, no interval)."""
    rows = [r for r in sbs["rows"] if r["bytes"] > 0 and r["versus"] and r["versus"] > 0]
    scale, unit = (1e-3, "µs") if sbs["unit"] == "ns" else (1.0, "MB/s")
    sizes = [{"bytes": r["bytes"], "v": r["versus"] * scale,
              "ci": [c * scale for c in r["versus_ci"]] if r["versus_ci"] else None} for r in rows]
    x, y, lo, hi = _points(sizes, "v", "ci")
    traces = _series_traces(f"versus ({sbs['versus_statistic']})", x, y, lo, hi, COLORS[0], False, unit,
                            "versus")
    tool = [(r["bytes"], _num(r["tool"] * scale)) for r in rows if r["tool"] and r["tool"] > 0]
    traces.append({"type": "scatter", "x": [b for b, _ in tool], "y": [v for _, v in tool], "mode": "markers",
                   "name": text(f"{sbs['tool']} {sbs['test']} ({sbs['statistic']}, no interval)"),
                   "marker": {"symbol": "x", "size": 8, "color": COLORS[1]},
                   "text": [fmt_bytes(b) for b, _ in tool],
                   "hovertemplate": "%{text}<br>tool %{y:.4g} " + unit + "<extra></extra>"})
    layout = _layout(f"{title}: versus with 95 % CI band, the tool's figures")
    x0, x1 = _extent(x)
    y0, y1 = _extent(y, lo, hi, [v for _, v in tool])
    layout["xaxis"] = _log_axis("message size (bytes)", x0, x1, size_ticks(x0, x1))
    layout["yaxis"] = _log_axis("one-way time (µs)" if unit == "µs" else "bandwidth (MB/s)", y0, y1,
                                value_ticks(y0, y1))
    return {"name": f"chart-{name}", "statistic": "versus with 95 % CI band", "spec": {"data": traces, "layout": layout}}


def history_chart(name: str, s: dict) -> dict:
    """A metric over the runs of one configuration in time order, change points as dashed lines."""
    pts = s["points"]
    x = list(range(len(pts)))
    traces = [{"type": "scatter", "x": x, "y": [_num(p["value"]) for p in pts], "mode": "lines+markers",
               "name": "run median", "line": {"color": COLORS[0], "width": 1.3}, "marker": {"size": 5},
               "text": [text(p["date"]) for p in pts], "meta": "points",
               "hovertemplate": "%{text}<br>run median %{y:.4g} " + text(s["unit"]) + "<extra></extra>"}]
    layout = _layout(f"{s['label']}: {s['metric']} at {s['bytes']} B, run median", height=400)
    step = max(1, len(pts) // 8)
    layout["xaxis"] = {"title": {"text": "run (date)"}, "tickmode": "array", "tickvals": x[::step],
                       "ticktext": [text(p["date"][:10]) for p in pts][::step], "showline": True,
                       "linecolor": "#888", "gridcolor": "#e5e5e5", "zeroline": False}
    layout["yaxis"] = {"title": {"text": text(f"{s['metric']} ({s['unit']})")}, "gridcolor": "#e5e5e5",
                       "showline": True, "linecolor": "#888", "zeroline": False}
    layout["shapes"] = [{"type": "line", "x0": c["index"] - 0.5, "x1": c["index"] - 0.5, "xref": "x",
                         "y0": 0, "y1": 1, "yref": "paper", "line": {"color": "black", "dash": "dash", "width": 1}}
                        for c in s["changes"]]
    layout["annotations"] = [{"x": c["index"] - 0.5, "xref": "x", "y": 1, "yref": "paper",
                              "text": f"{c['change_pct']:+.1f} %", "showarrow": False, "xanchor": "left",
                              "yanchor": "top", "font": {"size": 10}} for c in s["changes"]]
    return {"name": f"chart-{name}", "statistic": "run median", "spec": {"data": traces, "layout": layout}}


_UNSAFE = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026",
           0x2028: "\\u2028", 0x2029: "\\u2029"}


def chart_json(spec: dict) -> str:
    """A figure's JSON for a <script type="application/json"> element: no '<', '>' or '&'
    (a label's "</script>" cannot end the element), no NaN (strict JSON)."""
    return json.dumps(spec, separators=(",", ":"), ensure_ascii=False, allow_nan=False).translate(_UNSAFE)


def _plotly():
    try:
        import plotly
    except ImportError:
        from .load import InputError
        raise InputError("the HTML report draws its figures with Plotly: install the Python package plotly "
                         "(reports/pyproject.toml lists it)") from None
    return plotly


@functools.lru_cache(maxsize=1)
def plotly_js() -> str:
    """The Plotly library shipped with the plotly package (one minified file, no network)."""
    path = Path(_plotly().__file__).parent / "package_data" / "plotly.min.js"
    js = path.read_text(encoding="utf-8")
    return js.replace("</script", "<\\/script")


def plotly_version() -> str:
    plotly = _plotly()
    head = plotly_js()[:200]
    v = head.split("plotly.js v", 1)[1].split()[0] if "plotly.js v" in head else "?"
    return f"{v} (plotly {plotly.__version__})"
