"""Baselines with tolerances, and the regression check against them.

`versus baseline save RESULTS... -o base.json` keeps the runs' own records (their samples),
the configuration they measured and the tolerances; `versus check RESULTS... --baseline
base.json` compares the new runs with the kept ones size by size (compare.py: the ratio
of medians with its 95 % interval; between launches when each side has three or more)
and applies the tolerances, ReFrame style: a reference with a lower and an upper bound
per metric and size range, relative (a fraction of the reference) or absolute (us,
MB/s).

A size regresses only when the whole 95 % interval of the change lies beyond the tolerance:
the slowdown is beyond it with 97.5 % confidence one-sided.  A size whose interval
straddles the bound is `unsure` (more launches decide it): a failure unless `--unsure skip`
or `--unsure pass` says otherwise (junit.py: what each verdict is in the JUnit file).  A size that
improved beyond the lower bound is `improved` (a failure only with --strict, as in
ReFrame, so that a baseline gets renewed).

Metrics: `latency` is the reported time (a ping-pong's one-way time, a stream's time per
message); `bandwidth` is bytes over that time (a bandwidth 5 % lower is a time 5.26 %
higher).  Rules given later override earlier ones for the sizes they cover.

What is checked against what (docs/history.md): a baseline stands for one configuration, as
load.configuration_key defines it, and the launcher; `baseline save` refuses to pool
launches that differ in it and `check` refuses results that differ from the baseline's, naming
the part (a transport option, a variable of the environment, the variant, ...).  The
configuration is read from the kept run records themselves.  A launch counts once: the same
file twice, two files holding one launch (run_id and launch_id) or the same samples are
refused; the baseline's own launches given to `check` are compared with themselves, with a
warning that this cannot fail.  A tolerance must be able
to fail: finite on the side that fails (latency's upper bound, bandwidth's lower), and not so
wide that no measurement can pass it (a time longer than versus-run's longest --timeout, a
bandwidth of zero or less).

The file (version 2) keeps every results file's lines verbatim, so their line seals
(docs/results-schema.md) are checked again when the baseline is read.  Version 1 kept the
records re-encoded: it is still read, its seals dropped with a warning, its configuration
checked the same way.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .lazy import numpy as np

from .argtypes import parse_bytes
from .junit import junit_xml  # noqa: F401  (the check's JUnit file; kept importable from here)
from .load import (LAUNCH_ENV_PREFIXES, InputError, Run, configuration_key, describe_difference, load_file,
                   check_output_path, read_input, same_file_as, write_atomically)
from .samples import SampleSet
from .resolution import baseline_resolution, resolution_words, undecided_needs
from .speedclass import speed_classes

FORMAT = "versus-baseline"
VERSION = 2                # 2: each results file's lines verbatim (strings); 1: its records re-encoded
READS = (1, 2)
DEFAULT_TOLERANCE = "latency:-5%,+5%"
# What an `unsure` size (its interval straddles a bound) does to the check: fail it, or not
# (skip: a skipped test case in the JUnit file; pass: a passed one).  The default is fail: a
# green gate means every checked size is known to be within its tolerance.
UNSURE = ("fail", "skip", "pass")
DEFAULT_UNSURE = "fail"
# No sample of a completed run lasts longer than its --timeout (the watchdog ends the run),
# and versus-run takes at most 86400 s: a latency tolerance that allows more cannot fail.
LONGEST_NS = 86400e9
ACCEPTED = ("accepted: METRIC[@FROM-TO]:LOWER,UPPER, LOWER <= 0 <= UPPER, each like 5%, {unit} or inf, finite on "
            "the side that fails (latency's upper, bandwidth's lower), e.g. latency:-5%,+5% or "
            "bandwidth@64K-:-10%,+inf")


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


RULE = re.compile(r"(latency|bandwidth)(?:@([0-9]{1,18}[A-Za-z]{0,3})?-([0-9]{1,18}[A-Za-z]{0,3})?)?:([^,]+),([^,]+)")


def _show(v: Any, width: int = 60) -> str:
    """A value from a file or a command line for a one-line message: plain when it is a short
    word, else as JSON (quotes and escapes, so no line break gets in), cut to `width`."""
    if isinstance(v, str) and re.fullmatch(r"[\w.:/+=@%,\[\]-]{1," + str(width) + "}", v, re.ASCII):
        return v
    t = json.dumps(v, ensure_ascii=True, default=str)
    return t if len(t) <= width else t[:width - 3] + "..."


def _name(path: Any) -> str:
    """A file name for a message: as given, unless it holds a character that would break the line."""
    p = str(path)
    return p if p.isprintable() else json.dumps(p)


def accepted(metric: str | None = None) -> str:
    """What a tolerance may be, for the end of a refusal."""
    return ACCEPTED.format(unit={"latency": "0.5us", "bandwidth": "100MB/s"}.get(
        metric or "", "0.5us (latency), 100MB/s (bandwidth)"))


def _bytes(s: str, text: str, where: str) -> int:
    """A size of a rule's range, as versus-run reads sizes (argtypes.parse_bytes)."""
    try:
        return parse_bytes(s)
    except ValueError as ex:
        raise InputError(f"{where} {_show(text, 80)}: {ex}") from None


