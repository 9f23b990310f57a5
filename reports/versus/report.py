"""`versus report RESULTS... -o DIR`: the comparison report as one
self-contained HTML page, a LaTeX document (booktabs tables, PDF figures) and
the raw samples as CSV.

Everything shown is computed here (as plain data: numbers, lists, tables);
the Jinja2 templates only place it and the filters in render.py format it.
RESULTS are JSONL files or directories (a campaign's result directory: its
*.jsonl files and its campaign.json manifest, which names configurations, the
study and the comparisons asked for).
"""
from __future__ import annotations

import concurrent.futures
import datetime as _dt
import multiprocessing
import json
import math
import os
import platform
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from .lazy import numpy as np

from .hostload import comparison_note, config_words
from . import __version__
from .analysis import Analysis, analyse_run, invalid_note
from .compare import ALPHA, compare_runs, fmt_bytes
from .launches import band_words, interval_label, launch_spread, method_words
from .load import InputError, Run, configuration_key, load_file, output_dir, pool_launches
from .interface import interface_section
from .loggp import report_table as loggp_table
from .report_methods import methods_section
from .samples import SampleSet
from .report_studies import study_section
from .speedclass import speed_classes
from .stats import SizeStats
from .transitions import jump_words, staircase_sentence
from .console import validation_words
from .render import CONTROL_LIMITS_NOTE, ci_cell
from .units import crossing, run_meaning

# each configuration's own figure (in appendix.tex) up to this many configurations: a figure costs
# about 0.2 s, which a 100-configuration report does not spend
DETAIL_FIGURES_UP_TO = 8
MANIFEST = "campaign.json"


@dataclass
class Config:
    """One configuration: its launches pooled, analysed once."""
    id: str
    runs: list[Run]
    pooled: Run
    analysis: Analysis | None = None
    sizes: list[dict] = field(default_factory=list)
    entry: dict | None = None

    @cached_property
    def samples(self) -> SampleSet:
        """Its launches' samples, made the first time a comparison, the launch spread
        or the speed classes ask for them, and then handed to each of them."""
        return SampleSet.of(self.runs)

    @property
    def transport(self) -> str:
        return str(self.pooled.transport.get("name", "?"))

    @property
    def group(self) -> tuple[str, str]:
        return self.pooled.pattern, self.pooled.variant

    @property
    def roles(self) -> frozenset[str]:
        """The roles every launch's module declared (Run.roles): "reference", "floor"."""
        return frozenset.intersection(*(r.roles for r in self.runs)) if self.runs else frozenset()


# What `versus campaign` writes in campaign.json, field by field: (kinds accepted, required).
_TEXT = (str, type(None))
MANIFEST_FIELDS = {"campaign": _TEXT, "title": _TEXT, "description": _TEXT, "study": _TEXT, "runner": _TEXT,
                   "compare": (list,), "modules": (dict,), "patterns": (list,), "counts": (dict,), "runs": (list,),
                   "sequential": (dict, type(None))}
MANIFEST_RUN_FIELDS = {"id": (str,), "file": (str,), "status": (str,), "config_id": _TEXT, "transport": _TEXT,
                       "pattern": _TEXT, "variant": _TEXT, "note": _TEXT, "stderr_tail": _TEXT,
                       "options": (dict, type(None)), "env": (dict, type(None)), "command": (list, type(None)),
                       "launch_id": (int, type(None)), "rc": (int, type(None)),
                       "duration_s": (int, float, type(None))}


def check_manifest(doc, where) -> None:
    """A campaign.json of the shape the campaign writes, or one InputError naming the field: a
    hand-edited or damaged manifest must not reach the report as a traceback or a wrong file."""
    def kind(v, kinds):
        return isinstance(v, kinds) and not (isinstance(v, bool) and bool not in kinds)

    def refuse(what, want):
        raise InputError(f"{where}: {what} must be {want}; the manifest was edited or damaged "
                         "(run the campaign again, or remove campaign.json to report on the files alone)")
    if not isinstance(doc, dict):
        refuse("the document", "an object")
    for key, kinds in MANIFEST_FIELDS.items():
        if key in doc and not kind(doc[key], kinds):
            refuse(f"'{key}'", " or ".join("null" if k is type(None) else k.__name__ for k in kinds))
    for k, e in enumerate(doc.get("runs", [])):
        if not isinstance(e, dict):
            refuse(f"runs[{k}]", "an object")
        for key, kinds in MANIFEST_RUN_FIELDS.items():
            required = key in ("id", "file", "status")
            if (required and key not in e) or (key in e and not kind(e[key], kinds)):
                refuse(f"runs[{k}].{key}", " or ".join("null" if t is type(None) else t.__name__ for t in kinds))
        if e["file"] in ("", ".", "..") or "/" in e["file"] or "\\" in e["file"] or "\0" in e["file"]:
            refuse(f"runs[{k}].file", "a file name in the manifest's folder")
    seq = doc.get("sequential")
    if seq is not None:
        a = seq.get("nominal_alpha")
        if not (isinstance(a, float) and 0 < a <= 0.05) or not isinstance(seq.get("words", ""), str):
            refuse("'sequential'", "the design --until-decided wrote (nominal_alpha in (0, 0.05], words)")
    for k, c in enumerate(doc.get("compare", [])):
        if not (isinstance(c, dict) and isinstance(c.get("a"), str) and isinstance(c.get("b"), str)):
            refuse(f"compare[{k}]", 'an object {"a": "id", "b": "id"}')


