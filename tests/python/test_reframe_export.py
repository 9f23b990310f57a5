"""versus baseline export --reframe: a baseline saved from a real short run of versus-run (shm,
local launcher, 8 B and 1 MiB) becomes the entries of ReFrame's reference table that the checks
of contrib/reframe load: the baseline's median one-way time as the check computes it, the
tolerance as ReFrame's fractional thresholds (converted between latency and bandwidth), other
entries of the file kept; bad input exits 2 with one line."""
import json
import os
import shutil
import statistics
import subprocess

import pytest

from versus.cli import main

HERE = os.path.dirname(os.path.abspath(__file__))


def _runner():
    r = os.environ.get("VERSUS_RUN") or shutil.which("versus-run")
    if not r:
        cand = os.path.join(HERE, "..", "..", "build", "core", "versus-run")
        r = cand if os.path.exists(cand) else None
    return r


@pytest.fixture(scope="module")
def shm_run(tmp_path_factory):
    """One real launch: shm ping-pong at 8 B and 1 MiB, 100 samples each."""
    runner = _runner()
    if not runner:
        pytest.skip("versus-run not built (VERSUS_RUN unset, none on PATH)")
    d = tmp_path_factory.mktemp("shm")
    out = d / "shm.jsonl"
    p = subprocess.run([runner, "-t", "shm", "--launch", "local", "-n", "2", "-s", "8,1M", "-i", "100",
                        "--out", str(out), "--quiet"], capture_output=True, text=True, timeout=120)
    if p.returncode != 0 and "shm" in p.stderr and "load" in p.stderr:
        pytest.skip(f"the shm module does not load here: {p.stderr.strip()}")
    assert p.returncode == 0, p.stderr
    return out


def one_way_us(path, nbytes):
    """The check's own figure: median of the round-trip samples / 2, in us."""
    s = []
    for line in open(path, encoding="utf-8"):
        r = json.loads(line)
        if r.get("record") == "size" and r.get("bytes") == nbytes:
            s += r["samples_ns"]
    return statistics.median(s) / 2 / 1e3


def save(run, base, *tolerances):
    args = ["baseline", "save", str(run), "-o", str(base)]
    for t in tolerances:
        args += ["--tolerance", t]
    assert main(args) == 0
    return base


def export(base, key, out):
    return main(["baseline", "export", "--reframe", key, str(base), "-o", str(out)])


def test_export_writes_the_checks_reference_entries(shm_run, tmp_path, capsys):
    base = save(shm_run, tmp_path / "base.json", "latency:-5%,+5%")
    refs = tmp_path / "refs.json"
    assert export(base, "cluster:compute", refs) == 0
    doc = json.loads(refs.read_text())
    assert doc["format"] == "versus-reframe-references" and doc["version"] == 1
    e = doc["references"]["VersusLocal"]["shm"]["cluster:compute"]
    t8, t1m = one_way_us(shm_run, 8), one_way_us(shm_run, 1048576)
    assert e["latency_8B"][0] == pytest.approx(t8, rel=1e-5)
    assert e["latency_8B"][1:] == [-0.05, 0.05, "us"]
    # a time 5 % longer is a bandwidth 1/1.05 - 1 = -4.76 % lower; 5 % shorter, 5.26 % higher
    assert e["bandwidth_1MiB"][0] == pytest.approx(1048576 / t1m, rel=1e-5)
    assert e["bandwidth_1MiB"][1] == pytest.approx(1 / 1.05 - 1, rel=1e-4)
    assert e["bandwidth_1MiB"][2] == pytest.approx(1 / 0.95 - 1, rel=1e-4)
    assert e["bandwidth_1MiB"][3] == "MB/s"
    src = doc["baselines"]["VersusLocal shm cluster:compute"]
    assert src["baseline"] == "base.json" and src["launches"] == 1 and src["tolerances"] == ["latency:-5%,+5%"]
    out = capsys.readouterr().out
    assert "VersusLocal shm on cluster:compute: latency_8B" in out and "(lower -5.00%, upper +5.00%)" in out


