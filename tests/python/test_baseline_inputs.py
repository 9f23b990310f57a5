"""versus baseline save / versus check / versus history on inputs that used to give a wrong answer
or a traceback (issue 29): results of another configuration checked against a baseline, one launch
counted twice, tolerances that cannot fail, hand-edited or damaged baseline files, a damaged or
locked history store.  Every refusal is exit 2 with one line on stderr."""
import json
import os
import sqlite3
import subprocess
import sys

import pytest
import synth

from versus.baseline import check, parse_rule, save
from versus.cli import main
from versus.load import InputError, seal_line

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SIZES = [8, 1024, 65536]
MODEL = synth.hockney(2000.0, 0.1)
REPORTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "reports")


def write(path, seed=0, launch_id=0, mutate=None, seal=True, scale=1.0, sizes=SIZES, **kw):
    """A synthetic run like versus-run writes it: every line sealed, the run record mutated."""
    lines = synth.make_lines(lambda n: scale * MODEL(n), sizes, count=200, seed=seed, rel_noise=0.01,
                             outlier_frac=0, launch_id=launch_id, **kw)
    recs = [json.loads(x) for x in lines]
    recs[0].update({"placement": {"policy": "auto", "cpus_arg": None, "relation": "l3"}})
    if mutate:
        mutate(recs[0])
    if seal:
        recs[0]["integrity"] = "line_sha256"
        text = "\n".join(seal_line(r) for r in recs) + "\n"
    else:
        text = "\n".join(json.dumps(r) for r in recs) + "\n"
    path.write_text(text, encoding="utf-8")
    return str(path)


def launches(tmp_path, tag, n=3, seed0=0, **kw):
    return [write(tmp_path / f"{tag}{k}.jsonl", seed=seed0 + k, launch_id=k, run_id=f"{tag}-{k}", **kw)
            for k in range(n)]


@pytest.fixture
def base(tmp_path):
    b = tmp_path / "base.json"
    save(launches(tmp_path, "base"), str(b), ["latency:-5%,+5%"])
    return str(b)


def refused(capsys, argv, *words):
    """The command exits 2 with exactly one line on stderr holding every word."""
    capsys.readouterr()
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2, f"{argv}: exit {rc}, stderr {err!r}"
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, f"{argv}: {len(lines)} lines on stderr: {err!r}"
    for w in words:
        assert w in err, f"{argv}: {w!r} not in {err!r}"
    return err


# ---- 1. check refuses a configuration that is not the baseline's, naming the part

def _opt(r):
    r["transport"]["options"]["eager_limit"] = "64"


def _env(r):
    r["env"] = {"UCX_TLS": "rc"}


def _params(r):
    r["pattern_params"] = {"buffers": "shared"}


def _ranks(r):
    r["ranks"] = 4


def _placement(r):
    r["placement"]["relation"] = "package"


def _launcher(r):
    r["launcher"] = {"name": "mpirun", "bootstrap": "tcp"}


def _hosts(r):
    r["hosts"] = ["n1", "n2"]


@pytest.mark.parametrize("mutate,words", [
    (_opt, "transport option eager_limit: 64 here, default in the baseline"),
    (_env, "environment variable UCX_TLS: rc here, not set in the baseline"),
    (_params, "pattern parameter buffers: shared here, not set in the baseline"),
    (_ranks, "ranks: 4 here, 2 in the baseline"),
    (_placement, "placement of ranks 0 and 1: package here, l3 in the baseline"),
    (_launcher, "launcher: mpirun here, local in the baseline"),
    (_hosts, "number of hosts: 2 here, 1 in the baseline"),
])
def test_check_refuses_another_configuration_naming_the_part(tmp_path, base, capsys, mutate, words):
    # slower too: the old check called these "regressed" against the default baseline
    new = launches(tmp_path, "new", seed0=10, mutate=mutate, scale=1.2)
    refused(capsys, ["check", *new, "--baseline", base], words, "own baseline")


def test_check_refuses_another_variant(tmp_path, base, capsys):
    new = launches(tmp_path, "nb", seed0=10, variant="nonblocking")
    refused(capsys, ["check", *new, "--baseline", base], "variant: nonblocking here, blocking in the baseline")