def collect(paths: list[str]) -> tuple[list[Run], dict[str, dict], list[dict]]:
    """Runs from files and directories; manifest entries by result file; manifests."""
    runs: list[Run] = []
    entries: dict[str, dict] = {}
    manifests: list[dict] = []
    to_load: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            man = p / MANIFEST
            if man.exists():
                try:
                    doc = json.loads(man.read_text(encoding="utf-8"))
                except (OSError, json.JSONDecodeError) as ex:
                    raise InputError(f"{man}: unreadable manifest: {ex}") from None
                check_manifest(doc, man)
                manifests.append(doc)
                for e in doc.get("runs", []):
                    entries[str((p / e["file"]).resolve())] = e
            files = sorted(p.glob("*.jsonl"))
            if manifests and man.exists():   # the campaign's order, then any other file
                order = {e["file"]: i for i, e in enumerate(manifests[-1].get("runs", []))}
                files.sort(key=lambda f: (order.get(f.name, len(order)), f.name))
            if not files and not man.exists():
                raise InputError(f"{p}: no result files (*.jsonl) in this directory")
            to_load.extend(f for f in files if f.stat().st_size > 0)
        else:
            to_load.append(p)
    # parsed on the machine's cores (JSON Lines of ten million samples: several seconds of parsing)
    for loaded in fork_map(lambda i: load_file(to_load[i]), len(to_load)) if len(to_load) > 3 else \
            map(load_file, to_load):
        runs.extend(loaded)
    return runs, entries, manifests


pool = pool_launches


def _default_id(run: Run) -> str:
    t = run.transport
    parts = [str(t.get("name", "?"))] + [f"{k}={v}" for k, v in (t.get("options") or {}).items()]
    return " ".join(parts) + (f" {run.variant}" if run.variant else "")


def group_configs(runs: list[Run], entries: dict[str, dict]) -> list[Config]:
    """Runs grouped into configurations by load.configuration_key, the
    definition `versus compare` checks launches against, with the campaign's
    name for each configuration (its manifest's config_id) taking part."""
    order: dict[tuple, list[Run]] = {}
    ents: dict[tuple, dict | None] = {}
    for r in runs:
        e = entries.get(str(Path(r.source).resolve()))
        if e and e.get("config_id"):
            r.config_name = str(e["config_id"])
        k = configuration_key(r)
        order.setdefault(k, []).append(r)
        ents.setdefault(k, e)
    out = []
    for k, rs in order.items():
        rs.sort(key=lambda r: r.launch_id)
        e = ents[k]
        out.append(Config(e["config_id"] if e else _default_id(rs[0]), rs, pool(rs), entry=e))
    ids = [c.id for c in out]
    for c in out:                       # ambiguous default names get their source file
        if ids.count(c.id) > 1:
            c.id = f"{c.id} ({Path(c.pooled.source).stem})"
    return out


def size_dict(s: SizeStats) -> dict:
    """A size's statistics as the report reads them; the bandwidth's interval is the
    bytes over the median's interval (stats.py: one statistic for every figure)."""
    d = s.to_dict()
    d["bw_ci_MBps"] = d["bandwidth_ci_MBps"] or [d["bandwidth_MBps"]] * 2
    return d


def _usable(c: Config) -> list[dict]:
    """The sizes a summary may quote: all, or the valid ones (payload check
    not failed) unless the report was asked to include invalid sizes."""
    inc = c.analysis.invalid_included if c.analysis else False
    return [s for s in c.sizes if inc or s.get("valid") is not False]


def summary_row(c: Config, floor: Config | None) -> dict:
    a = c.analysis
    usable = _usable(c)
    first = usable[0] if usable else None
    regs = a.to_dict()["regimes"] if a and a.fit else []
    r0, rl = (regs[0], regs[-1]) if regs else (None, None)
    bwd = a.to_dict()["bandwidth"] if a else {}
    peak = bwd.get("peak_MBps")
    asym_off = bool(rl) and bwd.get("asymptotic_determined") is False
    row = {"config": c.id, "transport": c.transport,
           "library": f"{c.pooled.transport.get('library') or ''} {c.pooled.transport.get('version') or ''}".strip(),
           "provider": c.pooled.transport.get("provider") or "", "launches": len(c.runs),
           "status": c.pooled.status, "latency_bytes": first["bytes"] if first else None,
           "latency": ci_cell(first["median_us"], first["median_ci_us"]) if first else None,
           "interval": interval_label(first["interval_kind"], first["launches"]) if first else None,
           "s": ci_cell(r0["latency_us"], r0["latency_ci_us"], r0["latency_ci_note"]) if r0 else None,
           "bw": ({"v": bwd["asymptotic_note"], "f": "text"} if asym_off else
                  ci_cell(rl["bandwidth_MBps"], rl["bandwidth_ci_MBps"], rl["bandwidth_ci_note"]) if rl else None),
           "n_half": ci_cell(rl["n_half_bytes"], rl["n_half_ci_bytes"], rl["n_half_ci_note"]) if rl else None,
           "peak_bw": peak, "transitions": [t.label for t in a.transitions] if a else [],
           "bw_over_peak": (rl["bandwidth_MBps"] / peak if rl and rl["bandwidth_MBps"] and peak and not asym_off
                            else None),
           "floor_latency_x": None, "floor_bw_pct": None}
    if floor is not None and floor is not c and floor.sizes and first:
        f0 = next((s for s in _usable(floor) if s["bytes"] == first["bytes"]), None)
        if f0 and f0["median_us"] > 0:
            row["floor_latency_x"] = first["median_us"] / f0["median_us"]
        fpeak = floor.analysis.to_dict()["bandwidth"]["peak_MBps"] if floor.analysis else None
        if fpeak and peak:
            row["floor_bw_pct"] = peak / fpeak * 100
    return row


