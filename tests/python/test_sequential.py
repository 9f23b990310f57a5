"""The sequential check and the host covariate: repeated intervals that hold under optional
stopping, launches compared at like host state, what a baseline can resolve, and
`versus check --run` launching the baseline's own configuration."""
import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from synth import hockney, make_lines

from versus.baseline import check, parse_rule, save
from versus.cli import main
from versus.covariate import adjusted, host_classes
from versus.gate import launch_command, launch_dir
from versus.load import InputError
from versus.resolution import log_bounds
from versus.sequential import campaign_design, check_design, launches_needed, pocock_constant, t_at

SIZES = [8, 64, 512, 4096]


def launch(path, factor=1.0, drift=115.0, seed=0, launch_id=0, waited=0.0):
    """One synthetic launch whose whole speed is `factor`, its drift probe reading `drift` ns."""
    rng = np.random.default_rng(seed + 1000)
    lines = make_lines(hockney(100 * factor, 0.05 * factor), SIZES, count=60, seed=seed, rel_noise=0.01,
                       run_id=f"launch-{seed}", launch_id=launch_id)
    out = []
    for ln in lines:
        rec = json.loads(ln)
        if rec["record"] == "size":
            rec["drift_ns"] = drift * (1 + 0.01 * rng.standard_normal())
            rec["host_load"] = {"waited": waited}
        out.append(json.dumps(rec))
    path.write_text("\n".join(out) + "\n")
    return str(path)


def test_pocock_constants_match_the_published_ones():
    """Equal information increments: Pocock's constants are 2.178 (2 looks) and 2.413 (5 looks)."""
    assert pocock_constant((1.0,)) == pytest.approx(1.96, abs=1e-3)
    assert pocock_constant((1.0, 2.0)) == pytest.approx(2.178, abs=0.015)
    assert pocock_constant(tuple(float(k) for k in range(1, 6))) == pytest.approx(2.413, abs=0.015)
    # a check against a fixed baseline: later looks add less, so the boundary is lower than equal looks'
    assert check_design(10, 3, 10).constant < campaign_design(3, 10).constant


def _false_decisions(alpha_of_look, trials=4000, m=10, looks=range(3, 11), seed=1):
    """A/A under optional stopping: normal launch effects, stop at the first look whose t interval
    excludes 0; the share of trials that stopped (a false decision)."""
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((trials, m))
    new = rng.standard_normal((trials, max(looks)))
    hit = np.zeros(trials, bool)
    for n in looks:
        y = new[:, :n]
        d = y.mean(1) - base.mean(1)
        ss = ((y - y.mean(1, keepdims=True)) ** 2).sum(1) + ((base - base.mean(1, keepdims=True)) ** 2).sum(1)
        df = n + m - 2
        se = np.sqrt(ss / df * (1 / n + 1 / m))
        hit |= np.abs(d) > t_at(alpha_of_look, df) * se
    return hit.mean()


def test_repeated_intervals_hold_under_optional_stopping_where_fixed_ones_do_not():
    design = check_design(10, 3, 10)
    fixed = _false_decisions(0.05)
    repeated = _false_decisions(design.nominal_alpha)
    assert fixed > 0.08, f"a fixed 95 % interval at each of 8 looks errs more than 5 % ({fixed:.3f})"
    assert repeated <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 4000), f"repeated intervals err {repeated:.3f}"


