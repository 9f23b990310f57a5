"""Reading versus result files (JSON Lines, docs/results-schema.md).

A file holds a `run` record, `size` records and normally an `end` record.
`load_file` returns one `Run` per `run` record found (normally one).  Errors
in the input raise `InputError`, whose message names the file and line; the
command line turns it into exit status 2.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from .lazy import numpy as np

SCHEMA_VERSIONS = (1,)


class InputError(Exception):
    """Input that cannot be analysed (bad file, unknown schema, incomparable runs)."""


def output_dir(path, what: str = "output directory"):
    """Make the directory path (and its parents) or say why not: an existing file there, or a
    place this user cannot write.  Returns it as a Path."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise InputError(f"{what} {p}: a file of that name exists; give a directory")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as ex:
        raise InputError(f"{what} {p}: cannot create it ({ex.strerror or ex}); give a directory you can write")
    if not os.access(p, os.W_OK | os.X_OK):
        raise InputError(f"{what} {p}: not writable; give a directory you can write")
    return p


def write_atomically(path, data: str | bytes, what: str = "output", *, overwrite: bool = True,
                     inputs=(), replaceable=None) -> None:
    """Write the whole of data to path through a temporary file in the same directory,
    flushed and renamed into place: a full disk or a kill leaves the previous file (or none),
    never a truncated one.

    What is at path already is never renamed over unless it is a regular file this write may
    replace: a device, a FIFO, a socket or a directory there is refused, and so is one of
    `inputs` (the command's own input files).  A regular file that is not empty is replaced only
    with overwrite (the user's --overwrite; the default for files versus keeps itself, such as a
    campaign's manifest) or when replaceable(path) says it is one of this output's kind.  A
    symbolic link to a regular file is written through (the file it names is replaced)."""
    check_output_path(path, what, overwrite=overwrite, inputs=inputs, replaceable=replaceable)
    if os.path.islink(path):
        path = os.path.realpath(path)
    import tempfile
    p = Path(path)
    blob = data.encode("utf-8") if isinstance(data, str) else data
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent if str(p.parent) else ".")
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, p)
        tmp = None
    except OSError as ex:
        raise InputError(f"{what} {p}: cannot write it ({ex.strerror or ex}); nothing was changed there") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def same_file_as(path, paths) -> str | None:
    """The first of paths that is the same file as path (by device and inode), or None."""
    for q in paths:
        with contextlib.suppress(OSError):
            if os.path.samefile(path, q):
                return q
    return None


def check_output_path(path, what: str = "output", *, overwrite: bool = False, inputs=(), replaceable=None) -> None:
    """InputError (exit 2) when writing path would destroy what is there; see write_atomically."""
    import stat as _stat
    p = str(path)
    if not os.path.lexists(p):
        return
    try:
        st = os.stat(p)
    except OSError:
        raise InputError(f"{what} {p}: a symbolic link to nothing is there; remove it or give another path") from None
    kinds = ((_stat.S_ISDIR, "a directory"), (_stat.S_ISCHR, "a character device"), (_stat.S_ISBLK, "a block device"),
             (_stat.S_ISFIFO, "a FIFO"), (_stat.S_ISSOCK, "a socket"))
    for test, kind in kinds:
        if test(st.st_mode):
            raise InputError(f"{what} {p}: {kind} is there, not a regular file; versus writes its outputs only "
                             "as regular files: give a new file's path")
    if not _stat.S_ISREG(st.st_mode):
        raise InputError(f"{what} {p}: not a regular file; give a new file's path")
    hit = same_file_as(p, inputs)
    if hit is not None:
        raise InputError(f"{what} {p}: it is also this command's input ({hit}); writing it would replace "
                         "the input: give another path")
    if overwrite or st.st_size == 0:
        return
    if replaceable is not None and replaceable(p):
        return
    raise InputError(f"{what} {p}: the file exists ({st.st_size} bytes); give another name, move it away, "
                     "or add --overwrite to replace it")


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
    # Payload check (--validate): None when not checked, False when any
    # record of this size failed; `validation` is the first failure's details.
    valid: bool | None = None
    validation: dict | None = None
    pair: tuple[int, int] | None = None   # the pair that measured it, when every pair ran at once
    host_load: dict | None = None         # the host's load over this visit (hostload.py), when recorded
    drift_ns: float | None = None         # the placement drift probe's cache-line round trip beside this
                                          # visit (ns), when recorded: the host's state (covariate.py)


@dataclass
class PairRecord:
    """One pair of an all-pairs scan at one size (a `pair` record)."""
    ranks: tuple[int, int]
    hosts: tuple[str, str]
    same_host: bool
    bytes: int
    samples_ns: np.ndarray
    pass_: int = 0
    round: int = 0

    @property
    def median_ns(self) -> float:
        return float(np.median(self.samples_ns))