def test_save_and_check_use_one_notion_of_configuration(tmp_path, capsys):
    """What save refuses to pool, check refuses to compare, in the same words."""
    a = write(tmp_path / "a.jsonl", run_id="a")
    e = write(tmp_path / "e.jsonl", seed=1, run_id="e", mutate=_opt)
    refused(capsys, ["baseline", "save", a, e, "-o", str(tmp_path / "b.json")],
            "not launches of one configuration", "transport option eager_limit: 64 in")
    assert main(["baseline", "save", a, "-o", str(tmp_path / "b.json")]) == 0
    refused(capsys, ["check", e, "--baseline", str(tmp_path / "b.json")], "transport option eager_limit: 64 here")
    # the same configuration on another host name is the same configuration (a node pair under srun)
    h = write(tmp_path / "h.jsonl", seed=2, run_id="h", mutate=lambda r: r.__setitem__("hosts", ["n7", "n7"]))
    assert main(["check", h, "--baseline", str(tmp_path / "b.json")]) in (0, 1)


def test_check_refuses_results_of_several_configurations(tmp_path, base, capsys):
    a = write(tmp_path / "a.jsonl", seed=20, run_id="a")
    e = write(tmp_path / "e.jsonl", seed=21, run_id="e", mutate=_opt)
    refused(capsys, ["check", a, e, "--baseline", base], "not launches of one configuration")


# ---- 2. a launch counts once

def test_save_refuses_the_same_file_twice(tmp_path, capsys):
    a = write(tmp_path / "a.jsonl", run_id="a")
    refused(capsys, ["baseline", "save", a, a, "-o", str(tmp_path / "b.json")], "given twice")
    os.symlink(a, tmp_path / "link.jsonl")
    refused(capsys, ["baseline", "save", a, str(tmp_path / "link.jsonl"), "-o", str(tmp_path / "b.json")],
            "the same file as")
    assert not (tmp_path / "b.json").exists()


def test_save_refuses_one_launch_in_two_files(tmp_path, capsys):
    a = write(tmp_path / "a.jsonl", run_id="r1")
    (tmp_path / "copy.jsonl").write_bytes((tmp_path / "a.jsonl").read_bytes())
    refused(capsys, ["baseline", "save", a, str(tmp_path / "copy.jsonl"), "-o", str(tmp_path / "b.json")],
            "the same launch (run_id r1, launch 0)")
    # another run_id written over a copy (an unsealed file edited by hand): the samples give it away
    u = write(tmp_path / "u.jsonl", run_id="r1", seal=False)
    v = tmp_path / "v.jsonl"
    v.write_text((tmp_path / "u.jsonl").read_text().replace('"run_id": "r1"', '"run_id": "r2"'))
    refused(capsys, ["baseline", "save", u, str(v), "-o", str(tmp_path / "b.json")], "the same samples")


def test_check_refuses_one_launch_twice_and_warns_on_the_baselines_own(tmp_path, base, capsys):
    new = launches(tmp_path, "new", seed0=30)
    refused(capsys, ["check", new[0], new[0], "--baseline", base], "given twice")
    capsys.readouterr()
    own = str(tmp_path / "base0.jsonl")
    assert main(["check", own, "--baseline", base]) == 0
    assert "compared with itself" in capsys.readouterr().err


def test_a_hand_made_baseline_holding_one_launch_twice_is_refused(tmp_path, base, capsys):
    doc = json.loads(open(base).read())
    doc["files"] = [doc["files"][0], doc["files"][0]]
    p = tmp_path / "twice.json"
    p.write_text(json.dumps(doc))
    refused(capsys, ["check", *launches(tmp_path, "new", seed0=40), "--baseline", str(p)], "the same launch")


# ---- 3. tolerances that cannot fail