def _bound(s: str, metric: str, text: str, where: str) -> tuple[float, bool]:
    s = s.strip()
    unit = "us" if metric == "latency" else "MB/s"
    m = re.fullmatch(r"([+-]?)(inf|[0-9]+(?:\.[0-9]+)?)(%|us|MB/s)?", s)
    if not m or (m.group(3) not in (None, "%", unit)):
        raise InputError(f"{where} {_show(text, 80)}: {_show(s, 40)} is not a bound; " + accepted(metric))
    v = math.inf if m.group(2) == "inf" else float(m.group(2))
    if m.group(2) != "inf" and not math.isfinite(v):
        raise InputError(f"{where} {_show(text, 80)}: {_show(s, 40)} is not a finite number; write inf for no bound; "
                         + accepted(metric))
    if m.group(3) is None and v != math.inf and v != 0:
        raise InputError(f"{where} {_show(text, 80)}: {_show(s, 40)} has no unit: % or {unit}")
    v = -v if m.group(1) == "-" else v
    return (v / 100 if m.group(3) == "%" else v), m.group(3) in ("%", None)


def parse_rule(text: str, where: str = "--tolerance") -> Rule:
    """METRIC[@FROM-TO]:LOWER,UPPER, e.g. latency:-5%,+5%  bandwidth@64K-:-10%,+inf
    latency@0-1K:-0.2us,+0.2us (sizes as versus-run reads them: 8, 1K, 64KiB, 4M; binary).  A rule that
    cannot fail whatever is measured is refused: infinite on the side that fails (latency's
    upper bound, bandwidth's lower), a bandwidth allowed to fall by 100 % or more, a latency
    allowed LONGEST_NS or more beyond its reference.  `where` starts the messages."""
    if not isinstance(text, str):
        raise InputError(f"{where}: a tolerance must be text such as {DEFAULT_TOLERANCE} (got "
                         f"{type(text).__name__})")
    m = RULE.fullmatch(re.sub(r"\s", "", text))
    if not m:
        raise InputError(f"{where} {_show(text)}: expected METRIC[@FROM-TO]:LOWER,UPPER with METRIC latency or "
                         "bandwidth, e.g. latency:-5%,+5% or bandwidth@64K-:-10%,+inf")
    text = m.group(0)
    metric = m.group(1)
    lo = _bytes(m.group(2), text, where) if m.group(2) else 0
    hi = _bytes(m.group(3), text, where) if m.group(3) else None
    if hi is not None and hi < lo:
        raise InputError(f"{where} {_show(text, 80)}: the size range ends before it starts")
    lower, rel_l = _bound(m.group(4), metric, text, where)
    upper, rel_u = _bound(m.group(5), metric, text, where)
    if lower > 0 or upper < 0:
        raise InputError(f"{where} {_show(text, 80)}: the lower bound must be 0 or below and the upper 0 or above "
                         f"(e.g. -5%,+5%); " + accepted(metric))
    if rel_l != rel_u and not (math.isinf(lower) or math.isinf(upper)):
        raise InputError(f"{where} {_show(text, 80)}: give both bounds in % or both in the metric's unit")
    if metric == "latency" and math.isinf(upper):
        raise InputError(f"{where} {_show(text, 80)}: a check that cannot fail: no latency is beyond +inf; give a finite "
                         "upper bound; " + accepted(metric))
    if metric == "bandwidth" and math.isinf(lower):
        raise InputError(f"{where} {_show(text, 80)}: a check that cannot fail: no bandwidth is beyond -inf; give a finite "
                         "lower bound; " + accepted(metric))
    if metric == "bandwidth" and rel_l and lower <= -1:
        raise InputError(f"{where} {_show(text, 80)}: a check that cannot fail: a bandwidth cannot fall by 100 % or more; "
                         "give a lower bound above -100%; " + accepted(metric))
    if lower <= -1 and rel_l and not math.isinf(lower):
        raise InputError(f"{where} {_show(text, 80)}: a relative lower bound of -100% or below allows everything; "
                         "use -inf")
    if metric == "latency" and not rel_u and upper * 1e3 >= LONGEST_NS:
        raise InputError(f"{where} {_show(text, 80)}: a check that cannot fail: no sample of a run lasts "
                         f"{upper / 1e6:.6g} s (versus-run's --timeout is at most {LONGEST_NS / 1e9:.0f} s); "
                         + accepted(metric))
    return Rule(metric, lo, hi, lower, upper, rel_l and rel_u, text)