@dataclass
class Run:
    """One run: its provenance record, its sizes in visiting order, its end."""
    source: str
    record: dict[str, Any]
    sizes: list[SizeRecord]
    end: dict[str, Any] | None
    warnings: list[str] = field(default_factory=list)
    # The name a campaign gave this run's configuration (its manifest's
    # config_id), when known; part of what identifies the configuration.
    config_name: str | None = None
    pairs: list[PairRecord] = field(default_factory=list)     # an all-pairs scan's records
    aggregates: list[dict] = field(default_factory=list)      # every pair at once: per size visit
    summaries: list[dict] = field(default_factory=list)       # an imported run's figures (no samples)

    @property
    def imported(self) -> dict | None:
        """What `versus import` recorded of another tool's output, or None for a measured run."""
        imp = self.record.get("imported")
        return imp if isinstance(imp, dict) else None

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
    def roles(self) -> frozenset[str]:
        """What the module declared itself to the analysis (transport.roles): "reference"
        (versus's own implementation, no library's), "floor" (the fastest path between two
        ranks of one node).  Empty for a library's module, an imported run, and records
        written before modules declared roles."""
        r = self.transport.get("roles")
        return frozenset(x for x in r if isinstance(x, str)) if isinstance(r, list) else frozenset()

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
    def page_bytes(self) -> int | None:
        """The memory page size of the host that wrote the record, when recorded."""
        v = (self.record.get("topology") or {}).get("page_bytes")
        return int(v) if isinstance(v, int) and v > 0 else None

    @property
    def copy_thresholds(self) -> dict[str, int]:
        """Where the C library's memcpy changes method (glibc's tunables in force on rank 0's
        host), when the messages are copied through memory on one host: every rank on one
        host and a medium that is shared memory, may be, or is not said.  Empty otherwise."""
        hosts = self.record.get("hosts") or []
        medium = self.transport.get("medium") or ""
        if len(set(hosts)) != 1 or medium not in ("", "shared-memory", "shared-memory-allowed"):
            return {}
        th = (self.record.get("topology") or {}).get("copy_thresholds") or {}
        return {str(k): int(v) for k, v in th.items() if isinstance(v, int) and not isinstance(v, bool) and v > 0}

    @property
    def label(self) -> str:
        """Short human name: transport[/provider] pattern[/variant]."""
        t = self.transport
        name = str(t.get("name", "?"))
        prov = t.get("provider") or ""
        if prov:
            name += "/" + str(prov)
        pat = self.pattern + ("/" + self.variant if self.variant else "")
        pair = self.record.get("pair_ranks")
        return f"{name} {pat}" + (f" pair {pair[0]}-{pair[1]}" if pair else "")

    def config_key(self) -> tuple:
        """What identifies a configuration; launches of one configuration share it
        (see `configuration_key`)."""
        return configuration_key(self)

    def invalid_bytes(self) -> list[int]:
        """Sizes with a record whose payload check failed (`valid: false`)."""
        return sorted({s.bytes for s in self.sizes if s.valid is False})

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
                                          prev.rounds + s.rounds, _pooled_valid(prev.valid, s.valid),
                                          prev.validation if prev.validation is not None else s.validation,
                                          None, None,
                                          _mean_drift(prev.drift_ns, prev.rounds, s.drift_ns, s.rounds))
            else:
                out[s.bytes] = s
        return dict(sorted(out.items()))


def _mean_drift(a: float | None, na: int, b: float | None, nb: int) -> float | None:
    """The geometric mean of the drift probe over the visits pooled (a over na of them, b over nb)."""
    if a is None or b is None or a <= 0 or b <= 0:
        return a if b is None else (b if a is None else None)
    return math.exp((na * math.log(a) + nb * math.log(b)) / (na + nb))


def _pooled_valid(a: bool | None, b: bool | None) -> bool | None:
    if a is False or b is False:
        return False
    return True if (a or b) else None


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


def samples_check(samples: np.ndarray) -> str:
    """The runner's "samples_check": the sum and the position-weighted sum (1, 2, ...) of the
    samples modulo 2^64, as 32 hex digits."""
    s = samples.astype(np.int64).view(np.uint64)
    with np.errstate(over="ignore"):
        plain = int(s.sum(dtype=np.uint64))
        weighted = int((s * np.arange(1, s.size + 1, dtype=np.uint64)).sum(dtype=np.uint64))
    return f"{plain:016x}{weighted:016x}"


def _checked(obj: dict[str, Any], samples: np.ndarray, where: str) -> None:
    """A record that carries samples_check must match it (older records carry none)."""
    want = obj.get("samples_check")
    if want is None:
        return
    if not isinstance(want, str) or samples_check(samples) != want.lower():
        raise InputError(f"{where}: the samples do not match the record's samples_check: the line was changed "
                         "or damaged after the run wrote it; measure again or restore the file")