def _false_campaign_decisions(alpha_of_look, trials=4000, looks=range(3, 11), seed=2):
    """A/A campaign under optional stopping: both sides add a launch a look, stop at the first look
    whose t interval of the difference excludes 0; the share of trials that stopped."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((trials, max(looks)))
    b = rng.standard_normal((trials, max(looks)))
    hit = np.zeros(trials, bool)
    for n in looks:
        x, y = a[:, :n], b[:, :n]
        d = x.mean(1) - y.mean(1)
        ss = ((x - x.mean(1, keepdims=True)) ** 2).sum(1) + ((y - y.mean(1, keepdims=True)) ** 2).sum(1)
        df = 2 * n - 2
        hit |= np.abs(d) > t_at(alpha_of_look, df) * np.sqrt(ss / df * 2 / n)
    return hit.mean()


def test_a_campaign_until_decided_holds_its_rate_under_optional_stopping():
    design = campaign_design(3, 10)
    fixed = _false_campaign_decisions(0.05)
    repeated = _false_campaign_decisions(design.nominal_alpha)
    assert fixed > 0.08, f"a fixed 95 % interval at each of 8 looks errs more than 5 % ({fixed:.3f})"
    assert repeated <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 4000), f"repeated intervals err {repeated:.3f}"


def test_host_classes_split_at_wide_gaps_only():
    x = np.log([55, 57, 115, 118, 120, 490, 480])
    assert list(host_classes(x)) == [0, 0, 1, 1, 1, 2, 2]
    assert set(host_classes(np.log([100, 110, 120, 130]))) == {0}


def test_adjustment_compares_launches_at_like_host_state():
    """Launches 4x slower when the probe reads 4x higher, more of them on one side: unadjusted the
    sides differ by ~2x; at like host state the true 10 % remains, with a narrow interval."""
    rng = np.random.default_rng(3)
    def side(true, slow):
        states = np.array([1.0] * (8 - slow) + [4.0] * slow)
        y = np.log(true * states) + 0.02 * rng.standard_normal(8)
        return y, np.log(115 * states * (1 + 0.01 * rng.standard_normal(8)))
    ya, ca = side(1.10, 5)
    yb, cb = side(1.00, 1)
    a = adjusted(ya, ca, yb, cb)
    assert a is not None and a.classes == 2
    assert math.exp(a.log_ratio) == pytest.approx(1.10, rel=0.03)
    assert a.se < 0.2 * a.se_unadjusted


def test_no_adjustment_where_the_probe_explains_nothing():
    rng = np.random.default_rng(4)
    ya, yb = rng.normal(0, 0.05, 8), rng.normal(0, 0.05, 8)
    ca, cb = np.log(rng.uniform(110, 120, 8)), np.log(rng.uniform(110, 120, 8))
    hits = sum(adjusted(rng.normal(0, 0.05, 8), ca, rng.normal(0, 0.05, 8), cb) is not None for _ in range(200))
    assert adjusted(ya, ca, yb, cb) is None or hits < 30, f"the covariate entered {hits} of 200 times"
    # the host's state and the side confounded: no class shared, nothing to compare
    assert adjusted(ya, np.log(np.full(8, 115.0)), yb, np.log(np.full(8, 480.0))) is None


def test_bounds_on_the_time_ratio():
    lo, hi = log_bounds(parse_rule("latency:-10%,+10%"), 1000.0, 8)
    assert (lo, hi) == pytest.approx((math.log(0.9), math.log(1.1)))
    lo, hi = log_bounds(parse_rule("bandwidth:-10%,+inf"), 1000.0, 8)
    assert lo == -math.inf and hi == pytest.approx(-math.log(0.9))
    # half width 2 * 0.05 * sqrt(1/n + 1/10) under 0.1: 1/n under 1 - 0.1
    assert launches_needed(0.1, 0.05, 2.0, 10) == pytest.approx(1 / 0.9)
    assert launches_needed(0.1, 0.05, 2.0, None) == pytest.approx(2.0)   # a side each: sqrt(2/n)
    assert launches_needed(0.01, 0.05, 2.0, 10) == math.inf      # the baseline's 10 launches are too few


def test_check_decides_slowed_launches_in_other_host_states(tmp_path):
    """Baseline and new launches in two host states; the new ones 20 % slower: regressed at every
    size at like host state, where the unadjusted comparison could not tell."""
    base = [launch(tmp_path / f"b{i}.jsonl", 4.0 if i % 3 == 0 else 1.0, 480 if i % 3 == 0 else 115, seed=i)
            for i in range(8)]
    new = [launch(tmp_path / f"n{i}.jsonl", 1.2 * (4.0 if i % 2 else 1.0), 480 if i % 2 else 115, seed=50 + i)
           for i in range(6)]
    b = str(tmp_path / "base.json")
    save(base, b, ["latency:-10%,+10%"])
    d = check(new, b)
    assert {c["status"] for c in d["cases"]} == {"regressed"}, [c["words"] for c in d["cases"]]
    assert all(c["host"] for c in d["cases"]) and "like host state" in d["host_state"]
    same = [launch(tmp_path / f"a{i}.jsonl", 4.0 if i % 2 else 1.0, 480 if i % 2 else 115, seed=80 + i)
            for i in range(6)]
    assert check(same, b)["passed"]


def test_baseline_save_says_what_it_can_resolve(tmp_path, capsys):
    few = [launch(tmp_path / f"f{i}.jsonl", [1.0, 1.6, 0.7][i], 115, seed=i) for i in range(3)]
    assert main(["baseline", "save", *few, "-o", str(tmp_path / "few.json"), "--tolerance", "latency:-5%,+5%"]) == 0
    err = capsys.readouterr().err
    assert "spread too much for its tolerance" in err and "with 10 new launches" in err
    doc = json.loads((tmp_path / "few.json").read_text())
    row = doc["resolution"]["sizes"][0]
    assert row["launch_sd_pct"] > 30 and not row["passes_10"] and row["detects_pct_10"] > 50
    good = [launch(tmp_path / f"g{i}.jsonl", 1.0 + 0.01 * (i % 3), 115, seed=20 + i) for i in range(10)]
    assert main(["baseline", "save", *good, "-o", str(tmp_path / "good.json"), "--tolerance", "latency:-10%,+10%"]) == 0
    err = capsys.readouterr().err
    assert "spread too much" not in err
    assert json.loads((tmp_path / "good.json").read_text())["resolution"]["sizes"][0]["passes_3"]


def test_unsure_sizes_say_what_would_decide_them(tmp_path, capsys):
    base = [launch(tmp_path / f"b{i}.jsonl", [1.0, 1.08, 0.94, 1.05][i], 115, seed=i) for i in range(4)]
    new = [launch(tmp_path / f"n{i}.jsonl", [1.04, 1.1, 0.97][i], 115, seed=30 + i) for i in range(3)]
    b = str(tmp_path / "b.json")
    save(base, b, ["latency:-5%,+5%"])
    d = check(new, b)
    unsure = [c for c in d["cases"] if c["status"] == "unsure"]
    assert unsure and all(c["needed"]["words"] for c in unsure)
    assert any("new launches" in c["needed"]["words"] for c in unsure)


def test_launch_command_is_the_recorded_one_with_a_new_output(tmp_path):
    rec = {"command_line": ["versus-run", "-t", "tcp", "-L", "local", "-O", "old.jsonl", "--overwrite", "-s", "8"],
           "launcher": {"name": "local"}, "ranks": 2, "env": {"UCX_TLS": "tcp", "VERSUS_RANK": "0"}}
    exe = shutil.which("versus-run") or sys.executable
    cmd, env = launch_command(rec, tmp_path / "new.jsonl", exe)
    assert cmd == [exe, "-t", "tcp", "-L", "local", "-s", "8", "--out", str(tmp_path / "new.jsonl")]
    assert env["UCX_TLS"] == "tcp" and env.get("VERSUS_RANK") != "0"
    mpi = dict(rec, launcher={"name": "mpirun"}, ranks=4)
    cmd, env = launch_command(mpi, tmp_path / "m.jsonl", exe)
    assert cmd[1:3] == ["-np", "4"] and cmd[3] == exe and env["OMPI_ALLOW_RUN_AS_ROOT"] == "1"
    with pytest.raises(InputError, match="cannot start again"):
        launch_command(dict(rec, launcher={"name": "pbsdsh"}), tmp_path / "x.jsonl", exe)
    with pytest.raises(InputError, match="not on PATH"):
        launch_command(rec, tmp_path / "x.jsonl", str(tmp_path / "no-such-runner"))


def test_launch_dir_is_new_or_empty(tmp_path):
    assert launch_dir(str(tmp_path / "new")).is_dir()
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.jsonl").write_text("x")
    with pytest.raises(InputError, match="not an empty directory"):
        launch_dir(str(tmp_path / "full"))
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError):
        launch_dir(str(tmp_path / "file"))
    assert (tmp_path / "file").read_text() == "x" and (tmp_path / "full" / "keep.jsonl").read_text() == "x"


def test_check_run_options_need_run(tmp_path, capsys):
    base = [launch(tmp_path / f"b{i}.jsonl", 1.0, 115, seed=i) for i in range(3)]
    b = str(tmp_path / "b.json")
    save(base, b, [])
    assert main(["check", base[0], "--baseline", b, "--max-launches", "4"]) == 2
    assert main(["check", "--baseline", b]) == 2
    assert "--run" in capsys.readouterr().err


def test_check_run_launches_the_baseline_configuration(tmp_path):
    """Real shm launches: a baseline of 3, then check --run with at most 4 new launches: it launches,
    keeps every launch, and says what it spent and why it stopped."""
    runner = shutil.which("versus-run")
    if runner is None:
        pytest.skip("versus-run is not on PATH (build first)")
    env = dict(os.environ)
    base = []
    for i in range(3):
        out = tmp_path / f"b{i}.jsonl"
        p = subprocess.run([runner, "-t", "shm", "-L", "local", "-n", "2", "-s", "8,4K", "-i", "60", "-O", str(out),
                            "-q"], env=env, capture_output=True, text=True, timeout=120)
        if p.returncode == 77:
            pytest.skip(f"shm cannot run here: {p.stderr.strip()}")
        assert p.returncode == 0, p.stderr
        base.append(str(out))
    b = tmp_path / "b.json"
    assert subprocess.run([sys.executable, "-m", "versus", "baseline", "save", *base, "-o", str(b),
                           "--tolerance", "latency:-50%,+50%"], capture_output=True, timeout=120).returncode == 0
    ld = tmp_path / "new"
    p = subprocess.run([sys.executable, "-m", "versus", "check", "--baseline", str(b), "--run", "--max-launches", "4",
                        "--launch-dir", str(ld), "--json"], capture_output=True, text=True, timeout=600)
    assert p.returncode in (0, 1), p.stderr
    d = json.loads(p.stdout)
    seq = d["sequential"]
    assert 3 <= seq["launched"] <= 4 and seq["stopped"] in ("decided", "futile", "budget")
    kept = sorted(os.listdir(ld))
    assert kept == [f"launch-{i:02d}.jsonl" for i in range(1, seq["launched"] + 1)]
    assert all(c["launches"][0] == seq["launched"] for c in d["cases"] if "launches" in c)
    assert "look at 3 new launch" in p.stderr
    # the launch directory is not reused
    p = subprocess.run([sys.executable, "-m", "versus", "check", "--baseline", str(b), "--run",
                        "--launch-dir", str(ld)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "not an empty directory" in p.stderr


def test_undecided_ranges_say_what_would_decide_them(tmp_path):
    """Three launches a side 8 % apart with a 6 % launch spread: undecided, and the words give a
    number of launches a side that grows when the spread does."""
    from versus.compare import compare_runs
    from versus.load import load_file
    def side(name, centre, spread, seed):
        return [r for i, f in enumerate([centre * (1 + spread * d) for d in (-1, 0, 1)])
                for r in load_file(launch(tmp_path / f"{name}{i}.jsonl", f, 115, seed=seed + i))]
    def words(spread):
        c = compare_runs(side(f"a{spread}", 1.08, spread, 0), side(f"b{spread}", 1.0, spread, 10), host=False)
        und = [r for r in c.regimes if r.mark == "~"]
        assert und and all("launches a side" in r.needed for r in und), [r.text for r in c.regimes]
        return int(und[0].needed.split("about ")[1].split()[0])
    assert words(0.12) > words(0.06) >= 3
