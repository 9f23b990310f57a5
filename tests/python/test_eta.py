"""The campaign's ETA from the measured cost per size (eta.py): the schedule a --sizes spec
expands to, the prediction of a run from the costs of an alike one, and a campaign whose
runs differ 40x in length forecast within a factor of 2 after its first run."""
import io
import json
import os
import stat
from pathlib import Path

import pytest

from versus.campaign import load_campaign, run_campaign
from versus.eta import Estimator, Measured, plan_of, read_costs, run_key, schedule_sizes

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "reports" / "data" / "example"
FAKE = HERE.parent / "reports" / "fake_runner.py"


@pytest.mark.parametrize("spec,sizes", [
    ("8", [8]), ("8,1M", [8, 1 << 20]), ("3:17", [4, 8, 16]), ("0:4", [0, 1, 2, 4]),
    ("1K:1M", [1 << k for k in range(10, 21)]), ("0:1024:+256", [0, 256, 512, 768, 1024]),
    ("64,8,8", [8, 64]), ("1KiB:2k", [1024, 2048]),
])
def test_schedule_sizes_expand_as_the_runner_does(spec, sizes):
    assert schedule_sizes(spec) == sizes


def test_schedule_of_a_long_staircase_and_specs_that_do_not_parse():
    assert len(schedule_sizes("4:40000:+4")) == 10000
    for bad in ("", "x", "8:4", "1:2:3:4", "4:40:8", "4:40:+0", "1T"):
        assert schedule_sizes(bad) is None, bad


def test_schedule_matches_the_schedule_real_runs_recorded():
    seen = 0
    for f in DATA.glob("*.jsonl"):
        rec = json.loads(f.open(encoding="utf-8").readline())
        sch = rec.get("schedule")
        if sch:
            assert schedule_sizes(sch["spec"]) == sch["sizes"], f.name
            seen += 1
    assert seen >= 2


def _spec(tmp_path, body):
    p = tmp_path / "c.toml"
    p.write_text('title = "t"\n[defaults]\ntransport = "shm"\nlaunches = 1\n' + body, encoding="utf-8")
    return load_campaign(p).runs


def test_prediction_follows_sizes_iterations_and_batch(tmp_path):
    long_run, one, fixed = _spec(tmp_path, """
[[run]]
id = "stairs"
sizes = "0:1000:+100"
iterations = 100
warmup = 10
[[run]]
id = "one"
sizes = "500"
iterations = 100000
warmup = 0
[[run]]
id = "fixed"
sizes = "500"
iterations = 10
warmup = 0
batch = "3"
""")
    # measured: 1 us + 1 ns per byte per unit, a clock of 10 ns (the runner's own batch: 1 for a
    # unit over 1 us), 0.5 s of start-up (a run of fewer than 10 visits: 2 ms a visit besides)
    key = plan_of(long_run).key
    m = Measured(key=key, sizes=[0, 1000], unit_ns=[1000.0, 2000.0], batch=[2, 2], startup_s=0.5,
                 clock_floor_ns=10.0, auto_batch=False)
    est = Estimator()
    assert est.predict(plan_of(one)) is None          # nothing measured: no forecast
    est.add(m)
    assert est.predict(plan_of(one)) == pytest.approx(0.5 + 100000 * 1500e-9 + 0.002)   # + a visit
    assert est.predict(plan_of(fixed)) == pytest.approx(0.5 + 10 * 3 * 1500e-9 + 0.002)
    want = 0.5 + sum((100 + 10) * (1000 + b) for b in range(0, 1001, 100)) * 1e-9 + 11 * 0.002
    assert est.predict(plan_of(long_run)) == pytest.approx(want)
    # a clock of 100 ns: the runner batches a 1.5 us unit 7 to a sample
    m.clock_floor_ns = 100.0
    assert est.predict(plan_of(one)) == pytest.approx(0.5 + 100000 * 7 * 1500e-9 + 0.002)
    # measured with the runner's own batch (2): the same choice is expected at that size
    m.auto_batch = True
    assert est.predict(plan_of(one)) == pytest.approx(0.5 + 100000 * 2 * 1500e-9 + 0.002)


