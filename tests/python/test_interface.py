"""Comparisons across the transport interface: a two-sided ping-pong against a put-with-notification
(one-way latency both) is compared with the rule of every comparison; an A/A across the interface
claims nothing; a pair whose quantities differ is still refused; the report's section is there
exactly when a stack has both patterns, and its figures come back from the raw samples."""
import json
import math

import numpy as np
import pytest

import synth
from versus.cli import main
from versus.compare import compare_runs
from versus.load import load_file
from versus.report import render_report

SIZES = [0, 8, 64, 512, 4096, 32768]


def write_side(tmp_path, name, pattern, variant, model, launches=3, seed=0, launch_sd=0.03,
               count=200, transport="alpha"):
    """`launches` files of one configuration: round trips 2 * model(n), a launch effect of
    launch_sd (every time of a launch scaled by it) and 2 % noise per sample."""
    rng = np.random.default_rng(seed)
    files = []
    for k in range(launches):
        f = 1 + launch_sd * rng.standard_normal()
        p = tmp_path / f"{name}.L{k}.jsonl"
        synth.write_run(p, lambda n: f * model(n), SIZES, count=count, seed=seed * 100 + k,
                        name=transport, pattern=pattern, variant=variant, launch_id=k,
                        run_id=f"{name}-{k}")
        files.append(str(p))
    return files


def runs(files):
    return [r for f in files for r in load_file(f)]


TWO_SIDED = synth.hockney(1000.0, 0.10)           # ns one way
ONE_SIDED = synth.hockney(700.0, 0.05)            # 30 % less at 0 B, half the time per byte


def test_putnotify_against_pingpong_is_compared_and_claims_the_difference(tmp_path):
    a = write_side(tmp_path, "pn", "putnotify", "ordered", ONE_SIDED, seed=1)
    b = write_side(tmp_path, "pp", "pingpong", "blocking", TWO_SIDED, seed=2)
    c = compare_runs(runs(a), runs(b))
    assert "crosses the transport interface" in c.crosses
    assert "one-sided put-with-notification (ordered)" in c.crosses and "two-sided ping-pong (blocking)" in c.crosses
    assert c.claims
    assert c.regimes and all(r.mark == "+" for r in c.regimes), [r.text for r in c.regimes]
    for s in c.sizes:          # the true ratio of the one-way times inside each size's interval
        true = ONE_SIDED(s.bytes) / TWO_SIDED(s.bytes)
        assert s.ratio_ci[0] <= true * 1.02 and true / 1.02 <= s.ratio_ci[1], (s.bytes, s.ratio, s.ratio_ci, true)
    assert "A: one-way latency (round trip of notified puts / 2); B: one-way latency (round trip / 2)" == c.time_label


def test_the_rule_is_the_one_of_a_comparison_within_one_pattern(tmp_path):
    """The same samples labelled as one pattern on both sides give the same sizes, intervals,
    marks and statements: crossing the interface changes the words, not the rule."""
    a = write_side(tmp_path, "pn", "putnotify", "ordered", ONE_SIDED, seed=3)
    b = write_side(tmp_path, "pp", "pingpong", "blocking", TWO_SIDED, seed=4)
    same = []
    for f in a:
        lines = open(f, encoding="utf-8").read().splitlines()
        rec = json.loads(lines[0])
        rec["pattern"], rec["variant"], rec["transport"]["name"] = "pingpong", "blocking", "beta"
        g = f.replace("pn.", "pn-as-pingpong.")
        open(g, "w", encoding="utf-8").write("\n".join([json.dumps(rec)] + lines[1:]) + "\n")
        same.append(g)
    crossed = compare_runs(runs(a), runs(b)).to_dict()
    plain = compare_runs(runs(same), runs(b)).to_dict()
    assert crossed["crosses"] and not plain["crosses"]
    for k in ("ratio", "ratio_ci", "p_value", "mark", "median_a_us", "median_b_us"):
        assert [s[k] for s in crossed["sizes"]] == [s[k] for s in plain["sizes"]], k
    for k in ("mark", "ratio", "ratio_ci", "from_bytes", "to_bytes", "effect"):
        assert [r[k] for r in crossed["regimes"]] == [r[k] for r in plain["regimes"]], k


def relabel(files, tmp_path, pattern, variant, tag):
    """The same launches, their samples untouched, recorded as another pattern."""
    out = []
    for f in files:
        lines = open(f, encoding="utf-8").read().splitlines()
        rec = json.loads(lines[0])
        rec["pattern"], rec["variant"], rec["run_id"] = pattern, variant, rec["run_id"] + tag
        g = tmp_path / (tag + "-" + f.rsplit("/", 1)[-1])
        g.write_text("\n".join([json.dumps(rec)] + lines[1:]) + "\n", encoding="utf-8")
        out.append(str(g))
    return out


