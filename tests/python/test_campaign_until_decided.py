"""`versus campaign --until-decided`: rounds of launches of the configurations whose comparisons
are undecided, looks at repeated (Pocock) intervals, a manifest that keeps the design and a report
that reads its comparisons at the design's level.  Real runs over the shm and tcp modules (two
sizes, a few hundred iterations); the unit cases of a range's state are built by hand."""
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

import versus
from versus import campaign as vc
from versus.campaign_decide import range_state
from versus.compare import BETWEEN, Comparison, RegimeStatement, SizeComparison
from versus.load import InputError
from versus.sequential import campaign_design

PKG = str(Path(versus.__file__).resolve().parents[1])
TWO = """launches = {launches}
timeout = 60
[[run]]
id = "{a}"
transport = "{ta}"
sizes = "8,64"
iterations = 300
warmup = 20
[[run]]
id = "{b}"
transport = "{tb}"
sizes = "8,64"
iterations = 300
warmup = 20
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


def campaign(tmp_path, text, *args, rc=0):
    runner = runner_or_skip()
    cfg, results = tmp_path / "c.toml", tmp_path / "r"
    cfg.write_text(text, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=PKG, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.run([sys.executable, "-m", "versus", "campaign", str(cfg), "--results", str(results),
                        "--runner", runner, *args], capture_output=True, text=True, timeout=300, env=env,
                       stdin=subprocess.DEVNULL)
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode == rc, p.stderr
    man = json.loads((results / "campaign.json").read_text()) if rc == 0 else None
    return p, results, man


def test_a_large_difference_is_decided_at_the_first_look(tmp_path):
    p, results, man = campaign(tmp_path, TWO.format(launches=3, a="s", ta="shm", b="t", tb="tcp"),
                               "--until-decided", "--max-launches", "6", "--report", str(tmp_path / "rep"))
    seq = man["sequential"]
    assert seq["design"] == [3, 6]
    design = campaign_design(3, 6)
    assert seq["nominal_alpha"] == pytest.approx(design.nominal_alpha)
    assert 0.01 < seq["nominal_alpha"] < 0.05          # stricter than one fixed look
    # tcp over loopback is many times slower than shared memory: decided at 3 launches a side
    assert seq["stopped"] == "decided", seq
    assert seq["rounds"] == 0 and len(seq["looks"]) == 1
    assert len(man["runs"]) == 6 and not list(results.glob("*.L3.jsonl"))
    assert "look at 3 launches a configuration: 1 of 1 comparisons decided" in p.stderr
    # the report's comparison is made at the design's level and says so
    html = (tmp_path / "rep" / "index.html").read_text()
    assert "Pocock boundary over 4 looks" in html
    assert f"{100 * (1 - design.nominal_alpha):.2f} %" in html


def test_an_a_a_comparison_gets_rounds_until_it_stops_for_a_reason(tmp_path):
    p, results, man = campaign(tmp_path, TWO.format(launches=2, a="x", ta="shm", b="y", tb="shm"),
                               "--until-decided", "--max-launches", "5")
    seq = man["sequential"]
    assert seq["design"] == [2, 5]
    looks = seq["looks"]
    assert len(looks) == seq["rounds"] + 1 <= 4
    # each round launched x and y once more, interleaved, numbered after the planned launches
    ids = [e["id"] for e in man["runs"]]
    assert ids[:4] == ["x.L0", "y.L0", "x.L1", "y.L1"]
    extra = ids[4:]
    assert extra == [f"{c}.L{k}" for k in range(2, 2 + seq["rounds"]) for c in ("x", "y")]
    assert all(e["status"] == "ok" for e in man["runs"])
    for e in man["runs"]:
        assert (results / e["file"]).stat().st_size > 0
    last = seq["last"][0]
    assert sorted(last["configs"]) == ["x", "y"]
    # the reason it stopped agrees with what the last look found
    states = last["states"]
    if seq["stopped"] == "decided":
        assert set(states) == {"decided"}
    elif seq["stopped"] == "futile":
        assert "open" not in states and "futile" in states
    else:
        assert seq["stopped"] == "budget" and "open" in states and looks[-1]["launches"] == 5
    assert last["launches"] == [2 + seq["rounds"]] * 2
    # the same command again: the launches on disk are kept, none is run again, the same design
    p2, _, man2 = campaign(tmp_path, TWO.format(launches=2, a="x", ta="shm", b="y", tb="shm"),
                           "--until-decided", "--max-launches", "5")
    assert [e["id"] for e in man2["runs"]] == ids
    assert all(e.get("resumed") for e in man2["runs"]), p2.stderr
    assert man2["sequential"]["rounds"] == seq["rounds"]


@pytest.mark.parametrize("arg, said", [("1", "give 2 to 1000"), ("2000", "give 2 to 1000")])
def test_a_budget_it_cannot_use_is_refused(tmp_path, arg, said):
    p, _, _ = campaign(tmp_path, TWO.format(launches=2, a="x", ta="shm", b="y", tb="shm"),
                       "--until-decided", "--max-launches", arg, rc=2)
    assert said in p.stderr


def test_max_launches_alone_is_refused(tmp_path):
    p, _, _ = campaign(tmp_path, TWO.format(launches=2, a="x", ta="shm", b="y", tb="shm"),
                       "--max-launches", "4", rc=2)
    assert "--max-launches goes with --until-decided" in p.stderr


def test_a_budget_below_the_planned_launches_is_refused(tmp_path):
    p, _, _ = campaign(tmp_path, TWO.format(launches=4, a="x", ta="shm", b="y", tb="shm"),
                       "--until-decided", "--max-launches", "3", rc=2)
    assert "plans 4 launches a configuration already" in p.stderr


def _cmp(ratio, ci, launches=3, sd_df=4.0):
    s = SizeComparison(bytes=8, n_a=100, n_b=100, median_a_us=1.0, median_b_us=1.0 / ratio, ratio=ratio, ratio_ci=list(ci),
                       p_value=0.5, p_adjusted=0.5, mark="~", inference=BETWEEN,
                       launches_a=launches, launches_b=launches, df=sd_df)
    r = RegimeStatement("~", 8, 8, 1, None, None, "", ratio, list(ci))
    return Comparison("a", "b", 0.03, "holm", 0.02, sizes=[s], regimes=[r]), r


def test_a_range_state_follows_its_interval():
    # an interval within the minimum effect on both sides of 1 decides: no practical difference
    cmp, r = _cmp(1.001, (0.990, 1.012))
    assert range_state(cmp, r, 0.02, 10) == "decided"
    # a claim decides
    r.mark = "-"
    assert range_state(cmp, r, 0.02, 10) == "decided"
    # a wide interval around a small estimate: no budget of 10 launches a side fits it in ±2 %
    cmp, r = _cmp(1.01, (0.5, 2.0))
    assert range_state(cmp, r, 0.02, 10) == "futile"
    # an estimate 20 % off with a moderate spread: more launches can claim it
    cmp, r = _cmp(1.2, (0.85, 1.7))
    assert range_state(cmp, r, 0.02, 10) == "open"
    # no effect at the estimate, a few per cent of spread: even one standard error farther from 1 it
    # would not be claimed, nor fit within +-2 %, in 10 launches a side; in 100 it could
    cmp, r = _cmp(1.0, (0.9, 1.12))
    assert range_state(cmp, r, 0.02, 10) == "futile"
    assert range_state(cmp, r, 0.02, 100) == "open"


def test_the_design_is_a_pocock_boundary_over_the_looks():
    d = campaign_design(3, 10)
    assert d.looks == tuple(range(3, 11))
    assert d.constant > 1.96 and math.isclose(d.nominal_alpha, 2 * (1 - 0.5 * (1 + math.erf(d.constant / 2 ** .5))),
                                              rel_tol=1e-9)
