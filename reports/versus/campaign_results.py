"""A campaign's results directory: what each results file holds (its status, its run record), the
manifest (campaign.json: read back on a resume, written whole after every run), files set aside
when their configuration changed, the forecast of what is left, and what the runner offers (its
modules and patterns) that decides which runs are skipped here."""
from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .campaign_keys import Campaign, RunSpec
from .eta import Estimator, plan_of, read_costs
from .load import InputError, read_input, write_atomically
from . import modules as vsmod

MANIFEST = "campaign.json"


@dataclass
class RunnerInfo:
    path: str
    modules: dict[str, str]      # name -> "yes" or the reason it does not load
    patterns: list[str]
    declared: dict[str, dict] = field(default_factory=dict)  # name -> what the module declares
    options: list[dict] = field(default_factory=list)        # versus-run's own (--help --json)


def runner_help(path: str) -> dict:
    """versus-run --help --json: the table its command line is parsed with (each option's name,
    short name, value, kind, choices, default, help) and its patterns with their variants."""
    try:
        p = subprocess.run([path, "--help", "--json"], capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as ex:
        raise InputError(f"{path} --help --json: {ex}") from None
    try:
        doc = json.loads(p.stdout)
    except (ValueError, RecursionError):
        doc = None
    if not (isinstance(doc, dict) and isinstance(doc.get("options"), list) and isinstance(doc.get("patterns"), list)):
        raise InputError(f"{path} --help --json did not print its option table (exit {p.returncode}): "
                         f"a versus-run older than this package? rebuild it")
    return doc


def probe_runner(path: str) -> RunnerInfo:
    try:
        declared = vsmod.declared(path)
    except vsmod.ModuleListError as ex:
        raise InputError(str(ex)) from None
    modules = {name: "yes" if m.get("loads") else (m.get("reason") or "does not load")
               for name, m in declared.items()}
    doc = runner_help(path)
    patterns = [p["name"] for p in doc["patterns"] if isinstance(p, dict) and isinstance(p.get("name"), str)]
    options = [o for o in doc["options"] if isinstance(o, dict) and isinstance(o.get("name"), str)]
    return RunnerInfo(path, modules, patterns, declared, options)


def first_record(path: Path) -> dict | None:
    """The run record (the first line) of a results file, or None (none, unreadable, not a run)."""
    try:
        if not path.is_file():
            return None
        with open(path, "rb") as f:
            line = f.readline(16 << 20)
        rec = json.loads(line)
    except (OSError, ValueError, RecursionError):
        return None
    return rec if isinstance(rec, dict) and rec.get("record") == "run" else None


def previous_entries(results: Path) -> dict[str, dict]:
    """The entries of the manifest already in results by file name ({} without one, or with one
    of another shape: it only adds to what the results files say)."""
    try:
        doc = json.loads(read_input(results / MANIFEST, limit=64 << 20))
    except (InputError, ValueError, RecursionError):
        return {}
    runs = doc.get("runs") if isinstance(doc, dict) else None
    return {e["file"]: e for e in runs if isinstance(e, dict) and isinstance(e.get("file"), str)} \
        if isinstance(runs, list) else {}


def set_aside(results: Path, out: Path) -> str:
    """Move a results file into results/superseded/ under a name not taken yet (<name>.<n>.jsonl);
    returns its path relative to results.  Nothing is deleted."""
    where = results / "superseded"
    stem = out.name[:-len(".jsonl")] if out.name.endswith(".jsonl") else out.name
    try:
        where.mkdir(exist_ok=True)
        n = 1
        while (where / f"{stem}.{n}.jsonl").exists():
            n += 1
        os.rename(out, where / f"{stem}.{n}.jsonl")
    except OSError as ex:
        raise InputError(f"cannot move {out} aside into {where}: {ex.strerror or ex}; nothing was measured "
                         "over it") from None
    return f"superseded/{stem}.{n}.jsonl"


def result_status(path: Path) -> str | None:
    """The status of a result file's end record, or None (missing, cut short, unreadable)."""
    try:
        if not path.is_file():          # a pipe or a device would block or never end
            return None
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for line in reversed(lines):
        if line.strip():
            try:
                rec = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                return None
            return rec.get("status") if isinstance(rec, dict) and rec.get("record") == "end" else None
    return None


def _cannot_run(spec: RunSpec, info: RunnerInfo, have_nodes: int) -> str | None:
    """Why this run is skipped here (the module, the pattern, the nodes), or None."""
    if info.modules.get(spec.transport) != "yes":
        return (f"transport module '{spec.transport}' "
                + ("was not built" if spec.transport not in info.modules
                   else f"does not load: {info.modules[spec.transport]}"))
    if info.patterns and spec.pattern not in info.patterns:
        return f"pattern '{spec.pattern}' is not known to this runner (knows {', '.join(info.patterns)})"
    if (spec.nodes or 1) > have_nodes and len(spec.hosts) < (spec.nodes or 1):
        return (f"needs {spec.nodes} nodes and {have_nodes} {'is' if have_nodes == 1 else 'are'} here: run the "
                f"campaign inside an allocation of {spec.nodes} nodes (salloc -N {spec.nodes}, or --sbatch), "
                f"name the hosts (hosts = [...]), or rehearse it on two emulated boxes with "
                f"'versus lab up' and --lab")
    return None


class _Forecast:
    """The campaign's ETA from the measured cost per size (eta.py): every run still to run is
    predicted from the runs measured so far, complete results found in the directory included."""

    def __init__(self, camp: Campaign, results: Path, info: RunnerInfo, have_nodes: int, before: dict):
        self.specs = camp.runs
        self.plans = [plan_of(s) for s in camp.runs]
        self.est = Estimator()
        self.todo = []
        mine = set()
        for spec, plan in zip(camp.runs, self.plans):
            out = results / spec.filename
            found = result_status(out) == "ok"
            if found and plan is not None:
                self.est.add(read_costs(out, plan.key, (before.get(spec.filename) or {}).get("duration_s")))
            mine.add(spec.filename)
            self.todo.append(_cannot_run(spec, info, have_nodes) is None and not found)
        # what earlier campaigns measured into this directory (other runs, files set aside when
        # the configuration changed): their costs count too, under what their run records say
        others = [f for f in sorted(results.glob("*.jsonl")) if f.name not in mine]
        others += sorted((results / "superseded").glob("*.jsonl"))
        for f in others[:200]:
            if result_status(f) == "ok":
                self.est.add(read_costs(f, None))

    def measured(self, i: int, out: Path, seconds: float) -> None:
        plan = self.plans[i]
        if plan is not None:
            self.est.add(read_costs(out, plan.key, seconds))

    def predict(self, i: int) -> float | None:
        return self.est.predict(self.plans[i]) if self.todo[i] else 0.0

    def remaining(self, done: int) -> float | None:
        """Seconds the runs from index `done` on take, or None while nothing was measured."""
        if not self.est.measured:
            return None
        parts = [self.predict(i) for i in range(done, len(self.specs))]
        return None if any(p is None for p in parts) else sum(parts)


def _write_manifest(results: Path, camp: Campaign, info: RunnerInfo, entries: list,
                    forecast: dict | None = None, sequential: dict | None = None) -> dict:
    counts: dict[str, int] = {}
    for e in entries:
        counts[e["status"]] = counts.get(e["status"], 0) + 1
    doc = {"campaign": camp.path, "title": camp.title, "description": camp.description,
           "study": camp.study, "compare": camp.compare, "runner": info.path,
           "modules": info.modules, "patterns": info.patterns, "counts": counts, "runs": entries}
    if forecast is not None:
        doc["forecast"] = forecast
    if sequential is not None:
        doc["sequential"] = sequential
    # whole or not at all: a full disk or a kill leaves the previous manifest, never a cut one
    write_atomically(results / MANIFEST, json.dumps(doc, indent=1) + "\n", "campaign manifest")
    return doc
