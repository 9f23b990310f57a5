"""Plots of the report (matplotlib, Agg): SVG text for the HTML page (fonts
kept as text, so labels stay searchable) and PDF files for LaTeX.

Inputs are the report's plain data (per-size statistics as dicts); nothing
here computes a statistic.  Zero-byte sizes are left out of log axes.
"""
from __future__ import annotations

import io
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

# text.parse_math off: every label is shown as written; a '$' in a host name, a date or a
# configuration's label would otherwise start mathtext (and a malformed one raise)
matplotlib.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "versus", "font.size": 9,
                            "axes.grid": True, "grid.alpha": 0.3, "legend.fontsize": 7,
                            "text.parse_math": False})
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
          "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#637939", "#843c39", "#7b4173"]


def plain(label: str) -> str:
    """A label as matplotlib shows it: as written (mathtext is off, text.parse_math)."""
    return str(label)


def safe_name(name: str) -> str:
    """A figure's name as an HTML id, the prefix of its SVG's internal ids and a file name:
    letters, digits and '-' only (LaTeX's \\includegraphics takes no escaped '_').  Names carry
    a results file's pattern, variant and labels; anything else in them becomes '-', and a
    short hash of the whole name keeps two names that differ only there apart (at most 100
    characters)."""
    import hashlib
    clean = re.sub(r"[^A-Za-z0-9-]", "-", str(name))
    if clean != name or len(clean) > 100:
        clean = clean[:88] + "-" + hashlib.sha256(str(name).encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return clean


def _bytes_tick(v, _pos=None) -> str:
    v = int(round(v))
    for unit, k in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if v >= k and v % k == 0:
            return f"{v // k}{unit}"
    return str(v)


def _number_tick(v, _pos=None) -> str:
    return f"{v:g}"


def log_axes(ax) -> None:
    """Log axes (sizes in powers of two, times or rates in powers of ten) whose
    tick labels are plain text: matplotlib's default log labels are mathtext
    ('$\\mathdefault{2^{10}}$'), parsed label by label, which dominated the
    time a large report spent on its plots."""
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=2, numticks=12))
    ax.xaxis.set_major_formatter(FuncFormatter(_bytes_tick))
    ax.yaxis.set_major_formatter(FuncFormatter(_number_tick))
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_minor_formatter(NullFormatter())


def _svg_text(fig, prefix: str) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    # ids of clip paths and glyphs must be unique within one HTML page
    svg = re.sub(r'id="([^"]+)"', lambda m: f'id="{prefix}-{m.group(1)}"', svg)
    svg = re.sub(r'url\(#([^)]+)\)', lambda m: f'url(#{prefix}-{m.group(1)})', svg)
    svg = re.sub(r'xlink:href="#([^"]+)"', lambda m: f'xlink:href="#{prefix}-{m.group(1)}"', svg)
    return svg


def _emit(fig, name: str, pdf_dir: Path | None) -> dict:
    name = safe_name(name)
    out = {"name": name}
    if pdf_dir is not None:
        path = pdf_dir / f"{name}.pdf"
        fig.savefig(path, format="pdf", bbox_inches="tight")
        out["pdf"] = path.name
    out["svg"] = _svg_text(fig, name)
    return out


def _arr(values) -> list[float]:
    return [float("nan") if v is None else float(v) for v in values]


def _series(sizes: list[dict], key: str):
    pts = [s for s in sizes if s["bytes"] > 0 and s.get(key) is not None]
    return [s["bytes"] for s in pts], pts


def comparison_plots(name: str, title: str, series: list[dict], floor: dict | None,
                     pdf_dir: Path | None, time_label: str = "one-way latency") -> list[dict]:
    """Latency and bandwidth of every configuration of one pattern/variant;
    time_label says what the times are (units.py: one-way latency for a ping-pong).

    series: [{label, sizes: [size dicts with median_us, median_ci_us, bandwidth_MBps, bw_ci_MBps]}];
    floor: the shm series, drawn as the upper bound (dashed, black)."""
    out = []
    for kind in ("latency", "bandwidth"):
        fig, ax = plt.subplots(figsize=(7.0, 4.2))
        for i, s in enumerate(series):
            is_floor = floor is not None and s is floor
            color = "black" if is_floor else COLORS[i % len(COLORS)]
            if kind == "latency":
                x, pts = _series(s["sizes"], "median_us")
                y = [p["median_us"] for p in pts]
                lo = [(p["median_ci_us"] or [p["median_us"]] * 2)[0] for p in pts]
                hi = [(p["median_ci_us"] or [p["median_us"]] * 2)[1] for p in pts]
            else:
                x, pts = _series(s["sizes"], "bandwidth_MBps")
                y = [p["bandwidth_MBps"] for p in pts]
                lo = [p["bw_ci_MBps"][0] for p in pts]
                hi = [p["bw_ci_MBps"][1] for p in pts]
            if not x:
                continue
            label = plain(s["label"]) + (" (floor: upper bound)" if is_floor and kind == "bandwidth"
                                         else " (floor: lower bound)" if is_floor else "")
            ax.plot(x, y, "--" if is_floor else "-", marker="" if is_floor else ".", ms=3,
                    lw=1.6 if is_floor else 1.0, color=color, label=label)
            ax.fill_between(x, _arr(lo), _arr(hi), color=color, alpha=0.18, lw=0)
        log_axes(ax)
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel(plain(f"{time_label}, median (µs)") if kind == "latency"
                      else plain(f"bandwidth, bytes moved / median {time_label} (MB/s)"))
        ax.set_title(plain(f"{title}: {kind}"))
        ax.legend(loc="upper left" if kind == "latency" else "lower right", ncol=2)
        out.append({"kind": kind, **_emit(fig, f"{name}-{kind}", pdf_dir)})
    return out


