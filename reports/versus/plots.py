"""Figures of the LaTeX report: PDF files, drawn with matplotlib (Agg).  The HTML page
draws its own charts from the model's data; what is returned here for it is the figure's
name and an empty `svg`.

Inputs are the report's plain data (per-size statistics as dicts); nothing here computes a
statistic.  Zero-byte sizes are left out of log axes.  A series of more than MAX_POINTS sizes
is drawn through a subset of them (thin()): MAX_POINTS sizes evenly spaced on the log axis,
every size next to a detected transition, and every size whose median lies more than
KINK_PCT % off the line through the others; the tables and samples.parquet keep every size.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, Locator, LogLocator, MaxNLocator, NullFormatter  # noqa: E402

# Set once for every figure.  text.parse_math off: every label is shown as written; a '$' in a
# host name, a date or a configuration's label would otherwise start mathtext (and a malformed
# one raise).  pdf.compression 1: the figures are a few kB of line art, the default level 6 only
# costs time.
matplotlib.rcParams.update({"font.size": 9, "axes.grid": True, "grid.alpha": 0.3, "legend.fontsize": 7,
                            "text.parse_math": False, "pdf.compression": 1,
                            "path.simplify": True, "agg.path.chunksize": 10000})
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
          "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#637939", "#843c39", "#7b4173"]
STYLES = ["-", "--", ":", "-."]
MAX_POINTS = 160        # sizes per series drawn at most on an even log grid (plus what thin() keeps)
KINK_PCT = 3.0          # a median this far off the line through its neighbours drawn is drawn too
MARKERS_UP_TO = 60      # a series drawn at more points than this is drawn as a line, no markers


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


class LogTicks(Locator):
    """Major ticks of a log y axis with at least three of them labelled in view: powers of
    ten where the axis spans enough decades, then 1-2-5 steps, then every digit, and on an axis
    spanning less than that (a latency curve between 1.2 and 1.9 µs) evenly spaced round values."""

    def __call__(self):
        lo, hi = self.axis.get_view_interval()
        return self.tick_values(lo, hi)

    def tick_values(self, vmin, vmax):
        lo, hi = sorted((vmin, vmax))
        if not (hi > 0 and math.isfinite(hi)):
            return []
        lo = lo if lo > 0 else hi / 10
        for subs in ((1.0,), (1.0, 2.0, 5.0), tuple(range(1, 10))):
            ticks = [t for t in LogLocator(base=10, subs=subs).tick_values(lo, hi) if lo <= t <= hi]
            if len(ticks) >= 3:
                return ticks
        ticks = [t for t in MaxNLocator(nbins=4, steps=[1, 2, 2.5, 5, 10]).tick_values(lo, hi)
                 if lo <= t <= hi and t > 0]
        return ticks if len(ticks) >= 3 else [lo, math.sqrt(lo * hi), hi]


def _y_tick(v, _pos=None) -> str:
    """Three significant figures, never in exponent form (1000, 0.0012)."""
    text = f"{v:.3g}"
    if "e" in text:
        text = f"{v:.0f}" if abs(v) >= 1 else f"{v:.8f}".rstrip("0")
    return text


def log_axes(ax) -> None:
    """Log axes (sizes in powers of two, times or rates with at least three labelled ticks,
    LogTicks) whose tick labels are plain text: matplotlib's default log labels are mathtext
    ('$\\mathdefault{2^{10}}$'), parsed label by label."""
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=2, numticks=12))
    ax.xaxis.set_major_formatter(FuncFormatter(_bytes_tick))
    ax.yaxis.set_major_locator(LogTicks())
    ax.yaxis.set_major_formatter(FuncFormatter(_y_tick))
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_minor_formatter(NullFormatter())


def _emit(fig, name: str, pdf_dir: Path | None, **about) -> dict:
    """Write the figure as pdf_dir/NAME.pdf; `svg` stays empty (the HTML draws its own charts)."""
    name = safe_name(name)
    out = {"name": name, "svg": "", **about}
    if fig is None:
        return out
    if pdf_dir is not None:
        path = pdf_dir / f"{name}.pdf"
        fig.savefig(path, format="pdf", bbox_inches="tight")
        out["pdf"] = path.name
    plt.close(fig)
    return out


def thin(x, y, keep=()) -> np.ndarray:
    """Indices of the points of a series (x ascending, all > 0) to draw: all of them up to
    MAX_POINTS; beyond, MAX_POINTS evenly spaced on log x, the first and last, the two on each
    side of every size in `keep` (the transitions), and every point whose y lies more than
    KINK_PCT % off the straight line (log-log) through the points drawn, with its neighbours
    (repeated until none is off)."""
    x = np.asarray(x, dtype=float)
    n = x.size
    if n <= MAX_POINTS:
        return np.arange(n)
    lx = np.log(x)
    pick = np.zeros(n, dtype=bool)
    grid = np.linspace(lx[0], lx[-1], MAX_POINTS)
    pick[np.clip(np.searchsorted(lx, grid), 0, n - 1)] = True
    pick[[0, -1]] = True
    for b in keep:
        i = int(np.searchsorted(x, float(b)))
        pick[max(i - 2, 0):min(i + 2, n)] = True
    yv = np.asarray(y, dtype=float)
    ok = np.isfinite(yv) & (yv > 0)
    ly = np.log(np.where(ok, yv, 1.0))
    for _ in range(12):     # a point added moves the line beside it: until none is off (a few rounds)
        base = pick & ok
        if base.sum() < 2:
            break
        off = ok & ~pick & (np.abs(ly - np.interp(lx, lx[base], ly[base])) > math.log1p(KINK_PCT / 100))
        if not off.any():
            break
        i = np.flatnonzero(off)
        pick[i] = True
        pick[np.clip(i - 1, 0, n - 1)] = True     # with its neighbours: the lines to it pass no point
        pick[np.clip(i + 1, 0, n - 1)] = True
    return np.flatnonzero(pick)


def drawn_words(n: int, drawn: int) -> str:
    """What a figure shows of a series of n sizes drawn at `drawn` of them."""
    if drawn >= n:
        return ""
    return (f"{drawn} of {n} sizes drawn: {MAX_POINTS} evenly spaced on the log axis, those next to a "
            f"transition and those more than {KINK_PCT:g} % off the line through the others")


def _arr(values) -> list[float]:
    return [float("nan") if v is None else float(v) for v in values]


def _series(sizes: list[dict], key: str):
    pts = [s for s in sizes if s["bytes"] > 0 and s.get(key) is not None]
    return [s["bytes"] for s in pts], pts


def _legend_outside(ax, n: int) -> None:
    """The legend right of the axes, never over the curves or their labels: up to 24 entries a
    column."""
    if n:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, ncol=max(1, -(-n // 24)),
                  fontsize=7 if n <= 24 else 6, frameon=False)


def comparison_plots(name: str, title: str, series: list[dict], floor: dict | None,
                     pdf_dir: Path | None, time_label: str = "one-way latency",
                     kinds: tuple[str, ...] = ("latency", "bandwidth")) -> list[dict]:
    """Latency and bandwidth (`kinds`) of every configuration of one pattern/variant;
    time_label says what the times are (units.py: one-way latency for a ping-pong).

    series: [{label, sizes: [size dicts with median_us, median_ci_us, bandwidth_MBps, bw_ci_MBps],
    keep: sizes always drawn (the transitions)}]; floor: the shared-memory reference's series, drawn as the bound
    (dashed, black).  Without pdf_dir nothing is drawn."""
    out = []
    for kind in kinds:
        ylabel = (plain(f"{time_label}, median (µs)") if kind == "latency"
                  else plain(f"bandwidth, bytes moved / median {time_label} (MB/s)"))
        about = {"kind": kind, "ylabel": ylabel, "drawn": ""}
        if pdf_dir is None:
            out.append({**about, **_emit(None, f"{name}-{kind}", None)})
            continue
        fig, ax = plt.subplots(figsize=(7.0, 4.2))
        thinned = []
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
            idx = thin(x, y, s.get("keep", ()))
            if idx.size < len(x):
                thinned.append((len(x), idx.size))
            x, y, lo, hi = (np.asarray(_arr(v))[idx] for v in (x, y, lo, hi))
            label = plain(s["label"]) + (" (floor: upper bound)" if is_floor and kind == "bandwidth"
                                         else " (floor: lower bound)" if is_floor else "")
            ax.plot(x, y, "--" if is_floor else STYLES[i // len(COLORS) % len(STYLES)],
                    marker="" if is_floor or idx.size > MARKERS_UP_TO else ".", ms=3,
                    lw=1.6 if is_floor else 1.0, color=color, label=label)
            ax.fill_between(x, lo, hi, color=color, alpha=0.18, lw=0)
        log_axes(ax)
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel(ylabel)
        ax.set_title(plain(f"{title}: {kind}"))
        _legend_outside(ax, len(series))
        if thinned:
            about["drawn"] = (f"series of more than {MAX_POINTS} sizes are drawn at {min(d for _, d in thinned)} "
                              f"to {max(d for _, d in thinned)} of their {max(n for n, _ in thinned)} sizes: "
                              f"{MAX_POINTS} evenly spaced on the log axis, those next to a transition and those "
                              f"more than {KINK_PCT:g} % off the line through the others")
        out.append({**about, **_emit(fig, f"{name}-{kind}", pdf_dir)})
    return out


def band_label(sizes: list[dict]) -> str:
    """The legend entry of a configuration's band: which 95 % interval it is."""
    kinds = {p.get("interval_kind", "within-launch") for p in sizes}     # launches.WITHIN, BETWEEN
    if kinds == {"between-launch"}:
        return "95 % CI between launches"
    return "95 % CI between launches, or within one" if "between-launch" in kinds else "95 % CI within one launch"


