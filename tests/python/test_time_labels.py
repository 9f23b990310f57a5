"""Every label that names a time says what the pattern's reported time is
(units.py): a stream's time per message is not called one-way anywhere."""
import json

import synth
from versus.analysis import summary_document
from versus.compare import compare_runs
from versus.console import format_comparison, format_summary
from versus.export import jsonable
from versus.load import load_file

SIZES = [1 << k for k in range(3, 15)]


def stream_run(path, scale, seed, name):
    lines = []
    for line in synth.make_lines(synth.hockney(2000 * scale, 0.1 * scale), SIZES, seed=seed,
                                 pattern="stream", variant="nonblocking", name=name):
        rec = json.loads(line)
        if rec["record"] == "run":
            rec["pattern_params"] = {"window": 16}
        lines.append(json.dumps(rec))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_stream_summary_names_its_times_per_message(tmp_path):
    run = load_file(stream_run(tmp_path / "s.jsonl", 1.0, 1, "a"))[0]
    doc = summary_document([run])
    text = format_summary(jsonable(doc))
    assert "one-way" not in text
    assert "regimes (T(n) = s + r*n through medians of the time per message)" in text
    assert "time per message" in doc["runs"][0]["fit"]["model"] and "one-way" not in doc["runs"][0]["fit"]["model"]


def test_a_stream_comparison_and_report_name_their_times_per_message(tmp_path):
    from versus.report import render_report
    a = stream_run(tmp_path / "a.jsonl", 0.5, 1, "a")
    b = stream_run(tmp_path / "b.jsonl", 1.0, 2, "b")
    c = compare_runs(load_file(a), load_file(b), draws=300)
    text = format_comparison(jsonable(c.to_dict()))
    assert "times: time per message;" in text and "one-way" not in text
    model = render_report([str(a), str(b)], tmp_path / "report")
    (group,) = model["groups"]
    assert group["time_label"] == "time per message"
    assert group["summary"]["columns"][2]["title"].startswith("time per message µs")
    assert all(p["ylabel"] == "time per message, median (µs)" for p in group["plots"] if p["kind"] == "latency")
    assert all(d["plot"]["ylabel"] == "time per message (µs)" for d in group["details"])
    html = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    tex = (tmp_path / "report" / "report.tex").read_text(encoding="utf-8")
    for doc in (html, tex):
        assert "median time per message at the smallest size" in doc
        assert "ratio of medians of the time per message" in doc
        assert "one-way time" not in doc and "one-way medians" not in doc