@pytest.mark.parametrize("text,word", [
    ("latency:-inf,+inf", "cannot fail"),
    ("latency:-5%,+inf", "cannot fail"),
    ("bandwidth:-inf,+inf", "cannot fail"),
    ("bandwidth:-inf,+5%", "cannot fail"),
    ("bandwidth:-100%,+inf", "cannot fail"),
    ("bandwidth:-250%,+inf", "cannot fail"),
    ("latency:-1us,+100000000000us", "cannot fail"),        # 28 hours: longer than any --timeout
    ("latency:nan,+5%", "not a bound"),
    ("latency:-5%,+nan%", "not a bound"),
    ("latency:-5%,+" + "9" * 400 + "%", "not a finite number"),
    ("latency:+5%,-5%", "lower bound must be 0 or below"),
    ("latency:-10%,-5%", "lower bound must be 0 or below"),
    ("latency:-5%,+5%\nlatency", "not a bound"),
])
def test_tolerances_that_cannot_fail_are_refused(tmp_path, base, capsys, text, word):
    with pytest.raises(InputError, match=word):
        parse_rule(text)
    a = write(tmp_path / "a.jsonl", seed=50, run_id="a")
    for argv in (["baseline", "save", a, "-o", str(tmp_path / "b.json"), "--tolerance", text],
                 ["check", a, "--baseline", base, "--tolerance", text]):
        err = refused(capsys, argv, word)
        assert "e.g." in err or "accepted" in err, err       # says what is accepted
    assert not (tmp_path / "b.json").exists()


@pytest.mark.parametrize("text,word", [
    ("latency:-5%,+100000000000000000%", "cannot fail at any size"),   # 10^15 times 2 us: weeks
    ("bandwidth:-100000MB/s,+inf", "cannot fail at any size"),         # more than the reference at every size
    ("latency@1G-:-5%,+5%", "no rule covers a size"),
])
def test_tolerances_too_wide_for_the_reference_are_refused(tmp_path, base, capsys, text, word):
    parse_rule(text)    # well formed: only the baseline's sizes show it cannot fail
    a = write(tmp_path / "a.jsonl", seed=60, run_id="a")
    refused(capsys, ["baseline", "save", a, "-o", str(tmp_path / "b.json"), "--tolerance", text], word)
    refused(capsys, ["check", a, "--baseline", base, "--tolerance", text], word)


def test_a_size_where_the_tolerance_cannot_fail_is_unchecked_not_passed(tmp_path, base):
    # 10 MB/s below the reference: at 8 B (4 MB/s) no bandwidth is that low; at 1 KiB (490 MB/s) it is a check
    d = check(launches(tmp_path, "new", seed0=70, scale=1.1), base, ["bandwidth:-10MB/s,+inf"])
    st = {c["bytes"]: c["status"] for c in d["cases"]}
    assert st[8] == "unchecked" and "cannot fail" in d["cases"][0]["words"]
    assert st[65536] == "regressed" and not d["passed"]


def test_a_baseline_edited_to_a_tolerance_that_cannot_fail_is_refused(tmp_path, base, capsys):
    doc = json.loads(open(base).read())
    doc["tolerances"] = [{"text": "latency:-inf,+inf"}]
    p = tmp_path / "wide.json"
    p.write_text(json.dumps(doc))
    refused(capsys, ["check", *launches(tmp_path, "new", seed0=80), "--baseline", str(p)], "cannot fail",
            "wide.json")


# ---- 4. hand-edited or damaged baselines: one line, exit 2, never a traceback

def _edits(doc):
    """(name, document or raw text) edits of a good baseline document."""
    values = [None, True, 0, -1, 2 ** 70, 1e308, float("nan"), "x", "", [], {}, [[]], [{}], ["x"], [1, 2],
              {"a": 1}]
    for key in ("format", "version", "files", "sources", "tolerances", "launches", "configuration", "created"):
        for v in values:
            yield f"{key}={v!r}", {**doc, key: v}
    line0 = doc["files"][0]
    for k in range(3):
        for v in values + ["{", '{"record": "size"}', "\udc80", "a\nb"]:
            files = [list(line0)] + doc["files"][1:]
            files[0][k] = v
            yield f"files[0][{k}]={v!r}", {**doc, "files": files}
    size = json.loads(line0[1])
    size["samples_ns"][0] += 30
    yield "a sample changed", {**doc, "files": [[line0[0], json.dumps(size)] + line0[2:]] + doc["files"][1:]}
    yield "end line removed", {**doc, "files": [[x for x in line0 if '"end"' not in x]] + doc["files"][1:]}
    yield "run line removed", {**doc, "files": [line0[1:]] + doc["files"][1:]}
    for v in values:
        yield f"tolerances[0]={v!r}", {**doc, "tolerances": [v]}
        yield f"tolerances[0].text={v!r}", {**doc, "tolerances": [{"text": v}]}
    yield "not JSON", "{"
    yield "truncated", json.dumps(doc)[:5000]
    yield "nested", "[" * 100000 + "]" * 100000
    yield "huge integer", '{"format": "versus-baseline", "version": ' + "9" * 5000 + "}"
    yield "empty", ""


