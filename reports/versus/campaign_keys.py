"""The keys of a campaign file, as one table, and the loader that reads a file through it.

Every key a campaign may hold is declared once below (TOP for the file's own keys, RUN for those of a
`[[run]]` and of `[defaults]`): the reader that checks a value of its kind and gives it as the run
needs it, or None when the entry does not hold the key.  load_campaign reads every key of every entry
through the table, in the table's order (the first bad value is the one reported), then joins what
was read into runs: variants and launches expand into one RunSpec per runner call, quick_sizes and
quick_extra_args replace sizes and extra_args at reduced repetitions.  A key left out stays out of
the runner's command line, except pattern, sizes and the variant of pingpong and overhead, which
the campaign has always spelled out (RunSpec's defaults: a resume compares command lines, so
leaving them to the runner would measure every earlier result again).
"""
from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .launches import CLAIM_LAUNCHES
from .load import InputError, read_input
from . import modules as vsmod

ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_SECONDS = 7 * 24 * 3600


@dataclass
class RunSpec:
    """One runner call: one configuration, one launch."""
    id: str                   # unique within the campaign, names the result file
    config_id: str            # the [[run]] id (+ variant) shared by its launches
    transport: str
    pattern: str = "pingpong"
    variant: str = "blocking"
    options: dict = field(default_factory=dict)
    env: dict = field(default_factory=dict)
    sizes: str = "0:4M"
    iterations: int | None = None
    iterations_large: int | None = None
    warmup: int | None = None
    warmup_large: int | None = None
    batch: str | None = None
    placement: str | None = None
    cpus: str | None = None
    launcher: str = "auto"
    launch_id: int = 0
    np: int = 2
    extra_args: list = field(default_factory=list)
    timeout: float = 300.0
    nodes: int | None = None          # spread the ranks over this many nodes (None: the launcher decides)
    hosts: list = field(default_factory=list)          # mpirun/mpiexec: the hosts to start on
    launcher_args: list = field(default_factory=list)  # given to the launcher as they are

    @property
    def filename(self) -> str:
        return f"{self.id}.jsonl"


@dataclass
class Campaign:
    path: str
    title: str
    study: str | None
    runs: list[RunSpec]
    compare: list[dict]
    description: str = ""


# ---------------------------------------------------------------- values, by kind
#
# A reader takes (entry, key, where) and returns the value the run uses, or None when the entry
# does not hold the key; it raises InputError naming the key for a value of another kind.

def _show(v, width: int = 60) -> str:
    """A value as the config spelled it, on one line and cut short: for messages."""
    try:
        text = repr(v)
    except RecursionError:
        text = "a value nested too deeply"
    return text if len(text) <= width else text[:width - 3] + "..."


def _word(v, absent: str = "(not given)") -> str:
    if v is None:
        return absent
    if isinstance(v, dict):
        return ",".join(f"{k}={x}" for k, x in sorted(v.items())) or "(none)"
    if isinstance(v, list):
        return " ".join(map(str, v)) or "(none)"
    if v is True:
        return "given"
    text = str(v)
    return text if text and text.isprintable() and " " not in text and len(text) <= 40 else _show(text, 40)


def text(example: str) -> Callable:
    """A string (versus-run takes it as one argument: a list or a number would reach it as
    Python's spelling of one and fail at run time with the reason buried in campaign.json)."""
    def read(e: dict, k: str, where: str):
        v = e.get(k)
        if v is not None and not isinstance(v, str):
            raise InputError(f"{where}: {k} must be a string, e.g. {k} = {example} (got {_show(v)})")
        return v
    return read


def whole(least: int = 0) -> Callable:
    """A whole number >= least (a TOML integer, not a boolean)."""
    def read(e: dict, k: str, where: str):
        v = e.get(k)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < least):
            raise InputError(f"{where}: {k} must be a whole number, at least {least} (got {v!r})")
        return v
    return read


def count(e: dict, k: str, where: str):
    """A repetition count: a whole number, at least 1 (0 said in words of its own)."""
    v = whole(0)(e, k, where)
    if v == 0:
        raise InputError(f"{where}: {k} must be at least 1 (got 0)")
    return v


def seconds(e: dict, k: str, where: str):
    """A number of seconds above 0, at most a week."""
    v = e.get(k)
    if v is None:
        return None
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or not 0 < v <= MAX_SECONDS:
        raise InputError(f"{where}: {k} must be a number of seconds above 0 and at most {MAX_SECONDS} "
                         f"(a week; got {v!r})")
    return float(v)


def fraction(e: dict, k: str, where: str):
    """A number above 0 and at most 1."""
    v = e.get(k)
    if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 < v <= 1):
        raise InputError(f"{where}: {k} must be a number above 0 and at most 1 (got {v!r})")
    return None if v is None else float(v)


