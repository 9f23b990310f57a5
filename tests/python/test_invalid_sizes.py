"""Sizes whose payload check failed (`valid: false`) are marked wherever sizes
are listed and left out of fits and comparisons unless asked to keep them."""
import json

import synth
from versus.analysis import analyse_run, summary_document
from versus.compare import compare_runs
from versus.console import format_comparison, format_summary
from versus.export import jsonable
from versus.load import load_file

SIZES = [1 << k for k in range(3, 17)]
BAD = 1024
FAILURE = {"phase": "after", "round": 0, "direction": "0->1", "offset": 17, "expected": 171, "got": 0,
           "differing_bytes": 1007}


def write(path, model, bad=BAD, **kw):
    """A validated run whose size `bad` failed its check and came back 5x too fast
    (as a truncated transfer would): kept in, it would bend the fit."""
    out = []
    for line in synth.make_lines(model, SIZES, **kw):
        rec = json.loads(line)
        if rec["record"] == "run":
            rec["validate"] = True
        if rec["record"] == "size":
            rec["valid"] = rec["bytes"] != bad
            if rec["bytes"] == bad:
                rec["validation"] = FAILURE
                rec["samples_ns"] = [v // 5 for v in rec["samples_ns"]]
        if rec["record"] == "end":
            rec["status"] = "invalid"
        out.append(json.dumps(rec))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return load_file(path)[0]


def test_an_invalid_size_is_marked_and_left_out_of_the_fit(tmp_path):
    run = write(tmp_path / "a.jsonl", synth.hockney(2000, 0.1), seed=1)
    assert run.invalid_bytes() == [BAD]
    assert run.sizes_by_bytes()[BAD].validation["offset"] == 17
    a = analyse_run(run)
    assert BAD not in a.fit.x.tolist() + a.fit.excluded and len(a.fit.x) == len(SIZES) - 1
    kept = analyse_run(run, include_invalid=True).fit     # considered: fitted, or left out as isolated
    assert BAD in kept.x.tolist() + kept.excluded
    doc = summary_document([run])
    d = doc["runs"][0]
    marks = {s["bytes"]: s["valid"] for s in d["sizes"]}
    assert marks[BAD] is False and all(v is True for b, v in marks.items() if b != BAD)
    assert next(s for s in d["sizes"] if s["bytes"] == BAD)["validation"]["direction"] == "0->1"
    assert d["invalid_sizes"]["bytes"] == [BAD] and not d["invalid_sizes"]["included"]
    assert "left out of fits" in d["invalid_sizes"]["note"]
    assert d["bandwidth"]["peak_bytes"] != BAD
    text = format_summary(jsonable(doc))
    row = next(ln for ln in text.splitlines() if ln.strip().startswith(f"{BAD} !"))
    assert row.rstrip().endswith("FAILED")
    assert "left out of fits" in text and "first difference at byte 17" in text
    kept = format_summary(jsonable(summary_document([run], include_invalid=True)))
    assert "kept in fits and comparisons" in kept


def test_an_invalid_size_is_left_out_of_a_comparison_and_the_comparison_says_so(tmp_path):
    a = write(tmp_path / "a.jsonl", synth.hockney(2000, 0.1), seed=1, name="a")
    b = load_file(synth.write_run(tmp_path / "b.jsonl", synth.hockney(2000, 0.1), SIZES, seed=2, name="b"))[0]
    c = compare_runs([a], [b], draws=500)
    assert BAD not in [s.bytes for s in c.sizes] and len(c.sizes) == len(SIZES) - 1
    assert c.invalid_a == [BAD] and c.invalid_b == [] and BAD not in c.only_b
    assert not any(s.mark in ("+", "-", "(+)", "(-)") for s in c.sizes)
    assert "left out of the comparison" in format_comparison(jsonable(c.to_dict()))
    kept = compare_runs([a], [b], draws=500, include_invalid=True)
    s = next(s for s in kept.sizes if s.bytes == BAD)
    assert s.mark == "(+)" and s.ratio < 0.3        # the truncated size looks 5x faster


def test_the_report_marks_invalid_sizes_in_html_and_latex(tmp_path):
    from versus.report import render_report
    write(tmp_path / "a.jsonl", synth.hockney(2000, 0.1), seed=1, name="a")
    synth.write_run(tmp_path / "b.jsonl", synth.hockney(1000, 0.05), SIZES, seed=2, name="b")
    out = tmp_path / "report"
    model = render_report([str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")], out)
    (group,) = model["groups"]
    det = next(d for d in group["details"] if d["id"].startswith("a"))
    col = [c["title"] for c in det["table"]["columns"]].index("payload check")
    assert [r[col] for r in det["table"]["rows"] if r[0] == BAD] == ["FAILED"]
    assert all(r[col] == "ok" for r in det["table"]["rows"] if r[0] != BAD)
    assert any("left out of fits" in n for n in det["table"]["notes"])
    (cmp,) = group["comparisons"]
    assert BAD not in [r[1] for r in cmp["table"]["rows"]]
    assert any("payload check failed" in n for n in cmp["notes"])
    html = (out / "index.html").read_text(encoding="utf-8")
    details = (out / "details.html").read_text(encoding="utf-8")
    tex = (out / "report.tex").read_text(encoding="utf-8")
    appendix = (out / "appendix.tex").read_text(encoding="utf-8")     # the per-size tables
    assert "left out of fits" in html      # the summary's footnote
    for doc in (details, appendix):         # the per-size table, its mark and its footnote
        assert "FAILED" in doc and "left out of fits" in doc
    assert "left out of fits" in tex