def test_hand_edited_baselines_give_one_line(tmp_path, base, capsys):
    doc = json.loads(open(base).read())
    new = launches(tmp_path, "new", seed0=90)
    seen = 0
    for name, edited in _edits(doc):
        p = tmp_path / "edited.json"
        if isinstance(edited, str):
            p.write_text(edited, encoding="utf-8", errors="surrogatepass")
        else:
            p.write_text(json.dumps(edited), encoding="utf-8")
        capsys.readouterr()
        rc = main(["check", *new, "--baseline", str(p)])      # any other exception fails the test
        err = capsys.readouterr().err
        assert rc in (0, 1, 2), name
        if rc == 2:
            assert len(err.strip("\n").split("\n")) == 1, f"{name}: {err!r}"
        seen += rc == 2
    assert seen > 100


def test_a_changed_sample_in_a_baseline_is_caught_by_its_seal(tmp_path, base, capsys):
    doc = json.loads(open(base).read())
    size = json.loads(doc["files"][0][1])
    size["samples_ns"][0] += 30
    line = json.dumps(size, separators=(",", ":"))
    doc["files"][0][1] = line
    p = tmp_path / "edited.json"
    p.write_text(json.dumps(doc))
    refused(capsys, ["check", *launches(tmp_path, "new", seed0=95), "--baseline", str(p)], "line_sha256")


def test_a_baseline_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    a = write(tmp_path / "a.jsonl", run_id="a")
    p = subprocess.run([sys.executable, "-m", "versus", "check", a, "--baseline", str(fifo)], capture_output=True,
                       text=True, timeout=60, env={**os.environ, "PYTHONPATH": REPORTS}, stdin=subprocess.DEVNULL)
    assert p.returncode == 2 and "not a regular file" in p.stderr and len(p.stderr.strip().split("\n")) == 1


def test_a_version_1_baseline_is_read_with_its_seals_dropped_and_said_so(tmp_path, capsys):
    """Version 1 kept the records re-encoded (their bytes no longer match their seals)."""
    files = launches(tmp_path, "v1_", n=1)
    doc = {"format": "versus-baseline", "version": 1, "created": "2026-01-01T00:00:00+00:00",
           "configuration": "x", "pattern": "pingpong", "launches": 1, "sources": ["v1_0.jsonl"],
           "tolerances": [{"text": "latency:-5%,+5%"}],
           "files": [[json.loads(x) for x in open(f).read().splitlines()] for f in files]}
    p = tmp_path / "v1.json"
    p.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["check", write(tmp_path / "n.jsonl", seed=5, run_id="n"), "--baseline", str(p)]) in (0, 1)
    err = capsys.readouterr().err
    assert "version 1 baseline" in err and "seals cannot be checked" in err
    # and its configuration is checked as a version 2 baseline's
    refused(capsys, ["check", write(tmp_path / "e.jsonl", seed=6, run_id="e", mutate=_opt), "--baseline", str(p)],
            "transport option eager_limit: 64 here")


def test_save_keeps_the_lines_verbatim_and_never_writes_over_an_input(tmp_path, capsys):
    a = write(tmp_path / "a.jsonl", run_id="a")
    before = (tmp_path / "a.jsonl").read_bytes()
    refused(capsys, ["baseline", "save", a, "-o", a], "replace")
    assert (tmp_path / "a.jsonl").read_bytes() == before
    b = tmp_path / "b.json"
    assert main(["baseline", "save", a, "-o", str(b)]) == 0
    assert "\n".join(json.loads(b.read_text())["files"][0]) == before.decode()
    refused(capsys, ["check", a, "--baseline", str(b), "--junit", a], "replace")
    refused(capsys, ["check", a, "--baseline", str(b), "--junit", str(b)], "replace")
    assert (tmp_path / "a.jsonl").read_bytes() == before
    # a file that is not a baseline is not replaced by one, not even with --overwrite; a baseline is
    # renewed only with --overwrite
    other = tmp_path / "notes.txt"
    other.write_text("my notes\n")
    refused(capsys, ["baseline", "save", a, "-o", str(other)], "not a versus-baseline")
    refused(capsys, ["baseline", "save", a, "-o", str(other), "--overwrite"], "not a versus-baseline")
    assert other.read_text() == "my notes\n"
    refused(capsys, ["baseline", "save", a, "-o", str(b)], "--overwrite")
    assert main(["baseline", "save", a, "-o", str(b), "--overwrite"]) == 0