# Every line the runner writes (and `versus import`) ends with ,"line_sha256":"<64 hex>"}: the
# SHA-256 of the line's bytes before that key. A run record with "integrity": "line_sha256"
# promises it on every line of its run.
SEAL_KEY = "line_sha256"
_SEAL = re.compile(r',"line_sha256":"([0-9a-f]{64})"\}\s*$')


def seal_line(obj: dict[str, Any]) -> str:
    """One JSONL line for obj, sealed as the runner seals its lines (no newline)."""
    body = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    head = body[:-1]
    return f'{head},"{SEAL_KEY}":"{hashlib.sha256(head.encode("utf-8")).hexdigest()}"}}'


def _seal_state(line: str) -> bool | None:
    """True: the line carries a seal that matches; False: one that does not; None: none."""
    m = _SEAL.search(line)
    if not m:
        return None
    return hashlib.sha256(line[:m.start()].encode("utf-8")).hexdigest() == m.group(1)


# versus-run's largest message (core/sizes.h); an imported table may go further
MAX_MEASURED_BYTES = 1 << 30
MAX_IMPORTED_BYTES = 1 << 40


def _whole(v: Any, lo: int = 0, hi: int = 2 ** 53) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


# the run record's fields the analysis reads, and what each must be when present (null: absent)
RUN_FIELD_KINDS = {"transport": dict, "env": dict, "hosts": list, "pattern_params": dict, "placement": dict,
                   "topology": dict, "timer": dict, "schedule": dict, "iterations": dict, "launcher": dict,
                   "warnings": list, "host_load": dict, "pattern": str, "variant": str}


def _check_run_fields(obj: dict[str, Any], where: str) -> None:
    """Refuse a run record whose fields are not of their kind (a hand-edited or damaged file):
    one InputError naming the field, rather than a failure deep in the analysis."""
    for key, kind in RUN_FIELD_KINDS.items():
        v = obj.get(key)
        if v is not None and not isinstance(v, kind):
            raise InputError(f"{where}: '{key}' must be {'an object' if kind is dict else 'a list' if kind is list else 'text'}"
                             f" (got {type(v).__name__})")
    for key in ("launch_id", "ranks"):
        if obj.get(key) is not None and not _whole(obj[key], 0, 2 ** 31):
            raise InputError(f"{where}: '{key}' must be a whole number, 0 or more (got {obj[key]!r})")
    params = obj.get("pattern_params") or {}
    for key in ("window", "poll_every"):
        if params.get(key) is not None and not _whole(params[key], 1 if key == "window" else 0, 2 ** 31):
            raise InputError(f"{where}: pattern parameter '{key}' must be a whole number"
                             f"{', 1 or more' if key == 'window' else ''} (got {params[key]!r})")
    hosts = obj.get("hosts")
    if hosts is not None and not all(isinstance(h, str) for h in hosts):
        raise InputError(f"{where}: 'hosts' must be a list of host names")
    t = obj.get("transport")
    if t is not None:
        for key in ("name", "library", "version", "provider"):
            if t.get(key) is not None and not isinstance(t[key], str):
                raise InputError(f"{where}: transport '{key}' must be text (got {type(t[key]).__name__})")
        for key in ("options", "thresholds", "attrs"):
            if t.get(key) is not None and not isinstance(t[key], dict):
                raise InputError(f"{where}: transport '{key}' must be an object")


# What versus-run measures (core/pattern*.c): every pattern and its variants, the first the default.
PATTERN_VARIANTS = {
    "pingpong": ("blocking", "nonblocking"),
    "overhead": ("blocking", "nonblocking", "delayed"),
    "stream": ("nonblocking",),
    "bistream": ("nonblocking",),
    "doublebuffer": ("nonblocking",),
    "put": ("latency", "bandwidth"),
    "get": ("latency", "bandwidth"),
    "atomic": ("fadd", "cswap"),
    "putnotify": ("ordered", "flush"),
}
MAX_WINDOW = 4096          # --window's largest (core/pattern_params.h)
ATOMIC_BYTES = 8           # an atomic works on one 64-bit word (core/options.c)
MAX_TOTAL_NS = 2 ** 63     # no run measures for longer than an int64 of ns holds (292 years)

NOT_A_RUN = "no run writes that: measure again or restore the file"


def _windowed(pattern: str, variant: str) -> bool:
    """The patterns and variants that take --window (and record it)."""
    return pattern in ("stream", "bistream") or (pattern in ("put", "get") and variant == "bandwidth")


