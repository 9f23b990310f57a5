"""One report, one truth: every number the report prints is recomputed here from
the raw samples by the documented rule (docs/analysis.md) and must match, and no
two places disagree: the per-size medians, their order-statistic intervals and the
bandwidths over them; the summary row's latency, peak and transitions; the regimes
cut at the reported transitions; each comparison's marks against the intervals
printed beside them; `summary --json` against the report; the HTML and the LaTeX
against the model they were rendered from.  Two inputs: the example campaign, and
a synthetic sweep of 2,500 sizes (every 16 B to 40,000 B, 27 packet steps in it) with three
launches a side; VERSUS_TRUTH_STEP=4 makes it the 10,000-size sweep of the same shape (every 4 B: about
four times the time, 40-130 s here, which the suite's 20 minutes could not keep)."""
import html
import json
import math
import os
import re

import numpy as np
import pytest
from scipy import stats as sps

import synth
from versus.analysis import summary_document
from versus.load import load_file
from versus.render import fmt_value
from versus.report import collect, render_report
from versus.units import run_meaning

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "tests", "reports", "data", "example")


def median_ci(x):
    """The documented rule: 0-based ranks (l-1, n-l) of the sorted sample, l the 2.5 %
    binomial quantile of Bin(n, 1/2); none below it."""
    n = x.size
    lo = int(sps.binom.ppf(0.025, n, 0.5))
    if lo < 1:
        return None
    return float(x[lo - 1]), float(x[n - lo])


def between_launches(medians):
    """The documented rule for two launches or more: the geometric mean of the launch medians,
    exp(mean log +- t(L - 1, 97.5 %) sd / sqrt(L)) over their logs."""
    y = np.log(np.asarray(medians, dtype=np.float64))
    half = sps.t.ppf(0.975, y.size - 1) * y.std(ddof=1) / math.sqrt(y.size)
    return math.exp(y.mean()), (math.exp(y.mean() - half), math.exp(y.mean() + half))


def check_sizes(cfg_runs, sizes):
    """Each size row against the raw samples of the configuration's launches: the launches as
    the unit where two or more measured the size, else the one launch's median and its
    order-statistic interval; n counts every launch's samples."""
    div = run_meaning(cfg_runs[0]).divisor
    factor = run_meaning(cfg_runs[0]).bytes_factor
    per_launch = {}
    for r in cfg_runs:
        for s in r.sizes:
            per_launch.setdefault(s.bytes, {}).setdefault(r.record["run_id"], []).append(
                np.asarray(s.samples_ns, dtype=np.float64))
    assert [s["bytes"] for s in sizes] == sorted(per_launch)
    for s in sizes:
        launches = [np.sort(np.concatenate(v)) / div for v in per_launch[s["bytes"]].values()]
        assert s["n"] == sum(x.size for x in launches)
        if len(launches) >= 2:
            med, ci = between_launches([np.median(x) for x in launches])
            assert s["launches"] == len(launches)
        else:
            med, ci = float(np.median(launches[0])), median_ci(launches[0])
        assert s["median_us"] == pytest.approx(med / 1e3, rel=1e-12)
        assert (s["median_ci_us"] is None) == (ci is None)
        if ci:
            assert s["median_ci_us"] == pytest.approx([v / 1e3 for v in ci], rel=1e-12)
        if s["bytes"] > 0:
            # one statistic: the bandwidth is the bytes over the median
            assert s["bandwidth_MBps"] == pytest.approx(factor * s["bytes"] / med * 1e3, rel=1e-12)
        for k in ("lcl_us", "ucl_us"):
            assert s[k] is None or s[k] >= 0, (k, s[k])


def check_comparison(c):
    """Marks agree with the intervals printed beside them."""
    for row in c["table"]["rows"]:
        mark, ratio, lo, hi = row[0], *row[4]["v"]
        excludes = hi < 1 or lo > 1
        assert (mark != "~") == excludes, (mark, lo, hi)
        assert lo <= ratio <= hi
        if mark.strip("()") == "+":
            assert hi < 1
        if mark.strip("()") == "-":
            assert lo > 1
    for st in c["statements"]:
        lo, hi = st["ratio_ci"]
        assert lo <= st["ratio"] <= hi
        assert (st["mark"] != "~") == (hi < 1 or lo > 1), st
        # the interval printed in the text is the one the mark was decided on
        if st["mark"] == "~":
            assert f"95 % CI {lo:.3g} to {hi:.3g}" in st["text"], st["text"]
    claimed = [(st["mark"], st["text"]) for st in c["statements"] if st["mark"] in ("+", "-", "=")]
    for row in c["table"]["rows"]:
        if row[0] in ("+", "-", "="):       # a bare mark only inside a statement that claims it
            assert any(m == row[0] for m, _ in claimed), row[0]