def test_check_refuses_what_would_check_nothing(tmp_path, base, capsys):
    cut = write(tmp_path / "cut.jsonl", run_id="cut", end=False)
    refused(capsys, ["check", cut, "--baseline", base], "complete runs")
    other = write(tmp_path / "other.jsonl", seed=3, run_id="o", sizes=[2048, 4096])
    refused(capsys, ["check", other, "--baseline", base], "nothing to check")
    # sizes in common, but none that a tolerance covers
    refused(capsys, ["check", *launches(tmp_path, "n", seed0=4), "--baseline", base, "--tolerance",
                     "latency@1G-:-5%,+5%"], "no rule covers a size")
    # the one size a tolerance covers is not among those measured again
    fewer = write(tmp_path / "fewer.jsonl", seed=5, run_id="f", sizes=[8, 1024])
    refused(capsys, ["check", fewer, "--baseline", base, "--tolerance", "latency@64K-:-5%,+5%"],
            "nothing to check")


def test_baseline_without_an_action_is_one_line(capsys):
    refused(capsys, ["baseline"], "save")


# ---- any JSON value in any field of a baseline file (Hypothesis)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=20)


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    d = tmp_path_factory.mktemp("good")
    b = d / "base.json"
    save(launches(d, "base", n=1), str(b), ["latency:-5%,+5%"])
    return json.loads(b.read_text()), write(d / "new.jsonl", seed=9, run_id="new")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(["format", "version", "files", "sources", "tolerances", "created", "line0", "line1",
                            "tolerance0"]),
       value=json_values)
def test_any_value_in_a_baseline(tmp_path, good, key, value):
    doc, new = good
    doc = json.loads(json.dumps(doc))
    if key.startswith("line"):
        doc["files"][0][int(key[-1])] = value if not isinstance(value, dict) else json.dumps(value)
    elif key == "tolerance0":
        doc["tolerances"][0] = value
    else:
        doc[key] = value
    p = tmp_path / "any.json"
    p.write_text(json.dumps(doc))
    try:
        check([new], str(p))
    except InputError as ex:
        assert "\n" not in str(ex)


# ---- the history store: damaged or locked

def _store(tmp_path):
    db = tmp_path / "h.sqlite"
    files = [write(tmp_path / f"h{k}.jsonl", seed=k, run_id=f"h{k}", launch_id=k) for k in range(12)]
    assert main(["history", "add", *files, "--db", str(db)]) == 0
    return db, files


def test_a_damaged_history_store_is_one_line(tmp_path, capsys):
    db, files = _store(tmp_path)
    good = db.read_bytes()
    assert len(good) >= 3 * 4096
    for page in range(1, len(good) // 4096):
        bad = bytearray(good)
        bad[page * 4096:(page + 1) * 4096] = bytes((k * 37 + page) % 256 for k in range(4096))
        for argv in (["history", "show", "--db", str(db)], ["history", "add", files[0], "--db", str(db)]):
            db.write_bytes(bad)
            refused(capsys, argv, "damaged")


def test_a_locked_history_store_is_one_line(tmp_path, capsys):
    db, files = _store(tmp_path)
    other = sqlite3.connect(db, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("DELETE FROM sizes WHERE run = 1")
        extra = write(tmp_path / "x.jsonl", seed=99, run_id="x")
        refused(capsys, ["history", "add", extra, "--db", str(db)], "in use by another process")
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert main(["history", "add", extra, "--db", str(db)]) == 0


def test_a_hand_edited_history_row_is_one_line(tmp_path, capsys):
    db, _ = _store(tmp_path)
    con = sqlite3.connect(db)
    con.execute("UPDATE runs SET hosts = 'not json'")
    con.commit()
    con.close()
    refused(capsys, ["history", "show", "--db", str(db)], "did not write")
