"""No printed time, size or bandwidth has a bound below zero: control limits are
the samples' 0.135th and 99.865th percentiles (not mean ± 3σ, which seed 002's
skewed times put at -10,014 us), the seed 002 table's limits are those of the
recorded samples, and the mean beside an imported run has a bootstrap interval
that cannot reach below the fastest sample (not mean ± 1.96 se)."""
import json
import math

import numpy as np
import pytest

import synth
from versus.console import format_study
from versus.importers import import_text, write_jsonl
from versus.load import load_file
from versus.render import fmt_value
from versus.report import size_dict
from versus.sidebyside import format_side_by_side, side_by_side
from versus.stats import LIMIT_Q, summarise_run, summarise_size
from versus.studies import control_limits, study_tables


def skewed_round_trips(rng, n, stall_every=200, stall_ns=600e6):
    """Round trips of a few microseconds with a rare stall of a descheduled process
    (seed 001 saw stalls up to 629 ms among medians below 1 us)."""
    x = 2 * 700 * rng.lognormal(0, 0.1, n)
    x[::stall_every] += stall_ns * rng.uniform(0.5, 1.0, x[::stall_every].size)
    return np.rint(x).astype(np.int64)


def write_samples(path, per_size: dict[int, np.ndarray], **run_kw):
    """A result file whose sizes carry exactly these round-trip samples."""
    lines = [json.dumps(synth.run_record(sizes=list(per_size), **run_kw))]
    for b, x in per_size.items():
        lines.append(json.dumps({"record": "size", "bytes": int(b), "iterations": int(x.size), "warmup": 10,
                                 "batch": 1, "samples_ns": [int(v) for v in x], "elapsed_ns": int(x.sum())}))
    lines.append(json.dumps({"record": "end", "status": "ok", "message": "", "sizes_completed": len(per_size),
                             "end_time": "2026-01-01T00:00:10Z"}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (run,) = load_file(path)
    return run


def test_control_limits_are_the_samples_percentiles_and_never_below_zero_on_a_skewed_sample():
    rng = np.random.default_rng(2)
    rtt = skewed_round_trips(rng, 20000)
    st = summarise_size(8, rtt)
    ow = np.sort(rtt / 2)
    assert st.mean_ns - 3 * st.std_ns < 0, "the sample must be one where mean - 3 sigma goes below 0"
    k = math.floor(ow.size * LIMIT_Q)
    assert k == 27
    assert st.lcl_ns == ow[k] and st.ucl_ns == ow[-1 - k]
    assert 0 < st.lcl_ns < st.median_ns < st.ucl_ns
    # about the share a normal sample leaves outside mean ± 3 sigma (0.27 %), counted exactly
    outside = int((ow < st.lcl_ns).sum() + (ow > st.ucl_ns).sum())
    assert st.outside_limits == outside and 2 * k - 2 <= outside <= 2 * k
    d = st.to_dict()
    assert d["lcl_us"] == pytest.approx(ow[k] / 1e3) and d["lcl_us"] > 0


def test_below_741_samples_the_limits_are_the_extreme_samples_and_none_lies_outside():
    rng = np.random.default_rng(3)
    for n in (5, 20, 740):
        rtt = skewed_round_trips(rng, n, stall_every=4)
        st = summarise_size(64, rtt)
        assert (st.lcl_ns, st.ucl_ns, st.outside_limits) == (rtt.min() / 2, rtt.max() / 2, 0)
    st = summarise_size(64, skewed_round_trips(rng, 741))
    assert st.lcl_ns > st.min_ns and st.ucl_ns < st.max_ns


def test_every_size_of_a_run_has_limits_within_its_samples(make_run):
    run = make_run(synth.hockney(300, 0.05), synth.pow2(65536), count=60, seed=4, outlier_frac=0.2)
    for s in summarise_run(run):
        assert 0 <= s.min_ns <= s.lcl_ns <= s.median_ns <= s.ucl_ns <= s.max_ns


def test_the_seed_002_table_has_no_negative_limit(tmp_path):
    """Seed 002: 20 samples a size, one of them a stall: mean - 3 sigma was -10,014 us."""
    rng = np.random.default_rng(5)
    per_size = {b: skewed_round_trips(rng, 20, stall_every=20, stall_ns=40e6) for b in (16384, 65536, 262144)}
    run = write_samples(tmp_path / "seed002.jsonl", per_size, name="shm", pattern="doublebuffer")
    (tab,) = control_limits([run])
    assert "percentiles" in tab["rule"]
    for row in tab["sizes"]:
        x = per_size[row["bytes"]] / 1e3          # the recorded samples, us
        assert x.mean() - 3 * x.std(ddof=1) < 0, "mean - 3 sigma would have gone below 0"
        assert row["lcl_us"] >= 0 and row["ucl_us"] >= 0
        # the limits are the recorded samples' (not one-way: twice the reported time)
        assert row["lcl_us"] == pytest.approx(x.min()) and row["ucl_us"] == pytest.approx(x.max())
        assert row["mean_us"] == pytest.approx(x.mean())
        assert row["outside"] == int(((x < row["lcl_us"]) | (x > row["ucl_us"])).sum())
    text = format_study(study_tables([run]))
    assert "0.135th and 99.865th percentiles" in text and "mean ± 3 sigma of the samples" not in text
    limits_part = text[text.index("== control limits"):]
    assert not any(tok.startswith("-") and tok[1:2].isdigit() for tok in limits_part.split())


def test_a_limit_below_zero_is_never_printed_as_a_number():
    assert fmt_value([-3.0, 10.0], "limits") == "[none, 10.0]"
    assert fmt_value([0.27, 0.73], "limits") == "[0.270, 0.730]"


def test_the_report_bandwidth_interval_is_never_negative(make_run):
    run = make_run(synth.hockney(300, 0.05), synth.pow2(1 << 20), count=30, seed=6, outlier_frac=0.2)
    for s in summarise_run(run):
        lo, hi = size_dict(s)["bw_ci_MBps"]
        assert lo >= 0 and hi >= lo and (s.bytes == 0 or lo > 0)


OSU = ("# OSU MPI Latency Test v5.3\n# Size          Latency (us)\n"
       "8                       3.20\n64                      3.40\n1024                    4.10\n")


def test_the_mean_beside_an_imported_run_has_an_interval_that_cannot_be_negative(tmp_path):
    rng = np.random.default_rng(7)
    per_size = {b: skewed_round_trips(rng, 30, stall_every=30, stall_ns=2e6) for b in (8, 64, 1024)}
    measured = write_samples(tmp_path / "m.jsonl", per_size, name="openmpi")
    runs = import_text(OSU, "osu.txt")
    write_jsonl(runs, "osu.txt", OSU, str(tmp_path / "osu.jsonl"))
    (osu,) = load_file(tmp_path / "osu.jsonl")
    d = side_by_side([measured], osu)
    assert d["versus_statistic"] == "mean one-way time" and "bootstrap" in d["versus_interval"]
    for r in d["rows"]:
        ow = per_size[r["bytes"]] / 2
        m, se = ow.mean(), ow.std(ddof=1) / np.sqrt(ow.size)
        assert m - 1.96 * se < 0, "mean ± 1.96 se would have reached below 0"
        lo, hi = r["versus_ci"]
        assert ow.min() <= lo <= r["versus"] <= hi <= ow.max()
        assert r["inside"] == (lo <= r["tool"] <= hi)
    text = format_side_by_side(d)
    assert "[-" not in text and "bootstrap" in text
