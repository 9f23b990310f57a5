"""The figure JSON of the HTML report (charts.py): ticks enough to read a log axis, labels kept as
text, JSON that cannot end its script element, WebGL for long series, the model's numbers as given."""
import json
import math

import pytest

from versus import charts


@pytest.mark.parametrize("lo,hi", [(6.2, 8.9), (1.05, 1.4), (0.3, 40.0), (0.12, 6000.0), (3.0, 3e7)])
def test_a_value_axis_labels_at_least_five_values_within_its_range(lo, hi):
    t = charts.value_ticks(lo, hi)
    assert len(t["tickvals"]) >= 4, t
    assert all(lo <= v <= hi for v in t["tickvals"])
    assert len(t["tickvals"]) <= 20 and len(t["ticktext"]) == len(t["tickvals"])


def test_a_size_axis_labels_powers_of_two_at_most_twelve():
    t = charts.size_ticks(4, 40000)
    assert t["tickvals"][0] == 4 and all(v & (v - 1) == 0 for v in t["tickvals"])
    assert len(t["tickvals"]) <= 12 and "16K" in t["ticktext"]


def sizes(n, start=1):
    return [{"bytes": start * (k + 1), "median_us": 1.0 + k, "median_ci_us": [0.9 + k, 1.2 + k],
             "bandwidth_MBps": 10.0 * (k + 1), "bw_ci_MBps": [9.0 * (k + 1), 11.0 * (k + 1)],
             "lcl_us": 0.5, "ucl_us": 3.0 + k, "valid": True} for k in range(n)]


def test_the_figures_carry_the_models_medians_and_intervals():
    s = {"label": "a", "sizes": [{"bytes": 0, "median_us": 1.0, "median_ci_us": [1, 1], "bandwidth_MBps": 0,
                                  "bw_ci_MBps": [0, 0]}] + sizes(5)}
    lat, bw = charts.comparison_charts("g", "pingpong", [s], None, "one-way latency")
    (line,) = lat["spec"]["data"]
    assert line["x"] == [1, 2, 3, 4, 5]                   # 0 B has no place on a log axis
    assert line["y"] == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert line["customdata"][0] == [0.9, 1.2] and line["band"]
    assert "median with 95 % CI band" in lat["spec"]["layout"]["title"]["text"]
    assert bw["spec"]["data"][0]["customdata"][1] == [18.0, 22.0]
    assert line["type"] == "scatter"


def test_long_series_are_drawn_with_webgl_without_markers():
    (lat, _) = charts.comparison_charts("g", "t", [{"label": "a", "sizes": sizes(charts.GL_POINTS + 1)}], None)
    (line,) = lat["spec"]["data"]
    assert line["type"] == "scattergl" and line["mode"] == "lines"


def test_transitions_are_labelled_at_the_top_and_the_legend_is_under_the_plot():
    c = charts.detail_chart("d", "cfg", sizes(20, 64), [], [{"bytes": 512, "kind": "step", "label": "eager"}])
    lay = c["spec"]["layout"]
    (a,) = lay["annotations"]
    assert a["y"] == 1 and a["yref"] == "paper" and a["yanchor"] == "top"
    assert a["x"] == pytest.approx(math.log10(512))         # annotations on a log axis take log10
    assert lay["legend"]["y"] < 0 and lay["legend"]["yanchor"] == "top"
    marks = [t for t in c["spec"]["data"] if t["name"] == "detected transition"]
    assert marks and marks[0]["x"][:2] == [512, 512]


def test_close_transitions_keep_their_lines_and_only_spaced_labels():
    marks = [{"bytes": b, "kind": "step", "label": ""} for b in (1448, 1452, 2900, 2904, 30000)]
    c = charts.detail_chart("d", "cfg", sizes(40000 // 4, 4), [], marks)
    lines = [t for t in c["spec"]["data"] if t["name"] == "detected transition"][0]
    assert [v for v in lines["x"] if v is not None][::2] == [1448, 1452, 2900, 2904, 30000]
    assert [round(10 ** a["x"]) for a in c["spec"]["layout"]["annotations"]] == [1448, 2900, 30000]
    limits = [t for t in c["spec"]["data"] if t["name"].startswith("control limits")][0]
    assert limits["visible"] == "legendonly"     # 10,000 sizes: the limits on a legend click


def test_labels_stay_text_and_the_json_cannot_end_its_script_element():
    label = '</script><script>alert(1)</script> & "q"'
    (lat, _) = charts.comparison_charts("g", "t", [{"label": label, "sizes": sizes(3)}], None)
    out = charts.chart_json(lat["spec"])
    assert "<" not in out and ">" not in out and "&" not in out
    back = json.loads(out)
    assert back["data"][0]["name"] == '&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; "q"'


def test_no_nan_reaches_the_json():
    s = sizes(3)
    s[1]["median_ci_us"] = None
    s[2]["ucl_us"] = float("nan")
    c = charts.detail_chart("d", "cfg", s, [], [])
    json.loads(charts.chart_json(c["spec"]))             # allow_nan=False would have raised
    assert c["spec"]["data"][0]["customdata"][1] == [2.0, 2.0]


def test_the_library_is_inlined_whole():
    js = charts.plotly_js()
    assert len(js) > 1_000_000 and "</script" not in js
