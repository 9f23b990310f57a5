"""A configuration of several launches carries, at each size, the interval between its
launches wherever its figure is printed (summary, tables, the report's tables, HTML and
LaTeX): the geometric mean of the launch medians with Student's t on their logs, the
value its comparisons use.  One launch keeps the order-statistic interval, said to be
within that launch.  The figures here are recomputed from the raw samples."""
import math

import numpy as np
import pytest
from scipy import stats as sps

import synth
from versus.analysis import summary_document
from versus.compare import compare_runs
from versus.console import format_summary
from versus.render import fmt_value, html_env, latex_env
from versus.report import build_model
from versus.studies import study_tables

SIZES = [0, 8, 64, 512, 4096, 32768]
LAST = SIZES[-1]
SLOW = 3.0          # one launch of "mpich" runs this many times slower than its twins


@pytest.fixture
def runs(make_run):
    """'mpich': 3 launches, the third 3x slower; its last size measured by the first launch
    only.  'tcp': 3 launches alike.  'ucx': one launch."""
    out = {"mpich": [], "tcp": [], "ucx": []}
    for k, f in enumerate((1.0, 1.05, SLOW)):
        sizes = SIZES if k == 0 else SIZES[:-1]
        out["mpich"].append(make_run(synth.hockney(180 * f, 0.05 * f), sizes, count=60, seed=k,
                                     name="mpich", launch_id=k))
    for k, f in enumerate((1.0, 1.02, 0.98)):
        out["tcp"].append(make_run(synth.hockney(4000 * f, 0.4 * f), SIZES, count=60, seed=10 + k,
                                   name="tcp", launch_id=k))
    out["ucx"].append(make_run(synth.hockney(400, 0.1), SIZES, count=60, seed=20, name="ucx"))
    return out


def launch_medians(runs, nbytes):
    """Each launch's median one-way time (ns) at a size, from its raw round trips."""
    return [float(np.median(r.sizes_by_bytes()[nbytes].samples_ns / 2)) for r in runs
            if nbytes in r.sizes_by_bytes()]


def by_hand(medians):
    """exp(mean log -+ t(L - 1, 0.975) sd / sqrt(L)) over the launch medians, in us."""
    y = np.log(medians)
    half = sps.t.ppf(0.975, y.size - 1) * y.std(ddof=1) / math.sqrt(y.size)
    return math.exp(y.mean()) / 1e3, [math.exp(y.mean() - half) / 1e3, math.exp(y.mean() + half) / 1e3]


def order_statistics(x):
    """The median's distribution-free 95 % interval (binomial ranks l - 1 and n - l)."""
    x = np.sort(x)
    lo = int(sps.binom.ppf(0.025, x.size, 0.5))
    return [float(x[lo - 1]) / 1e3, float(x[x.size - lo]) / 1e3]


def test_summary_interval_is_the_t_interval_between_launches(runs):
    doc = summary_document(runs["mpich"])
    (cfg,) = doc["configurations"]
    assert cfg["n_launches"] == 3 and cfg["interval_kind"] == "between-launch"
    assert "between launches (3 launches" in cfg["interval"]
    for s in cfg["sizes"][:-1]:
        value, ci = by_hand(launch_medians(runs["mpich"], s["bytes"]))
        assert s["interval_kind"] == "between-launch" and s["launches"] == 3
        assert s["median_us"] == pytest.approx(value, rel=1e-12)
        assert s["median_ci_us"] == pytest.approx(ci, rel=1e-12)
        # one launch 3x slower: the interval spans far more than the pooled samples' one
        assert ci[1] / ci[0] > 2
        plo, phi = s["pooled_median_ci_us"]
        assert phi / plo < 1.2
        if s["bytes"] > 0:
            assert s["bandwidth_MBps"] == pytest.approx(s["bytes"] / (value * 1e3) * 1e3, rel=1e-12)
            assert s["bandwidth_ci_MBps"] == pytest.approx([s["bytes"] / ci[1], s["bytes"] / ci[0]], rel=1e-12)
    # the size only the first launch measured: its median and order-statistic interval, within it
    last = cfg["sizes"][-1]
    x = runs["mpich"][0].sizes_by_bytes()[LAST].samples_ns / 2
    assert (last["bytes"], last["launches"], last["interval_kind"]) == (LAST, 1, "within-launch")
    assert last["median_us"] == pytest.approx(float(np.median(x)) / 1e3, rel=1e-12)
    assert last["median_ci_us"] == pytest.approx(order_statistics(x), rel=1e-12)
    text = format_summary(doc)
    assert "95% CI within launch" in text                    # each run's own table
    assert f"== configuration {cfg['label']} (3 launches)" in text
    assert "between 3 launches (t)" in text and "within one launch" in text
    lo, hi = cfg["sizes"][0]["median_ci_us"]
    assert f"[{lo:.3f}, {hi:.3f}]" in text


