"""Reading versus result files (JSON Lines, docs/results-schema.md).

A file holds a `run` record, `size` records and normally an `end` record.
`load_file` returns one `Run` per `run` record found (normally one).  Errors
in the input raise `InputError`, whose message names the file and line; the
command line turns it into exit status 2.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np

SCHEMA_VERSIONS = (1,)


class InputError(Exception):
    """Input that cannot be analysed (bad file, unknown schema, incomparable runs)."""


@dataclass
class SizeRecord:
    """One message size: raw round-trip samples (ns) and optional extras."""
    bytes: int
    samples_ns: np.ndarray            # int64, round-trip times (batch means when batch > 1)
    batch: int = 1
    warmup: int = 0
    elapsed_ns: int | None = None
    extra: dict[str, np.ndarray] = field(default_factory=dict)   # e.g. send_ns, recv_ns
    # Measurement method (docs/methodology.md): where the record sits in the
    # visiting order, the adaptive pass that added the size, why it stopped.
    round: int = 0
    position: int | None = None
    pass_: int = 0
    stop: str | None = None
    precision_pct: float | None = None
    rounds: int = 1                   # records pooled into this one (sizes_by_bytes)


@dataclass
class Run:
    """One run: its provenance record, its sizes in visiting order, its end."""
    source: str
    record: dict[str, Any]
    sizes: list[SizeRecord]
    end: dict[str, Any] | None
    warnings: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.end is not None

    @property
    def status(self) -> str:
        """'ok', the end record's status, or 'incomplete' when there is no end record."""
        return self.end.get("status", "unknown") if self.end else "incomplete"

    @property
    def usable_as_complete(self) -> bool:
        return self.status == "ok"

    @property
    def transport(self) -> dict[str, Any]:
        return self.record.get("transport") or {}

    @property
    def pattern(self) -> str:
        return str(self.record.get("pattern", ""))

    @property
    def variant(self) -> str:
        return str(self.record.get("variant", ""))

    @property
    def launch_id(self) -> int:
        return int(self.record.get("launch_id", 0) or 0)

    @property
    def thresholds(self) -> dict[str, int]:
        th = self.transport.get("thresholds") or {}
        return {str(k): int(v) for k, v in th.items() if isinstance(v, (int, float))}

    @property
    def label(self) -> str:
        """Short human name: transport[/provider] pattern[/variant]."""
        t = self.transport
        name = str(t.get("name", "?"))
        prov = t.get("provider") or ""
        if prov:
            name += "/" + str(prov)
        pat = self.pattern + ("/" + self.variant if self.variant else "")
        return f"{name} {pat}"

    def config_key(self) -> tuple:
        """What identifies a configuration; launches of one configuration share it."""
        t = self.transport
        opts = json.dumps(t.get("options") or {}, sort_keys=True)
        return (t.get("name"), t.get("provider"), opts, self.pattern, self.variant,
                self.record.get("ranks"), tuple(self.record.get("hosts") or ()),
                _placement_key(self.record.get("placement")))

    def sizes_by_bytes(self) -> dict[int, SizeRecord]:
        """Sizes keyed by bytes; a size visited more than once (rounds of an
        interleaved or shuffled order, repeated visits) has its samples pooled,
        its measuring times added, and the last record's stop and precision."""
        out: dict[int, SizeRecord] = {}
        for s in self.sizes:
            if s.bytes in out:
                prev = out[s.bytes]
                extra = {k: np.concatenate([prev.extra[k], v]) for k, v in s.extra.items()
                         if k in prev.extra}
                elapsed = (prev.elapsed_ns + s.elapsed_ns
                           if prev.elapsed_ns is not None and s.elapsed_ns is not None else None)
                out[s.bytes] = SizeRecord(s.bytes, np.concatenate([prev.samples_ns, s.samples_ns]),
                                          max(prev.batch, s.batch), prev.warmup, elapsed, extra,
                                          prev.round, prev.position, prev.pass_,
                                          s.stop or prev.stop,
                                          s.precision_pct if s.precision_pct is not None else prev.precision_pct,
                                          prev.rounds + s.rounds)
            else:
                out[s.bytes] = s
        return dict(sorted(out.items()))