def _check_run_possible(obj: dict[str, Any], where: str) -> None:
    """Refuse a run record no run of versus-run can write: a pattern it does not have, a
    variant its pattern does not have, a window out of its range or on a pattern without one.
    Imported runs carry the pattern of the tool's test and no variant."""
    pattern, variant = obj.get("pattern"), obj.get("variant")
    if pattern not in PATTERN_VARIANTS:
        what = f"unknown pattern {pattern!r}" if pattern else "no pattern"
        raise InputError(f"{where}: {what} in the run record: versus-run measures "
                         f"{', '.join(PATTERN_VARIANTS)}; {NOT_A_RUN}")
    imported = isinstance(obj.get("imported"), dict)
    if imported and variant in (None, ""):
        return
    if variant not in PATTERN_VARIANTS[pattern]:
        raise InputError(f"{where}: pattern {pattern!r} has no variant {variant!r} (its variants: "
                         f"{', '.join(PATTERN_VARIANTS[pattern])}); {NOT_A_RUN}")
    window = (obj.get("pattern_params") or {}).get("window")
    if window is not None and not _windowed(pattern, variant):
        raise InputError(f"{where}: a window in a {pattern}/{variant} run: only stream, bistream and the "
                         f"bandwidth variant of put and get take one; {NOT_A_RUN}")
    if window is None and pattern in ("put", "get") and variant == "bandwidth":
        raise InputError(f"{where}: a {pattern}/bandwidth run without its window: its samples cannot be "
                         f"turned into times per operation; {NOT_A_RUN}")
    if window is not None and window > MAX_WINDOW:
        raise InputError(f"{where}: a window of {window} messages: versus-run's window is at most {MAX_WINDOW}; "
                         f"{NOT_A_RUN}")
    ranks = obj.get("ranks")
    if ranks is not None and ranks < 2:
        raise InputError(f"{where}: a run of {ranks} rank(s): every pattern needs two or more; {NOT_A_RUN}")


def _run_ranks(run: dict[str, Any]) -> int | None:
    """How many ranks the run had: its 'ranks', else the length of its 'hosts'."""
    if _whole(run.get("ranks")):
        return run["ranks"]
    hosts = run.get("hosts")
    return len(hosts) if isinstance(hosts, list) and hosts else None


def _check_pair_ranks(ranks: tuple[int, int] | None, run: dict[str, Any], where: str) -> None:
    if ranks is None:
        return
    n = _run_ranks(run)
    odd = next((x for x in ranks if n is not None and x >= n), None)
    if odd is not None:
        raise InputError(f"{where}: the pair names rank {odd}, and the run had {n} ranks (0 to {n - 1}); "
                         f"{NOT_A_RUN}")
    if ranks[0] == ranks[1]:
        raise InputError(f"{where}: the pair names rank {ranks[0]} twice: a pair is two ranks; {NOT_A_RUN}")


def _check_samples_possible(obj: dict[str, Any], samples: np.ndarray, extra: dict[str, np.ndarray],
                            batch: int, where: str) -> None:
    """Samples no run records: a 0 ns sample (the runner records at least 1 ns), and series that
    add up to more time than 64 bits of ns hold."""
    b = obj.get("bytes")
    if samples.size and not samples.min():
        zeros = int((samples == 0).sum())
        which = "every sample" if zeros == samples.size else f"{zeros} of {samples.size} samples"
        raise InputError(f"{where}: {which} 0 ns at {b} B: versus-run records at least 1 ns a sample; "
                         f"{NOT_A_RUN}")
    for key, series in (("samples_ns", samples), *extra.items()):
        if series.size and float(series.sum(dtype=np.float64)) * batch >= MAX_TOTAL_NS:
            raise InputError(f"{where}: the times of '{key}' at {b} B add up to more than 2^63 ns "
                             f"(292 years); {NOT_A_RUN}")


