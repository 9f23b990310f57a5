"""A resumed campaign keeps a complete results file only when it measured the configuration the
campaign asks for now.  Real runs over the shm and tcp modules (two sizes, a few iterations): the
same campaign twice is "done before"; a changed transport, option, iteration count, environment
variable or size list is said, one line per run naming the part, the old file is moved into
superseded/ (never deleted) and the run is measured again; the report reads only the new file."""
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import versus
from versus import campaign as vc
from versus.load import InputError

PKG = str(Path(versus.__file__).resolve().parents[1])
BASE = """launches = 1
timeout = 60
[[run]]
id = "a"
transport = "{transport}"
sizes = "{sizes}"
quick_sizes = "8"
iterations = {iterations}
warmup = 1
{extra}
"""


def runner_or_skip():
    try:
        runner = vc.find_runner()
        info = vc.probe_runner(runner)
    except InputError as ex:
        pytest.skip(f"no runner: {ex}")
    missing = [m for m in ("shm", "tcp") if info.modules.get(m) != "yes"]
    if missing:
        pytest.skip(f"modules {', '.join(missing)} do not load here")
    return runner


@pytest.fixture
def camp(tmp_path):
    runner = runner_or_skip()
    cfg, results = tmp_path / "c.toml", tmp_path / "r"

    def run(transport="shm", sizes="8,64", iterations=5, extra="", *args):
        cfg.write_text(BASE.format(transport=transport, sizes=sizes, iterations=iterations, extra=extra),
                       encoding="utf-8")
        env = dict(os.environ, PYTHONPATH=PKG, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        p = subprocess.run([sys.executable, "-m", "versus", "campaign", str(cfg), "--results", str(results),
                            "--runner", runner, *args], capture_output=True, text=True, timeout=120, env=env,
                           stdin=subprocess.DEVNULL)
        assert "Traceback" not in p.stderr, p.stderr
        assert p.returncode == 0, p.stderr
        return p.stderr
    run.results = results
    return run


def record(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8").splitlines()[0])


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def manifest(results: Path) -> dict:
    return json.loads((results / "campaign.json").read_text(encoding="utf-8"))


def test_same_configuration_is_done_before(camp):
    camp()
    first = digest(camp.results / "a.jsonl")
    err = camp()
    assert "a: done before" in err and "changed" not in err
    assert digest(camp.results / "a.jsonl") == first
    assert not (camp.results / "superseded").exists()
    assert manifest(camp.results)["runs"][0]["resumed"] is True


def test_changed_transport_is_measured_again_and_the_old_file_kept(camp):
    camp("shm")
    old = digest(camp.results / "a.jsonl")
    err = camp("tcp")
    line = [ln for ln in err.splitlines() if "configuration changed" in ln]
    assert line == ["a: configuration changed (transport shm -> tcp); re-measuring, the old results kept as "
                    "superseded/a.1.jsonl"], err
    assert "done before" not in err
    kept = camp.results / "superseded" / "a.1.jsonl"
    assert digest(kept) == old and record(kept)["transport"]["name"] == "shm"
    assert record(camp.results / "a.jsonl")["transport"]["name"] == "tcp"
    e = manifest(camp.results)["runs"][0]
    assert e["status"] == "ok" and not e.get("resumed")
    assert e["superseded"]["file"] == "superseded/a.1.jsonl" and "transport shm -> tcp" in e["superseded"]["why"]
    # the report reads the campaign's files, not the ones set aside
    from versus.report import collect
    runs, _, _ = collect([str(camp.results)])
    assert [r.transport["name"] for r in runs] == ["tcp"]
    # and back: a second file aside, numbered on
    err = camp("shm")
    assert "(transport tcp -> shm); re-measuring, the old results kept as superseded/a.2.jsonl" in err
    assert digest(kept) == old


@pytest.mark.parametrize("change,words", [
    (dict(iterations=6), "iterations 5 -> 6"),
    (dict(sizes="8"), "sizes 8,64 -> 8"),
    (dict(extra='options = { mode = "block" }', transport="tcp"), "options (none) -> mode=block"),
    (dict(extra='env = { VERSUS_PROBE = "1" }'), "env VERSUS_PROBE (unset) -> 1"),      # in the run record
    (dict(extra='env = { PROBE_UNRECORDED = "1" }'), "env PROBE_UNRECORDED (unset) -> 1"),  # manifest only
    (dict(extra='extra_args = ["--buffers", "shared", "--validate"]'),
     "buffers (not given) -> shared; validate (not given) -> given"),
])
def test_each_part_of_the_configuration_is_compared(camp, change, words):
    first = dict(transport=change.get("transport", "shm"))
    camp(**first)
    err = camp(**change)
    assert f"a: configuration changed ({words})" in err, err
    assert (camp.results / "superseded" / "a.1.jsonl").exists()
    assert "a: done before" in camp(**change)          # and settled: the same again is done before


def test_quick_then_full_is_not_done_before(camp):
    camp("shm", "8,64", 100, "", "--quick")
    err = camp("shm", "8,64", 100)
    assert "sizes 8 -> 8,64" in err and "iterations 5 -> 100" in err, err


def test_removed_environment_variable_is_a_change(camp):
    camp(extra='env = { PROBE_UNRECORDED = "1", VERSUS_PROBE = "2" }')
    err = camp()
    assert "env PROBE_UNRECORDED 1 -> (unset); env VERSUS_PROBE 2 -> (unset)" in err, err


def test_incomplete_file_of_the_same_configuration_is_replaced_not_kept(camp):
    camp()
    f = camp.results / "a.jsonl"
    f.write_text("\n".join(f.read_text(encoding="utf-8").splitlines()[:-1]) + "\n", encoding="utf-8")
    err = camp()
    assert "changed" not in err and "a: ok" in err
    assert not (camp.results / "superseded").exists()
    assert vc.result_status(f) == "ok"


def test_incomplete_file_of_another_configuration_is_kept(camp):
    camp("shm")
    f = camp.results / "a.jsonl"
    cut = "\n".join(f.read_text(encoding="utf-8").splitlines()[:-1]) + "\n"
    f.write_text(cut, encoding="utf-8")
    err = camp("tcp")
    assert "transport shm -> tcp" in err
    assert (camp.results / "superseded" / "a.1.jsonl").read_text(encoding="utf-8") == cut


def test_unreadable_run_record_is_kept_aside(camp):
    camp()
    f = camp.results / "a.jsonl"
    lines = f.read_text(encoding="utf-8").splitlines()
    f.write_text("\n".join(["{not json"] + lines[1:]) + "\n", encoding="utf-8")
    err = camp()
    assert "a: the run record of a.jsonl cannot be read; re-measuring, the old results kept as " \
           "superseded/a.1.jsonl" in err, err


# ---- the comparison itself, on records of other shapes

ASKED = {"arguments": {"transport": "fake", "pattern": "pingpong", "variant": "blocking", "sizes": "8",
                       "transport-opt": {"behave": "ok"}, "iterations": "5"},
         "ranks": 2, "launcher": "local", "env": {}, "nodes": None, "hosts": [], "launcher_args": []}


def fake_record(**kw):
    rec = {"record": "run", "transport": {"name": "fake", "options": {"behave": "ok"}}, "pattern": "pingpong",
           "variant": "blocking", "ranks": 2}
    rec.update(kw)
    return rec


def test_a_record_without_its_command_line_is_compared_on_what_it_has():
    assert vc.configuration_changes(ASKED, fake_record(), None, None, {}) == []
    got = vc.configuration_changes(ASKED, fake_record(transport={"name": "other", "options": {}}), None, None, {})
    assert got == ["transport other -> fake", "options (none) -> behave=ok"]
    assert vc.configuration_changes(ASKED, fake_record(ranks=4), None, None, {}) == ["ranks 4 -> 2"]


def test_the_earlier_manifest_fills_in_what_the_record_does_not_say():
    before = {"file": "a.jsonl", "env": {"X": "1"},
              "configuration": dict(ASKED, arguments=dict(ASKED["arguments"], iterations="9"),
                                    hosts=["n1"], launcher="mpirun")}
    got = vc.configuration_changes(ASKED, fake_record(), before, None, {})
    assert got == ["iterations 9 -> 5", "launcher mpirun -> local", "env X 1 -> (unset)", "hosts n1 -> (none)"]


def test_hostile_record_values_stay_on_one_line():
    rec = fake_record(command_line=["versus-run", "--transport", "a\nb", "--sizes", "8" * 200])
    got = vc.configuration_changes(ASKED, rec, None, None, {})
    assert all("\n" not in g and len(g) < 120 for g in got), got


def test_a_damaged_earlier_manifest_is_left_aside(tmp_path):
    for text in ("[1, 2]", '{"runs": 3}', '{"runs": [1, {"file": 2}]}', "not json", "\x00"):
        (tmp_path / "campaign.json").write_text(text, encoding="utf-8")
        assert vc.previous_entries(tmp_path) == {}