def test_the_most_alike_measured_run_is_used():
    slow = Measured(key=run_key("tcp", "pingpong", "blocking", {}, False), sizes=[8], unit_ns=[50000.0],
                    batch=[1], startup_s=0.0)
    fast = Measured(key=run_key("shm", "pingpong", "blocking", {}, False), sizes=[8], unit_ns=[500.0],
                    batch=[1], startup_s=0.0)
    two = Measured(key=run_key("shm", "pingpong", "blocking", {}, True), sizes=[8], unit_ns=[9000.0],
                   batch=[1], startup_s=0.0)
    est = Estimator()
    for m in (slow, fast, two):
        est.add(m)

    class S:
        sizes, iterations, iterations_large, warmup, warmup_large, batch = "8", 1000, None, 0, None, "1"
        extra_args, options, pattern, variant = [], {}, "pingpong", "blocking"
        transport, nodes = "shm", None
    assert est.predict(plan_of(S)) == pytest.approx(1000 * 500e-9 + 0.002)
    S.nodes = 2
    assert est.predict(plan_of(S)) == pytest.approx(1000 * 9000e-9 + 0.002)
    S.transport, S.nodes = "ofi", None           # never measured: the same pattern on one node
    assert est.predict(plan_of(S)) == pytest.approx(1000 * 25250e-9 + 0.002)   # the median of tcp and shm


def test_read_costs_of_a_results_file_and_of_one_without_times(tmp_path):
    f = tmp_path / "r.jsonl"
    lines = [{"record": "run"},
             {"record": "size", "bytes": 8, "iterations": 10, "warmup": 5, "batch": 3, "elapsed_ns": 35000},
             {"record": "size", "bytes": 64, "iterations": 10, "warmup": 0, "batch": 1, "elapsed_ns": 20000},
             {"record": "size", "bytes": 8, "iterations": 10, "warmup": 5, "batch": 3, "elapsed_ns": 70000},
             {"record": "end", "status": "ok"}]
    f.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines), encoding="utf-8")
    m = read_costs(f, ("k",), wall_s=1.0)
    assert m.sizes == [8, 64] and m.batch == [3, 1]
    assert m.unit_ns == pytest.approx([1500.0, 2000.0])           # the median of 1000 and 2000 at 8 B
    assert m.startup_s == pytest.approx(1.0 - 125000e-9)
    g = tmp_path / "none.jsonl"
    g.write_text('{"record":"run"}\n{"record":"size","bytes":8}\n', encoding="utf-8")
    assert read_costs(g, ("k",)) is None
    assert read_costs(tmp_path / "missing.jsonl", ("k",)) is None