def cannot_fail(rule: Rule, ref_ns: float, b: int) -> str | None:
    """Why `rule` cannot fail at size b whose reference (the baseline's median of the
    reported time) is ref_ns, or None when a measurement can be beyond it."""
    if rule.metric == "latency":
        allowed = ref_ns * (1 + rule.upper) if rule.relative else ref_ns + rule.upper * 1e3
        if allowed >= LONGEST_NS:
            return (f"at {b} B it allows {allowed / 1e9:.6g} s and no sample of a run lasts longer than "
                    f"{LONGEST_NS / 1e9:.0f} s (versus-run's longest --timeout)")
        return None
    if rule.relative:
        return None if rule.lower > -1 else f"a bandwidth cannot fall by {-100 * rule.lower:g} %"
    ref_bw = b / ref_ns * 1e3 if ref_ns > 0 else 0.0
    if ref_bw + rule.lower <= 0:
        return (f"at {b} B the reference is {ref_bw:.6g} MB/s, so it allows {ref_bw + rule.lower:.6g} MB/s "
                "and no bandwidth is that low")
    return None


def _references(runs: list[Run]) -> dict[int, float]:
    """The median of the reported time per size over the runs' samples pooled (ns)."""
    return {b: float(np.median(x)) for b, x in SampleSet.of(runs).pooled().items()}


def check_rules_can_fail(rules: list[Rule], runs: list[Run], where: str) -> None:
    """Refuse tolerances that decide no size of these runs in a way that can fail: none covers a
    size, or every size they cover is one where no measurement can be beyond its rule."""
    refs = _references(runs)
    if not refs:
        return
    why = []
    for b, ref in refs.items():
        r = rule_for(rules, b)
        if r is None:
            continue
        w = cannot_fail(r, ref, b)
        if w is None:
            return
        why.append(f"{r.text}: {w}")
    texts = ", ".join(r.text for r in rules)
    if len(rules) == 1:
        why = [w.split(": ", 1)[1] for w in why]
    sizes = f"{min(refs)} to {max(refs)} B" if len(refs) > 1 else f"{min(refs)} B"
    if not why:
        raise InputError(f"{where} {texts}: a check that cannot fail: no rule covers a size of the baseline "
                         f"({sizes}); " + accepted())
    raise InputError(f"{where} {texts}: a check that cannot fail at any size of the baseline ({sizes}): "
                     f"{why[0]}; " + accepted())


def _rule_dict(r: Rule) -> dict:
    d = asdict(r)
    for k in ("lower", "upper"):
        if math.isinf(d[k]):
            d[k] = "inf" if d[k] > 0 else "-inf"
    return d


def _rule_from(d: Any, where: str) -> Rule:
    if not isinstance(d, dict) or not isinstance(d.get("text"), str):
        raise InputError(f"{where}: a tolerance without its 'text' (the file was edited or damaged); "
                         "save the baseline again or give --tolerance")
    return parse_rule(d["text"], f"{where}: tolerance")


def rule_for(rules: list[Rule], b: int) -> Rule | None:
    hit = [r for r in rules if r.covers(b)]
    return hit[-1] if hit else None


# --- what a baseline stands for -----------------------------------------------------------

def _launcher(run: Run) -> str | None:
    la = run.record.get("launcher")
    name = la.get("name") if isinstance(la, dict) else None
    return None if name is None else str(name)


def baseline_key(run: Run) -> tuple:
    """The configuration a baseline stands for: load.configuration_key (the definition launches
    are pooled by everywhere) and the launcher that started the ranks.  `baseline save` pools
    only launches that share it and `check` compares only results that share it."""
    return (configuration_key(run), _launcher(run))


_ABSENT = object()
_NAMED = ("transport option", "environment variable", "pattern parameter")


def _parts(run: Run) -> dict[tuple, Any]:
    """The parts of baseline_key one by one, for saying which differs: each transport option,
    variable of the environment and pattern parameter on its own.  Keys: (part,) or (part, name)."""
    t, rec = run.transport, run.record
    parts: dict[tuple, Any] = {("configuration name",): run.config_name, ("transport",): t.get("name"),
                               ("provider",): t.get("provider") or ""}
    env = rec.get("env") or {}
    if isinstance(env, dict):
        env = {k: v for k, v in env.items() if not str(k).startswith(LAUNCH_ENV_PREFIXES)}
    for what, d in (("transport option", t.get("options") or {}), ("environment variable", env)):
        if isinstance(d, dict):
            parts.update({(what, str(k)): v for k, v in d.items()})
        else:
            parts[(what + "s",)] = d
    parts.update({("pattern",): run.pattern, ("variant",): run.variant})
    params = rec.get("pattern_params") or {}
    if isinstance(params, dict):
        parts.update({("pattern parameter", str(k)): v for k, v in params.items()})
    else:
        parts[("pattern parameters",)] = params
    pl = rec.get("placement")
    pl = pl if isinstance(pl, dict) else {}
    hosts = rec.get("hosts") or []
    parts.update({("ranks",): rec.get("ranks"), ("number of hosts",): len(set(map(str, hosts))),
                  ("placement policy",): pl.get("policy"), ("--cpus list",): pl.get("cpus_arg"),
                  ("placement of ranks 0 and 1",): pl.get("relation"), ("pair",): rec.get("pair_ranks"),
                  ("launcher",): _launcher(run)})
    return {k: v for k, v in parts.items() if v is not None}


