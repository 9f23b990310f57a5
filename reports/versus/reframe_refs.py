"""A baseline's figures as references of the ReFrame checks (contrib/reframe/versus_check.py).

`versus baseline export --reframe SYSTEM:PARTITION BASE.json -o refs.json` turns a baseline
(`versus baseline save`) into the entries of ReFrame's reference table that the checks load
(`-S references_file=refs.json`, or VERSUS_RFM_REFERENCES):

    {"format": "versus-reframe-references", "version": 1,
     "references": {CHECK: {TRANSPORT: {"SYSTEM:PARTITION": {
         "latency_8B": [VALUE, LOWER, UPPER, "us"], "bandwidth_1MiB": [VALUE, LOWER, UPPER, "MB/s"]}}}},
     "baselines": {"CHECK TRANSPORT SYSTEM:PARTITION": {where each entry came from}}}

CHECK follows from the launcher the baseline's runs were started with (versus's local launcher:
VersusLocal; srun: VersusSrun), TRANSPORT from its transport.  VALUE is the baseline's median
of the reported time at the check's size (8 B, 1 MiB), as `versus check` takes it, in the
check's unit; LOWER and UPPER are ReFrame's thresholds, fractions of VALUE (None: no bound),
from the baseline's tolerance that covers that size, converted to the variable's metric when
the tolerance is of the other one (a time 5 % longer is a bandwidth 4.76 % lower).  A variable
whose size the baseline lacks, or no tolerance covers, gets no entry: the check then reports it
without a reference.  Writing into an existing references file replaces only the entry of this
check, transport and partition.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import os
import re
import sys
from pathlib import Path

from .load import InputError, write_atomically

FORMAT = "versus-reframe-references"
VERSION = 1
# the launcher of the baseline's runs -> the check that launches the same way
CHECKS = {"local": "VersusLocal", "srun": "VersusSrun"}
# the checks' performance variables: name, size, metric, unit
VARIABLES = (("latency_8B", 8, "latency", "us"), ("bandwidth_1MiB", 1048576, "bandwidth", "MB/s"))
KEY = re.compile(r"\*|[A-Za-z0-9_.-]{1,100}:(?:[A-Za-z0-9_.-]{1,100}|\*)")


def _time_interval(rule, t0_us: float, b: int) -> tuple[float, float]:
    """The one-way times (us) a tolerance accepts at size b around the reference t0_us."""
    if rule.metric == "latency":
        if rule.relative:
            return t0_us * (1 + rule.lower), t0_us * (1 + rule.upper)
        return t0_us + rule.lower, t0_us + rule.upper
    bw0 = b / t0_us
    if rule.relative:
        lo, hi = bw0 * (1 + rule.lower), bw0 * (1 + rule.upper)
    else:
        lo, hi = bw0 + rule.lower, bw0 + rule.upper
    return (b / hi if hi > 0 else math.inf), (b / lo if lo > 0 else math.inf)


def _fraction(x: float, ref: float, lower: bool) -> float | None:
    """ReFrame's threshold for the bound x of reference ref: a fraction of ref, None for none."""
    if lower and x <= 0:
        return None
    if not math.isfinite(x):
        return None
    f = x / ref - 1
    return float(f"{max(f, -1.0) if lower else max(f, 0.0):.6g}")


def reference_entry(var: str, b: int, metric: str, unit: str, t0_us: float, rule) -> list:
    """[value, lower, upper, unit] of one performance variable."""
    t_lo, t_hi = _time_interval(rule, t0_us, b)
    if metric == "latency":
        value = t0_us
        lower, upper = _fraction(t_lo, value, True), _fraction(t_hi, value, False)
    else:
        value = b / t0_us
        lower = _fraction(b / t_hi if math.isfinite(t_hi) else 0.0, value, True)
        upper = _fraction(b / t_lo if t_lo > 0 else math.inf, value, False)
    return [float(f"{value:.6g}"), lower, upper, unit]


def _describe(entry: list) -> str:
    v, lo, hi, unit = entry
    def f(x):
        return "none" if x is None else f"{100 * x:+.2f}%"
    return f"{v:g} {unit} (lower {f(lo)}, upper {f(hi)})"


def _read_existing(out: str) -> dict | None:
    if not os.path.lexists(out):
        return None
    from .load import check_output_path, read_input
    check_output_path(out, "-o", overwrite=True)     # a device, a FIFO or a directory there: refused, unread
    try:
        doc = json.loads(read_input(out, limit=16 << 20))
    except (InputError, ValueError, RecursionError):
        doc = None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("references"), dict):
        raise InputError(f"-o {out}: a file that is not a references file of versus ({FORMAT}) is there; writing "
                         "would replace it: give another name or remove it")
    if doc.get("version") != VERSION:
        raise InputError(f"-o {out}: references file version {doc.get('version')!r}; this versus writes {VERSION}")
    return doc


