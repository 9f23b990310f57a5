"""versus history: the SQLite store, its rebuild from JSONL, and the change point of a
synthetic history with one step found at the right date."""
import json

import numpy as np
import synth

from versus.cli import main
from versus.history import add_files, rebuild, series


def history(tmp_path, n=24, step_at=14, factor=1.15, seed=0, name="hist"):
    """n daily runs of one configuration; from run step_at on, 15 % slower and a new library version."""
    rng = np.random.default_rng(seed)
    paths = []
    for k in range(n):
        level = 2000.0 * (factor if k >= step_at else 1.0) * (1 + 0.01 * rng.standard_normal())
        lines = synth.make_lines(synth.hockney(level, 0.1), [8, 1024], count=200, seed=seed * 1000 + k,
                                 rel_noise=0.01, outlier_frac=0, name=name, run_id=f"{name}-{k}")
        rec = json.loads(lines[0])
        rec["start_time"] = f"2026-03-{k + 1:02d}T12:00:00Z"
        rec["transport"]["version"] = "2" if k >= step_at else "1"
        lines[0] = json.dumps(rec)
        p = tmp_path / f"{name}-{k:02d}.jsonl"
        p.write_text("\n".join(lines) + "\n")
        paths.append(str(p))
    return paths


def test_one_step_found_at_its_date(tmp_path):
    db = str(tmp_path / "h.sqlite")
    paths = history(tmp_path)
    assert add_files(db, paths) == (24, 24)
    assert add_files(db, paths[:3]) == (0, 3)          # already there: not twice
    (s,) = series(db)
    assert s["bytes"] == 8 and len(s["points"]) == 24
    assert [c["date"] for c in s["changes"]] == ["2026-03-15T12:00:00Z"]
    c = s["changes"][0]
    assert 10 < c["change_pct"] < 20 and c["version_changed"]


def test_flat_history_has_no_change_point(tmp_path):
    db = str(tmp_path / "h.sqlite")
    add_files(db, history(tmp_path, factor=1.0, seed=3))
    (s,) = series(db)
    assert s["changes"] == []


def test_two_configurations_two_series_and_rebuild(tmp_path):
    db = str(tmp_path / "h.sqlite")
    a = history(tmp_path, name="a")
    b = history(tmp_path, name="b", step_at=5, seed=1)
    add_files(db, a + b)
    before = series(db, 1024)
    rebuilt = str(tmp_path / "r.sqlite")
    assert rebuild(rebuilt, [str(tmp_path)]) == (48, 48)
    after = series(rebuilt, 1024)
    assert [x["label"] for x in before] == [x["label"] for x in after] and len(after) == 2
    assert [[p["value"] for p in x["points"]] for x in before] == [[p["value"] for p in x["points"]] for x in after]
    dates = {x["label"].split()[0]: [c["date"] for c in x["changes"]] for x in after}
    assert dates == {"a": ["2026-03-15T12:00:00Z"], "b": ["2026-03-06T12:00:00Z"]}


def test_cli(tmp_path, capsys):
    db = str(tmp_path / "h.sqlite")
    assert main(["history", "add", *history(tmp_path), "--db", db]) == 0
    capsys.readouterr()
    assert main(["history", "show", "--db", db, "--metric", "bandwidth", "--bytes", "1024", "--json"]) == 0
    (s,) = json.loads(capsys.readouterr().out)
    assert s["unit"] == "MB/s" and len(s["changes"]) == 1
    assert s["points"][0]["value"] > s["points"][-1]["value"]      # slower later: less bandwidth
    assert main(["history", "show", "--db", str(tmp_path / "none.sqlite")]) == 2


def test_a_rebuild_from_nothing_usable_keeps_the_store(tmp_path, capsys):
    db = str(tmp_path / "h.sqlite")
    add_files(db, history(tmp_path / "", name="keep")[:3])
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "bad.jsonl").write_text("not json\n")
    assert main(["history", "rebuild", str(junk), "--db", db]) == 2
    assert "left as it was" in capsys.readouterr().err
    assert len(series(db, 1024)[0]["points"]) == 3
