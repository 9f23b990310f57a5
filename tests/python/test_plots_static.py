"""The PDF figures: a log y axis has at least three labelled ticks however narrow its span, a
series of thousands of sizes is drawn through a subset that keeps its transitions and kinks, and
the legend sits outside the axes."""
import numpy as np
import pytest

from versus import plots


@pytest.mark.parametrize("lo,hi", [(1.2, 1.9), (0.31, 0.45), (3.0, 40.0), (0.5, 900.0), (12.0, 12.5),
                                   (0.0004, 2e5)])
def test_log_y_axis_has_three_labelled_ticks(lo, hi):
    fig, ax = plots.plt.subplots()
    ax.plot([8, 64, 1024], [lo, (lo * hi) ** 0.5, hi])
    plots.log_axes(ax)
    fig.canvas.draw()
    y0, y1 = ax.get_ylim()
    shown = [t.get_text() for t, v in zip(ax.get_yticklabels(), ax.get_yticks())
             if y0 <= v <= y1 and t.get_text()]
    plots.plt.close(fig)
    assert len(shown) >= 3, (lo, hi, shown)
    assert len(set(shown)) == len(shown), shown     # distinct labels
    assert not any("e+" in t or "e-" in t for t in shown), shown    # plain numbers, no exponent form


def test_thin_keeps_transitions_and_kinks():
    x = np.arange(1, 10001) * 4.0
    y = 10 + 0.001 * x
    y[5000:] += 5                  # a step at x[5000]
    y[7777] *= 1.5                 # one slow size
    idx = plots.thin(x, y, keep=[x[5000]])
    assert idx.size < 400, idx.size
    assert {4999, 5000, 7777, 0, 9999} <= set(idx.tolist())
    line = np.interp(np.log(x), np.log(x[idx]), np.log(y[idx]))
    off = np.abs(line - np.log(y))
    assert off.max() <= np.log1p(plots.KINK_PCT / 100) + 1e-12, "every size not drawn lies within KINK_PCT of the line"
    short = np.arange(1, 50) * 8.0
    assert plots.thin(short, short).tolist() == list(range(49)), "a short series is drawn whole"


def test_comparison_figures_are_pdf_only(tmp_path):
    sizes = [{"bytes": b, "median_us": 1 + b / 1e3, "median_ci_us": [0.9 + b / 1e3, 1.1 + b / 1e3],
              "bandwidth_MBps": b / (1 + b / 1e3), "bw_ci_MBps": [b / (1.1 + b / 1e3), b / (0.9 + b / 1e3)]}
             for b in (4 * k for k in range(1, 3001))]
    series = [{"label": f"cfg{k}", "sizes": sizes, "keep": [4000]} for k in range(30)]
    out = plots.comparison_plots("fig-x", "pingpong blocking", series, None, tmp_path)
    assert [p["kind"] for p in out] == ["latency", "bandwidth"]
    for p in out:
        assert p["svg"] == "" and (tmp_path / p["pdf"]).stat().st_size > 1000
        assert "of their 3000 sizes" in p["drawn"]
    assert plots.comparison_plots("fig-y", "t", series, None, None)[0].get("pdf") is None
