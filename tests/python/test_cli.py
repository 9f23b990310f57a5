"""The console face: `versus summary` and `versus compare`, text and JSON."""
import json
import os
import subprocess
import sys

import synth
from versus.cli import main

HERE = os.path.dirname(os.path.abspath(__file__))


def write(tmp_path, fname, model, sizes, **kw):
    return str(synth.write_run(tmp_path / fname, model, sizes, **kw))


def test_summary_json_holds_runs_sizes_regimes_and_transitions(tmp_path, capsys):
    model = synth.piecewise((0, synth.hockney(2000, 0.1)), (8192, synth.hockney(5000, 0.08)))
    p = write(tmp_path, "a.jsonl", model, synth.pow2(1 << 20), thresholds={"rndv_thresh": 8192})
    assert main(["summary", "--json", p]) == 0
    doc = json.loads(capsys.readouterr().out)
    (run,) = doc["runs"]
    assert run["transport"]["name"] == "synthetic" and run["pattern"] == "pingpong"
    assert {"bytes", "n", "median_us", "median_ci_us", "mean_us", "std_us", "stderr_us", "p99_us",
            "lcl_us", "ucl_us", "outside_limits", "normal", "bandwidth_MBps"} <= set(run["sizes"][0])
    assert {"from_bytes", "to_bytes", "latency_us", "latency_ci_us", "bandwidth_MBps",
            "bandwidth_ci_MBps", "n_half_bytes", "n_half_ci_bytes", "residual_rel"} <= set(run["regimes"][0])
    step = [t for t in run["transitions"] if t["kind"] == "step" and t["bytes"] == 8192]
    assert step and step[0]["configured_bytes"] == 8192 and "rndv_thresh" in step[0]["label"]


def test_summary_text_names_the_transition(tmp_path, capsys):
    model = synth.piecewise((0, synth.hockney(2000, 0.1)), (8192, synth.hockney(5000, 0.08)))
    p = write(tmp_path, "a.jsonl", model, synth.pow2(1 << 20), thresholds={"rndv_thresh": 8192})
    assert main(["summary", p]) == 0
    out = capsys.readouterr().out
    assert "rndv_thresh, configured 8192, detected 8192" in out and "regimes" in out


def test_compare_marks_and_json(tmp_path, capsys):
    sizes = [8, 1024, 65536]
    a = write(tmp_path, "a.jsonl", synth.hockney(1500, 0.1), sizes, count=200, seed=1, name="fast")
    b = write(tmp_path, "b.jsonl", synth.hockney(2000, 0.1), sizes, count=200, seed=2, name="slow")
    assert main(["compare", a, b]) == 0
    out = capsys.readouterr().out
    # one launch a side: the difference of these two launches, never a claim about the configurations
    assert "+ A faster" in out and "(+) in these two launches only: fast pingpong/blocking is" in out
    assert "a claim needs several launches a side, 3 or more" in out
    assert main(["compare", "--json", a, b]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [s["mark"] for s in doc["sizes"]] == ["(+)", "(+)", "(+)"] and doc["claims"] is False
    assert doc["regimes"][0]["text"].startswith("in these two launches only: fast pingpong/blocking is")


def test_python_dash_m_versus_runs(tmp_path):
    p = write(tmp_path, "a.jsonl", synth.hockney(2000, 0.1), [8, 64, 512])
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(os.path.dirname(HERE)), "reports"))
    r = subprocess.run([sys.executable, "-m", "versus", "summary", p], capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert "median" in r.stdout


def test_example_files_load_and_summarise(data_dir, capsys):
    files = sorted(os.path.join(data_dir, f) for f in os.listdir(data_dir) if f.endswith(".jsonl"))
    assert len(files) >= 2
    assert main(["summary", "--json"] + files) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["runs"]) == len(files)