def _size_record(obj: dict[str, Any], where: str) -> SizeRecord:
    b = obj.get("bytes")
    if not _whole(b, 0, MAX_MEASURED_BYTES):
        raise InputError(f"{where}: size record without a valid 'bytes' (a whole number from 0 to 1 GiB, "
                         f"got {b!r})")
    samples = _int_array(obj.get("samples_ns"), where, "samples_ns")
    if samples.size and samples.min() < 0:
        raise InputError(f"{where}: negative sample in 'samples_ns'")
    _checked(obj, samples, where)
    n = obj.get("iterations")
    if _whole(n) and n != samples.size:
        raise InputError(f"{where}: 'iterations' says {n} samples but 'samples_ns' holds {samples.size}")
    batch = obj.get("batch", 1)
    if not _whole(batch, 1):
        raise InputError(f"{where}: 'batch' must be a positive integer")
    for key in ("warmup", "round", "pass", "iterations"):
        if obj.get(key) is not None and not _whole(obj[key]):
            raise InputError(f"{where}: '{key}' must be a whole number, 0 or more (got {obj[key]!r})")
    if obj.get("elapsed_ns") is not None and not _whole(obj["elapsed_ns"], 0, 2 ** 63):
        raise InputError(f"{where}: 'elapsed_ns' must be a whole number of ns (got {obj['elapsed_ns']!r})")
    extra = {}
    for key, val in obj.items():
        if key.endswith("_ns") and key not in ("samples_ns", "elapsed_ns") and isinstance(val, list):
            extra[key] = _int_array(val, where, key)
            if extra[key].size != samples.size or (extra[key].size and extra[key].min() < 0):
                raise InputError(f"{where}: '{key}' must hold one non-negative time per sample "
                                 f"({extra[key].size} for {samples.size} samples)")
    _check_samples_possible(obj, samples, extra, batch, where)
    position = obj.get("position")
    precision = obj.get("precision_pct")
    valid = obj.get("valid")
    if valid is not None and not isinstance(valid, bool):
        raise InputError(f"{where}: 'valid' must be true or false")
    validation = obj.get("validation")
    if valid is False and not isinstance(validation, dict):
        validation = {}
    return SizeRecord(b, samples, batch, int(obj.get("warmup", 0) or 0),
                      obj.get("elapsed_ns"), extra,
                      int(obj.get("round", 0) or 0), int(position) if isinstance(position, int) else None,
                      int(obj.get("pass", 0) or 0), obj.get("stop") if isinstance(obj.get("stop"), str) else None,
                      float(precision) if isinstance(precision, (int, float)) else None,
                      1, valid, validation if valid is False else None, _pair_of(obj.get("pair"), where),
                      _host_load_of(obj.get("host_load")), _drift_of(obj.get("drift_ns")))


def _drift_of(v) -> float | None:
    """The size record's drift_ns: a positive finite number of ns, else None (not recorded)."""
    if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0:
        return float(v)
    return None


def _host_load_of(h: Any) -> dict | None:
    """A size record's host_load: the finite fractions in [0, 1] it gives, others dropped."""
    if not isinstance(h, dict):
        return None
    out = {k: float(v) for k, v in h.items() if k in ("waited", "others", "steal")
           and isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1}
    return out or None


def _pair_of(p: Any, where: str) -> tuple[int, int] | None:
    if p is None:
        return None
    ranks = p.get("ranks") if isinstance(p, dict) else None
    if not (isinstance(ranks, list) and len(ranks) == 2 and all(isinstance(x, int) and x >= 0 for x in ranks)):
        raise InputError(f"{where}: 'pair' must be an object with 'ranks': [a, b]")
    return (ranks[0], ranks[1])


def _pair_record(obj: dict[str, Any], where: str) -> PairRecord:
    ranks = _pair_of(obj, where)
    b = obj.get("bytes")
    if ranks is None or not _whole(b, 0, MAX_MEASURED_BYTES):
        raise InputError(f"{where}: pair record without valid 'ranks' and 'bytes'")
    samples = _int_array(obj.get("samples_ns"), where, "samples_ns")
    if samples.size == 0 or samples.min() < 0:
        raise InputError(f"{where}: pair record needs non-negative samples")
    _checked(obj, samples, where)
    _check_samples_possible(obj, samples, {}, 1, where)
    hosts = obj.get("hosts") if isinstance(obj.get("hosts"), list) and len(obj.get("hosts")) == 2 else ["?", "?"]
    return PairRecord(ranks, (str(hosts[0]), str(hosts[1])), bool(obj.get("same_host", hosts[0] == hosts[1])),
                      b, samples, int(obj.get("pass", 0) or 0), int(obj.get("round", 0) or 0))


SUMMARY_FIGURES = ("one_way_ns", "bandwidth_MBps")


def _summary_record(obj: dict[str, Any], where: str) -> dict:
    """An imported size: bytes and at least one of one_way_ns, bandwidth_MBps, all finite
    and non-negative; `valid` (true or false) when the tool checked the data it received."""
    b = obj.get("bytes")
    if not _whole(b, 0, MAX_IMPORTED_BYTES):
        raise InputError(f"{where}: summary record without a valid 'bytes' (a whole number up to 1 TiB)")
    out = {"bytes": b}
    for k, v in obj.items():
        if k in ("record", "bytes", "statistic", SEAL_KEY):
            continue
        if k == "valid":          # the tool's own check of the data received (OSU's --validation)
            if not isinstance(v, bool):
                raise InputError(f"{where}: summary 'valid' must be true or false")
            out[k] = v
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise InputError(f"{where}: summary figure {k!r} must be a finite non-negative number")
        out[k] = float(v)
    if not any(k in out for k in SUMMARY_FIGURES):
        raise InputError(f"{where}: summary record with neither 'one_way_ns' nor 'bandwidth_MBps'")
    return out


def split_pairs(run: Run) -> list[Run]:
    """A run of every pair at once as one run per pair (the size records of one pair
    each), labelled with the pair; any other run as itself."""
    pairs = sorted({s.pair for s in run.sizes if s.pair is not None})
    if not pairs:
        return [run]
    out = []
    for p in pairs:
        rec = dict(run.record, pair_ranks=list(p))
        out.append(Run(run.source, rec, [s for s in run.sizes if s.pair == p], run.end, list(run.warnings),
                       run.config_name, [], run.aggregates))
    return out