def _int_array(values: Any, where: str, name: str) -> np.ndarray:
    if not isinstance(values, list):
        raise InputError(f"{where}: '{name}' must be an array of integers")
    try:
        arr = np.asarray(values, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{where}: '{name}' must hold integers only") from None
    if arr.ndim != 1:
        raise InputError(f"{where}: '{name}' must be a flat array")
    return arr


def _size_record(obj: dict[str, Any], where: str) -> SizeRecord:
    b = obj.get("bytes")
    if not isinstance(b, int) or isinstance(b, bool) or b < 0:
        raise InputError(f"{where}: size record without a valid 'bytes'")
    samples = _int_array(obj.get("samples_ns"), where, "samples_ns")
    if samples.size and samples.min() < 0:
        raise InputError(f"{where}: negative sample in 'samples_ns'")
    batch = obj.get("batch", 1)
    if not isinstance(batch, int) or batch < 1:
        raise InputError(f"{where}: 'batch' must be a positive integer")
    extra = {}
    for key, val in obj.items():
        if key.endswith("_ns") and key not in ("samples_ns", "elapsed_ns") and isinstance(val, list):
            extra[key] = _int_array(val, where, key)
    position = obj.get("position")
    precision = obj.get("precision_pct")
    return SizeRecord(b, samples, batch, int(obj.get("warmup", 0) or 0),
                      obj.get("elapsed_ns"), extra,
                      int(obj.get("round", 0) or 0), int(position) if isinstance(position, int) else None,
                      int(obj.get("pass", 0) or 0), obj.get("stop") if isinstance(obj.get("stop"), str) else None,
                      float(precision) if isinstance(precision, (int, float)) else None)


def load_file(path: str | Path) -> list[Run]:
    """Read one JSONL result file; return its runs (normally exactly one)."""
    path = Path(path)
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as ex:
        raise InputError(f"{name}: cannot read: {ex.strerror or ex}") from None
    except UnicodeDecodeError as ex:
        raise InputError(f"{name}: not UTF-8 text ({ex.reason})") from None
    lines = text.split("\n")
    truncated_tail = not text.endswith("\n")
    runs: list[Run] = []
    cur: Run | None = None
    for idx, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{name}:{idx}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as ex:
            if truncated_tail and idx == len(lines) and cur is not None:
                cur.warnings.append(f"{where}: last line cut short (run killed while writing); ignored")
                continue
            raise InputError(f"{where}: malformed line: {ex.msg} (column {ex.colno})") from None
        if not isinstance(obj, dict) or "record" not in obj:
            raise InputError(f"{where}: malformed line: not an object with a 'record' field")
        kind = obj["record"]
        if kind == "run":
            schema = obj.get("schema")
            if schema not in SCHEMA_VERSIONS:
                raise InputError(f"{where}: unknown schema version {schema!r} "
                                 f"(this reader knows {', '.join(map(str, SCHEMA_VERSIONS))})")
            cur = Run(name, obj, [], None)
            runs.append(cur)
            continue
        if cur is None:
            raise InputError(f"{where}: '{kind}' record before any 'run' record")
        if cur.end is not None:
            raise InputError(f"{where}: '{kind}' record after the 'end' record")
        if kind == "size":
            rec = _size_record(obj, where)
            if rec.samples_ns.size == 0:
                cur.warnings.append(f"{where}: size {rec.bytes} has no samples; ignored")
            else:
                cur.sizes.append(rec)
        elif kind == "end":
            cur.end = obj
            if obj.get("status") != "ok":
                msg = obj.get("message") or ""
                cur.warnings.append(f"{name}: run ended with status '{obj.get('status')}'"
                                    + (f": {msg}" if msg else ""))
        else:
            cur.warnings.append(f"{where}: unknown record type {kind!r}; ignored")
    if not runs:
        raise InputError(f"{name}: no 'run' record (empty or not a versus result file)")
    for r in runs:
        if r.end is None:
            r.warnings.append(f"{name}: no 'end' record: the run was cut short; marked incomplete")
    return runs


def load_files(paths: Iterable[str | Path]) -> list[Run]:
    runs: list[Run] = []
    for p in paths:
        runs.extend(load_file(p))
    return runs


def check_comparable(runs: list[Run]) -> None:
    """Refuse a set of runs that measure different patterns."""
    patterns = sorted({r.pattern for r in runs})
    if len(patterns) > 1:
        which = "; ".join(f"{r.source}: {r.pattern or '?'}" for r in runs)
        raise InputError(f"runs of different patterns cannot be compared ({which})")


def _placement_key(p) -> str:
    """The placement as a configuration: policy, relation and cores, not the
    per-launch facts (pids, the mask before binding, the core seen mid-run)."""
    if not isinstance(p, dict):
        return json.dumps(p)
    ranks = [(r.get("host"), r.get("cpus_hwloc", r.get("cpus_after"))) for r in p.get("ranks") or []
             if isinstance(r, dict)]
    return json.dumps([p.get("policy"), p.get("cpus_arg"), p.get("relation"), ranks])


def check_same_configuration(runs: list[Run]) -> None:
    """Refuse launches pooled together that are not of one configuration."""
    keys = {r.config_key() for r in runs}
    if len(keys) > 1:
        which = "; ".join(f"{r.source}: {r.label}" for r in runs)
        raise InputError(f"runs pooled as launches of one configuration differ ({which})")


def group_launches(runs: list[Run]) -> list[list[Run]]:
    """Group runs by configuration, keeping first-seen order."""
    groups: dict[tuple, list[Run]] = {}
    for r in runs:
        groups.setdefault(r.config_key(), []).append(r)
    return list(groups.values())