def test_an_aa_of_the_same_launches_across_the_interface_claims_nothing(tmp_path):
    b = write_side(tmp_path, "pp", "pingpong", "blocking", TWO_SIDED, seed=9)
    a = relabel(b, tmp_path, "putnotify", "ordered", "as-pn")
    c = compare_runs(runs(a), runs(b))
    assert c.claims and c.crosses
    assert all(s.ratio == 1.0 and s.mark in ("~", "=") for s in c.sizes)
    assert not [r for r in c.regimes if r.mark in ("+", "-")], [r.text for r in c.regimes]


def test_aa_false_claims_across_the_interface_are_those_of_one_pattern(tmp_path):
    """test_false_claims' A/A (3 vs 3, launch effects and slow speed classes), side A recorded as a
    put-with-notification: the same comparisons claim, seed by seed, as with a ping-pong on both
    sides, and at most at the nominal rate."""
    from test_false_claims import NOMINAL, SMALL, launch_factor, write_launch
    reps, same, crossed = 100, 0, 0
    for rep in range(reps):
        rng = np.random.default_rng(7 * 100003 + rep)
        side = {s: [write_launch(tmp_path / f"{s}{k}.jsonl", rng, f"{s}-{rep}-{k}", launch_factor(rng), SMALL)
                    for k in range(3)] for s in ("a", "b")}
        moved = relabel([r.source for r in side["a"]], tmp_path, "putnotify", "ordered", f"pn{rep}")
        plain = compare_runs(side["a"], side["b"], seed=rep)
        across = compare_runs(runs(moved), side["b"], seed=rep)
        assert across.crosses
        assert [r.mark for r in plain.regimes] == [r.mark for r in across.regimes], rep
        assert [s.mark for s in plain.sizes] == [s.mark for s in across.sizes], rep
        same += any(m in ("+", "-") for m in [s.mark for s in plain.sizes] + [r.mark for r in plain.regimes])
        crossed += any(m in ("+", "-") for m in [s.mark for s in across.sizes] + [r.mark for r in across.regimes])
    print(f"A/A 3 vs 3 across the interface: {crossed} of {reps} claimed; within one pattern {same}")
    assert crossed == same and crossed / reps <= NOMINAL


def test_one_launch_a_side_across_the_interface_claims_nothing(tmp_path):
    a = write_side(tmp_path, "pn", "putnotify", "ordered", ONE_SIDED, launches=1, seed=5)
    b = write_side(tmp_path, "pp", "pingpong", "blocking", TWO_SIDED, launches=1, seed=6)
    c = compare_runs(runs(a), runs(b))
    assert c.crosses and not c.claims
    assert all(r.mark.startswith("(") or r.mark == "~" for r in c.regimes)


@pytest.mark.parametrize("pattern,variant", [("stream", "nonblocking"), ("put", "latency"), ("overhead", "delayed")])
def test_patterns_of_another_quantity_are_still_refused(tmp_path, capsys, pattern, variant):
    a = write_side(tmp_path, "x", pattern, variant, ONE_SIDED, launches=1)
    b = write_side(tmp_path, "pn", "putnotify", "ordered", ONE_SIDED, launches=1)
    assert main(["compare", ",".join(a), ",".join(b)]) == 2
    assert "runs of different patterns cannot be compared" in capsys.readouterr().err


def test_the_command_says_it_crosses_the_interface(tmp_path, capsys):
    a = write_side(tmp_path, "pp", "pingpong", "blocking", TWO_SIDED, seed=7)
    b = write_side(tmp_path, "pn", "putnotify", "ordered", ONE_SIDED, seed=8)
    assert main(["compare", ",".join(a), ",".join(b)]) == 0
    out = capsys.readouterr().out
    assert "the comparison crosses the transport interface: A is the two-sided ping-pong (blocking), B the " \
           "one-sided put-with-notification (ordered)" in out
    assert "\n- " in out           # the ping-pong, A, is slower: claimed
    assert main(["compare", "--json", ",".join(a), ",".join(b)]) == 0
    assert json.loads(capsys.readouterr().out)["crosses"]