def detail_plot(name: str, label: str, sizes: list[dict], regimes: list[dict],
                transitions: list[dict], pdf_dir: Path | None = None,
                time_label: str = "one-way latency") -> dict:
    """One configuration: median with its CI band, control limits (the samples'
    0.135th and 99.865th percentiles, stats.LIMITS_RULE; a limit at or below 0
    has no place on the log axis and is left out), the fitted regimes and the
    detected transitions, labelled at the top of the axes; the legend is below the axes.
    Without pdf_dir nothing is drawn."""
    ylabel = plain(f"{time_label} (µs)")
    if pdf_dir is None:
        return _emit(None, name, None, ylabel=ylabel, drawn="")
    fig, ax = plt.subplots(figsize=(7.0, 3.4))
    x, pts = _series(sizes, "median_us")
    drawn = ""
    if x:
        idx = thin(x, [p["median_us"] for p in pts], [t["bytes"] for t in transitions])
        drawn = drawn_words(len(x), idx.size)
        bad = [p for p in pts if p.get("valid") is False]
        pts = [pts[i] for i in idx]
        x = [p["bytes"] for p in pts]
        ax.fill_between(x, [p["median_ci_us"][0] if p["median_ci_us"] else p["median_us"] for p in pts],
                        [p["median_ci_us"][1] if p["median_ci_us"] else p["median_us"] for p in pts],
                        color=COLORS[0], alpha=0.25, lw=0, label=plain(band_label(sizes)))
        ax.plot(x, [p["median_us"] for p in pts], "-", marker="." if len(x) <= MARKERS_UP_TO else "",
                color=COLORS[0], ms=3, lw=1, label="median")
        ax.plot(x, [p["ucl_us"] if p["ucl_us"] > 0 else float("nan") for p in pts], ":", color=COLORS[1], lw=1,
                label="control limits (0.135th, 99.865th percentile)")
        ax.plot(x, [p["lcl_us"] if p["lcl_us"] > 0 else float("nan") for p in pts], ":", color=COLORS[1], lw=1)
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
                ax.annotate(plain(f"{t['kind']} {t['bytes']} B"), (t["bytes"], 0.98),
                            xycoords=("data", "axes fraction"), rotation=90, va="top", ha="right", fontsize=7,
                            color=COLORS[4])
        log_axes(ax)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel(ylabel)
    ax.set_title(plain(label))
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    return _emit(fig, name, pdf_dir, ylabel=ylabel, drawn=drawn)


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