def table(e: dict, k: str, where: str):
    """A table of name = text (numbers and booleans spelled as the runner reads them)."""
    obj = e.get(k)
    if obj is None:
        return None
    example = 'env = { UCX_TLS = "tcp" }' if k == "env" else 'options = { mode = "block" }'
    if not isinstance(obj, dict):
        raise InputError(f"{where}: {k} must be a table of name = value, e.g. {example} (got {_show(obj)})")
    out = {}
    for name, v in obj.items():
        if k == "env" and not ENV_NAME_RE.match(name):
            raise InputError(f"{where}: env name {_show(name)} is not a variable name (letters, digits and _, "
                             "not starting with a digit)")
        if k != "env" and (not name or "=" in name or "\0" in name):
            raise InputError(f"{where}: {k} name {_show(name)} cannot be given as --transport-opt NAME=VALUE "
                             "(empty, or holds = or a NUL character)")
        if isinstance(v, bool):
            v = str(v).lower()
        elif isinstance(v, int) or (isinstance(v, float) and math.isfinite(v)):
            v = str(v)
        elif not isinstance(v, str):
            raise InputError(f"{where}: {k}.{name} must be a string, a number or true/false (got {_show(v)})")
        out[name] = v
    return out


def arguments(example: str = "") -> Callable:
    """A list of command-line arguments (strings; numbers are spelled as given)."""
    def read(e: dict, k: str, where: str):
        v = e.get(k)
        if v is None:
            return None
        if not isinstance(v, list):
            raise InputError(f"{where}: {k} must be a list of strings{example}")
        return v
    return read


def _arguments_whole(v: list, k: str, where: str) -> list[str]:
    """The items of an arguments list, each one a string (checked after every key's kind)."""
    if not all(isinstance(a, (str, int, float)) and not isinstance(a, bool) for a in v):
        raise InputError(f"{where}: {k} must be a list of strings")
    return [str(a) for a in v]


def hosts(e: dict, k: str, where: str):
    """Host names: a list, or one string "a,b"."""
    v = e.get(k)
    if v is None:
        return None
    v = v.split(",") if isinstance(v, str) else v
    if not isinstance(v, list) or not all(isinstance(h, str) and h.strip() for h in v):
        raise InputError(f"{where}: hosts must be a list of host names or one string \"a,b\"")
    return [h.strip() for h in v]


def ranks(e: dict, k: str, where: str):
    v = e.get(k)
    if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
        raise InputError(f"{where}: np must be a whole number of ranks, at least 1 (got {v!r})")
    return v


def nodes(e: dict, k: str, where: str):
    """A whole number of nodes that divides np (the ranks are spread evenly; np is read before)."""
    v, np_ = e.get(k), e.get("np", RunSpec.np)
    if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1 or np_ % v):
        raise InputError(f"{where}: nodes must be a whole number that divides np = {np_} "
                         f"(got {v!r}): the ranks are spread evenly")
    return v


def batch(e: dict, k: str, where: str):
    b = e.get(k)
    if b is None:
        return None
    if not ((isinstance(b, int) and not isinstance(b, bool) and b >= 1) or b == "auto" or
            (isinstance(b, str) and b.isascii() and b.isdigit() and int(b) >= 1)):
        raise InputError(f"{where}: batch must be a whole number, at least 1, or \"auto\" (got {_show(b)})")
    return str(b)


def launcher(e: dict, k: str, where: str):
    v = e.get(k)
    if v is not None and v not in vsmod.LAUNCHERS:
        raise InputError(f"{where}: launcher {v!r} is not one of {', '.join(vsmod.LAUNCHERS)}")
    return v


def variants(e: dict, k: str, where: str):
    """Variant names: a list, or one name (variants = [...] gives one run per variant); left out
    when empty (then variant says which)."""
    v = e.get(k)
    if not v:
        return None
    v = [v] if isinstance(v, str) else v
    if not isinstance(v, list):
        raise InputError(f"{where}: variants must be a list of variant names, e.g. variants = "
                         f"[\"blocking\", \"nonblocking\"] (got {_show(v)})")
    return v                    # each a name: _variants_of


def required_text(example: str) -> Callable:
    def read(e: dict, k: str, where: str):
        if not e.get(k):
            raise InputError(f"{where}: '{k}' is required")
        return text(example)(e, k, where)
    return read


def anything(e: dict, k: str, where: str):
    return e.get(k)


# ---------------------------------------------------------------- the keys