MAX_INPUT_BYTES = 8 << 30   # a results file of ten thousand sizes is a few hundred MB


def read_input(path: str | Path, limit: int = MAX_INPUT_BYTES, errors: str = "strict") -> str:
    """The text of an input file: a regular file of at most `limit` bytes (a FIFO would block
    for ever, a device such as /dev/zero never ends), UTF-8.  InputError otherwise."""
    import stat
    name = str(path)
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as ex:
        raise InputError(f"{name}: cannot read: {ex.strerror or ex}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{name}: a directory, not a file")
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{name}: not a regular file (a pipe or a device): save it to a file first")
        if st.st_size > limit:
            raise InputError(f"{name}: {st.st_size} bytes, more than the {limit} an input may have")
        with os.fdopen(fd, "rb") as f:
            fd = -1
            # read what is there (read(n) would reserve n bytes up front), in chunks, at most limit + 1
            parts, got = [], 0
            while got <= limit:
                chunk = f.read(min(1 << 24, limit + 1 - got))
                if not chunk:
                    break
                parts.append(chunk)
                got += len(chunk)
            data = b"".join(parts)
    except OSError as ex:
        raise InputError(f"{name}: cannot read: {ex.strerror or ex}") from None
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > limit:
        raise InputError(f"{name}: more than the {limit} bytes an input may have")
    try:
        return data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as ex:
        raise InputError(f"{name}: not UTF-8 text ({ex.reason})") from None


def _visit_key(obj: dict[str, Any]) -> tuple:
    """What makes a size or pair record one visit of its run: two records with the same key are
    one measurement written twice. Records without a position (older files, pair records) fall
    back to their samples."""
    pair = obj.get("pair") if obj.get("record") == "size" else {"ranks": obj.get("ranks")}
    ident = [obj.get("record"), obj.get("bytes"), obj.get("pass"), obj.get("round"), obj.get("slot"),
             json.dumps(pair, sort_keys=True, default=str)]
    if obj.get("position") is None:
        ident.append(json.dumps(obj.get("samples_ns"), default=str))
    else:
        ident.append(obj.get("position"))
    return tuple(map(str, ident))


def _check_same_run(obj: dict[str, Any], cur: Run, tagged: dict[int, bool], where: str) -> None:
    """A line after a run record is of that run: it carries the run's run_id (what versus-run
    writes now), or, in files of earlier versions, no line of the run carries one."""
    mine = cur.record.get("run_id")
    rid = obj.get("run_id")
    if rid is not None and rid != mine:
        raise InputError(f"{where}: a line of another run (run_id {_quoted(rid)}; this run's is {_quoted(mine)}): "
                         "lines were put together from several results files; give each run's file as it "
                         "was written, or measure again")
    was = tagged.get(id(cur))
    if was is not None and was != (rid is not None):
        raise InputError(f"{where}: the line {'carries' if rid is not None else 'lacks'} the run_id its run's other "
                         f"lines {'lack' if rid is not None else 'carry'}: a line of another run or of an older "
                         "file was put in; give each run's file as it was written, or measure again")


def _quoted(v: Any, width: int = 60) -> str:
    t = json.dumps(v, ensure_ascii=True, default=str)
    return t if len(t) <= width else t[:width - 3] + "..."


def _check_position(pos: Any, last: int | None, kind: str, where: str) -> int:
    """Visits are written in their order: a visit's position is the last one's or the next.
    A gap is a visit removed, a step back a visit put in from elsewhere."""
    if not _whole(pos):
        raise InputError(f"{where}: 'position' must be a whole number, 0 or more (got {pos!r})")
    want = (0,) if last is None else (last, last + 1)
    if pos not in want:
        said = "the first visit" if last is None else f"the visit after position {last}"
        raise InputError(f"{where}: a {kind} record at position {pos} where {said} belongs: a line was removed, "
                         "moved or put in from another file; give the run's file as it was written, or measure again")
    return pos


def _check_end_count(run: Run | None, counted: int, where: str) -> None:
    """The end record's sizes_completed is the number of size (visit), pair and summary
    records the run wrote before it."""
    if run is None or run.end is None:
        return
    said = run.end.get("sizes_completed")
    if said is None:
        return
    if not _whole(said):
        raise InputError(f"{where}: 'sizes_completed' must be a whole number, 0 or more (got {said!r})")
    if said != counted:
        what = "pair" if run.pairs else "summary" if run.summaries else "size"
        raise InputError(f"{where}: the end record counts {said} {what} records but the file holds {counted} of "
                         f"this run: {'a line was removed' if counted < said else 'lines were added'}; give the "
                         "run's file as it was written, or measure again")