def test_bandwidth_and_absolute_rules_convert(shm_run, tmp_path):
    base = save(shm_run, tmp_path / "base.json", "latency@0-1K:-0.05us,+0.5us", "bandwidth@64K-:-10%,+inf")
    refs = tmp_path / "refs.json"
    assert export(base, "cluster:compute", refs) == 0
    e = json.loads(refs.read_text())["references"]["VersusLocal"]["shm"]["cluster:compute"]
    t8 = one_way_us(shm_run, 8)
    lat = e["latency_8B"]
    assert lat[2] == pytest.approx(0.5 / t8, rel=1e-4)
    assert lat[1] == (pytest.approx(-0.05 / t8, rel=1e-4) if t8 > 0.05 else None)
    assert e["bandwidth_1MiB"][1:] == [-0.1, None, "MB/s"]   # no upper bound: +inf


def test_a_size_no_tolerance_covers_is_left_without_reference(shm_run, tmp_path, capsys):
    base = save(shm_run, tmp_path / "base.json", "latency@0-1K:-5%,+5%")
    refs = tmp_path / "refs.json"
    assert export(base, "cluster:compute", refs) == 0
    doc = json.loads(refs.read_text())
    assert list(doc["references"]["VersusLocal"]["shm"]["cluster:compute"]) == ["latency_8B"]
    assert "no tolerance of the baseline covers 1048576 B" in doc["baselines"]["VersusLocal shm cluster:compute"][
        "omitted"]["bandwidth_1MiB"]
    assert "bandwidth_1MiB without a reference" in capsys.readouterr().out


def test_export_into_an_existing_file_keeps_other_entries(shm_run, tmp_path):
    refs = tmp_path / "refs.json"
    wide = save(shm_run, tmp_path / "wide.json", "latency:-20%,+20%")
    narrow = save(shm_run, tmp_path / "narrow.json", "latency:-5%,+5%")
    assert export(wide, "a:one", refs) == 0
    assert export(wide, "b:two", refs) == 0
    assert export(narrow, "a:one", refs) == 0      # replaces a:one only
    t = json.loads(refs.read_text())["references"]["VersusLocal"]["shm"]
    assert sorted(t) == ["a:one", "b:two"]
    assert t["a:one"]["latency_8B"][2] == 0.05 and t["b:two"]["latency_8B"][2] == 0.2


@pytest.mark.parametrize("case,words", [
    ("key", "expected SYSTEM:PARTITION"),
    ("not-refs", "not a references file of versus"),
    ("same", "that is the baseline"),
    ("not-baseline", "not a baseline file"),
])
def test_bad_input_exits_2_with_one_line(shm_run, tmp_path, capsys, case, words):
    base = save(shm_run, tmp_path / "base.json", "latency:-5%,+5%")
    capsys.readouterr()
    out = tmp_path / "refs.json"
    key = "cluster:compute"
    if case == "key":
        key = "cluster"
    elif case == "not-refs":
        out.write_text("precious\n")
    elif case == "same":
        out = base
    elif case == "not-baseline":
        base = shm_run
    assert export(base, key, out) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and "Traceback" not in err
    if case == "not-refs":
        assert out.read_text() == "precious\n"


def test_a_baseline_without_the_checks_sizes_is_refused(tmp_path, capsys):
    runner = _runner()
    if not runner:
        pytest.skip("versus-run not built")
    run = tmp_path / "mid.jsonl"
    p = subprocess.run([runner, "-t", "shm", "--launch", "local", "-n", "2", "-s", "64", "-i", "50", "--out", str(run),
                        "--quiet"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    base = save(run, tmp_path / "base.json")
    capsys.readouterr()
    assert export(base, "cluster:compute", tmp_path / "refs.json") == 2
    err = capsys.readouterr().err
    assert "nothing to export" in err and "8 B and 1 MiB" in err
    assert not (tmp_path / "refs.json").exists()