def test_a_campaign_of_unlike_runs_is_forecast_within_2x_after_its_first_run(tmp_path):
    """A fake runner that takes as long as its schedule asks (20 us + 1 ns/B per unit, 0.2 s of
    start-up): runs of 1 size x 20000 units, 200 sizes x 110 units and 5 sizes of up to 1 MB.
    The old estimate (the first run's time for every run) is off by far more than 2 here."""
    runner = tmp_path / "versus-run"
    runner.write_text(f"#!/bin/sh\nexec {os.sys.executable} {FAKE} \"$@\"\n", encoding="utf-8")
    runner.chmod(runner.stat().st_mode | stat.S_IXUSR)
    cfg = tmp_path / "c.toml"
    cfg.write_text("""title = "forecast"
[defaults]
transport = "fake"
launches = 1
options = { behave = "work" }
[[run]]
id = "short"
sizes = "8:64"
iterations = 200
warmup = 10
[[run]]
id = "one-size-many"
sizes = "8"
iterations = 20000
warmup = 0
[[run]]
id = "stairs"
sizes = "4:8000:+40"
iterations = 100
warmup = 10
[[run]]
id = "large"
sizes = "64K:1M"
iterations = 100
iterations_large = 100
warmup = 10
warmup_large = 10
""", encoding="utf-8")
    err = io.StringIO()
    man = run_campaign(load_campaign(cfg), tmp_path / "res", str(runner), stream=err)
    assert man["counts"] == {"ok": 4}, err.getvalue()
    fc = man["forecast"]
    assert fc["after"] == "short"
    first = next(e for e in man["runs"] if e["id"] == "short")["duration_s"]
    rest = fc["actual_s"]
    assert rest > 4 * first                    # the mean-of-runs estimate (3 x first) is off > 2x
    assert rest / 2 <= fc["predicted_s"] <= rest * 2, fc
    assert "forecast after short" in err.getvalue()
    # every run after the first carries what was forecast for it
    for e in man["runs"][1:]:
        assert e["predicted_s"] > 0 and e["duration_s"] / 2 <= e["predicted_s"] <= e["duration_s"] * 2, e


def test_time_outside_the_visits_is_a_start_up_and_a_cost_per_visit():
    key = run_key("shm", "pingpong", "blocking", {}, False)
    est = Estimator()
    est.add(Measured(key=key, sizes=[8], unit_ns=[0.0], batch=[1], startup_s=0.5, visits=1))
    # one short run measured: its gap is the start-up, 2 ms a visit assumed
    assert est._outside(est.measured, 1001) == pytest.approx(0.5 + 1001 * 0.002)
    est.add(Measured(key=key, sizes=[8], unit_ns=[0.0], batch=[1], startup_s=10.5, visits=1000))
    # and a long one: 10 ms a visit beyond the start-up
    assert est._outside(est.measured, 101) == pytest.approx(0.5 + 101 * 0.01)
    est2 = Estimator()
    for n, g in ((100, 1.5), (400, 4.5)):       # no short run: start-up 0.5 s, 10 ms a visit
        est2.add(Measured(key=key, sizes=[8], unit_ns=[0.0], batch=[1], startup_s=g, visits=n))
    assert est2._outside(est2.measured, 200) == pytest.approx(0.5 + 200 * 0.01)


def test_adaptive_runs_are_planned_to_their_cap(tmp_path):
    (run,) = _spec(tmp_path, """
[[run]]
id = "a"
sizes = "0:1000:+100"
iterations = 10
warmup = 0
batch = "1"
extra_args = ["--adaptive", "--adaptive-max-sizes", "44"]
""")
    plan = plan_of(run)
    assert plan.refine_to == 44
    est = Estimator()
    est.add(Measured(key=plan.key, sizes=[0], unit_ns=[1000.0], batch=[1], startup_s=0.0, visits=1))
    assert est.predict(plan) == pytest.approx(44 * 10 * 1000e-9 + 44 * 0.002)


def test_read_costs_keys_a_file_by_its_run_record(tmp_path):
    f = tmp_path / "r.jsonl"
    run = {"record": "run", "transport": {"name": "ucx", "options": {"tls": "tcp"}}, "pattern": "stream",
           "variant": "window", "hosts": ["a", "b"], "iterations": {"batch": "4"},
           "timer": {"cost_ns": 40.0, "resolution_ns": 1}}
    size = {"record": "size", "bytes": 8, "iterations": 10, "warmup": 0, "batch": 4, "elapsed_ns": 4000}
    f.write_text(json.dumps(run) + "\n" + json.dumps(size) + "\n", encoding="utf-8")
    m = read_costs(f, None)
    assert m.key == run_key("ucx", "stream", "window", {"tls": "tcp"}, True)
    assert m.clock_floor_ns == 40.0 and m.auto_batch is False and m.unit_ns == [100.0]