def _part_words(key: tuple) -> str:
    return key[0] if len(key) == 1 else f"{key[0]} {_show(key[1], 40)}"


def configuration_difference(here: Run, there: Run, here_word: str = "here", there_word: str = "in the baseline",
                             most: int = 4) -> str:
    """Which parts of the configuration two runs differ in, with both values, e.g.
    "transport option eager_limit: 64 here, default in the baseline"; empty when the same."""
    if baseline_key(here) == baseline_key(there):
        return ""
    a, b = _parts(here), _parts(there)
    diffs = []
    for k in list(a) + [k for k in b if k not in a]:
        x, y = a.get(k, _ABSENT), b.get(k, _ABSENT)
        if x != y or type(x) is not type(y):
            absent = "default" if k[0] == "transport option" else "not set" if k[0] in _NAMED else "not recorded"
            sx = absent if x is _ABSENT else _show(x, 40)
            sy = absent if y is _ABSENT else _show(y, 40)
            diffs.append(f"{_part_words(k)}: {sx} {here_word}, {sy} {there_word}")
    if not diffs:   # load.configuration_key knows a part this list does not name
        diffs = [f"{describe_difference(here, there) or 'the configuration'} differs ({here_word} and "
                 f"{there_word})"]
    more = f"; and {len(diffs) - most} more" if len(diffs) > most else ""
    return "; ".join(diffs[:most]) + more


def _one_configuration(runs: list[Run], what: str) -> None:
    """Refuse launches of several configurations, naming the first part that differs."""
    for r in runs[1:]:
        d = configuration_difference(r, runs[0], f"in {_name(r.source)}", f"in {_name(runs[0].source)}")
        if d:
            raise InputError(f"{what} are not launches of one configuration: {d}")


# --- a launch counts once ----------------------------------------------------------------

def _samples_digest(run: Run) -> str:
    h = hashlib.sha256()
    for s in run.sizes:
        h.update(str(s.bytes).encode())
        h.update(np.ascontiguousarray(s.samples_ns, dtype=np.int64).tobytes())
    return h.hexdigest()


# Two launches do not draw the same samples by chance once there are this many of them (a few
# per size could coincide on a coarse clock).
SAME_SAMPLES_FROM = 32


def _launch_ids(run: Run) -> list[tuple]:
    """What makes a run one launch: its run_id with launch_id and pair, and its samples."""
    ids = []
    rid = run.record.get("run_id")
    if isinstance(rid, str) and rid:
        ids.append(("run", rid, run.launch_id, json.dumps(run.record.get("pair_ranks"))))
    if sum(s.samples_ns.size for s in run.sizes) >= SAME_SAMPLES_FROM:
        ids.append(("samples", _samples_digest(run)))
    return ids


def _same_launch_words(a: Run, b: Run, key: tuple) -> str:
    if key[0] == "run":
        return f"the same launch (run_id {_show(key[1])}, launch {key[2]})"
    return "the same samples (one launch copied)"


def refuse_repeated_files(paths: list[str]) -> None:
    """Refuse a file given twice, by name or by another path to it."""
    seen: dict[tuple, str] = {}
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            continue    # the loader says why it cannot be read
        k = (st.st_dev, st.st_ino)
        if k in seen:
            same = "given twice" if seen[k] == p else f"the same file as {_name(seen[k])}"
            raise InputError(f"{_name(p)} is {same}: a launch counts once; give each launch's file once")
        seen[k] = p


def refuse_repeated_launches(runs: list[Run], what: str = "") -> None:
    """Refuse two runs that are one launch (the same run_id and launch_id, or the same samples)."""
    seen: dict[tuple, Run] = {}
    for r in runs:
        for k in _launch_ids(r):
            if k in seen:
                o = seen[k]
                raise InputError(f"{what + ': ' if what else ''}{_name(o.source)} and {_name(r.source)} hold "
                                 f"{_same_launch_words(o, r, k)}: a launch counts once; give each launch once")
            seen[k] = r


