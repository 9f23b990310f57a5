"""Property tests (Hypothesis): the JSONL loader, the campaign loader and the statistics take any input
and either work or raise the project's own InputError (or ValueError for the statistics' empty input):
never another exception.  Generated files are built from real record shapes with values mutated, and
from arbitrary text."""
import json
import math

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from versus.analysis import analyse_run  # noqa: E402
from versus.campaign import load_campaign  # noqa: E402
from versus.load import InputError, load_file  # noqa: E402
from versus.stats import describe, median_ci_sorted, summarise_size  # noqa: E402

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=20)

RUN = {"record": "run", "schema": 1, "transport": {"name": "shm", "library": "versus", "version": "0.1.0",
                                                    "provider": "shm", "options": {}, "thresholds": {}},
       "pattern": "pingpong", "variant": "blocking", "ranks": 2, "hosts": ["a", "a"]}
SIZE = {"record": "size", "bytes": 8, "iterations": 3, "warmup": 1, "batch": 1, "samples_ns": [400, 410, 405],
        "elapsed_ns": 1300}
END = {"record": "end", "status": "ok", "message": "", "sizes_completed": 1}


def _analyse(path):
    """Load and analyse: the project's error for bad input, never another exception."""
    try:
        for run in load_file(path):
            if run.sizes:
                analyse_run(run)
    except InputError:
        pass


def _campaign(p):
    """Load a campaign: the project's error for bad input, never another exception."""
    try:
        load_campaign(p)
    except InputError:
        pass


@SETTINGS
@given(text=st.text(max_size=400))
def test_loader_any_text(tmp_path, text):
    p = tmp_path / "any.jsonl"
    p.write_text(text, encoding="utf-8")
    _analyse(p)


@SETTINGS
@given(data=st.binary(max_size=400))
def test_loader_any_bytes(tmp_path, data):
    p = tmp_path / "any.jsonl"
    p.write_bytes(data)
    _analyse(p)


@SETTINGS
@given(which=st.sampled_from(["run", "size", "end"]), key=st.text(max_size=12), value=json_values,
       drop=st.booleans())
def test_loader_mutated_records(tmp_path, which, key, value, drop):
    recs = {"run": dict(RUN), "size": dict(SIZE), "end": dict(END)}
    target = recs[which]
    keys = list(target)
    k = keys[len(key) % len(keys)] if drop or not key else key
    if drop:
        target.pop(k, None)
    else:
        target[k] = value
    p = tmp_path / "m.jsonl"
    p.write_text("".join(json.dumps(recs[r], allow_nan=True) + "\n" for r in ("run", "size", "end")),
                 encoding="utf-8")
    _analyse(p)


@SETTINGS
@given(samples=st.lists(st.integers(0, 10**12), min_size=1, max_size=40), nbytes=st.integers(0, 2**40),
       batch=st.integers(1, 1000))
def test_statistics_any_samples(samples, nbytes, batch):
    s = summarise_size(nbytes, np.array(samples, dtype=np.int64), batch)
    assert s.n == len(samples)
    assert math.isfinite(s.median_ns) and min(samples) / 2 <= s.median_ns <= max(samples) / 2
    ci = median_ci_sorted(np.sort(np.array(samples, dtype=float)))
    if ci is not None:
        assert ci[0] <= np.median(samples) <= ci[1]
    d = describe([float(x) for x in samples])
    assert d["min"] <= d["median"] <= d["max"]


toml_scalars = (st.integers(-10, 10**6) | st.floats(allow_nan=True) | st.booleans()
                | st.text(alphabet="abcxyz019 ._-", max_size=8))
RUN_KEYS = ["transport", "id", "np", "nodes", "iterations", "iterations_large", "warmup", "warmup_large",
            "timeout", "launcher", "launches", "sizes", "pattern", "variant", "hosts", "extra_args", "colour"]


def _toml(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, int):
        return str(v)
    return json.dumps(v)


@SETTINGS
@given(entries=st.dictionaries(st.sampled_from(RUN_KEYS), toml_scalars, max_size=6),
       top=st.dictionaries(st.sampled_from(["title", "timeout", "launches", "scale"]), toml_scalars, max_size=3))
def test_campaign_any_values(tmp_path, entries, top):
    lines = [f"{k} = {_toml(v)}" for k, v in top.items()] + ["[[run]]"]
    lines += [f"{k} = {_toml(v)}" for k, v in entries.items()]
    p = tmp_path / "c.toml"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _campaign(p)


@SETTINGS
@given(text=st.text(max_size=300))
def test_campaign_any_text(tmp_path, text):
    p = tmp_path / "c.toml"
    p.write_text(text, encoding="utf-8")
    _campaign(p)


# ---- the campaign manifest (campaign.json) and the baseline file: any JSON value in any field


MANIFEST_RUN_KEYS = ["id", "config_id", "file", "transport", "pattern", "variant", "options", "env", "launch_id",
                     "command", "status", "rc", "duration_s", "stderr_tail"]
MANIFEST_KEYS = ["campaign", "title", "description", "study", "compare", "runner", "modules", "patterns", "counts",
                 "runs"]


def _manifest_dir(tmp_path, mutate):
    import synth
    d = tmp_path / "m"
    d.mkdir(exist_ok=True)
    (d / "a.jsonl").write_text("\n".join(synth.make_lines(synth.hockney(1000, 0.1), [8, 64], count=5, seed=1)) + "\n")
    doc = {"campaign": "c.toml", "title": "t", "description": "", "study": None, "compare": [], "runner": "versus-run",
           "modules": {"shm": "yes"}, "patterns": ["pingpong"], "counts": {"ok": 1},
           "runs": [{"id": "a", "config_id": "a", "file": "a.jsonl", "transport": "shm", "pattern": "pingpong",
                     "variant": "blocking", "options": {}, "env": {}, "launch_id": 0, "command": ["versus-run"],
                     "status": "ok", "rc": 0, "duration_s": 1.0, "stderr_tail": ""}]}
    mutate(doc)
    (d / "campaign.json").write_text(json.dumps(doc))
    return d


def _report_model(d):
    from versus.report import build_model, collect
    try:
        runs, entries, manifests = collect([str(d)])
        build_model(runs, entries, manifests, None)
    except InputError:
        pass


@SETTINGS
@given(key=st.sampled_from(MANIFEST_KEYS), value=json_values)
def test_manifest_any_top_value(tmp_path, key, value):
    _report_model(_manifest_dir(tmp_path, lambda doc: doc.__setitem__(key, value)))


@SETTINGS
@given(key=st.sampled_from(MANIFEST_RUN_KEYS), value=json_values)
def test_manifest_any_run_value(tmp_path, key, value):
    _report_model(_manifest_dir(tmp_path, lambda doc: doc["runs"][0].__setitem__(key, value)))


@SETTINGS
@given(doc=json_values)
def test_manifest_any_document(tmp_path, doc):
    d = _manifest_dir(tmp_path, lambda _: None)
    (d / "campaign.json").write_text(json.dumps(doc))
    _report_model(d)