def export(baseline_path: str, key: str, out: str) -> dict:
    """Add the baseline's entry to the references file `out` (made when absent); returns what was written:
    {"check", "transport", "key", "entries": {var: [...]}, "omitted": {var: why}}."""
    from .baseline import _launcher, _references, load_baseline, parse_rule, rule_for, DEFAULT_TOLERANCE
    if not KEY.fullmatch(key):
        raise InputError(f"--reframe {key!r}: expected SYSTEM:PARTITION as ReFrame names them (e.g. cluster:compute; "
                         "SYSTEM:* for every partition of a system)")
    try:
        same = os.path.samefile(out, baseline_path)
    except OSError:
        same = False
    if same:
        raise InputError(f"-o {out}: that is the baseline; writing there would replace it: give another file")
    existing = _read_existing(out)
    doc, runs = load_baseline(baseline_path)
    run = runs[0]
    if run.pattern != "pingpong":
        raise InputError(f"--baseline {baseline_path}: a baseline of {run.label}; the ReFrame checks run the "
                         "ping-pong (save a baseline of versus-run -p pingpong runs)")
    launcher = _launcher(run)
    check = CHECKS.get(launcher or "")
    if check is None:
        raise InputError(f"--baseline {baseline_path}: its runs were started by {launcher or 'an unrecorded launcher'}; "
                         "the ReFrame checks launch with versus's local launcher (VersusLocal) or srun (VersusSrun): "
                         "save a baseline of runs launched that way")
    ranks = run.record.get("ranks")
    if ranks != 2:
        raise InputError(f"--baseline {baseline_path}: its runs have {ranks} ranks; the ReFrame checks run two")
    transport = str(run.transport.get("name"))
    stored = doc.get("tolerances") or []
    rules = [parse_rule(d["text"], f"--baseline {baseline_path}: tolerance") for d in stored
             if isinstance(d, dict) and isinstance(d.get("text"), str)] or [parse_rule(DEFAULT_TOLERANCE)]
    refs_ns = _references(runs)
    entries, omitted = {}, {}
    for var, b, metric, unit in VARIABLES:
        if b not in refs_ns:
            omitted[var] = f"the baseline has no size of {b} B (its sizes: {min(refs_ns)} to {max(refs_ns)} B)"
            continue
        rule = rule_for(rules, b)
        if rule is None:
            omitted[var] = f"no tolerance of the baseline covers {b} B ({', '.join(r.text for r in rules)})"
            continue
        e = reference_entry(var, b, metric, unit, refs_ns[b] / 1e3, rule)
        failing = e[2] if metric == "latency" else e[1]
        if failing is None:
            omitted[var] = f"tolerance {rule.text} sets no bound on {metric} at {b} B"
            continue
        entries[var] = e
    if not entries:
        why = "; ".join(f"{k}: {v}" for k, v in omitted.items())
        raise InputError(f"--baseline {baseline_path}: nothing to export: {why}; the checks measure 8 B and 1 MiB "
                         "(save a baseline of versus-run -s 8,1M runs)")
    ref_doc = existing or {"format": FORMAT, "version": VERSION, "references": {}, "baselines": {}}
    table = ref_doc["references"].setdefault(check, {}).setdefault(transport, {})
    table[key] = entries
    ref_doc.setdefault("baselines", {})[f"{check} {transport} {key}"] = {
        "baseline": Path(baseline_path).name, "baseline_created": doc.get("created"),
        "configuration": doc.get("configuration"), "launches": len(runs),
        "tolerances": [r.text for r in rules], "omitted": omitted,
        "exported": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    write_atomically(out, json.dumps(ref_doc, indent=1) + "\n", "-o", inputs=[baseline_path])
    return {"check": check, "transport": transport, "key": key, "entries": entries, "omitted": omitted,
            "merged": existing is not None}


def add_parser(actions) -> None:
    e = actions.add_parser("export", help="a baseline's figures as references of the ReFrame checks",
                           description="Write the baseline's median at 8 B and 1 MiB and its tolerances as the "
                                       "reference table of versus's ReFrame checks (latency_8B, bandwidth_1MiB) "
                                       "for one system and partition; the checks read the file named by "
                                       "-S references_file=FILE or VERSUS_RFM_REFERENCES (docs/install.md).")
    e.add_argument("baseline", metavar="BASE.json", help="a baseline from versus baseline save")
    e.add_argument("--reframe", required=True, metavar="SYSTEM:PARTITION",
                   help="the ReFrame system and partition the baseline was measured on")
    e.add_argument("-o", "--output", required=True, metavar="REFS.json",
                   help="the references file; an existing one keeps its other entries")
    e.set_defaults(func=_cmd_export)


def _cmd_export(args) -> int:
    d = export(args.baseline, args.reframe, args.output)
    for var, e in d["entries"].items():
        print(f"{d['check']} {d['transport']} on {d['key']}: {var} {_describe(e)}")
    for var, why in d["omitted"].items():
        print(f"{d['check']} {d['transport']} on {d['key']}: {var} without a reference: {why}")
    print(f"versus baseline export: {'updated' if d['merged'] else 'wrote'} {args.output}", file=sys.stderr)
    return 0