def _baseline_launches(new_runs: list[Run], base_runs: list[Run]) -> list[str]:
    """Warnings for new runs that are launches the baseline holds (compared with themselves)."""
    held = {k: r for r in base_runs for k in _launch_ids(r)}
    out = []
    for r in new_runs:
        hit = next((k for k in _launch_ids(r) if k in held), None)
        if hit is not None:
            out.append(f"{_name(r.source)} holds {_same_launch_words(r, held[hit], hit)} as the baseline's "
                       f"{_name(held[hit].source)}: it is compared with itself and cannot fail")
    return out


def _measured_complete(runs: list[Run], what: str = "") -> None:
    what = what + ": " if what else ""
    if any(r.imported is not None for r in runs):
        raise InputError(f"{what}an imported run has no samples to check: a baseline and a check take "
                         "measured runs")
    bad = [f"{_name(r.source)} ({_show(r.status)})" for r in runs if not r.usable_as_complete]
    if bad:
        raise InputError(f"{what}a baseline and a check take complete runs; not: {', '.join(bad)}")
    empty = [_name(r.source) for r in runs if not r.sizes]
    if empty:
        raise InputError(f"{what}no size with samples in {', '.join(empty)}")


# --- save -------------------------------------------------------------------------------

def _unsealed(rec):
    """A record of a baseline without its line seal (results-schema.md, "Integrity")."""
    if not isinstance(rec, dict):
        return rec
    return {k: v for k, v in rec.items() if k != "line_sha256" and not (k == "integrity" and rec.get("record") == "run")}


def _refuse_output(out: str, inputs: list[str], option: str, kind: str | None = None, overwrite: bool = False,
                   replaceable=None) -> None:
    """Refuse writing over an input, over what is not a regular file, over an existing file without
    --overwrite (unless replaceable(out) says it is one of this output's kind), or (kind given) over
    an existing file that is not a `kind`."""
    hit = same_file_as(out, inputs)
    if hit is not None:
        raise InputError(f"{option} {_name(out)}: that is the input {_name(hit)}; writing there would replace it: "
                         "give another file")
    check_output_path(out, option, overwrite=True)   # a device, a FIFO, a directory: never (and never opened)
    if kind is not None and os.path.lexists(out):
        try:
            with open(out, "rb") as f:
                head = f.read(64) if os.path.isfile(out) else b""
        except OSError:
            head = b""
        if head and not head.startswith(b'{"format": "%s"' % kind.encode()):
            raise InputError(f"{option} {_name(out)}: a file that is not a {kind} is there; writing would replace "
                             "it: give another name or remove it")
    check_output_path(out, option, overwrite=overwrite, replaceable=replaceable)


