"""The JUnit XML file of `versus check --junit`: one test case per size.

What CI servers read.  The file satisfies both common JUnit schemas, Jenkins xunit's
(junit-10.xsd) and Ant's (the JUnit.xsd most tools cite), so it has what the stricter of
the two asks for: a `testsuites` root without attributes holding one `testsuite` with
`name`, `tests`, `failures`, `errors`, `skipped`, `time` (a plain decimal), `timestamp`
(ISO 8601 without a zone), `hostname`, `package` and `id`; in it `properties`, the test
cases, then `system-out` and `system-err`; each `testcase` with `name`, `classname` and
`time`, holding at most one `failure` (with a `type`) or `skipped`.  The test suite checks
the file against tests/python/junit-subset.xsd, that subset written out.

A size's verdict becomes (docs/history.md):

| verdict    | test case                                                           |
|------------|---------------------------------------------------------------------|
| pass       | passed                                                              |
| regressed  | failure                                                             |
| improved   | passed; failure with --strict                                       |
| unsure     | failure (--unsure fail, the default), skipped (skip), passed (pass) |
| unchecked  | skipped (no rule that can fail covers the size)                     |

A test case's time is the seconds the results spent measuring that size (their records'
`elapsed_ns`), the suite's their sum; the suite's timestamp is the earliest start of the
results (UTC) and its hostname the host of their rank 0.  Every verdict's words are in the
suite's `system-out`, a failure's also in the failure.
"""
from __future__ import annotations

import datetime as _dt
import re
from xml.etree import ElementTree as ET

# Ant's timestamp: ISO 8601 without a zone or fraction (the runs' start_time is UTC)
_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")


def _stamp(start: str) -> str:
    m = _STAMP.match(start or "")
    if m:
        return m.group(0)
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


def _seconds(x) -> str:
    return f"{max(float(x or 0.0), 0.0):.3f}"


def _outcome(c: dict, d: dict) -> str:
    """failure, skipped or passed for one case of a check document."""
    if c.get("fails", c["status"] == "regressed" or (d["strict"] and c["status"] == "improved")):
        return "failure"
    if c["status"] == "unchecked" or (c["status"] == "unsure" and d.get("unsure") == "skip"):
        return "skipped"
    return "passed"


def junit_xml(d: dict) -> str:
    """The check document `d` (baseline.check) as JUnit XML text."""
    cases = d["cases"]
    outcome = [_outcome(c, d) for c in cases]
    total = sum(float(c.get("measured_s") or 0.0) for c in cases)
    counts = {"tests": str(len(cases)), "failures": str(outcome.count("failure")), "errors": "0",
              "skipped": str(outcome.count("skipped")), "time": _seconds(total)}
    root = ET.Element("testsuites")
    suite = ET.SubElement(root, "testsuite", name="versus check", **counts,
                          timestamp=_stamp(d.get("started", "")), hostname=d.get("host") or "localhost",
                          package="versus", id="0")
    props = ET.SubElement(suite, "properties")
    for k, v in (("baseline", d["baseline"]), ("configuration", d["configuration"]),
                 ("tolerances", ", ".join(d.get("rules") or [])), ("strict", str(bool(d["strict"])).lower()),
                 ("unsure", d.get("unsure", "skip"))):
        ET.SubElement(props, "property", name=k, value=str(v))
    lines = []
    for c, out in zip(cases, outcome):
        name = f"{c['bytes']} B {c.get('metric', '')}".strip()
        tc = ET.SubElement(suite, "testcase", name=name, classname=str(d["configuration"]),
                           time=_seconds(c.get("measured_s")))
        if out == "failure":
            ET.SubElement(tc, "failure", message=f"{c['status']}: {c['words']}", type=c["status"]).text = c["words"]
        elif out == "skipped":
            ET.SubElement(tc, "skipped", message=f"{c['status']}: {c['words']}")
        lines.append(f"{name}: {c['status']}: {c['words']}")
    ET.SubElement(suite, "system-out").text = "\n".join(lines) + "\n"
    ET.SubElement(suite, "system-err").text = "".join(f"warning: {w}\n" for w in d.get("warnings") or [])
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