def load_file(path: str | Path) -> list[Run]:
    """Read one JSONL result file; return its runs (normally exactly one)."""
    path = Path(path)
    name = str(path)
    text = read_input(path)
    lines = text.split("\n")
    truncated_tail = not text.endswith("\n")
    runs: list[Run] = []
    cur: Run | None = None
    seen: dict[tuple, int] = {}
    # this run's records its end record counts, the last visit's position, the end record's line
    counted, last_position, end_at = 0, None, None
    lines_tagged: dict[int, bool] = {}     # per run: whether its lines carry its run_id
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
        except RecursionError:
            raise InputError(f"{where}: malformed line: nested too deeply to be a versus record") from None
        if not isinstance(obj, dict) or "record" not in obj:
            raise InputError(f"{where}: malformed line: not an object with a 'record' field")
        kind = obj["record"]
        sealed = _seal_state(line)
        if sealed is False:
            raise InputError(f"{where}: the line does not match its {SEAL_KEY}: it was changed or damaged after "
                             "it was written; measure again or restore the file")
        promised = obj.get("integrity") if kind == "run" else (cur.record.get("integrity") if cur else None)
        if sealed is None and promised == SEAL_KEY:
            raise InputError(f"{where}: the line has no {SEAL_KEY} though its run seals every line: it was "
                             "added or edited after the run; measure again or restore the file")
        if kind in ("size", "pair"):
            key = _visit_key(obj)
            if key in seen:
                raise InputError(f"{where}: repeats the {kind} record of line {seen[key]} "
                                 f"({obj.get('bytes')} B, the same visit): a line was copied")
            seen[key] = idx
        if kind == "run":
            _check_end_count(cur, counted, f"{name}:{end_at}")
            seen, counted, last_position, end_at = {}, 0, None, None
            schema = obj.get("schema")
            if schema not in SCHEMA_VERSIONS:
                raise InputError(f"{where}: unknown schema version {schema!r} "
                                 f"(this reader knows {', '.join(map(str, SCHEMA_VERSIONS))})")
            _check_run_fields(obj, where)
            _check_run_possible(obj, where)
            cur = Run(name, obj, [], None)
            runs.append(cur)
            for w in obj.get("warnings") or []:
                cur.warnings.append(f"{name}: {w}")
            continue
        if cur is None:
            raise InputError(f"{where}: '{kind}' record before any 'run' record")
        if cur.end is not None:
            raise InputError(f"{where}: '{kind}' record after the 'end' record")
        _check_same_run(obj, cur, lines_tagged, where)
        lines_tagged[id(cur)] = "run_id" in obj
        if kind in ("size", "aggregate") and obj.get("position") is not None:
            last_position = _check_position(obj.get("position"), last_position, kind, where)
        if kind == "size":
            rec = _size_record(obj, where)
            _check_pair_ranks(rec.pair, cur.record, where)
            if cur.pattern == "atomic" and rec.bytes != ATOMIC_BYTES:
                raise InputError(f"{where}: a {rec.bytes} B atomic: the atomic pattern works on one 64-bit word "
                                 f"({ATOMIC_BYTES} B) and versus-run measures no other size; {NOT_A_RUN}")
            if rec.pair is None or rec.pair[0] == 0:
                counted += 1     # the end record counts a visit once, however many pairs measured it
            if rec.samples_ns.size == 0:
                cur.warnings.append(f"{where}: size {rec.bytes} has no samples; ignored")
            else:
                cur.sizes.append(rec)
        elif kind == "pair":
            pr = _pair_record(obj, where)
            _check_pair_ranks(pr.ranks, cur.record, where)
            cur.pairs.append(pr)
            counted += 1
        elif kind == "summary":
            if cur.imported is None:
                raise InputError(f"{where}: a 'summary' record in a measured run (only imported runs carry them)")
            cur.summaries.append(_summary_record(obj, where))
            counted += 1
        elif kind == "aggregate":
            cur.aggregates.append(obj)
        elif kind == "end":
            cur.end = obj
            end_at = idx
            if obj.get("status") != "ok":
                msg = obj.get("message") or ""
                cur.warnings.append(f"{name}: run ended with status '{obj.get('status')}'"
                                    + (f": {msg}" if msg else ""))
        else:
            cur.warnings.append(f"{where}: unknown record type {kind!r}; ignored")
    if not runs:
        raise InputError(f"{name}: no 'run' record (empty or not a versus result file)")
    _check_end_count(cur, counted, f"{name}:{end_at}")
    runs = [p for r in runs for p in split_pairs(r)]
    for r in runs:
        if r.end is None:
            r.warnings.append(f"{name}: no 'end' record: the run was cut short; marked incomplete")
        w = _too_fast_for_two_hosts(r)
        if w:
            r.warnings.append(f"{name}: {w}")
    return runs