SUMMARY_COLUMNS = [
    {"key": "config", "title": "configuration", "fmt": "text", "width": 0.13},
    {"key": "provider", "title": "provider", "fmt": "text", "width": 0.11},
    {"key": "latency", "title": "{time} µs at the smallest size [95 % CI]", "fmt": "us_ci", "width": 0.09},
    {"key": "interval", "title": "its 95 % CI", "fmt": "text", "width": 0.07},
    {"key": "s", "title": "fitted s µs [95 % CI]", "fmt": "us_ci", "width": 0.09},
    {"key": "bw", "title": "asymptotic bandwidth MB/s [95 % CI]", "fmt": "mbps_ci", "width": 0.09},
    {"key": "n_half", "title": "n½ [95 % CI]", "fmt": "bytes_ci", "width": 0.09},
    {"key": "peak_bw", "title": "peak bandwidth MB/s", "fmt": "mbps", "width": 0.06},
    {"key": "bw_over_peak", "title": "asymptotic ÷ peak (below 0.8: the fit is off, or the peak a burst the largest sizes do not sustain)",
     "fmt": "times", "width": 0.07},
    {"key": "floor_latency_x", "title": "{time} ÷ floor", "fmt": "times", "width": 0.06},
    {"key": "floor_bw_pct", "title": "peak bandwidth, % of floor", "fmt": "pct", "width": 0.06},
    {"key": "n_transitions", "title": "transitions", "fmt": "int", "width": 0.065},
    {"key": "status", "title": "status", "fmt": "text", "width": 0.05},
]


def summary_columns(time_label: str) -> list[dict]:
    """The summary table's columns, headed with what the group's times are."""
    return [{**col, "title": col["title"].replace("{time}", time_label)} for col in SUMMARY_COLUMNS]


def interval_note(members: list[Config]) -> str:
    """Which interval the group's per-size figures carry (the summary's latency, the bands, the
    per-size tables), said once under the summary table."""
    ls = sorted({len(c.runs) for c in members if len(c.runs) > 1})
    out = []
    if ls:
        n = f"{ls[0]}" if len(ls) == 1 else f"{ls[0]} to {ls[-1]}"
        out.append(f"A configuration of several launches ({n} here): at each size the geometric mean of its "
                   "launch medians, the value its comparisons use, with the 95 % CI between launches "
                   "(Student's t on the log launch medians, one degree of freedom fewer than the launches); a size only "
                   "one of them measured: that launch's median with its within-launch interval.")
    if any(len(c.runs) == 1 for c in members):
        out.append("A configuration of one launch: its median with the distribution-free 95 % CI within that "
                   "launch (order statistics of its samples), which says nothing of how far another launch "
                   "would land.")
    out.append("The fitted s, asymptotic bandwidth and n½ and their intervals are the fitted line's, through "
               "the medians of every launch's samples together (their scatter about the line over the sizes), "
               "not intervals between launches.")
    return " ".join(out)


def detail_table(c: Config) -> dict:
    several = len(c.runs) > 1
    cols = [("bytes", "size", "bytes"), ("n", "n", "int")] + ([("launches", "launches", "int")] if several else []) \
        + [("median", "median µs [95 % CI]", "us_ci"),
           ("mean_us", "mean µs", "us"), ("std_us", "sd µs", "us"), ("p99_us", "p99 µs", "us"),
            ("limits", "control limits µs (0.135th, 99.865th percentile)", "text"),
            ("outside_limits", "outside", "int"),
            ("normal", "normal", "text"), ("bandwidth_MBps", "MB/s", "mbps"),
            ("payload", "payload check", "text")]
    rows = []
    for s in c.sizes:
        vals = {**s, "median": ci_cell(s["median_us"], s["median_ci_us"]),
                "limits": {"v": [s["lcl_us"], s["ucl_us"]], "f": "limits"},
                "normal": "–" if s["normal"] is None else ("yes" if s["normal"] else "no"),
                "payload": "–" if s.get("valid") is None else ("ok" if s["valid"] else "FAILED")}
        rows.append([vals[k] for k, _, _ in cols])
    what = run_meaning(c.pooled).time_label
    notes = [CONTROL_LIMITS_NOTE] if c.sizes else []
    if several and c.sizes:
        notes.append(f"{band_words(c.sizes, 'Median')}; the mean, sd, p99, control limits, normality "
                        "and n are of every launch's samples together.")
    if c.analysis and c.analysis.invalid_bytes:
        notes.append(invalid_note(c.analysis.invalid_bytes, c.analysis.invalid_included))
        notes += [f"{s['bytes']} B: {validation_words(s.get('validation'))}" for s in c.sizes
                  if s.get("valid") is False]
    return {"id": f"detail-{c.id}", "caption": f"{c.id}: per-size statistics (times are the {what}; "
                                               f"{band_words(c.sizes)})",
            "columns": [{"title": t, "fmt": f} for _, t, f in cols], "rows": rows, "notes": notes}


def spread_table(c: Config, spread: list[dict]) -> dict | None:
    """Per size, the launch medians' spread beside the spread within launches (launches.launch_spread)."""
    if not spread:
        return None
    rows = [[r["bytes"], r["launches"], r["median_of_medians_us"], r["between_launch_sd_us"],
             r["within_launch_sd_us"], r["within_launch_median_se_us"]] for r in spread]
    return {"id": f"spread-{c.id}", "caption": f"{c.id}: launch-to-launch spread",
            "columns": [{"title": "size", "fmt": "bytes"}, {"title": "launches", "fmt": "int"},
                        {"title": "median of launch medians µs", "fmt": "us"},
                        {"title": "sd between launch medians µs", "fmt": "us"},
                        {"title": "sd within launches µs", "fmt": "us"},
                        {"title": "se of a launch median µs", "fmt": "us"}], "rows": rows,
            "notes": ["Between-launch sd well above the standard error of a launch median: the launches differ."]}