def is_junit(path: str) -> bool:
    """Whether the regular file at path is a JUnit report (a nightly gate writes one name each night)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return head.lstrip().startswith(b"<?xml") and b"<testsuite" in head


def save(results: list[str], out: str, tolerances: list[str], overwrite: bool = False) -> dict:
    """Check the runs are complete launches of one measured configuration, each once, and that
    the tolerances can fail; then keep each file's lines verbatim.  An existing baseline at out is
    replaced only with overwrite."""
    _refuse_output(out, results, "-o", FORMAT, overwrite=overwrite)
    rules = [parse_rule(t) for t in (tolerances or [DEFAULT_TOLERANCE])]
    refuse_repeated_files(results)
    texts, runs = [], []
    for p in results:
        texts.append(read_input(p))
        runs.extend(load_file(p))
    _measured_complete(runs)
    refuse_repeated_launches(runs)
    _one_configuration(runs, "the results")
    check_rules_can_fail(rules, runs, "--tolerance")
    res = baseline_resolution(runs, rules, rule_for, _references(runs))
    classes = speed_classes(runs)
    if classes and classes.get("text"):
        res["warnings"].append(f"{classes['text']}: a check compares launches at like host state where the "
                               "drift probe explains the classes, else they widen every interval")
    doc = {"format": FORMAT, "version": VERSION,
           "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
           "configuration": runs[0].label, "pattern": runs[0].pattern, "launches": len(runs),
           "sources": [Path(p).name for p in results],
           "tolerances": [_rule_dict(r) for r in rules], "resolution": res,
           "files": [t.split("\n") for t in texts]}
    write_atomically(out, json.dumps(doc, ensure_ascii=False) + "\n", "-o", overwrite=overwrite, inputs=results)
    return doc


def _no_baseline(path: str, why: str) -> InputError:
    return InputError(f"--baseline {_name(path)}: {why}; make one with versus baseline save RESULTS -o FILE")


def _edited(path: str, why: str) -> InputError:
    return InputError(f"--baseline {_name(path)}: {why} (the file was edited or damaged); save the baseline again "
                      "from its results files")


def load_baseline(path: str, warnings: list[str] | None = None) -> tuple[dict, list[Run]]:
    """The baseline's document and its runs, each checked as `baseline save` checked them;
    InputError for a file that is not a baseline, or one edited or damaged since."""
    import tempfile
    try:
        text = read_input(path)
    except InputError as ex:
        raise InputError(f"--baseline {ex}") from None
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        raise _no_baseline(path, "not a baseline file (not JSON)") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise _no_baseline(path, f"not a baseline file (no format {FORMAT!r})")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version not in READS:
        raise InputError(f"--baseline {_name(path)}: baseline version {_show(version)}; this versus reads "
                         f"{', '.join(map(str, READS))}")
    files = doc.get("files")
    if not isinstance(files, list) or not files:
        raise _edited(path, "holds no runs")
    sources = doc.get("sources")
    sources = sources if isinstance(sources, list) else []
    runs: list[Run] = []
    stripped = False
    with tempfile.TemporaryDirectory() as d:
        for k, lines in enumerate(files):
            name = sources[k] if k < len(sources) and isinstance(sources[k], str) else f"launch {k}"
            where = f"--baseline {_name(path)}: {_name(name)}"
            if not isinstance(lines, list):
                raise _edited(path, f"{_name(name)} is not a list of lines")
            if version == 1:
                # kept re-encoded: their bytes differ from the seals', which are dropped
                recs = [_unsealed(x) for x in lines]
                stripped |= any(isinstance(x, dict) and "line_sha256" in x for x in lines)
                body = "".join(json.dumps(x, ensure_ascii=True) + "\n" for x in recs)
            else:
                if not all(isinstance(x, str) and "\n" not in x for x in lines):
                    raise _edited(path, f"{_name(name)} is not a list of lines of text")
                body = "\n".join(lines)
            p = Path(d) / f"{k}.jsonl"
            try:
                p.write_text(body, encoding="utf-8")
            except (UnicodeEncodeError, ValueError):
                raise _edited(path, f"{_name(name)} holds text that is not UTF-8") from None
            try:
                loaded = load_file(p)
            except InputError as ex:
                raise InputError(str(ex).replace(str(p), where)) from None
            for r in loaded:
                r.source = f"{path}[{name}]"
                r.warnings = [w.replace(str(p), where) for w in r.warnings]
                runs.append(r)
    if stripped and warnings is not None:
        warnings.append(f"--baseline {_name(path)} is a version 1 baseline: its records were kept re-encoded, so "
                        "their line seals cannot be checked; save it again with this versus to keep them verbatim")
    what = f"--baseline {_name(path)}"
    _measured_complete(runs, what)
    refuse_repeated_launches(runs, what)
    _one_configuration(runs, f"{what}: its runs")
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


def fails(status: str, strict: bool, unsure: str) -> bool:
    """Whether a size with this verdict fails the check."""
    return (status == "regressed" or (strict and status == "improved")
            or (status == "unsure" and unsure == "fail"))


def _measuring_seconds(runs: list[Run]) -> dict[int, float]:
    """Per size, the seconds the runs spent measuring it (their records' elapsed_ns added)."""
    out: dict[int, float] = {}
    for r in runs:
        for s in r.sizes:
            if s.elapsed_ns is not None:
                out[s.bytes] = out.get(s.bytes, 0.0) + s.elapsed_ns / 1e9
    return out


def check(results: list[str], baseline: str, tolerances: list[str] | None = None, strict: bool = False,
          seed: int = 0, unsure: str = DEFAULT_UNSURE, alpha: float = 0.05, design_words: str = "",
          last_look: int | None = None) -> dict:
    """The new runs against the baseline, size by size.  InputError (exit 2) for results that
    are not the baseline's configuration, a launch given twice, tolerances that cannot fail,
    and a check that would check nothing.  `unsure` (UNSURE) says what a size whose interval
    straddles a bound does to the verdict: fail it (the default), or pass with the size shown
    as skipped or as passed.  alpha: the level of each size's interval (a sequential design's
    nominal level, gate.py; design_words say which); last_look: the new launches the design may
    reach, for the launches an undecided size would need (resolution.py)."""
    from .compare import compare_runs
    from .hostload import comparison_note
    if unsure not in UNSURE:
        raise InputError(f"--unsure {_show(unsure)}: one of {', '.join(UNSURE)}")
    rules = [parse_rule(t) for t in tolerances] if tolerances else None
    warnings: list[str] = []
    doc, base_runs = load_baseline(baseline, warnings)
    if rules is None:
        stored = doc.get("tolerances")
        if stored is not None and not isinstance(stored, list):
            raise _edited(baseline, "its 'tolerances' is not a list")
        rules = [_rule_from(d, f"--baseline {_name(baseline)}") for d in stored or []]
        where = f"--baseline {_name(baseline)}: tolerance"
    else:
        where = "--tolerance"
    if not rules:
        rules = [parse_rule(DEFAULT_TOLERANCE)]
    refuse_repeated_files(results)
    new_runs = [r for p in results for r in load_file(p)]
    _measured_complete(new_runs)
    refuse_repeated_launches(new_runs)
    _one_configuration(new_runs, "the results")
    diff = configuration_difference(new_runs[0], base_runs[0], "here", "in the baseline")
    if diff:
        raise InputError(f"{_name(new_runs[0].source)} is not the configuration of baseline {_name(baseline)}: "
                         f"{diff}; check a configuration against its own baseline")
    warnings += _baseline_launches(new_runs, base_runs)
    check_rules_can_fail(rules, base_runs, where)
    cmp = compare_runs(new_runs, base_runs, seed=seed, labels=("new", "baseline"), alpha=alpha)
    if cmp.load_note:       # an unsure or regressed size may be the host's: the gate says so
        warnings.append(comparison_note(new_runs, base_runs, "new", "baseline"))
    if not cmp.sizes:
        raise InputError(f"no size was measured both in the results and in the baseline (results "
                         f"{_show(cmp.only_a, 40)}, baseline {_show(cmp.only_b, 40)}): nothing to check")
    cases = []
    for s in cmp.sizes:
        rule = rule_for(rules, s.bytes)
        if rule is None:
            cases.append({"bytes": s.bytes, "status": "unchecked", "words": "no tolerance covers this size"})
            continue
        vacuous = cannot_fail(rule, s.median_b_us * 1e3, s.bytes)
        if vacuous:
            cases.append({"bytes": s.bytes, "status": "unchecked", "metric": rule.metric,
                          "words": f"tolerance {rule.text} cannot fail here: {vacuous}"})
            continue
        status, words = _verdict(rule, s.ratio, s.ratio_ci, s.median_b_us * 1e3, s.bytes)
        cases.append({"bytes": s.bytes, "status": status, "words": words, "metric": rule.metric,
                      "new_us": s.median_a_us, "baseline_us": s.median_b_us, "ratio": s.ratio,
                      "ratio_ci": list(s.ratio_ci), "inference": s.inference,
                      "launches": [s.launches_a, s.launches_b], "host": s.host,
                      "needed": (undecided_needs(rule, s, alpha, last_look) if status == "unsure" else None)})
    if all(c["status"] == "unchecked" for c in cases):
        raise InputError(f"no size measured both in the results and in the baseline "
                         f"({_show([c['bytes'] for c in cases], 40)}) is one a tolerance can fail at "
                         f"({', '.join(r.text for r in rules)}): nothing to check")
    measured = _measuring_seconds(new_runs)
    for c in cases:
        c["measured_s"] = measured.get(c["bytes"])
        c["fails"] = fails(c["status"], strict, unsure)
    failed = [c for c in cases if c["fails"]]
    return {"baseline": baseline, "configuration": base_runs[0].label, "results": results,
            "created": doc.get("created"), "strict": strict, "unsure": unsure,
            "started": min((str(r.record.get("start_time") or "") for r in new_runs), default=""),
            "host": next((str(h) for r in new_runs for h in (r.record.get("hosts") or [])[:1]), ""),
            "rules": [r.text for r in rules], "only_new": cmp.only_a, "only_baseline": cmp.only_b,
            "interval": design_words or "95 % intervals", "host_state": cmp.host_words,
            "passed": not failed, "cases": cases, "warnings": warnings,
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
    if d.get("host_state"):
        out.append(d["host_state"])
    if n["unsure"]:
        out.append(f"unsure sizes {'fail' if d['unsure'] == 'fail' else 'do not fail'} the check "
                   f"(--unsure {d['unsure']}); what would decide them:")
        out += [f"  {c['bytes']} B: {c['needed']['words']}" for c in d["cases"] if c.get("needed")]
    seq = d.get("sequential")
    if seq:
        out.append(seq["words"])
    out.append("PASS" if d["passed"] else "FAIL")
    return "\n".join(out)


def add_parser(sub) -> None:
    b = sub.add_parser("baseline", help="save results as a baseline with tolerances (see: versus check); export it "
                                        "as ReFrame references")
    bs = b.add_subparsers(dest="baseline_command", metavar="ACTION")
    s = bs.add_parser("save", help="keep these results (one configuration, its launches) as the reference",
                      description="Keep the runs' records (their samples) with tolerances, for versus check. "
                                  "The runs must be complete launches of one configuration, each given once; "
                                  "a tolerance must be able to fail (docs/history.md).")
    s.add_argument("results", nargs="+", metavar="RESULTS.jsonl", help="launches of one configuration")
    s.add_argument("-o", "--output", required=True, metavar="BASE.json")
    s.add_argument("--overwrite", action="store_true", help="replace a baseline already at BASE.json")
    s.add_argument("--tolerance", action="append", metavar="RULE",
                   help=f"METRIC[@FROM-TO]:LOWER,UPPER (repeatable, later rules win; default "
                        f"{DEFAULT_TOLERANCE.replace('%', '%%')}); "
                        "METRIC latency or bandwidth; bounds in %% or us / MB/s; e.g. bandwidth@64K-:-10%%,+inf")
    s.set_defaults(func=_cmd_save)
    from .reframe_refs import add_parser as add_export
    add_export(bs)
    b.set_defaults(func=_cmd_baseline_alone)
    c = sub.add_parser("check", help="check results against a baseline: exit 0 pass, 1 regressed, 2 bad input",
                       description="Compare results with a baseline size by size; a size fails when its whole "
                                   "95 % interval of the change lies beyond the tolerance. The results must be "
                                   "of the baseline's configuration (transport, options, environment, pattern, "
                                   "variant, parameters, ranks, hosts, placement, launcher).")
    c.add_argument("results", nargs="*", metavar="RESULTS.jsonl",
                   help="new launches of the baseline's configuration (with --run: the first ones, if any)")
    c.add_argument("--baseline", required=True, metavar="BASE.json")
    c.add_argument("--run", action="store_true",
                   help="launch the baseline's own configuration (its recorded command, launcher and transport "
                        "variables) until every size is decided or --max-launches are spent, with repeated "
                        "intervals that hold under this optional stopping (docs/analysis.md)")
    c.add_argument("--max-launches", type=int, default=None, metavar="N",
                   help="with --run: at most N new launches in all (default 10)")
    c.add_argument("--launch-dir", metavar="DIR",
                   help="with --run: where the new launches are kept (made new, or empty; default "
                        "versus-check-TIME in the current directory)")
    c.add_argument("--runner", metavar="PATH", help="with --run: the versus-run to start (default: the recorded one on PATH)")
    c.add_argument("--tolerance", action="append", metavar="RULE", help="override the baseline's tolerances")
    c.add_argument("--strict", action="store_true", help="an improvement beyond the tolerance fails too (ReFrame)")
    c.add_argument("--unsure", choices=UNSURE, default=DEFAULT_UNSURE,
                   help="a size whose interval straddles a bound: fail (default: a gate is green only when "
                        "every checked size is known to be within), skip (shown as skipped, exit 0) or pass")
    c.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    c.add_argument("--junit", metavar="FILE.xml", help="also write JUnit XML: one test case per size (an existing "
                   "JUnit report there is replaced; any other file only with --overwrite)")
    c.add_argument("--overwrite", action="store_true", help="let --junit replace a file that is not a JUnit report")
    c.set_defaults(func=_cmd_check)


def _cmd_baseline_alone(args) -> int:
    raise InputError("give an action: save or export (see versus baseline save --help)")


def _cmd_save(args) -> int:
    import sys
    doc = save(args.results, args.output, args.tolerance or [], overwrite=args.overwrite)
    tol = ', '.join(t['text'] for t in doc['tolerances'])
    print(f"versus baseline: {doc['configuration']}, {doc['launches']} launch(es), tolerances "
          f"{tol} -> {args.output}", file=sys.stderr)
    for w in resolution_words(doc["resolution"], tol):
        print(f"versus baseline: {w}", file=sys.stderr)
    for w in doc["resolution"]["warnings"]:
        print(f"versus baseline: warning: {w}", file=sys.stderr)
    return 0


def _cmd_check(args) -> int:
    import sys
    from .export import dumps
    if args.junit:
        _refuse_output(args.junit, [*args.results, args.baseline], "--junit", overwrite=args.overwrite,
                       replaceable=is_junit)
    if not args.run:
        for opt in ("max_launches", "launch_dir", "runner"):
            if getattr(args, opt) is not None:
                raise InputError(f"--{opt.replace('_', '-')} is for --run (launch until decided)")
        if not args.results:
            raise InputError("give the new results to check, or --run to launch the baseline's configuration")
        d = check(args.results, args.baseline, args.tolerance, args.strict, unsure=args.unsure)
    else:
        from .gate import MAX_LAUNCHES, progress, run_check
        d = run_check(args.results, args.baseline, args.tolerance, args.strict, args.unsure,
                      args.max_launches or MAX_LAUNCHES, args.launch_dir, args.runner, say=progress)
    if args.junit:
        write_atomically(args.junit, junit_xml(d), "--junit", overwrite=args.overwrite,
                         inputs=[*args.results, args.baseline], replaceable=is_junit)
    for w in d["warnings"]:
        print(f"versus check: warning: {w}", file=sys.stderr)
    print(dumps(d) if args.json else format_check(d))
    return 0 if d["passed"] else 1
