"""versus check --junit: the file validates against the subset of the common JUnit schemas
(junit-subset.xsd: Jenkins xunit's junit-10 and Ant's requirements at once), junitparser reads
it, and --unsure fail|skip|pass decides an unsure size in the file and in the exit status."""
import json
import os
import xml.etree.ElementTree as ET

import junitparser
import pytest
import synth

from versus.baseline import check, junit_xml, save
from versus.cli import main

lxml_etree = pytest.importorskip("lxml.etree", reason="lxml (the test extra) validates the JUnit file")

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = [8, 1024, 65536]
BASE = synth.hockney(2000.0, 0.1)


def schema():
    return lxml_etree.XMLSchema(lxml_etree.parse(os.path.join(HERE, "junit-subset.xsd")))


def invalid(text: str) -> list[str]:
    """The schema's complaints about a JUnit text (empty: valid)."""
    s = schema()
    s.validate(lxml_etree.fromstring(text.encode()))
    return [str(e) for e in s.error_log]


def files(tmp_path, tag, factor=1.0, n=3, seed0=0):
    out = []
    for k in range(n):
        p = tmp_path / f"{tag}{k}.jsonl"
        synth.write_run(p, lambda b: factor * BASE(b), SIZES, count=300, seed=seed0 + k, rel_noise=0.01,
                        outlier_frac=0, launch_id=k, run_id=f"{tag}-{k}")
        out.append(str(p))
    return out


@pytest.fixture
def base(tmp_path):
    b = tmp_path / "base.json"
    save(files(tmp_path, "base", 1.0, 3), str(b), ["latency:-5%,+5%"])
    return str(b)


@pytest.fixture
def unsure_new(tmp_path, base):
    """Results 5 % slower against a +5 % tolerance: every interval straddles the bound."""
    new = files(tmp_path, "edge", 1.05, 3, seed0=40)
    d = check(new, base, unsure="skip")
    assert [c["status"] for c in d["cases"]] == ["unsure"] * 3, [c["words"] for c in d["cases"]]
    return new


def test_the_schema_can_fail():
    """The subset refuses what the previous writer produced (no errors, time, timestamp, hostname)
    and a test case without classname or time, so a valid file proves something."""
    old = ('<?xml version="1.0"?><testsuites><testsuite name="versus check" tests="1" failures="0" '
           'skipped="0"><properties/><testcase classname="c" name="8 B latency"/></testsuite></testsuites>')
    errs = invalid(old)
    assert any("errors" in e for e in errs) and any("timestamp" in e for e in errs), errs
    case = ('<testsuites><testsuite name="s" tests="1" failures="0" errors="0" skipped="0" time="0.1" '
            'timestamp="2026-01-01T00:00:00" hostname="h" package="p" id="0"><properties/>'
            '<testcase name="8 B"/><system-out/><system-err/></testsuite></testsuites>')
    assert any("classname" in e for e in invalid(case))
    assert invalid(case.replace('<testcase name="8 B"/>', '<testcase name="8 B" classname="c" time="0.5"/>')) == []
    zoned = case.replace("00:00:00", "00:00:00Z").replace('<testcase name="8 B"/>', "")
    assert invalid(zoned), "a timestamp with a zone is refused (Ant's schema)"


def test_junit_of_each_verdict_validates(tmp_path, base):
    slow = files(tmp_path, "slow", 1.10, 3, seed0=20)
    ok = files(tmp_path, "ok", 1.0, 3, seed0=10)
    for new, rules in ((slow, None), (ok, None), (ok, ["latency@0-1K:-5%,+5%"])):
        d = check(new, base, rules)
        text = junit_xml(d)
        assert invalid(text) == [], text
    assert {c["status"] for c in check(ok, base, ["latency@0-1K:-5%,+5%"])["cases"]} >= {"unchecked"}


def test_junit_attributes_come_from_the_results(tmp_path, base):
    slow = files(tmp_path, "slow", 1.10, 3, seed0=20)
    p = tmp_path / "check.xml"
    assert main(["check", *slow, "--baseline", base, "--junit", str(p)]) == 1
    suite = ET.parse(p).getroot().find("testsuite")
    assert suite.get("timestamp") == "2026-01-01T00:00:00" and suite.get("hostname") == "n1"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("3", "3", "0", "0")
    # a case's time: the seconds the results spent measuring that size (elapsed_ns), added over launches
    want = {}
    for f in slow:
        for rec in map(json.loads, open(f)):
            if rec["record"] == "size":
                want[rec["bytes"]] = want.get(rec["bytes"], 0) + rec["elapsed_ns"] / 1e9
    got = {int(tc.get("name").split()[0]): float(tc.get("time")) for tc in suite.iter("testcase")}
    assert got == pytest.approx(want, abs=1e-3)
    assert float(suite.get("time")) == pytest.approx(sum(want.values()), abs=3e-3)
    assert [tc.find("failure").get("type") for tc in suite.iter("testcase")] == ["regressed"] * 3


@pytest.mark.parametrize("mode, code, failures, skipped", [("fail", 1, 3, 0), ("skip", 0, 0, 3), ("pass", 0, 0, 0)])
def test_unsure_mode_decides_the_file_and_the_exit_status(tmp_path, base, unsure_new, capsys, mode, code,
                                                          failures, skipped):
    p = tmp_path / f"{mode}.xml"
    assert main(["check", *unsure_new, "--baseline", base, "--unsure", mode, "--junit", str(p)]) == code
    out = capsys.readouterr().out
    assert out.rstrip().endswith("FAIL" if code else "PASS") and f"--unsure {mode}" in out
    text = p.read_text()
    assert invalid(text) == []
    suite = list(junitparser.JUnitXml.fromfile(str(p)))[0]
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (3, failures, 0, skipped)
    cases = list(suite)
    if mode == "fail":
        assert all(isinstance(c.result[0], junitparser.Failure) and c.result[0].type == "unsure" for c in cases)
    elif mode == "skip":
        assert all(isinstance(c.result[0], junitparser.Skipped) for c in cases)
    else:
        assert all(c.is_passed for c in cases)


def test_unsure_fails_by_default(tmp_path, base, unsure_new):
    assert main(["check", *unsure_new, "--baseline", base]) == 1
    assert not check(unsure_new, base)["passed"]


def test_unchecked_stays_skipped_whatever_the_unsure_mode(tmp_path, base):
    ok = files(tmp_path, "ok", 1.0, 3, seed0=10)
    for mode in ("fail", "skip", "pass"):
        d = check(ok, base, ["latency@0-1K:-5%,+5%"], unsure=mode)
        suite = ET.fromstring(junit_xml(d)).find("testsuite")
        last = list(suite.iter("testcase"))[-1]
        assert last.get("name") == "65536 B" and last.find("skipped") is not None


def test_a_bad_unsure_mode_is_a_usage_error(tmp_path, base, capsys):
    ok = files(tmp_path, "ok", 1.0, 1, seed0=10)
    with pytest.raises(SystemExit) as e:
        main(["check", *ok, "--baseline", base, "--unsure", "maybe"])
    assert e.value.code == 2 and "--unsure" in capsys.readouterr().err