def regime_table(c: Config) -> dict | None:
    if not c.analysis or not c.analysis.fit:
        return None
    rows = [[g["from_bytes"], g["to_bytes"], g["points"], ci_cell(g["latency_us"], g["latency_ci_us"], g["latency_ci_note"]),
             ci_cell(g["bandwidth_MBps"], g["bandwidth_ci_MBps"], g["bandwidth_ci_note"]),
             ci_cell(g["n_half_bytes"], g["n_half_ci_bytes"], g["n_half_ci_note"]),
             g["residual_rel"] * 100]
            for g in c.analysis.to_dict()["regimes"]]
    return {"id": f"regimes-{c.id}", "caption": f"{c.id}: fitted regimes T(n) = s + r·n",
            "columns": [{"title": "from", "fmt": "bytes"}, {"title": "to", "fmt": "bytes"},
                        {"title": "points", "fmt": "int"}, {"title": "s µs [95 % CI]", "fmt": "us_ci"},
                        {"title": "1/r MB/s [95 % CI]", "fmt": "mbps_ci"},
                        {"title": "n½ [95 % CI]", "fmt": "bytes_ci"},
                        {"title": "residual %", "fmt": "num"}], "rows": rows}


def _geo_mean_median(c: Config, common: set[int]) -> float:
    v = [s["median_us"] for s in _usable(c) if s["bytes"] in common and s["median_us"] > 0]
    return float(np.exp(np.mean(np.log(v)))) if v else math.inf


def short_statement(r: dict) -> str:
    """A regime's statement without its subject (the comparison names A and B once):
    '2.07× faster (95 % CI 1.79×–2.39×) for messages >= 512 KiB (47.8 us vs 87.1 us at 512 KiB)'."""
    return " ".join(p for p in (r["effect"], r["span"], f"({r['detail']})" if r["detail"] else "") if p)


def comparison_doc(a: Config, b: Config, why: str, include_invalid: bool = False,
                   design: dict | None = None) -> dict | None:
    """A against B, each side its configuration's launches (several launches:
    between-launch inference, launches.py); design: the manifest's 'sequential' entry of a
    campaign run --until-decided, whose nominal level the intervals are then taken at."""
    if not {s["bytes"] for s in a.sizes} & {s["bytes"] for s in b.sizes}:
        return None
    alpha = design["nominal_alpha"] if design else ALPHA
    cmp = compare_runs(a.runs, b.runs, include_invalid=include_invalid, samples=(a.samples, b.samples),
                       alpha=alpha).to_dict()
    if design:
        cmp["scope"] = (f"{cmp['scope']}; " if cmp["scope"] else "") + design["words"]
    rows = [[s["mark"], s["bytes"], s["median_a_us"], s["median_b_us"],
             {"v": [s["ratio"], *s["ratio_ci"]], "f": "ratio_ci"}, s["faster_pct"], s["p_value"]]
            for s in cmp["sizes"]]
    notes = [f"Times: {cmp['time_label']}; {method_words(cmp['sizes'])}. A size's mark is its own 95 % "
             "interval's (+ A faster, - A slower, ~ the interval includes 1, = under the minimum effect); "
             "in parentheses where no statement over its range claims it. The statements above are the "
             "claims."]
    if cmp["crosses"]:
        notes.insert(0, cmp["crosses"][:1].upper() + cmp["crosses"][1:] + ".")
    if cmp["invalid_a"] or cmp["invalid_b"]:
        how = ("kept as asked" if cmp["invalid_included"] else "left out of this comparison")
        notes.append(f"Sizes whose payload check failed, {how}: {a.id}: "
                     f"{', '.join(map(str, cmp['invalid_a'])) or 'none'}; "
                     f"{b.id}: {', '.join(map(str, cmp['invalid_b'])) or 'none'}.")
    load_note = comparison_note(a.runs, b.runs, a.id, b.id)
    return {"a": a.id, "b": b.id, "why": why, "notes": notes, "load_note": load_note,
            "scope": cmp["scope"], "claims": cmp["claims"],
            "statements": [{"mark": r["mark"], "text": short_statement(r), "ratio": r["ratio"],
                            "ratio_ci": r["ratio_ci"]} for r in cmp["regimes"]],
            "table": {"id": f"cmp-{a.id}-{b.id}", "caption": f"{a.id} (A) against {b.id} (B), size by size",
                      "columns": [{"title": "", "fmt": "text"}, {"title": "size", "fmt": "bytes"},
                                  {"title": "A µs", "fmt": "us"}, {"title": "B µs", "fmt": "us"},
                                  {"title": "A/B [95 % CI]", "fmt": "text"},
                                  {"title": "A faster %", "fmt": "num"}, {"title": "p (this size)", "fmt": "p"}],
                      "rows": rows, "notes": notes}}


_FORK_WORK = None


def _fork_call(i: int):
    return _FORK_WORK(i)