def detail_plot(name: str, label: str, sizes: list[dict], regimes: list[dict],
                transitions: list[dict], pdf_dir: Path | None = None,
                time_label: str = "one-way latency") -> dict:
    """One configuration: median with its CI band, control limits (the samples'
    0.135th and 99.865th percentiles, stats.LIMITS_RULE; a limit at or below 0
    has no place on the log axis and is left out), the fitted regimes and the
    detected transitions."""
    fig, ax = plt.subplots(figsize=(7.0, 3.4))
    x, pts = _series(sizes, "median_us")
    if x:
        ax.fill_between(x, [p["median_ci_us"][0] if p["median_ci_us"] else p["median_us"] for p in pts],
                        [p["median_ci_us"][1] if p["median_ci_us"] else p["median_us"] for p in pts],
                        color=COLORS[0], alpha=0.25, lw=0, label="median 95 % CI")
        ax.plot(x, [p["median_us"] for p in pts], ".-", color=COLORS[0], ms=3, lw=1, label="median")
        ax.plot(x, [p["ucl_us"] if p["ucl_us"] > 0 else float("nan") for p in pts], ":", color=COLORS[1], lw=1,
                label="control limits (0.135th, 99.865th percentile)")
        ax.plot(x, [p["lcl_us"] if p["lcl_us"] > 0 else float("nan") for p in pts], ":", color=COLORS[1], lw=1)
        bad = [p for p in pts if p.get("valid") is False]
        if bad:
            ax.plot([p["bytes"] for p in bad], [p["median_us"] for p in bad], "x", color=COLORS[1], ms=7,
                    mew=1.5, label="payload check failed (not fitted)")
        meds = [p["median_us"] for p in pts if p["median_us"] > 0]
        if meds:     # the curve decides the scale; wild control limits leave the frame
            ax.set_ylim(min(meds) / 3, max(meds) * 10)
        for g in regimes:
            xs = [b for b in x if g["from_bytes"] <= b <= g["to_bytes"]]
            if len(xs) >= 2:
                s_us, r = g["latency_us"], g["inverse_bandwidth_ns_per_byte"] / 1e3
                ax.plot(xs, [max(s_us + r * b, 1e-3) for b in xs], "-", color=COLORS[2], lw=2, alpha=0.6,
                        label="fitted T(n) = s + r·n" if g is regimes[0] else None)
        for t in transitions:
            if t["bytes"] > 0:
                ax.axvline(t["bytes"], color=COLORS[4], lw=1, ls="-.")
                ax.annotate(plain(f"{t['kind']} {t['bytes']} B"), (t["bytes"], 1), xycoords=("data", "axes fraction"),
                            rotation=90, va="top", ha="right", fontsize=7, color=COLORS[4])
        log_axes(ax)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel(plain(f"{time_label} (µs)"))
    ax.set_title(plain(label))
    ax.legend(loc="upper left")
    return _emit(fig, name, pdf_dir)


def native_plot(name: str, title: str, sbs: dict, pdf_dir: Path | None) -> dict:
    """versus's figure (with its 95 % interval) and the imported tool's, per size (sidebyside.py)."""
    rows = sbs["rows"]
    scale = 1e-3 if sbs["unit"] == "ns" else 1.0
    x = [r["bytes"] for r in rows]
    fig, ax = plt.subplots(figsize=(7.0, 4.2))
    y = [r["versus"] * scale for r in rows]
    lo = [(r["versus_ci"] or [r["versus"]] * 2)[0] * scale for r in rows]
    hi = [(r["versus_ci"] or [r["versus"]] * 2)[1] * scale for r in rows]
    ax.plot(x, y, "-", marker=".", ms=3, lw=1.0, color=COLORS[0], label=plain(f"versus ({sbs['versus_statistic']})"))
    ax.fill_between(x, _arr(lo), _arr(hi), color=COLORS[0], alpha=0.18, lw=0)
    ax.plot(x, [r["tool"] * scale for r in rows], "x", ms=5, color=COLORS[1 % len(COLORS)],
            label=plain(f"{sbs['tool']} {sbs['test']} ({sbs['statistic']}, no interval)"))
    log_axes(ax)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("one-way time (µs)" if sbs["unit"] == "ns" else "bandwidth (MB/s)")
    ax.set_title(plain(title))
    ax.legend(loc="upper left", fontsize=8)
    return _emit(fig, name, pdf_dir)


def history_plot(name: str, s: dict, pdf_dir: Path | None) -> dict:
    """A metric over the runs of one configuration, change points marked (history.py)."""
    pts = s["points"]
    fig, ax = plt.subplots(figsize=(7.0, 3.6))
    x = list(range(len(pts)))
    ax.plot(x, [p["value"] for p in pts], "-", marker=".", ms=4, lw=1.0, color=COLORS[0])
    for c in s["changes"]:
        ax.axvline(c["index"] - 0.5, color="black", ls="--", lw=1.0)
        ax.annotate(plain(f"{c['change_pct']:+.1f}%"), (c["index"] - 0.5, ax.get_ylim()[1]),
                    ha="left", va="top", fontsize=8)
    step = max(1, len(pts) // 8)
    ax.set_xticks(x[::step])
    ax.set_xticklabels([p["date"][:10] for p in pts][::step], rotation=30, ha="right", fontsize=7)
    ax.set_ylabel(plain(f"{s['metric']} at {s['bytes']} B ({s['unit']}), run median"))
    ax.set_title(plain(s["label"]))
    fig.tight_layout()
    return _emit(fig, name, pdf_dir)
