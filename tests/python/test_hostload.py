"""The host load a run records (docs/results-schema.md, "Host load") read back and told: a loaded run
is called loaded with its figures, a quiet one quiet, a damaged record says nothing, and a comparison
of sides measured under different load says so."""
import json

from versus.compare import compare_runs
from versus.console import format_comparison, format_summary
from versus.analysis import summary_document
from versus.export import jsonable
from versus.hostload import comparison_note, config_words, run_load
from versus.load import load_file


def write_run(path, waited, others=0.0, steal=0.0, launch=0, size_waited=None, scale=1.0):
    recs = [{"record": "run", "schema": 1, "launch_id": launch, "pattern": "pingpong", "variant": "blocking",
             "transport": {"name": "shm", "library": "shm", "version": "1"}, "ranks": 2,
             "hosts": ["h", "h"], "host_load": {"cpus": [0, 1], "loadavg": [0.5, 0.4, 0.3], "running": 2,
                                                "online_cpus": 2}}]
    for b in (8, 64, 512):
        s = {"record": "size", "bytes": b, "iterations": 40, "warmup": 1, "batch": 1,
             "samples_ns": [int(scale * (400 + b + (i % 7))) for i in range(40)]}
        if size_waited is not None:
            s["host_load"] = {"waited": size_waited}
        recs.append(s)
    recs.append({"record": "end", "status": "ok", "host_load_waited": waited, "host_load_others": others,
                 "host_load_steal": steal, "host_loadavg_end": 2.1})
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    return str(path)


def test_a_loaded_run_is_called_loaded_with_its_figures(tmp_path):
    (run,) = load_file(write_run(tmp_path / "a.jsonl", 0.48, others=0.5, size_waited=0.45))
    d = run_load(run)
    assert d["loaded"] and d["waited"] == 0.48 and d["others"] == 0.5 and d["cpus"] == [0, 1]
    assert d["sizes_loaded"] == 3 and d["sizes_with_figures"] == 3
    assert "loaded host" in d["words"] and "48 %" in d["words"] and "50 %" in d["words"]
    text = format_summary(summary_document([run]))
    assert "warning: host: measured on a loaded host" in text


def test_a_quiet_run_is_called_quiet_and_each_rule_alone_makes_a_run_loaded(tmp_path):
    (quiet,) = load_file(write_run(tmp_path / "q.jsonl", 0.01, others=0.02))
    assert not run_load(quiet)["loaded"] and "quiet host" in run_load(quiet)["words"]
    assert "warning: host" not in format_summary(summary_document([quiet]))
    for k, kw in enumerate(({"waited": 0.10}, {"waited": 0.0, "others": 0.10}, {"waited": 0.0, "steal": 0.05})):
        (r,) = load_file(write_run(tmp_path / f"r{k}.jsonl", **kw))
        assert run_load(r)["loaded"], kw
    (r,) = load_file(write_run(tmp_path / "below.jsonl", 0.09, others=0.09, steal=0.04))
    assert not run_load(r)["loaded"]


def test_damaged_or_missing_figures_say_nothing(tmp_path):
    p = tmp_path / "bad.jsonl"
    write_run(p, 0.5)
    lines = [json.loads(x) for x in p.read_text().splitlines()]
    lines[-1].update(host_load_waited="lots", host_load_others=7, host_load_steal=-1)
    lines[0]["host_load"] = {"cpus": "0-1", "loadavg": "high"}
    lines[1]["host_load"] = {"waited": 3}
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    (run,) = load_file(str(p))
    d = run_load(run)
    assert d["waited"] is None and d["others"] is None and d["steal"] is None and d["cpus"] == []
    assert not d["loaded"] and d["sizes_with_figures"] == 0
    lines[0].pop("host_load")
    for k in ("host_load_waited", "host_load_others", "host_load_steal", "host_loadavg_end"):
        lines[-1].pop(k)
    p.write_text("\n".join(json.dumps(x) for x in lines[:1] + lines[2:]) + "\n")
    (run,) = load_file(str(p))
    assert run_load(run) is None and config_words([run]) is None


def test_a_comparison_under_different_load_says_so(tmp_path):
    quiet = [load_file(write_run(tmp_path / f"q{k}.jsonl", 0.01, launch=k))[0] for k in range(3)]
    busy = [load_file(write_run(tmp_path / f"b{k}.jsonl", 0.45, launch=k, scale=1.3))[0] for k in range(3)]
    note = comparison_note(quiet, busy)
    assert "different load" in note and "0 of 3" in note and "3 of 3" in note
    c = compare_runs(quiet, busy)
    assert "different load" in c.load_note
    assert "host load: the two sides were measured under different load" in format_comparison(jsonable(c.to_dict()))
    assert comparison_note(quiet, quiet) == ""
    assert "both sides" in comparison_note(busy, busy)
    assert "3 of 3 launches measured on a loaded host" in config_words(busy)


def test_check_says_when_its_new_launches_ran_on_a_loaded_host(tmp_path):
    from versus.baseline import check, save
    quiet = [write_run(tmp_path / f"q{k}.jsonl", 0.01, launch=k, scale=1 + k / 500) for k in range(3)]
    again = [write_run(tmp_path / f"a{k}.jsonl", 0.01, launch=k + 3, scale=1.001 + k / 500) for k in range(3)]
    busy = [write_run(tmp_path / f"b{k}.jsonl", 0.45, launch=k + 6, scale=1.3 + k / 500) for k in range(3)]
    b = str(tmp_path / "base.json")
    save(quiet, b, ["latency:-inf,+5%"])
    d = check(busy, b)
    loadw = [w for w in d["warnings"] if "different load" in w]
    assert len(loadw) == 1 and "new: 3 of 3 launches on a loaded host" in loadw[0], d["warnings"]
    assert d["counts"]["regressed"] == 3
    assert not any("load" in w for w in check(again, b)["warnings"])