def fork_map(fn, n: int) -> list:
    """[fn(0), ..., fn(n - 1)] computed on the machine's cores: forked workers that see the
    caller's data copy-on-write (nothing is sent to them but the index) and send back fn's
    result; in this process where there is no fork, one core, or one item.  fn must not depend
    on the order of the calls (each analysis and comparison seeds its own generator)."""
    global _FORK_WORK
    workers = min(os.cpu_count() or 1, n)
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:
        workers = 1
    if multiprocessing.current_process().daemon:    # a daemon may not start processes
        workers = 1
    if workers < 2:
        return [fn(i) for i in range(n)]
    _FORK_WORK = fn
    try:
        with ctx.Pool(workers) as pool:
            return pool.map(_fork_call, range(n), chunksize=1)
    finally:
        _FORK_WORK = None


def _analyse(c: Config, include_invalid: bool):
    """A configuration's analysis made in a worker: sent back without its run (the samples),
    which the caller puts back."""
    a = analyse_run(c.pooled, include_invalid=include_invalid,
                    samples=c.samples if len(c.runs) > 1 else None) if c.pooled.sizes else None
    if a is not None:
        a.to_dict()
        a.run = None
    return a


def group_comparisons(configs: list[Config], pairs: list[dict], include_invalid: bool = False,
                      design: dict | None = None) -> list[dict]:
    """The group's comparisons (comparison_jobs), made on the machine's cores (fork_map)."""
    jobs, only_with_statements = comparison_jobs(configs, pairs)
    out = fork_map(lambda i: comparison_doc(*jobs[i], include_invalid, design), len(jobs))
    return [c for c in out if c and c["statements"]] if only_with_statements else out


def comparison_jobs(configs: list[Config], pairs: list[dict]) -> tuple[list[tuple], bool]:
    """The comparisons of one group, as (A, B, why): those asked for, then each library
    configuration against the fastest; and whether only those with statements are kept."""
    out = []
    by_id = {c.id: c for c in configs}
    for p in pairs:
        a, b = by_id.get(p["a"]), by_id.get(p["b"])
        if a and b and a.group == b.group and a.sizes and b.sizes:
            out.append((a, b, "asked for in the campaign"))
    if len(configs) < 2:
        return out, False
    libs = [c for c in configs if "reference" not in c.roles and c.sizes]
    what = "library configuration"
    if len(libs) < 2:
        libs, what = [c for c in configs if c.sizes], "configuration"
    if len(libs) < 2:
        return out, False
    common = set.intersection(*({s["bytes"] for s in _usable(c)} for c in libs))
    if not common:
        return out, True
    fastest = min(libs, key=lambda c: _geo_mean_median(c, common))
    for c in libs:
        if c is not fastest:
            out.append((c, fastest, f"against the fastest {what} "
                        "(lowest geometric mean of medians over common sizes)"))
    return out, True