# a [[run]] (and [defaults], which holds every one of them but id): name -> reader
RUN: dict[str, Callable] = {
    "transport": required_text('"shm"'),
    "id": text('"ucx-tcp"'),
    "label": text('"UCX over TCP"'),
    "variants": variants,
    "variant": anything,        # read with variants: _variants_of
    "launches": whole(1),
    "iterations": count,
    "iterations_large": count,
    "warmup": whole(0),
    "warmup_large": whole(0),
    "timeout": seconds,
    "launcher": launcher,
    "extra_args": arguments(),
    "quick_extra_args": arguments(),
    "launcher_args": arguments(" (e.g. [\"--mca\", \"btl\", \"self,tcp\"])"),
    "hosts": hosts,
    "np": ranks,
    "nodes": nodes,
    "sizes": text("\"0:4M\" or \"8,64,1K\""),
    "quick_sizes": text("\"8,1K,64K\""),
    "cpus": text("\"0,1\""),
    "placement": text("\"auto\""),
    "pattern": text("\"pingpong\""),
    "batch": batch,
    "options": table,
    "env": table,
}
RUN_KEYS = set(RUN)
# the file's own keys: name -> reader (defaults, run and compare are read by load_campaign itself)
TOP: dict[str, Callable] = {
    "title": text('"Local comparison"'),
    "description": text('"..."'),
    "study": text('"seed000"'),
    "scale": fraction,
    "timeout": seconds,
    "launches": whole(1),
    "defaults": anything,
    "run": anything,
    "compare": anything,
}
TOP_KEYS = set(TOP)


def _check_keys(obj: dict, allowed: set, where: str) -> None:
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise InputError(f"{where}: unknown key(s) {', '.join(unknown)} "
                         f"(known: {', '.join(sorted(allowed))})")


def _no_nul(v, where: str, key: str) -> None:
    """No NUL character in a value that reaches a command line or an environment: the operating
    system cannot carry one (the run would end in an error at its start, not a word)."""
    if isinstance(v, str):
        if "\0" in v:
            raise InputError(f"{where}: {key} holds a NUL character, which no command line or environment "
                             "can carry")
    elif isinstance(v, dict):
        for k, x in v.items():
            _no_nul(k, where, key)
            _no_nul(x, where, f"{key}.{k}")
    elif isinstance(v, list):
        for x in v:
            _no_nul(x, where, key)


# ---------------------------------------------------------------- rules that join two keys

def _given(got: dict, k: str):
    """What the entry gives for k, else RunSpec's default (the campaign's defaults are there alone)."""
    return RunSpec.__dataclass_fields__[k].default if got[k] is None else got[k]


def _variants_of(got: dict, where: str) -> list[str]:
    """The variants a [[run]] names (variants, else variant); without either, the one the campaign
    has always asked for."""
    if got["variants"]:
        if not all(isinstance(x, str) for x in got["variants"]):
            raise InputError(f"{where}: variants must be a list of variant names, e.g. variants = "
                             f"[\"blocking\", \"nonblocking\"] (got {_show(got['variants'])})")
        return got["variants"]
    v = got["variant"]
    if v is None:
        v = "blocking" if _given(got, "pattern") in ("pingpong", "overhead") else ""
    if not isinstance(v, str):
        raise InputError(f"{where}: variant must be a name, e.g. variant = \"blocking\" (got {_show(v)})")
    return [v]


def _scaled(n, scale: float, floor: int):
    if n is None:
        return None
    return max(floor, int(math.ceil(int(n) * scale))) if scale < 1 else int(n)


# ---------------------------------------------------------------- the loader

def _read_toml(path: Path) -> dict:
    try:
        try:
            source = read_input(path, limit=16 << 20)
        except InputError as ex:
            if "not UTF-8" in str(ex):
                raise InputError(f"{path}: not a text file (a campaign is TOML, UTF-8)") from None
            raise
        return tomllib.loads(source)
    except RecursionError:
        raise InputError(f"{path}: nested too deeply to be a campaign") from None
    except OSError as ex:
        raise InputError(f"{path}: cannot read: {ex.strerror or ex}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text file (a campaign is TOML, UTF-8)") from None
    except tomllib.TOMLDecodeError as ex:
        raise InputError(f"{path}: not valid TOML: {ex}") from None