def check_report(paths, out, with_summary=True):
    model = render_report(paths, out)
    runs, _, _ = collect(paths)
    runs = [r for r in runs if r.imported is None]
    page = html.unescape((out / "index.html").read_text(encoding="utf-8"))
    tex = (out / "report.tex").read_text(encoding="utf-8")
    summary = summary_document(runs) if with_summary else {"runs": []}
    by_source = {}
    for r in runs:
        by_source.setdefault(r.label, []).append(r)
    for g in model["groups"]:
        for d, row in zip(g["details"], g["rows"]):
            cfg_runs = model["_config_runs"][d["id"]]
            sizes = _printed_sizes(d["table"])
            check_sizes(cfg_runs, sizes)
            usable = [s for s in sizes if s.get("valid") is not False]
            # the summary row is the details' figures
            assert row["latency"][0] == usable[0]["median_us"]
            assert row["peak_bw"] == pytest.approx(max(s["bandwidth_MBps"] for s in usable if s["bytes"] > 0))
            assert row["n_transitions"] == len(d["transitions"])
            # one segmentation: a regime between every two reported transitions
            if d["regimes"]:
                assert len(d["regimes"]["rows"]) <= len(d["transitions"]) + 1
                starts = {r[0] for r in d["regimes"]["rows"][1:]}
                assert starts <= {t["before_bytes"] for t in d["transitions"]}
            # the HTML shows the summary row's latency as formatted
            assert fmt_value(row["latency"][0], "us") in page
        for c in g["comparisons"]:
            check_comparison(c)
            for st in c["statements"]:
                assert st["text"] in page
    # summary --json gives the same per-size figures as the report's for a configuration of one launch
    for doc in summary["runs"]:
        for g in model["groups"]:
            for d in g["details"]:
                cfg = model["_config_runs"][d["id"]]
                if len(cfg) == 1 and cfg[0].source == doc["source"]:
                    printed = _printed_sizes(d["table"])
                    assert [s["median_us"] for s in doc["sizes"]] == [s["median_us"] for s in printed]
                    assert [s["bandwidth_MBps"] for s in doc["sizes"]] == [s["bandwidth_MBps"] for s in printed]
    # ... and, for a configuration of several launches, its configuration figures are the report's
    matched = 0
    for doc in summary.get("configurations", []):
        for g in model["groups"]:
            for d in g["details"]:
                cfg = model["_config_runs"][d["id"]]
                if len(cfg) > 1 and sorted(r.record["run_id"] for r in cfg) == sorted(doc["launches"]):
                    printed = _printed_sizes(d["table"])
                    assert [s["median_us"] for s in doc["sizes"]] == [s["median_us"] for s in printed]
                    assert [s["median_ci_us"] for s in doc["sizes"]] == [s["median_ci_us"] for s in printed]
                    assert [s["bandwidth_MBps"] for s in doc["sizes"]] == [s["bandwidth_MBps"] for s in printed]
                    matched += 1
    assert matched == sum(len(c) > 1 for c in model["_config_runs"].values()) or not with_summary
    # the LaTeX is rendered from the same model: each configuration's latency is there too
    for g in model["groups"]:
        for row in g["rows"]:
            assert fmt_value(row["latency"][0], "us") in tex
    return model


def _printed_sizes(table):
    """The per-size rows as the report's table prints them (HTML and LaTeX format these)."""
    col = {c["title"]: i for i, c in enumerate(table["columns"])}
    out = []
    for row in table["rows"]:
        med = row[col["median µs [95 % CI]"]]
        bw = row[col["MB/s"]]
        lim = row[next(i for t, i in col.items() if t.startswith("control limits"))]["v"]
        out.append({"bytes": row[col["size"]], "n": row[col["n"]], "median_us": med[0],
                    "launches": row[col["launches"]] if "launches" in col else 1,
                    "median_ci_us": None if med[1] is None else [med[1], med[2]],
                    "bandwidth_MBps": bw, "lcl_us": lim[-2], "ucl_us": lim[-1],
                    "valid": {"FAILED": False}.get(row[col["payload check"]])})
    return out


@pytest.fixture(autouse=True)
def keep_runs(monkeypatch):
    """Keep each configuration's runs on the model (what its tables were made of)."""
    import versus.report as rep
    orig = rep.build_model

    def build(runs, entries, manifests, pdf_dir, *a, **k):
        m = orig(runs, entries, manifests, pdf_dir, *a, **k)
        m["_config_runs"] = {c.id: c.runs for c in rep.group_configs(runs, entries)}
        return m
    monkeypatch.setattr(rep, "build_model", build)


def test_the_example_campaign_report_is_recomputed_from_its_samples(tmp_path):
    check_report([EXAMPLE], tmp_path / "report")


def test_a_2500_size_report_with_three_launches_a_side_holds_to_its_samples(tmp_path):
    step = int(os.environ.get("VERSUS_TRUTH_STEP", "16"))
    sizes = list(range(step, 40001, step))
    res = tmp_path / "results"
    res.mkdir()
    rng = np.random.default_rng(27)
    for name, model in (("near", synth.hockney(300, 0.02)), ("far", synth.staircase(9000, 0.08, 1448, 400))):
        for k in range(3):
            f = float(np.exp(0.05 * rng.standard_normal()))
            synth.write_run(res / f"{name}{k}.jsonl", lambda n, m=model, f=f: f * m(n), sizes, count=8,
                            seed=int(rng.integers(1 << 30)), name=name, launch_id=k,
                            run_id=f"{name}-{k}")
    m = check_report([str(res)], tmp_path / "report", with_summary=False)
    (g,) = m["groups"]
    (c,) = g["comparisons"]
    # the far side is 10-30x slower at every size in every launch: stated, never 'no difference'
    assert c["statements"] and all(st["mark"] == "-" for st in c["statements"]), c["statements"]
    assert len(c["statements"]) <= 8
    marks = [row[0] for row in c["table"]["rows"]]
    assert "~" not in marks and marks.count("-") == len(marks)