def build_model(runs: list[Run], entries: dict[str, dict], manifests: list[dict],
                pdf_dir: Path | None, study: str | None = None, pairs: list[dict] | None = None,
                title: str | None = None, include_invalid: bool = False) -> dict:
    import scipy.stats  # noqa: F401  imported once here, not in each worker fork_map starts

    from . import charts, plots
    if not runs:
        raise InputError("no runs to report on")
    configs = group_configs(runs, entries)
    for c, a in zip(configs, fork_map(lambda i: _analyse(configs[i], include_invalid), len(configs))):
        if a is not None:
            a.run = c.pooled
        c.analysis = a
        c.sizes = [size_dict(s) for s in c.analysis.sizes] if c.analysis else []
    study = study or next((m.get("study") for m in manifests if m.get("study")), None)
    by_id = {c.id: c for c in configs}
    for p in pairs or []:  # asked for on the command line: each must name two comparable configurations
        for side in ("a", "b"):
            if p[side] not in by_id:
                raise InputError(f"--compare {p['a']},{p['b']}: no configuration {p[side]!r} in these results "
                                 f"(the configurations: {', '.join(sorted(by_id))})")
        if by_id[p["a"]].group != by_id[p["b"]].group and \
                not crossing(by_id[p["a"]].group[0], by_id[p["b"]].group[0]):
            raise InputError(f"--compare {p['a']},{p['b']}: {p['a']} measures {' '.join(by_id[p['a']].group)} and "
                             f"{p['b']} {' '.join(by_id[p['b']].group)}: only runs of one pattern and variant compare "
                             "(or a ping-pong and a put-with-notification: across the interface)")
    for m in manifests:  # the campaign's own: a configuration that did not run is said, not an error
        for p in m.get("compare", []):
            gone = [p[k] for k in ("a", "b") if p[k] not in by_id]
            if gone:
                print(f"versus report: the campaign's comparison {p['a']} against {p['b']} is left out: "
                      f"{', '.join(gone)} has no results", file=sys.stderr)
    pairs = (pairs or []) + [p for m in manifests for p in m.get("compare", [])]
    # a campaign run --until-decided: its comparisons at its design's nominal level (the strictest
    # when several manifests are reported together)
    design = min((m["sequential"] for m in manifests if m.get("sequential")),
                 key=lambda d: d["nominal_alpha"], default=None)
    groups = []
    keys = sorted(dict.fromkeys(c.group for c in configs), key=lambda k: k[0] != "pingpong")
    for key in keys:
        members = [c for c in configs if c.group == key]
        floor = next((c for c in members if "floor" in c.roles and c.sizes), None)
        rows = []
        for c in members:
            r = summary_row(c, floor)
            r["n_transitions"] = len(r["transitions"])
            rows.append(r)
        gname = plots.safe_name(f"{key[0]}-{key[1]}".strip("-") or "runs")
        series = [{"label": c.id, "sizes": c.sizes,
                   "keep": [t.bytes for t in c.analysis.transitions] if c.analysis else []}
                  for c in members if c.sizes]
        fl = next((s for s in series if floor is not None and s["label"] == floor.id), None)
        meaning = run_meaning(members[0].pooled)
        cols = summary_columns(meaning.short_label)
        invalid = [f"{c.id}: {invalid_note(c.analysis.invalid_bytes, c.analysis.invalid_included)}"
                   for c in members if c.analysis and c.analysis.invalid_bytes]
        groups.append({
            "id": gname, "pattern": key[0], "variant": key[1], "floor": floor.id if floor else None,
            "time_label": meaning.time_label, "time_short": meaning.short_label,
            "sample_label": meaning.sample_label,
            "interval_note": interval_note(members),
            "band": band_words([x for c in members for x in c.sizes]),
            "summary": {"id": f"summary-{gname}", "caption": f"{key[0]} {key[1]}: summary",
                        "columns": cols, "rows": [[r[k["key"]] for k in cols] for r in rows],
                        "notes": invalid},
            "rows": rows,
            "plots": plots.comparison_plots(f"fig-{gname}", f"{key[0]} {key[1]}", series, fl, pdf_dir,
                                            meaning.short_label)
            if series else [],
            "charts": charts.comparison_charts(gname, f"{key[0]} {key[1]}", series, fl, meaning.short_label)
            if series else [],
            "comparisons": group_comparisons(members, pairs, include_invalid, design),
            "details": [{"id": c.id, "status": c.pooled.status, "warnings": c.pooled.warnings,
                         "host_load": config_words(c.runs),
                         "table": detail_table(c), "regimes": regime_table(c), "band": band_words(c.sizes),
                         "transitions": [dict(t.to_dict(), jump_words=jump_words(t.to_dict()))
                                         for t in c.analysis.transitions] if c.analysis else [],
                         "unmatched": c.analysis.unmatched_thresholds if c.analysis else [],
                         "staircases": [staircase_sentence(sc.to_dict()) for sc in c.analysis.staircases]
                         if c.analysis else [],
                         "left_out": (c.analysis.left_out or {}).get("text") if c.analysis else None,
                         "spread": (spread := launch_spread(c.samples) if len(c.runs) > 1 else []),
                         "spread_table": spread_table(c, spread),
                         "speed_classes": (speed_classes(c.runs, c.samples) or {}).get("text"),
                         "plot": plots.detail_plot(f"fig-detail-{len(groups)}-{i}", c.id, c.sizes,
                                                   c.analysis.to_dict()["regimes"] if c.analysis else [],
                                                   [t.to_dict() for t in c.analysis.transitions]
                                                   if c.analysis else [],
                                                   pdf_dir if len(configs) <= DETAIL_FIGURES_UP_TO else None,
                                                   meaning.short_label)
                         if c.sizes else None,
                         "chart": charts.detail_chart(f"detail-{len(groups)}-{i}", c.id, c.sizes,
                                                      c.analysis.to_dict()["regimes"] if c.analysis else [],
                                                      [t.to_dict() for t in c.analysis.transitions]
                                                      if c.analysis else [], meaning.short_label)
                         if c.sizes else None}
                        for i, c in enumerate(members)],
        })
    not_run = [e for m in manifests for e in m.get("runs", []) if e.get("status") != "ok"]
    return {
        "title": title or next((m.get("title") for m in manifests if m.get("title")), None) or "versus report",
        "description": next((m.get("description") for m in manifests if m.get("description")), ""),
        "generated": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "n_runs": len(runs), "n_configs": len(configs), "groups": groups,
        "compared": "; ".join(f"{_and([d['id'] for d in g['details']])} ({' '.join((g['pattern'], g['variant'])).strip()}, "
                              f"{g['time_label']})" for g in groups),
        "not_run": [{"id": e["id"], "status": e["status"], "transport": e.get("transport", ""),
                     "note": e.get("note") or "", "stderr_tail": e.get("stderr_tail") or ""} for e in not_run],
        "methods": methods_section(configs, _software()),
        "study": study_section(study, configs) if study else None,
        # the comparisons across the interface when some stack has the ping-pong and the
        # put-with-notification, or such a pair was asked for (interface.py); no key otherwise
        **({"interface": x} if (x := interface_section(configs, pairs, include_invalid, pdf_dir)) else {}),
        # the LogGP table when some stack has its three patterns (docs/loggp.md); no key otherwise
        **({"loggp": t} if (t := loggp_table(runs)) is not None else {}),
    }


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _software() -> list[list[str]]:
    import jinja2
    import matplotlib
    import scipy
    from .charts import plotly_version
    return [["versus analysis", __version__], ["Python", platform.python_version()],
            ["NumPy", np.__version__], ["SciPy", scipy.__version__], ["Jinja2", jinja2.__version__],
            ["Matplotlib", matplotlib.__version__], ["Plotly.js (HTML figures)", plotly_version()]]


def write_samples_files(runs: list[Run], entries: dict[str, dict], parquet: Path,
                        csv: Path | None = None) -> int:
    """samples.parquet (and samples.csv when asked): every raw sample, a row each (export.py)."""
    from .export import write_samples
    configs = [(entries.get(str(Path(r.source).resolve())) or {}).get("config_id") or _default_id(r) for r in runs]
    return write_samples(runs, configs, parquet, csv)


# which measured transports an imported tool's figures are set beside
TOOL_TRANSPORTS = {"osu": ("openmpi", "mpich"), "imb": ("openmpi", "mpich"), "ucx_perftest": ("ucx",),
                   "fi_pingpong": ("ofi",)}
NETPIPE_TRANSPORTS = {"NPtcp": ("tcp",), "NPopenmpi": ("openmpi",), "NPmpi": ("openmpi", "mpich"),
                      "NPmpich": ("mpich",)}