# No network between two hosts answers a ping-pong in under a microsecond one way (the best
# RDMA fabrics take 1-2 us; shared memory on one machine takes 0.1-0.5 us).
TWO_HOSTS_FLOOR_NS = 1000.0


def _too_fast_for_two_hosts(r: Run) -> str | None:
    hosts = r.record.get("hosts") or []
    if len(hosts) < 2 or hosts[0] == hosts[1] or r.record.get("pattern") != "pingpong" or not r.sizes:
        return None
    small = min(r.sizes, key=lambda s: s.bytes)
    one_way = float(np.median(small.samples_ns)) / 2
    if one_way >= TWO_HOSTS_FLOOR_NS or (r.record.get("warnings") or []):
        return None  # (the runner already said why)
    return (f"ranks 0 and 1 ran on different hosts ({hosts[0]}, {hosts[1]}) but {small.bytes} B took "
            f"{one_way:.0f} ns one way, faster than any network: the library most likely used shared "
            f"memory between them (network namespaces on one machine share it)")


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


# Variables in the run record's `env` that wire one launch (job ids, rendezvous
# addresses, inherited descriptors, the runner's own paths), not a setting of the
# configuration: they differ from launch to launch.  Those a library's launcher
# sets are not recorded at all: the module declares them (env_wiring, `versus-run
# --list --json`) and the runner leaves them out of the record.
LAUNCH_ENV_PREFIXES = ("VERSUS_",)


def _placement_key(p) -> str:
    """The placement as a factor: the policy (or --cpus list) asked for and the
    relation of ranks 0 and 1 it gave.  Not the per-launch facts: host names
    (another node pair under srun), pids, the masks seen before and during the run."""
    if not isinstance(p, dict):
        return json.dumps(p)
    return json.dumps([p.get("policy"), p.get("cpus_arg"), p.get("relation")])


def configuration_key(run: Run) -> tuple:
    """The one definition of a configuration, used wherever launches are pooled
    (`versus compare`, `versus summary`'s launch spread, the report's grouping):
    the campaign's name for it (when a manifest gave one), the transport, its
    provider and options, the library settings of the environment, the pattern,
    its variant and parameters, the number of ranks and of distinct hosts (same
    box or two boxes), and the placement policy with the relation it gave.
    Launch-level facts are left out: run_id, launch_id, host names, pids, cores
    seen, and the environment variables that wire one launch."""
    t = run.transport
    rec = run.record
    env = {k: v for k, v in (rec.get("env") or {}).items()
           if not str(k).startswith(LAUNCH_ENV_PREFIXES)}
    hosts = rec.get("hosts") or []
    return (run.config_name, t.get("name"), t.get("provider") or "",
            json.dumps(t.get("options") or {}, sort_keys=True, default=str),
            json.dumps(env, sort_keys=True, default=str), run.pattern, run.variant,
            json.dumps(rec.get("pattern_params") or {}, sort_keys=True, default=str),
            rec.get("ranks"), len(set(map(str, hosts))), _placement_key(rec.get("placement")),
            json.dumps(rec.get("pair_ranks")))


def describe_difference(a: Run, b: Run) -> str:
    """Which parts of the configuration key two runs differ in (for messages)."""
    names = ("configuration name", "transport", "provider", "options", "environment", "pattern",
             "variant", "pattern parameters", "ranks", "number of hosts", "placement", "pair")
    ka, kb = configuration_key(a), configuration_key(b)
    return ", ".join(n for n, x, y in zip(names, ka, kb) if x != y)


def check_same_configuration(runs: list[Run]) -> None:
    """Refuse launches pooled together that are not of one configuration."""
    keys = {r.config_key() for r in runs}
    if len(keys) > 1:
        which = "; ".join(f"{r.source}: {r.label}" for r in runs)
        odd = next(r for r in runs if r.config_key() != runs[0].config_key())
        raise InputError(f"runs pooled as launches of one configuration differ "
                         f"in {describe_difference(runs[0], odd)} ({which})")


def pool_launches(runs: list[Run]) -> Run:
    """One configuration's launches as one run (their size records together; the first launch's
    record, the first status that is not ok): what the report analyses as the configuration,
    its launches' SampleSet beside it (analysis.analyse_run)."""
    if len(runs) == 1:
        return runs[0]
    first = runs[0]
    sizes: list[SizeRecord] = [s for r in runs for s in r.sizes]
    end = next((r.end for r in runs if r.status != "ok"), first.end)
    return Run(first.source, first.record, sizes, end, [w for r in runs for w in r.warnings],
               first.config_name)


def group_launches(runs: list[Run]) -> list[list[Run]]:
    """Group runs by configuration, keeping first-seen order."""
    groups: dict[tuple, list[Run]] = {}
    for r in runs:
        groups.setdefault(r.config_key(), []).append(r)
    return list(groups.values())
