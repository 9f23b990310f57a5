"""Baselines with tolerances, and the regression check against them.

`versus baseline save RESULTS... -o base.json` keeps the runs' own records (their samples),
the configuration they measured and the tolerances; `versus check RESULTS... --baseline
base.json` compares the new runs with the kept ones size by size (compare.py: the ratio
of medians with its 95 % interval; between launches when each side has three or more)
and applies the tolerances, ReFrame style: a reference with a lower and an upper bound
per metric and size range, relative (a fraction of the reference) or absolute (us,
MB/s).

A size fails only when the whole 95 % interval of the change lies beyond the tolerance:
the slowdown is beyond it with 97.5 % confidence one-sided.  A size whose interval
straddles the bound is `unsure` (not a failure; more launches decide it).  A size that
improved beyond the lower bound is `improved` (a failure only with --strict, as in
ReFrame, so that a baseline gets renewed).

Metrics: `latency` is the reported time (a ping-pong's one-way time, a stream's time per
message); `bandwidth` is bytes over that time (a bandwidth 5 % lower is a time 5.26 %
higher).  Rules given later override earlier ones for the sizes they cover.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from xml.etree import ElementTree as ET

from .load import InputError, Run, load_file

FORMAT = "versus-baseline"
VERSION = 1
DEFAULT_TOLERANCE = "latency:-5%,+5%"


@dataclass
class Rule:
    metric: str            # latency | bandwidth
    lo_bytes: int
    hi_bytes: int | None   # inclusive; None: no upper end
    lower: float           # allowed change below the reference (<= 0), relative or absolute
    upper: float           # allowed change above it (>= 0); inf: none
    relative: bool
    text: str

    def covers(self, b: int) -> bool:
        return b >= self.lo_bytes and (self.hi_bytes is None or b <= self.hi_bytes)


_UNIT = {"k": 1024, "m": 1024 ** 2, "g": 1024 ** 3, "": 1}
RULE = re.compile(r"^(latency|bandwidth)(?:@(\d+[kKmMgG]?)?-(\d+[kKmMgG]?)?)?:([^,]+),([^,]+)$")


def _bytes(s: str) -> int:
    m = re.fullmatch(r"(\d+)([kKmMgG]?)", s)
    return int(m.group(1)) * _UNIT[m.group(2).lower()]


def _bound(s: str, metric: str, text: str) -> tuple[float, bool]:
    s = s.strip()
    unit = "us" if metric == "latency" else "MB/s"
    m = re.fullmatch(r"([+-]?)(inf|\d+(?:\.\d+)?)(%|us|MB/s)?", s)
    if not m or (m.group(3) not in (None, "%", unit)):
        raise InputError(f"--tolerance {text}: {s!r} is not a bound: give +N% / -N% or +N{unit} / -N{unit}")
    v = math.inf if m.group(2) == "inf" else float(m.group(2))
    if m.group(3) is None and v != math.inf and v != 0:
        raise InputError(f"--tolerance {text}: {s!r} has no unit: % or {unit}")
    v = -v if m.group(1) == "-" else v
    return (v / 100 if m.group(3) == "%" else v), m.group(3) in ("%", None)


def parse_rule(text: str) -> Rule:
    """METRIC[@FROM-TO]:LOWER,UPPER, e.g. latency:-5%,+5%  bandwidth@64K-:-10%,+inf
    latency@0-1K:-0.2us,+0.2us (sizes in bytes with K/M/G = 2^10/2^20/2^30)."""
    m = RULE.match(text.replace(" ", ""))
    if not m:
        raise InputError(f"--tolerance {text}: expected METRIC[@FROM-TO]:LOWER,UPPER with METRIC latency or "
                         "bandwidth, e.g. latency:-5%,+5% or bandwidth@64K-:-10%,+inf")
    metric = m.group(1)
    lo = _bytes(m.group(2)) if m.group(2) else 0
    hi = _bytes(m.group(3)) if m.group(3) else None
    if hi is not None and hi < lo:
        raise InputError(f"--tolerance {text}: the size range ends before it starts")
    lower, rel_l = _bound(m.group(4), metric, text)
    upper, rel_u = _bound(m.group(5), metric, text)
    if lower > 0 or upper < 0:
        raise InputError(f"--tolerance {text}: the lower bound must be 0 or below and the upper 0 or above "
                         f"(e.g. -5%,+5%)")
    if rel_l != rel_u and not (math.isinf(lower) or math.isinf(upper)):
        raise InputError(f"--tolerance {text}: give both bounds in % or both in the metric's unit")
    if lower <= -1 and rel_l and not math.isinf(lower):
        raise InputError(f"--tolerance {text}: a relative lower bound of -100% or below allows everything; "
                         "use -inf")
    return Rule(metric, lo, hi, lower, upper, rel_l and rel_u, text)


def _rule_dict(r: Rule) -> dict:
    d = asdict(r)
    for k in ("lower", "upper"):
        if math.isinf(d[k]):
            d[k] = "inf" if d[k] > 0 else "-inf"
    return d


def _rule_from(d: dict, where: str) -> Rule:
    try:
        return parse_rule(d["text"])
    except (KeyError, TypeError):
        raise InputError(f"{where}: a tolerance without its 'text'") from None


def rule_for(rules: list[Rule], b: int) -> Rule | None:
    hit = [r for r in rules if r.covers(b)]
    return hit[-1] if hit else None


# --- save -------------------------------------------------------------------------------

def _unsealed(rec):
    """A record of a baseline without its line seal (results-schema.md, "Integrity")."""
    if not isinstance(rec, dict):
        return rec
    return {k: v for k, v in rec.items() if k != "line_sha256" and not (k == "integrity" and rec.get("record") == "run")}


def _raw_lines(path: str) -> list[dict]:
    try:
        return [json.loads(ln) for ln in Path(path).read_text(encoding="utf-8").splitlines() if ln.strip()]
    except OSError as ex:
        raise InputError(f"{path}: cannot read: {ex.strerror or ex}") from None
    except json.JSONDecodeError as ex:
        raise InputError(f"{path}: malformed line: {ex.msg}") from None


def save(results: list[str], out: str, tolerances: list[str]) -> dict:
    """Check the runs load as one measured configuration, then keep their records."""
    from .load import check_same_configuration
    runs = [r for p in results for r in load_file(p)]
    if any(r.imported is not None for r in runs):
        raise InputError("an imported run has no samples to check against: a baseline holds measured runs")
    if not all(r.usable_as_complete for r in runs):
        bad = [f"{r.source} ({r.status})" for r in runs if not r.usable_as_complete]
        raise InputError(f"a baseline is made of complete runs; not: {', '.join(bad)}")
    check_same_configuration(runs)
    rules = [parse_rule(t) for t in (tolerances or [DEFAULT_TOLERANCE])]
    doc = {"format": FORMAT, "version": VERSION,
           "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
           "configuration": runs[0].label, "pattern": runs[0].pattern, "launches": len(results),
           "sources": [Path(p).name for p in results],
           "tolerances": [_rule_dict(r) for r in rules],
           "files": [_raw_lines(p) for p in results]}
    try:
        Path(out).write_text(json.dumps(doc) + "\n", encoding="utf-8")
    except OSError as ex:
        raise InputError(f"-o {out}: cannot write: {ex.strerror or ex}") from None
    return doc


def load_baseline(path: str) -> tuple[dict, list[Run]]:
    from .load import load_file as _lf
    import tempfile
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as ex:
        raise InputError(f"--baseline {path}: cannot read: {ex.strerror or ex}") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise InputError(f"--baseline {path}: not a baseline file (not JSON); make one with "
                         "versus baseline save RESULTS -o FILE") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InputError(f"--baseline {path}: not a baseline file (no format {FORMAT!r}); make one with "
                         "versus baseline save RESULTS -o FILE")
    if doc.get("version") != VERSION:
        raise InputError(f"--baseline {path}: baseline version {doc.get('version')!r}; this versus reads {VERSION}")
    files = doc.get("files")
    if not isinstance(files, list) or not files:
        raise InputError(f"--baseline {path}: holds no runs")
    runs: list[Run] = []
    with tempfile.TemporaryDirectory() as d:
        for k, lines in enumerate(files):
            name = (doc.get("sources") or [])[k] if k < len(doc.get("sources") or []) else f"launch{k}"
            p = Path(d) / f"{k}-{Path(str(name)).name}"
            # the seals were checked when the baseline was saved; the records come back unsealed
            # (re-serialised, their bytes differ), so the run no longer promises them
            p.write_text("".join(json.dumps(_unsealed(x)) + "\n" for x in lines), encoding="utf-8")
            for r in _lf(p):
                r.source = f"{path}[{name}]"
                runs.append(r)
    return doc, runs


# --- check ------------------------------------------------------------------------------

def _verdict(rule: Rule, ratio: float, ci: list[float], ref_ns: float, b: int) -> tuple[str, str]:
    """The change of the metric (new against reference) with its interval, judged by the rule."""
    if rule.metric == "latency":
        val, lo, hi = ratio, ci[0], ci[1]                         # time ratio: up is worse
        if rule.relative:
            change = (val - 1, lo - 1, hi - 1)
        else:
            change = tuple((x - 1) * ref_ns / 1e3 for x in (val, lo, hi))   # us
        beyond_worse = change[1] > rule.upper
        beyond_better = change[2] < rule.lower
        within = change[1] >= rule.lower and change[2] <= rule.upper
    else:
        inv = (1 / ratio, 1 / ci[1], 1 / ci[0])                  # bandwidth ratio: down is worse
        if rule.relative:
            change = tuple(x - 1 for x in inv)
        else:
            ref_bw = b / ref_ns * 1e3 if ref_ns > 0 else 0.0
            change = tuple((x - 1) * ref_bw for x in inv)
        beyond_worse = change[2] < rule.lower
        beyond_better = change[1] > rule.upper
        within = change[1] >= rule.lower and change[2] <= rule.upper
    unit = "%" if rule.relative else ("us" if rule.metric == "latency" else "MB/s")
    f = (lambda x: f"{100 * x:+.1f}%") if rule.relative else (lambda x: f"{x:+.3f} {unit}")
    words = f"{rule.metric} {f(change[0])} [{f(change[1])}, {f(change[2])}] against tolerance {rule.text}"
    if beyond_worse:
        return "regressed", words
    if beyond_better:
        return "improved", words
    return ("pass" if within else "unsure"), words


def check(results: list[str], baseline: str, tolerances: list[str] | None = None, strict: bool = False,
          seed: int = 0) -> dict:
    from .compare import compare_runs
    doc, base_runs = load_baseline(baseline)
    new_runs = [r for p in results for r in load_file(p)]
    if any(r.imported is not None for r in new_runs):
        raise InputError("an imported run has no samples: versus check needs measured runs")
    rules = ([parse_rule(t) for t in tolerances] if tolerances else
             [_rule_from(d, baseline) for d in doc.get("tolerances") or []])
    if not rules:
        rules = [parse_rule(DEFAULT_TOLERANCE)]
    if new_runs[0].label != base_runs[0].label:
        raise InputError(f"the results measure {new_runs[0].label!r}, the baseline {base_runs[0].label!r}: "
                         "check a configuration against its own baseline")
    cmp = compare_runs(new_runs, base_runs, seed=seed, labels=("new", "baseline"))
    cases = []
    for s in cmp.sizes:
        rule = rule_for(rules, s.bytes)
        if rule is None:
            cases.append({"bytes": s.bytes, "status": "unchecked", "words": "no tolerance covers this size"})
            continue
        status, words = _verdict(rule, s.ratio, s.ratio_ci, s.median_b_us * 1e3, s.bytes)
        cases.append({"bytes": s.bytes, "status": status, "words": words, "metric": rule.metric,
                      "new_us": s.median_a_us, "baseline_us": s.median_b_us, "ratio": s.ratio,
                      "ratio_ci": list(s.ratio_ci), "inference": s.inference,
                      "launches": [s.launches_a, s.launches_b]})
    failed = [c for c in cases if c["status"] == "regressed" or (strict and c["status"] == "improved")]
    return {"baseline": baseline, "configuration": base_runs[0].label, "results": results,
            "created": doc.get("created"), "strict": strict,
            "rules": [r.text for r in rules], "only_new": cmp.only_a, "only_baseline": cmp.only_b,
            "passed": not failed, "cases": cases,
            "counts": {k: sum(c["status"] == k for c in cases)
                       for k in ("pass", "unsure", "improved", "regressed", "unchecked")}}


def format_check(d: dict) -> str:
    from .console import table
    rows = [[str(c["bytes"]), c["status"], c["words"]] for c in d["cases"]]
    out = [f"versus check: {', '.join(d['results'])} against {d['baseline']} ({d['configuration']})",
           table(["bytes", "status", "change [95% interval]"], rows)]
    n = d["counts"]
    out.append(f"{n['pass']} pass, {n['unsure']} unsure, {n['improved']} improved, {n['regressed']} regressed"
               + (f", {n['unchecked']} unchecked" if n["unchecked"] else ""))
    if d["only_baseline"]:
        out.append(f"sizes in the baseline only (not checked): {d['only_baseline']}")
    out.append("PASS" if d["passed"] else "FAIL")
    return "\n".join(out)


def junit_xml(d: dict) -> str:
    """One test case per size: a failure when it regressed (or improved, with --strict); an
    unsure or unchecked size is a skipped case with the reason."""
    suite = ET.Element("testsuite", name="versus check", tests=str(len(d["cases"])),
                       failures=str(sum(1 for c in d["cases"] if c["status"] == "regressed"
                                        or (d["strict"] and c["status"] == "improved"))),
                       skipped=str(sum(1 for c in d["cases"] if c["status"] in ("unsure", "unchecked"))))
    props = ET.SubElement(suite, "properties")
    for k in ("baseline", "configuration"):
        ET.SubElement(props, "property", name=k, value=str(d[k]))
    for c in d["cases"]:
        tc = ET.SubElement(suite, "testcase", classname=str(d["configuration"]),
                           name=f"{c['bytes']} B {c.get('metric', '')}".strip())
        if c["status"] == "regressed" or (d["strict"] and c["status"] == "improved"):
            ET.SubElement(tc, "failure", message=c["status"], type=c["status"]).text = c["words"]
        elif c["status"] in ("unsure", "unchecked"):
            ET.SubElement(tc, "skipped", message=f"{c['status']}: {c['words']}")
        ET.SubElement(tc, "system-out").text = c["words"]
    suites = ET.Element("testsuites")
    suites.append(suite)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def add_parser(sub) -> None:
    b = sub.add_parser("baseline", help="save results as a baseline with tolerances (see: versus check)")
    bs = b.add_subparsers(dest="baseline_command", metavar="ACTION")
    s = bs.add_parser("save", help="keep these results (one configuration, its launches) as the reference",
                      description="Keep the runs' records (their samples) with tolerances, for versus check.")
    s.add_argument("results", nargs="+", metavar="RESULTS.jsonl", help="launches of one configuration")
    s.add_argument("-o", "--output", required=True, metavar="BASE.json")
    s.add_argument("--tolerance", action="append", metavar="RULE",
                   help=f"METRIC[@FROM-TO]:LOWER,UPPER (repeatable, later rules win; default "
                        f"{DEFAULT_TOLERANCE.replace('%', '%%')}); "
                        "METRIC latency or bandwidth; bounds in %% or us / MB/s; e.g. bandwidth@64K-:-10%%,+inf")
    s.set_defaults(func=_cmd_save)
    b.set_defaults(func=lambda a: (b.print_help(), 2)[1])
    c = sub.add_parser("check", help="check results against a baseline: exit 0 pass, 1 regressed, 2 bad input",
                       description="Compare results with a baseline size by size; a size fails when its whole "
                                   "95 %% interval of the change lies beyond the tolerance.")
    c.add_argument("results", nargs="+", metavar="RESULTS.jsonl")
    c.add_argument("--baseline", required=True, metavar="BASE.json")
    c.add_argument("--tolerance", action="append", metavar="RULE", help="override the baseline's tolerances")
    c.add_argument("--strict", action="store_true", help="an improvement beyond the tolerance fails too (ReFrame)")
    c.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    c.add_argument("--junit", metavar="FILE.xml", help="also write JUnit XML: one test case per size")
    c.set_defaults(func=_cmd_check)


def _cmd_save(args) -> int:
    import sys
    doc = save(args.results, args.output, args.tolerance or [])
    print(f"versus baseline: {doc['configuration']}, {doc['launches']} launch(es), tolerances "
          f"{', '.join(t['text'] for t in doc['tolerances'])} -> {args.output}", file=sys.stderr)
    return 0


def _cmd_check(args) -> int:
    from .export import dumps
    d = check(args.results, args.baseline, args.tolerance, args.strict)
    if args.junit:
        try:
            Path(args.junit).write_text(junit_xml(d), encoding="utf-8")
        except OSError as ex:
            raise InputError(f"--junit {args.junit}: cannot write: {ex.strerror or ex}") from None
    print(dumps(d) if args.json else format_check(d))
    return 0 if d["passed"] else 1
