"""versus baseline save / versus check: tolerances, verdicts from the samples, exit codes,
JSON and JUnit XML (read back with junitparser, a real JUnit parser)."""
import json

import junitparser
import pytest
import synth

from versus.baseline import check, junit_xml, parse_rule, save
from versus.cli import main
from versus.load import InputError

SIZES = [8, 1024, 65536]
BASE = synth.hockney(2000.0, 0.1)


def files(tmp_path, tag, model, n=1, seed0=0, **kw):
    out = []
    for k in range(n):
        p = tmp_path / f"{tag}{k}.jsonl"
        synth.write_run(p, model, SIZES, count=300, seed=seed0 + k, rel_noise=0.01, outlier_frac=0,
                        launch_id=k, **kw)
        out.append(str(p))
    return out


def scaled(f):
    return lambda m: (lambda n: f * m(n))


@pytest.fixture
def base(tmp_path):
    b = tmp_path / "base.json"
    save(files(tmp_path, "base", BASE, 3), str(b), ["latency:-5%,+5%"])
    return str(b)


def test_same_configuration_passes(tmp_path, base):
    d = check(files(tmp_path, "new", BASE, 3, seed0=10), base)
    assert d["passed"] and d["counts"]["pass"] == 3


def test_ten_percent_slower_regresses_at_every_size(tmp_path, base):
    d = check(files(tmp_path, "slow", scaled(1.10)(BASE), 3, seed0=20), base)
    assert not d["passed"]
    assert [c["status"] for c in d["cases"]] == ["regressed"] * 3
    assert all(c["ratio"] == pytest.approx(1.10, rel=0.01) for c in d["cases"])


def test_three_percent_slower_is_within_five(tmp_path, base):
    d = check(files(tmp_path, "bit", scaled(1.03)(BASE), 3, seed0=30), base, unsure="skip")
    assert d["passed"] and {c["status"] for c in d["cases"]} <= {"pass", "unsure"}


def test_faster_is_improved_and_fails_only_when_strict(tmp_path, base):
    new = files(tmp_path, "fast", scaled(0.85)(BASE), 3, seed0=40)
    d = check(new, base)
    assert d["passed"] and [c["status"] for c in d["cases"]] == ["improved"] * 3
    assert not check(new, base, strict=True)["passed"]


def test_rules_by_size_range_later_wins(tmp_path, base):
    new = files(tmp_path, "slow", scaled(1.10)(BASE), 3, seed0=50)
    d = check(new, base, ["latency:-5%,+5%", "latency@64K-:-5%,+20%"])
    assert [c["status"] for c in d["cases"]] == ["regressed", "regressed", "pass"]


def test_bandwidth_and_absolute_rules(tmp_path, base):
    new = files(tmp_path, "slow", scaled(1.10)(BASE), 3, seed0=60)
    # 10 % more time is 9.1 % less bandwidth: beyond -5 %, within -12 %
    assert check(new, base, ["bandwidth:-5%,+inf"])["counts"]["regressed"] == 3
    assert check(new, base, ["bandwidth:-12%,+inf"])["counts"]["regressed"] == 0
    # at 8 B the time is ~2 us: +10 % is ~0.2 us, beyond 0.1 us, within 0.5 us
    d = check(new, base, ["latency@0-8:-1us,+0.1us", "latency@9-:-inf,+100%"])
    assert [c["status"] for c in d["cases"]] == ["regressed", "pass", "pass"]
    assert check(new, base, ["latency@0-8:-1us,+0.5us"])["cases"][0]["status"] == "pass"


def test_an_uncovered_size_is_unchecked(tmp_path, base):
    d = check(files(tmp_path, "new", BASE, 3, seed0=70), base, ["latency@0-1K:-5%,+5%"])
    assert [c["status"] for c in d["cases"]] == ["pass", "pass", "unchecked"]


@pytest.mark.parametrize("text", ["latency", "speed:-5%,+5%", "latency:-5,+5", "latency:+5%,+5%",
                                  "latency@4K-1K:-5%,+5%", "latency:-5%,+0.2us", "latency:-100%,+5%",
                                  "bandwidth:-5us,+5us"])
def test_bad_rules_refused(text):
    with pytest.raises(InputError):
        parse_rule(text)


def test_check_refuses_another_configuration(tmp_path, base):
    other = files(tmp_path, "other", BASE, 1, name="other")
    with pytest.raises(InputError, match="own baseline"):
        check(other, base)


def test_cli_exit_codes_json_and_junit(tmp_path, base, capsys):
    ok = files(tmp_path, "ok", BASE, 3, seed0=80)
    slow = files(tmp_path, "slow", scaled(1.10)(BASE), 3, seed0=90)
    assert main(["check", *ok, "--baseline", base]) == 0
    junit = tmp_path / "check.xml"
    capsys.readouterr()
    assert main(["check", *slow, "--baseline", base, "--json", "--junit", str(junit)]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["passed"] is False and d["counts"]["regressed"] == 3
    xml = junitparser.JUnitXml.fromfile(str(junit))
    suites = list(xml)
    assert len(suites) == 1
    suite = suites[0]
    assert suite.tests == 3 and suite.failures == 3
    cases = list(suite)
    assert [c.name for c in cases] == ["8 B latency", "1024 B latency", "65536 B latency"]
    assert all(not c.is_passed and isinstance(c.result[0], junitparser.Failure) for c in cases)
    assert main(["check", *slow, "--baseline", str(tmp_path / "missing.json")]) == 2


def test_junit_of_a_pass_has_no_failure(tmp_path, base):
    d = check(files(tmp_path, "ok", BASE, 3, seed0=100), base)
    p = tmp_path / "j.xml"
    p.write_text(junit_xml(d))
    suite = list(junitparser.JUnitXml.fromfile(str(p)))[0]
    assert suite.failures == 0 and all(c.is_passed for c in suite)


def test_baseline_keeps_the_samples(tmp_path, base):
    doc = json.loads(open(base).read())
    assert doc["format"] == "versus-baseline" and doc["launches"] == 3
    # each results file's lines verbatim (their seals stay checkable)
    sizes = [x for f in doc["files"] for x in map(json.loads, filter(None, f)) if x["record"] == "size"]
    assert len(sizes) == 9 and all(len(s["samples_ns"]) == 300 for s in sizes)