def native_section(measured: list[Run], imported: list[Run], pdf_dir: Path | None) -> list[dict]:
    """Each imported run beside each measured configuration of its pattern over the transports the
    tool measures (OSU and IMB: the MPI ones; ucx_perftest: ucx; fi_pingpong: ofi; NPtcp: tcp)."""
    from . import charts, plots
    from .sidebyside import NO_CLAIM, side_by_side
    out = []
    by_key: dict[tuple, list[Run]] = {}
    for r in measured:
        by_key.setdefault(configuration_key(r), []).append(r)
    for k, imp in enumerate(imported):
        info = imp.imported or {}
        fmt = info.get("format")
        want = (NETPIPE_TRANSPORTS.get(str(info.get("test")), ()) if fmt == "netpipe"
                else TOOL_TRANSPORTS.get(fmt, ()))
        for j, runs in enumerate(by_key.values()):
            if runs[0].transport.get("name") not in want or runs[0].pattern != imp.pattern:
                continue
            try:
                d = side_by_side(runs, imp)
            except InputError:
                continue          # no size in common
            title = f"{runs[0].label} beside {info.get('tool')} {info.get('test')}"
            bad = [r["bytes"] for r in d["rows"] if r.get("tool_valid") is False]   # OSU's --validation
            scale, unit = (1e-3, "µs") if d["unit"] == "ns" else (1.0, "MB/s")
            out.append({
                "id": f"native-{k}-{j}", "title": title, "source": Path(imp.source).name,
                "statistic": d["statistic"], "versus_statistic": d["versus_statistic"],
                "conversions": d["conversions"], "unknown": d["unknown"], "note": NO_CLAIM,
                "table": {"id": f"native-{k}-{j}-table", "caption": title,
                          "columns": [{"key": "bytes", "title": "bytes", "fmt": "bytes"},
                                      {"key": "v", "title": f"versus ({unit})", "fmt": "num"},
                                      {"key": "ci", "title": "versus 95 % CI", "fmt": "text"},
                                      {"key": "t", "title": f"{info.get('test')} ({unit})", "fmt": "num"},
                                      {"key": "r", "title": "tool / versus", "fmt": "num"},
                                      {"key": "in", "title": "tool's figure", "fmt": "text"}],
                          "rows": [[r["bytes"], r["versus"] * scale,
                                    (f"{r['versus_ci'][0] * scale:.3f} to {r['versus_ci'][1] * scale:.3f}"
                                     if r["versus_ci"] else "-"), r["tool"] * scale, r["ratio"],
                                    {True: "inside", False: "outside", None: "-"}[r["inside"]]]
                                   for r in d["rows"]],
                          "notes": [NO_CLAIM] + ([f"versus 95 % CI: {d['versus_interval']}."]
                                                 if d.get("versus_interval") else [])
                          + ([f"{info.get('tool')} reported its validation failed at "
                              f"{', '.join(map(str, bad))} B: its figure there is not a correct transfer's."]
                             if bad else [])},
                "plot": plots.native_plot(f"fig-native-{k}-{j}", title, d, pdf_dir),
                "chart": charts.native_chart(f"native-{k}-{j}", title, d)})
    return out


def history_section(db: str | None, pdf_dir: Path | None) -> list[dict]:
    """The over-time page: each configuration's latency at its smallest size, change points marked."""
    if not db or not Path(db).exists():
        return []
    from . import charts, plots
    from .history import series
    out = []
    for i, s in enumerate(series(db, command="report")):
        if len(s["points"]) < 2:
            continue
        out.append({"id": f"history-{i}", "label": s["label"], "hosts": ", ".join(s["hosts"]),
                    "bytes": s["bytes"], "runs": len(s["points"]),
                    "first": s["points"][0]["date"], "last": s["points"][-1]["date"], "looked": s["change_points"],
                    "changes": [f"{c['date']}: {c['change_pct']:+.1f} % (median of 3 runs each side)"
                                + ("; the library version changed there" if c["version_changed"] else "")
                                for c in s["changes"]],
                    "plot": plots.history_plot(f"fig-history-{i}", s, pdf_dir),
                    "chart": charts.history_chart(f"history-{i}", s)})
    return out