def _runs_of(entry: dict, defaults: dict, default_maps: dict, top: dict, scale: float,
             where: str) -> list[RunSpec]:
    """One [[run]] entry as its runner calls (variants x launches), in file order."""
    _check_keys(entry, RUN_KEYS, where)
    e = {**defaults, **entry}
    e["env"] = {**default_maps["env"], **(table(entry, "env", where) or {})}
    e["options"] = {**default_maps["options"], **(table(entry, "options", where) or {})}
    for k, x in e.items():
        _no_nul(x, where, k)
    got = {k: read(e, k, where) for k, read in RUN.items()}
    launches = got["launches"] or top["launches"]
    if scale < 1 and launches > CLAIM_LAUNCHES:
        launches = max(CLAIM_LAUNCHES, math.ceil(launches * scale))
    # quick_extra_args replaces extra_args when repetitions are reduced, as quick_sizes does sizes (an
    # adaptive sweep refines noise at 3 samples a size: its quick form asks for fewer sizes)
    vs = _variants_of(got, where)
    xkey = "quick_extra_args" if scale < 1 and "quick_extra_args" in e else "extra_args"
    extra = _arguments_whole(got[xkey] or [], xkey, where)
    launcher_args = _arguments_whole(got["launcher_args"] or [], "launcher_args", where)
    rid = got["id"] or got["transport"]
    if not ID_RE.match(rid):
        raise InputError(f"{where}: id {rid!r} may hold only letters, digits and _.+- (it names the result file)")
    sizes = got["quick_sizes"] if scale < 1 and got["quick_sizes"] else _given(got, "sizes")
    out = []
    for var in vs:
        cid = rid if len(vs) == 1 or not var else f"{rid}-{var}"
        for k in range(launches):
            out.append(RunSpec(
                id=cid if launches == 1 else f"{cid}.L{k}", config_id=cid, transport=got["transport"],
                pattern=_given(got, "pattern"), variant=var,
                options=dict(e["options"]), env=dict(e["env"]), sizes=sizes,
                iterations=_scaled(got["iterations"], scale, 5),
                iterations_large=_scaled(got["iterations_large"], scale, 3),
                warmup=_scaled(got["warmup"], scale, 2),
                warmup_large=_scaled(got["warmup_large"], scale, 1),
                batch=got["batch"], placement=got["placement"], cpus=got["cpus"],
                launcher=_given(got, "launcher"), launch_id=k, np=_given(got, "np"),
                extra_args=extra, nodes=got["nodes"], hosts=got["hosts"] or [],
                launcher_args=launcher_args, timeout=got["timeout"] or top["timeout"]))
    return out


def load_campaign(path: str | Path, scale: float = 1.0) -> Campaign:
    """Parse and expand a campaign file; scale < 1 reduces iterations and uses quick_sizes."""
    path = Path(path)
    doc = _read_toml(path)
    _check_keys(doc, TOP_KEYS, str(path))
    top = {k: read(doc, k, str(path)) for k, read in TOP.items()}
    scale = (top["scale"] or 1.0) * scale
    top["timeout"] = top["timeout"] or RunSpec.timeout
    top["launches"] = top["launches"] or CLAIM_LAUNCHES
    defaults = doc.get("defaults", {})
    if not isinstance(defaults, dict):
        raise InputError(f"{path}: [defaults] must be a table")
    _check_keys(defaults, RUN_KEYS - {"id"}, f"{path} [defaults]")
    default_maps = {k: table(defaults, k, f"{path} [defaults]") or {} for k in ("env", "options")}
    entries = doc.get("run", [])
    if not isinstance(entries, list) or not entries:
        raise InputError(f"{path}: no [[run]] entries")
    runs: list[RunSpec] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        where = f"{path} [[run]] #{i + 1}"
        if not isinstance(entry, dict):
            raise InputError(f"{where}: each [[run]] must be a table")
        for spec in _runs_of(entry, defaults, default_maps, top, scale, where):
            if spec.id in seen:
                raise InputError(f"{where}: run id {spec.id!r} appears twice")
            seen.add(spec.id)
            runs.append(spec)
    runs = interleave(runs)
    return Campaign(str(path), str(doc.get("title", path.stem)), doc.get("study"), runs,
                    _compare_of(doc, path, sorted({r.config_id for r in runs})),
                    str(doc.get("description", "")))


def _compare_of(doc: dict, path: Path, ids: list[str]) -> list[dict]:
    compare = doc.get("compare", [])
    if not isinstance(compare, list):
        raise InputError(f"{path}: [[compare]] must be a list of tables")
    for c in compare:
        if not isinstance(c, dict) or not {"a", "b"} <= set(c):
            raise InputError(f"{path}: each [[compare]] needs a = \"run id\" and b = \"run id\"")
        for side in ("a", "b"):
            if str(c[side]) not in ids:
                raise InputError(f"{path}: [[compare]] {side} = {c[side]!r} is no run of this campaign "
                                 f"(the runs: {', '.join(ids)})")
    return [{"a": str(c["a"]), "b": str(c["b"])} for c in compare]


def interleave(runs: list[RunSpec]) -> list[RunSpec]:
    """Launch k of every configuration before launch k + 1 of any (file order kept within a round)."""
    return sorted(runs, key=lambda r: r.launch_id)       # stable: configurations stay in file order
