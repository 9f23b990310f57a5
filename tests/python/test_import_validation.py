"""versus import of OSU 7's --validation output (an extra Validation column, Pass or Fail per
size): the figures are read as without the column, the result is kept per size as `valid`, a
Fail size is imported and marked invalid, and `versus summary` says so.  The fixtures are
written by hand in OSU 7.4's layout (data/import/README.md)."""
import json
import os

import pytest

from versus.cli import main
from versus.importers import import_file, import_text, write_jsonl
from versus.load import InputError, load_file

D = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "import")


def rows(name):
    (r,) = import_file(os.path.join(D, name))[0]
    return r


@pytest.mark.parametrize("test, figure", [("osu_latency", "one_way_ns"), ("osu_bw", "bandwidth_MBps")])
def test_validation_column_is_kept_per_size_and_changes_no_figure(test, figure):
    checked, plain = rows(f"{test}-7-validation.txt"), rows(f"{test}-7-plain.txt")
    assert checked.test == plain.test == test
    assert [r["bytes"] for r in checked.rows] == [r["bytes"] for r in plain.rows] == [1, 2, 4, 8, 16, 32, 64, 128]
    assert [r[figure] for r in checked.rows] == [r[figure] for r in plain.rows]
    assert {r["bytes"]: r["valid"] for r in checked.rows} == {b: b != 64 for b in [1, 2, 4, 8, 16, 32, 64, 128]}
    assert all("valid" not in r for r in plain.rows)
    assert any("Validation column" in c and "Fail at 64 B" in c for c in checked.conversions)
    assert not any("Validation" in c for c in plain.conversions)


@pytest.mark.parametrize("test", ["osu_latency", "osu_bw"])
def test_a_fail_size_is_imported_marked_and_said_by_summary(tmp_path, capsys, test):
    out = tmp_path / "imported.jsonl"
    assert main(["import", os.path.join(D, f"{test}-7-validation.txt"), "-o", str(out)]) == 0
    (run,) = load_file(str(out))
    by = {s["bytes"]: s for s in run.summaries}
    assert by[64]["valid"] is False and by[8]["valid"] is True and len(by) == 8
    capsys.readouterr()
    assert main(["summary", str(out)]) == 0
    text = capsys.readouterr().out
    assert "validation" in text and "FAIL" in text
    assert "invalid: 1 size(s) failed" in text and ": 64 B" in text
    assert main(["summary", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [s["bytes"] for s in doc["imported"][0]["sizes"] if s.get("valid") is False] == [64]


def test_without_the_column_summary_says_nothing_of_validation(tmp_path, capsys):
    out = tmp_path / "plain.jsonl"
    assert main(["import", os.path.join(D, "osu_latency-7-plain.txt"), "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["summary", str(out)]) == 0
    text = capsys.readouterr().out
    assert "validation" not in text and "invalid" not in text


def test_a_validation_cell_other_than_pass_or_fail_is_refused(tmp_path, capsys):
    with open(os.path.join(D, "osu_latency-7-validation.txt")) as f:
        text = f.read().replace("Fail", "Maybe")
    with pytest.raises(InputError, match="Maybe.*Pass or Fail"):
        import_text(text, "x.txt")
    p = tmp_path / "x.txt"
    p.write_text(text)
    assert main(["import", str(p)]) == 2
    assert "Pass or Fail" in capsys.readouterr().err


def test_a_summary_valid_that_is_not_a_boolean_is_refused(tmp_path):
    runs, text = import_file(os.path.join(D, "osu_bw-7-validation.txt"))
    out = tmp_path / "ok.jsonl"
    write_jsonl(runs, "osu_bw-7-validation.txt", text, str(out))
    lines = out.read_text().splitlines()
    from versus.load import seal_line
    bad = []
    for ln in lines:
        rec = json.loads(ln)
        rec.pop("line_sha256", None)
        if rec["record"] == "summary" and rec["bytes"] == 64:
            rec["valid"] = "no"
        bad.append(seal_line(rec))
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join(bad) + "\n")
    with pytest.raises(InputError, match="'valid' must be true or false"):
        load_file(str(p))


def test_beside_measured_runs_a_fail_size_is_marked(tmp_path, capsys):
    import synth
    out = tmp_path / "osu.jsonl"
    assert main(["import", os.path.join(D, "osu_latency-7-validation.txt"), "-o", str(out)]) == 0
    m = tmp_path / "m.jsonl"
    synth.write_run(m, synth.hockney(250.0, 0.001), [8, 64, 128], count=200, seed=1)
    capsys.readouterr()
    assert main(["compare", str(m), str(out)]) == 0
    text = capsys.readouterr().out
    marked = [ln.split()[0] for ln in text.splitlines() if "(tool's validation: Fail)" in ln]
    assert marked == ["64"], text
    assert "validation failed at 64 B" in text


def test_the_reports_native_table_notes_a_fail_size(tmp_path):
    import synth
    from versus.report import native_section
    out = tmp_path / "osu.jsonl"
    assert main(["import", os.path.join(D, "osu_latency-7-validation.txt"), "-o", str(out)]) == 0
    m = tmp_path / "m.jsonl"
    synth.write_run(m, synth.hockney(250.0, 0.001), [8, 64, 128], count=200, seed=1, name="openmpi")
    sections = native_section(load_file(str(m)), load_file(str(out)), None)
    assert len(sections) == 1
    notes = sections[0]["table"]["notes"]
    assert [n for n in notes if "validation failed at 64 B" in n], notes