def render_report(paths: list[str], out: Path, study: str | None = None,
                  pairs: list[dict] | None = None, title: str | None = None,
                  include_invalid: bool = False, history: str | None = None, csv: bool = False) -> dict:
    """Write DIR/index.html, report.tex, appendix.tex, their PDF figures and samples.parquet
    (and samples.csv when csv is true); without pyarrow, no samples files (said once, and
    the model's `samples` is None)."""
    from .deps import optional
    from .render import latex_env
    runs, entries, manifests = collect(paths)
    imported = [r for r in runs if r.imported is not None]
    runs = [r for r in runs if r.imported is None]
    output_dir(out, "report directory")
    if history is None:      # a store kept with the results is shown
        found = [Path(p) / "versus-history.sqlite" for p in paths if Path(p).is_dir()]
        history = next((str(f) for f in found if f.exists()), None)
    elif not Path(history).exists():
        raise InputError(f"--history {history}: no history store there (versus history add RESULTS --db FILE)")
    # Every file is written into a folder of its own inside the output and moved into place at the
    # end, index.html last: a failure on the way (a full disk) or a kill leaves the previous report
    # as it was, never a cut index.html beside new plots.
    import shutil
    import tempfile
    try:
        stage = Path(tempfile.mkdtemp(prefix=".versus-report-", dir=out))
    except OSError as ex:
        raise InputError(f"report directory {out}: cannot write in it ({ex.strerror or ex})") from None
    kept = "; the previous report there is left as it was"
    pending = []        # work beside this process, waited for before its folder goes
    try:
        samples = None
        if optional("pyarrow", "report") is not None:
            samples = beside(write_samples_files, runs, entries, stage / "samples.parquet",
                             stage / "samples.csv" if csv else None)
            pending.append(samples)
        model = build_model(runs, entries, manifests, stage, study, pairs, title, include_invalid)
        model["native"] = native_section(runs, imported, stage)
        model["history"] = history_section(history, stage)
        # the pages are rendered beside the LaTeX documents (on the other core)
        pending.append(beside(_write_html, model, stage, what="rendering the HTML pages"))
        latex = latex_env()
        for name in ("report", "appendix"):
            tex = latex.get_template(f"{name}.tex.j2").render(m=model)
            (stage / f"{name}.tex").write_text(tex, encoding="utf-8")
        while pending:
            try:
                value = pending.pop()()
            except InputError as ex:
                raise InputError(f"report directory {out}: {ex}{kept}") from None
        model["samples"] = value if samples is not None else None     # it is the first one started
        _publish(stage, out)
    except Exception as ex:
        # a write that failed (a full disk), also when a library's clean-up after it raised
        # another error (matplotlib's PDF writer does)
        cause = ex
        while cause is not None and not isinstance(cause, OSError):
            cause = cause.__cause__ or cause.__context__
        if cause is None:
            raise
        raise InputError(f"report directory {out}: cannot write the report ({cause.strerror or cause}){kept}") \
            from None
    finally:
        for wait in pending:            # the work beside ends before its folder goes
            try:
                wait()
            except InputError:
                pass
        shutil.rmtree(stage, ignore_errors=True)
    return model


def _write_html(model: dict, stage: Path) -> None:
    """index.html and its appendix page details.html."""
    from .render import html_env
    env = html_env()
    (stage / "details.html").write_text(env.get_template("details.html.j2").render(m=model), encoding="utf-8")
    (stage / "index.html").write_text(env.get_template("report.html.j2").render(m=model), encoding="utf-8")


def _publish(stage: Path, out: Path) -> None:
    """Move the files rendered into stage to the same places in out (flushed to the disk first;
    a rename replaces a file whole), index.html last."""
    import os
    files = sorted((p for p in stage.rglob("*") if p.is_file()), key=lambda p: p.name == "index.html")
    for f in files:
        fd = os.open(f, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    for f in files:
        target = out / f.relative_to(stage)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(f, target)


def beside(fn, *args, what: str = "writing the samples"):
    """Start fn(*args) beside the caller; returns a function that waits for its result.
    The raw-sample export and the HTML page only read the runs and the model: where there is
    fork they run in a child process that shares them copy-on-write (nothing is copied, and
    neither side waits for the other's interpreter lock), else in a thread.  `what` names
    the work in the error a failure becomes."""
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:
        pool = concurrent.futures.ThreadPoolExecutor(1)
        fut = pool.submit(fn, *args)
        pool.shutdown(wait=False)
        return fut.result
    recv, send = ctx.Pipe(duplex=False)

    def child():
        try:
            send.send(("ok", fn(*args)))
        except BaseException as ex:            # reported by the parent, as the error it is
            send.send(("error", f"{type(ex).__name__}: {ex}"))

    proc = ctx.Process(target=child, daemon=True)
    proc.start()
    send.close()

    def result():
        try:
            status, value = recv.recv()
        except EOFError:
            status, value = "error", f"the export process ended with exit code {proc.exitcode}"
        proc.join()
        if status != "ok":
            raise InputError(f"{what} failed: {value}")
        return value
    return result


def cmd_report(args) -> int:
    pairs = []
    for p in args.compare or []:
        a, sep, b = p.partition(",")
        if not sep:
            raise InputError(f"--compare {p!r}: expected A_ID,B_ID")
        pairs.append({"a": a, "b": b})
    model = render_report(args.results, Path(args.output), args.study, pairs, args.title,
                          args.include_invalid, args.history, args.csv)
    kept = (f" and samples.parquet{' and samples.csv' if args.csv else ''} ({model['samples']} samples)"
            if model["samples"] is not None else " (no samples files: see above)")
    print(f"versus report: {model['n_runs']} runs, {model['n_configs']} configurations -> "
          f"{args.output}/index.html (appendix details.html), {args.output}/report.tex, {args.output}/appendix.tex"
          f"{kept}", file=sys.stderr)
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("report", help="render the HTML and LaTeX report and the raw samples as Parquet")
    p.add_argument("results", nargs="+", metavar="RESULTS", help="result files or campaign result directories")
    p.add_argument("-o", "--output", required=True, metavar="DIR")
    p.add_argument("--study", help="show this seed study's section (seed000 ... seed004)")
    p.add_argument("--compare", action="append", metavar="A_ID,B_ID", help="compare these configurations")
    p.add_argument("--title")
    p.add_argument("--history", metavar="DB",
                   help="add the over-time page from this history store (default: versus-history.sqlite in a "
                        "results directory given, when there)")
    p.add_argument("--include-invalid", action="store_true",
                   help="keep sizes whose payload check failed in fits and comparisons "
                        "(default: shown, marked, left out)")
    p.add_argument("--csv", action="store_true",
                   help="also write the raw samples as DIR/samples.csv (default: samples.parquet only; the CSV "
                        "of ten million samples is about 1.4 GB, the Parquet file about 30 MB)")
    p.set_defaults(func=cmd_report)


__all__ = ["render_report", "build_model", "collect", "fmt_bytes"]