def _parquet_ratio(path, config_a, config_b, nbytes):
    """The ratio A/B of the geometric means of launch medians at a size, from the raw samples."""
    import pyarrow.parquet as pq
    t = pq.read_table(path, columns=["config", "run_id", "bytes", "reported_ns"]).to_pydict()
    per = {}
    for cfg, rid, b, v in zip(t["config"], t["run_id"], t["bytes"], t["reported_ns"]):
        if b == nbytes:
            per.setdefault(cfg, {}).setdefault(rid, []).append(v)

    def gm(cfg):
        return math.exp(np.mean([math.log(np.median(v)) for v in per[cfg].values()]))
    return gm(config_a) / gm(config_b), gm(config_a), gm(config_b)


def test_the_report_section_is_there_and_recomputed_from_the_raw_samples(tmp_path):
    pytest.importorskip("pyarrow")
    files = (write_side(tmp_path, "alpha-pn", "putnotify", "ordered", ONE_SIDED, seed=11)
             + write_side(tmp_path, "alpha-pp", "pingpong", "blocking", TWO_SIDED, seed=12)
             + write_side(tmp_path, "beta-pp", "pingpong", "blocking", synth.hockney(500.0, 0.2), seed=13,
                          transport="beta")
             + write_side(tmp_path, "beta-pn", "putnotify", "ordered", synth.hockney(900.0, 0.2), seed=14,
                          transport="beta"))
    out = tmp_path / "rep"
    out.mkdir()
    model = render_report(files, out)
    x = model["interface"]
    pairs = [(c["a"], c["b"], c["why"]) for c in x["comparisons"]]
    # per stack its put-with-notification against its ping-pong, then against the other stack's
    assert [p[:2] for p in pairs] == [("alpha ordered (putnotify)", "alpha blocking (pingpong)"),
                                      ("beta ordered (putnotify)", "beta blocking (pingpong)"),
                                      ("alpha ordered (putnotify)", "beta blocking (pingpong)"),
                                      ("beta ordered (putnotify)", "alpha blocking (pingpong)")], pairs
    first = x["comparisons"][0]
    assert first["claims"] and [s["mark"] for s in first["statements"]] and \
        all(s["mark"] == "+" for s in first["statements"])
    assert any("crosses the transport interface" in n for n in first["notes"])
    html = (out / "index.html").read_text(encoding="utf-8")
    assert 'id="interface"' in html and "Across the interface" in html
    # three launches a configuration: the band is the interval between them, and the figure says so
    assert ("one-way latency (round trip / 2), median: geometric mean of the launch medians, 95 % CI band "
            "between launches (3 launches, Student&#39;s t)") in html
    tex = (out / "report.tex").read_text(encoding="utf-8")
    assert "Across the interface" in tex and (out / "fig-interface-latency.pdf").exists()
    # every size of every comparison: the ratio and both times from samples.parquet
    names = {"alpha ordered (putnotify)": "alpha ordered", "alpha blocking (pingpong)": "alpha blocking",
             "beta ordered (putnotify)": "beta ordered", "beta blocking (pingpong)": "beta blocking"}
    checked = 0
    for c in x["comparisons"]:
        for row in c["table"]["rows"]:
            ratio, ga, gb = _parquet_ratio(out / "samples.parquet", names[c["a"]], names[c["b"]], row[1])
            assert math.isclose(row[4]["v"][0], ratio, rel_tol=1e-9), (c["a"], c["b"], row[1])
            assert math.isclose(row[2], ga / 1e3, rel_tol=1e-9) and math.isclose(row[3], gb / 1e3, rel_tol=1e-9)
            checked += 1
    assert checked == 4 * len(SIZES)


def test_no_section_without_both_patterns_and_a_crossing_pair_can_be_asked_for(tmp_path):
    pp = write_side(tmp_path, "alpha-pp", "pingpong", "blocking", TWO_SIDED, seed=15, launches=1)
    pn = write_side(tmp_path, "beta-pn", "putnotify", "ordered", ONE_SIDED, seed=16, launches=1, transport="beta")
    st = write_side(tmp_path, "alpha-st", "stream", "nonblocking", TWO_SIDED, seed=17, launches=1)
    out = tmp_path / "r1"
    out.mkdir()
    assert "interface" not in render_report(pp + st, out)
    out2 = tmp_path / "r2"
    out2.mkdir()
    model = render_report(pp + pn, out2, pairs=[{"a": "beta ordered", "b": "alpha blocking"}])
    (c,) = model["interface"]["comparisons"]
    assert c["why"] == "asked for in the campaign" and not c["claims"]
    assert main(["report", *pp, *st, "-o", str(tmp_path / "r3"), "--compare", "alpha nonblocking,alpha blocking"]) == 2