def test_the_summary_value_is_the_comparison_side_median(runs):
    doc = summary_document(runs["mpich"] + runs["tcp"])
    figs = {c["label"]: {s["bytes"]: s for s in c["sizes"]} for c in doc["configurations"]}
    cmp = compare_runs(runs["mpich"], runs["tcp"])
    a, b = figs[runs["mpich"][0].label], figs[runs["tcp"][0].label]
    assert len(cmp.sizes) == len(SIZES)
    for s in cmp.sizes:
        assert s.median_a_us == a[s.bytes]["median_us"]
        assert s.median_b_us == b[s.bytes]["median_us"]


def test_one_launch_keeps_its_order_statistic_interval_said_within_it(runs):
    (run,) = runs["ucx"]
    doc = summary_document([run])
    (cfg,) = doc["configurations"]
    assert cfg["n_launches"] == 1 and cfg["interval_kind"] == "within-launch"
    assert "within one launch" in cfg["interval"]
    for s, r in zip(cfg["sizes"], doc["runs"][0]["sizes"]):
        x = run.sizes_by_bytes()[s["bytes"]].samples_ns / 2
        assert s["median_ci_us"] == r["median_ci_us"] == pytest.approx(order_statistics(x), rel=1e-12)
        assert r["interval_kind"] == "within-launch"
    assert "== configuration" not in format_summary(doc)     # the run's own table says it all


def test_tables_quote_the_launches_interval(runs):
    rows = {r["run"]: r for r in study_tables(runs["mpich"] + runs["ucx"])["variants"]}
    mpich = rows[f"{runs['mpich'][0].label} (3 launches)"]
    value, ci = by_hand(launch_medians(runs["mpich"], 0))
    assert mpich["send_latency_us"] == pytest.approx(value, rel=1e-12)
    assert mpich["send_latency_ci_us"] == pytest.approx(ci, rel=1e-12)
    assert (mpich["send_latency_interval_kind"], mpich["launches"]) == ("between-launch", 3)
    ucx = rows[runs["ucx"][0].label]
    assert ucx["send_latency_interval_kind"] == "within-launch"
    assert ucx["send_latency_ci_us"] == pytest.approx(
        order_statistics(runs["ucx"][0].sizes_by_bytes()[0].samples_ns / 2), rel=1e-12)


def test_report_tables_html_and_latex_show_and_name_the_interval(runs, tmp_path):
    allr = runs["mpich"] + runs["tcp"] + runs["ucx"]
    model = build_model(allr, {}, [], tmp_path)       # with its PDF figures, which the LaTeX names
    model.update(native=[], history=[], samples=None)     # what render_report adds beside the model
    (g,) = model["groups"]
    rows = {r["config"]: r for r in g["rows"]}
    mpich = next(r for k, r in rows.items() if k.startswith("mpich"))
    ucx = next(r for k, r in rows.items() if k.startswith("ucx"))
    value, ci = by_hand(launch_medians(runs["mpich"], 0))
    assert mpich["latency"][:3] == pytest.approx([value, *ci], rel=1e-12)
    assert mpich["interval"] == "between 3 launches (t)"
    assert ucx["interval"] == "within one launch"
    detail = next(d for d in g["details"] if d["id"].startswith("mpich"))
    cols = [c["title"] for c in detail["table"]["columns"]]
    med, nl = cols.index("median µs [95 % CI]"), cols.index("launches")
    assert [row[nl] for row in detail["table"]["rows"]] == [3] * (len(SIZES) - 1) + [1]
    assert detail["table"]["rows"][0][med][:3] == pytest.approx([value, *ci], rel=1e-12)
    assert "between launches (3 launches" in detail["table"]["caption"]
    assert "between launches" in g["interval_note"] and "within that launch" in g["interval_note"]
    cell = fmt_value(mpich["latency"], "us_ci")
    page = html_env().get_template("report.html.j2").render(m=model)
    tex = latex_env().get_template("report.tex.j2").render(m=model)
    appendix = latex_env().get_template("appendix.tex.j2").render(m=model)
    details = html_env().get_template("details.html.j2").render(m=model)
    for doc in (page, tex):
        assert cell in doc
        assert "between 3 launches (t)" in doc and "within one launch" in doc
        assert "95 % CI between launches" in doc.replace("\\,\\%", " %").replace("\\%", "%")
    assert "between launches (3 launches" in details
    assert "between launches (3 launches" in appendix.replace("\\%", "%")
