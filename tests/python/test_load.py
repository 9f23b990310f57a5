"""Loading: what is refused (with file and line), what is accepted and marked."""
import json

import pytest

import synth
from versus.cli import main
from versus.compare import compare_runs
from versus.load import InputError, load_file


def write(tmp_path, lines, name="r.jsonl", newline=True):
    p = tmp_path / name
    p.write_text("\n".join(lines) + ("\n" if newline else ""))
    return p


def lines(**kw):
    return synth.make_lines(synth.hockney(1000, 0.1), [8, 64, 512], count=20, **kw)


def test_a_complete_run_loads_with_its_sizes(tmp_path):
    run = load_file(write(tmp_path, lines()))[0]
    assert run.complete and run.status == "ok"
    assert [s.bytes for s in run.sizes] == [8, 64, 512]
    assert all(s.samples_ns.size == 20 for s in run.sizes)


def test_unknown_schema_version_is_refused(tmp_path):
    ln = lines()
    rec = json.loads(ln[0])
    rec["schema"] = 2
    ln[0] = json.dumps(rec)
    with pytest.raises(InputError, match=r"r\.jsonl:1: unknown schema version 2"):
        load_file(write(tmp_path, ln))


def test_malformed_line_is_refused_with_its_line_number(tmp_path):
    ln = lines()
    ln[2] = ln[2][: len(ln[2]) // 2]          # a broken line in the middle
    with pytest.raises(InputError, match=r"r\.jsonl:3: malformed line"):
        load_file(write(tmp_path, ln))


def test_non_integer_samples_are_refused(tmp_path):
    ln = lines()
    rec = json.loads(ln[1])
    rec["samples_ns"] = ["fast", 3]
    ln[1] = json.dumps(rec)
    with pytest.raises(InputError, match=r"r\.jsonl:2: 'samples_ns'"):
        load_file(write(tmp_path, ln))


def test_missing_end_record_is_usable_and_marked_incomplete(tmp_path):
    run = load_file(write(tmp_path, lines(end=False)))[0]
    assert not run.complete and run.status == "incomplete"
    assert len(run.sizes) == 3
    assert any("incomplete" in w for w in run.warnings)


def test_line_cut_short_at_the_end_is_a_truncated_run_not_an_error(tmp_path):
    ln = lines(end=False)
    ln[-1] = ln[-1][:40]                        # killed while writing the last size
    run = load_file(write(tmp_path, ln, newline=False))[0]
    assert run.status == "incomplete"
    assert [s.bytes for s in run.sizes] == [8, 64]


def test_end_with_error_status_is_marked(tmp_path):
    run = load_file(write(tmp_path, lines(status="timeout")))[0]
    assert run.complete and run.status == "timeout"
    assert any("timeout" in w for w in run.warnings)


def test_runs_of_different_patterns_cannot_be_compared(tmp_path):
    a = load_file(write(tmp_path, lines(), "a.jsonl"))
    b = load_file(write(tmp_path, lines(pattern="stream"), "b.jsonl"))
    with pytest.raises(InputError, match="different patterns"):
        compare_runs(a, b)


def test_cli_exits_2_on_bad_input_and_names_the_line(tmp_path, capsys):
    ln = lines()
    ln[1] = "{not json"
    p = write(tmp_path, ln)
    assert main(["summary", str(p)]) == 2
    assert "r.jsonl:2" in capsys.readouterr().err
    assert main(["summary", str(tmp_path / "missing.jsonl")]) == 2
    a = write(tmp_path, lines(), "a.jsonl")
    b = write(tmp_path, lines(pattern="stream"), "b.jsonl")
    assert main(["compare", str(a), str(b)]) == 2


def test_repeated_visits_of_a_size_are_pooled(tmp_path):
    ln = lines()
    again = json.loads(ln[1])
    again.update(round=1)                       # size 8 visited a second time
    ln.insert(-1, json.dumps(again))
    end = json.loads(ln[-1])
    end["sizes_completed"] += 1                 # the end record counts every visit
    ln[-1] = json.dumps(end)
    run = load_file(write(tmp_path, ln))[0]
    assert run.sizes_by_bytes()[8].samples_ns.size == 40


def test_a_size_line_copied_is_refused(tmp_path):
    ln = lines()
    ln.insert(-1, ln[1])                        # the same visit written twice: not a second visit
    with pytest.raises(InputError, match="repeats the size record of line 2"):
        load_file(write(tmp_path, ln))
