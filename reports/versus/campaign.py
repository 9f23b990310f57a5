"""Campaigns: a TOML file listing runs, executed one after another through the
right launcher, each into its own JSON Lines file, with a manifest that
records what happened to every run (ok, failed, timeout, skipped, resumed).

Config layout (docs/reports.md has the full reference):

    title = "..."; study = "seed000"; timeout = 300; launches = 3
    [defaults]   pattern, variants, sizes, quick_sizes, iterations, warmup, placement,
                 launcher, launches, extra_args, quick_extra_args, env, options
    [[run]]      id, transport, options = {k = v}, env = {K = V}, and any default key
    [[compare]]  a = "run id", b = "run id"

A `[[run]]` with `variants = [...]` expands into one run per variant, id
`<id>-<variant>`; `launches = N` gives N files `<id>.L<k>.jsonl` (3 by default:
the launch is the unit of a claim, launches.py).  Launches are interleaved across
configurations: every configuration's first launch, then every second one, ...,
so that a slow spell of the host falls on all of them alike (mpptest's advice).

A rerun resumes: a complete results file is kept when its run record shows the configuration asked
for now; one that measured another is moved to superseded/ (never deleted) and measured again, with
a line saying which part changed.  The runner dies with the campaign, whatever kills it
(_death_signal), and the manifest is written whole or not at all.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .launches import CLAIM_LAUNCHES
from .load import InputError, output_dir, read_input, write_atomically
from .modules import find_runner
from . import modules as vsmod
from .eta import Estimator, plan_of, read_costs
from .progress import Progress, _fmt_s

SKIP_EXIT = 77
RUN_KEYS = {"id", "transport", "options", "env", "pattern", "variant", "variants", "sizes",
            "quick_sizes", "quick_extra_args", "iterations", "iterations_large", "warmup", "warmup_large", "placement",
            "cpus", "launcher", "launches", "extra_args", "timeout", "np", "batch", "label",
            "nodes", "hosts", "launcher_args"}
TOP_KEYS = {"title", "description", "study", "timeout", "launches", "defaults", "run", "compare",
            "scale"}
ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
MANIFEST = "campaign.json"


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


def _scaled(n, scale: float, floor: int):
    if n is None:
        return None
    return max(floor, int(math.ceil(int(n) * scale))) if scale < 1 else int(n)


def _whole(obj: dict, key: str, where: str, default=None, least: int = 0):
    """obj[key] as a whole number >= least (TOML integer, not a boolean), or default."""
    v = obj.get(key, default)
    if v is None:
        return None
    if not isinstance(v, int) or isinstance(v, bool) or v < least:
        raise InputError(f"{where}: {key} must be a whole number, at least {least} (got {v!r})")
    return v


def _seconds(obj: dict, key: str, where: str, default: float) -> float:
    """obj[key] as a number of seconds above 0, or default."""
    v = obj.get(key, default)
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or not 0 < v <= MAX_SECONDS:
        raise InputError(f"{where}: {key} must be a number of seconds above 0 and at most {MAX_SECONDS} "
                         f"(a week; got {v!r})")
    return float(v)


MAX_SECONDS = 7 * 24 * 3600


def _check_keys(obj: dict, allowed: set, where: str) -> None:
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise InputError(f"{where}: unknown key(s) {', '.join(unknown)} "
                         f"(known: {', '.join(sorted(allowed))})")


ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _show(v, width: int = 60) -> str:
    """A value as the config spelled it, on one line and cut short: for messages."""
    try:
        text = repr(v)
    except RecursionError:
        text = "a value nested too deeply"
    return text if len(text) <= width else text[:width - 3] + "..."


def _str_map(obj, where: str, key: str) -> dict:
    """obj as a table of name = text (numbers and booleans spelled as the runner reads them); key
    (env or options) names it in the message when it is anything else."""
    if obj is None:
        return {}
    example = 'env = { UCX_TLS = "tcp" }' if key == "env" else 'options = { mode = "block" }'
    if not isinstance(obj, dict):
        raise InputError(f"{where}: {key} must be a table of name = value, e.g. {example} (got {_show(obj)})")
    out = {}
    for k, v in obj.items():
        if key == "env" and not ENV_NAME_RE.match(k):
            raise InputError(f"{where}: env name {_show(k)} is not a variable name (letters, digits and _, "
                             "not starting with a digit)")
        if key != "env" and (not k or "=" in k or "\0" in k):
            raise InputError(f"{where}: {key} name {_show(k)} cannot be given as --transport-opt NAME=VALUE "
                             "(empty, or holds = or a NUL character)")
        if isinstance(v, bool):
            v = str(v).lower()
        elif isinstance(v, int) or (isinstance(v, float) and math.isfinite(v)):
            v = str(v)
        elif not isinstance(v, str):
            raise InputError(f"{where}: {key}.{k} must be a string, a number or true/false (got {_show(v)})")
        out[k] = v
    return out


def _text(obj: dict, key: str, where: str, example: str) -> None:
    """obj[key], when there, must be a string."""
    if key in obj and not isinstance(obj[key], str):
        raise InputError(f"{where}: {key} must be a string, e.g. {key} = {example} (got {_show(obj[key])})")


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


def load_campaign(path: str | Path, scale: float = 1.0) -> Campaign:
    """Parse and expand a campaign file; scale < 1 reduces iterations and uses quick_sizes."""
    path = Path(path)
    try:
        try:
            text = read_input(path, limit=16 << 20)
        except InputError as ex:
            if "not UTF-8" in str(ex):
                raise InputError(f"{path}: not a text file (a campaign is TOML, UTF-8)") from None
            raise
        doc = tomllib.loads(text)
    except RecursionError:
        raise InputError(f"{path}: nested too deeply to be a campaign") from None
    except OSError as ex:
        raise InputError(f"{path}: cannot read: {ex.strerror or ex}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text file (a campaign is TOML, UTF-8)") from None
    except tomllib.TOMLDecodeError as ex:
        raise InputError(f"{path}: not valid TOML: {ex}") from None
    _check_keys(doc, TOP_KEYS, str(path))
    for k, example in (("title", '"Local comparison"'), ("description", '"..."'), ("study", '"seed000"')):
        _text(doc, k, str(path), example)
    own = doc.get("scale", 1.0)
    if not isinstance(own, (int, float)) or isinstance(own, bool) or not 0 < own <= 1:
        raise InputError(f"{path}: scale must be a number above 0 and at most 1 (got {own!r})")
    scale = float(own) * scale
    defaults = doc.get("defaults", {})
    if not isinstance(defaults, dict):
        raise InputError(f"{path}: [defaults] must be a table")
    _check_keys(defaults, RUN_KEYS - {"id", "transport"} | {"transport"}, f"{path} [defaults]")
    default_maps = {k: _str_map(defaults.get(k), f"{path} [defaults]", k) for k in ("env", "options")}
    top_timeout = _seconds(doc, "timeout", str(path), 300)
    top_launches = _whole(doc, "launches", str(path), CLAIM_LAUNCHES, least=1)
    runs: list[RunSpec] = []
    seen: set[str] = set()
    entries = doc.get("run", [])
    if not isinstance(entries, list) or not entries:
        raise InputError(f"{path}: no [[run]] entries")
    for i, entry in enumerate(entries):
        where = f"{path} [[run]] #{i + 1}"
        if not isinstance(entry, dict):
            raise InputError(f"{where}: each [[run]] must be a table")
        _check_keys(entry, RUN_KEYS, where)
        e = {**defaults, **entry}
        e["env"] = {**default_maps["env"], **_str_map(entry.get("env"), where, "env")}
        e["options"] = {**default_maps["options"], **_str_map(entry.get("options"), where, "options")}
        for k, x in e.items():
            _no_nul(x, where, k)
        transport = e.get("transport")
        if not transport:
            raise InputError(f"{where}: 'transport' is required")
        _text(e, "id", where, '"ucx-tcp"')
        _text(e, "label", where, '"UCX over TCP"')
        rid = str(e.get("id") or transport)
        if not ID_RE.match(rid):
            raise InputError(f"{where}: id {rid!r} may hold only letters, digits and _.+- "
                             "(it names the result file)")
        variants = e.get("variants") or [e.get("variant", "blocking" if e.get("pattern", "pingpong")
                                                in ("pingpong", "overhead") else "")]
        if isinstance(variants, str):
            variants = [variants]
        if not isinstance(variants, list):
            raise InputError(f"{where}: variants must be a list of variant names, e.g. variants = "
                             f"[\"blocking\", \"nonblocking\"] (got {_show(variants)})")
        launches = _whole(e, "launches", where, top_launches, least=1)
        counts = {k: _whole(e, k, where) for k in ("iterations", "iterations_large", "warmup", "warmup_large")}
        for k in ("iterations", "iterations_large"):
            if counts[k] == 0:
                raise InputError(f"{where}: {k} must be at least 1 (got 0)")
        timeout = _seconds(e, "timeout", where, top_timeout)
        launcher = e.get("launcher", "auto")
        if launcher not in vsmod.LAUNCHERS:
            raise InputError(f"{where}: launcher {launcher!r} is not one of {', '.join(vsmod.LAUNCHERS)}")
        if scale < 1 and launches > CLAIM_LAUNCHES:
            launches = max(CLAIM_LAUNCHES, math.ceil(launches * scale))
        # quick_extra_args replaces extra_args when repetitions are reduced, as quick_sizes does sizes (an
        # adaptive sweep refines noise at 3 samples a size: its quick form asks for fewer sizes)
        xkey = "quick_extra_args" if scale < 1 and "quick_extra_args" in e else "extra_args"
        extra = e.get(xkey, [])
        if not isinstance(extra, list):
            raise InputError(f"{where}: {xkey} must be a list of strings")
        if "quick_extra_args" in e and not isinstance(e["quick_extra_args"], list):
            raise InputError(f"{where}: quick_extra_args must be a list of strings")
        launcher_args = e.get("launcher_args", [])
        if not isinstance(launcher_args, list):
            raise InputError(f"{where}: launcher_args must be a list of strings (e.g. [\"--mca\", \"btl\", \"self,tcp\"])")
        hosts = e.get("hosts", [])
        hosts = hosts.split(",") if isinstance(hosts, str) else hosts
        if not isinstance(hosts, list) or not all(isinstance(h, str) and h.strip() for h in hosts):
            raise InputError(f"{where}: hosts must be a list of host names or one string \"a,b\"")
        nodes = e.get("nodes")
        np_ = e.get("np", 2)
        if not isinstance(np_, int) or isinstance(np_, bool) or np_ < 1:
            raise InputError(f"{where}: np must be a whole number of ranks, at least 1 (got {np_!r})")
        if nodes is not None and (not isinstance(nodes, int) or isinstance(nodes, bool) or nodes < 1
                                  or np_ % nodes):
            raise InputError(f"{where}: nodes must be a whole number that divides np = {np_} "
                             f"(got {nodes!r}): the ranks are spread evenly")
        # text fields versus-run takes as one argument: a list or a number here would reach it as
        # Python's spelling of one and fail at run time with the reason buried in campaign.json
        for k, example in (("sizes", "\"0:4M\" or \"8,64,1K\""), ("quick_sizes", "\"8,1K,64K\""),
                           ("cpus", "\"0,1\""), ("placement", "\"auto\""), ("pattern", "\"pingpong\""),
                           ("transport", "\"shm\"")):
            if e.get(k) is not None and not isinstance(e[k], str):
                raise InputError(f"{where}: {k} must be a string, e.g. {k} = {example} (got {e[k]!r})")
        b = e.get("batch")
        whole = isinstance(b, int) and not isinstance(b, bool) and b >= 1
        if b is not None and not (whole or b == "auto" or
                                  (isinstance(b, str) and b.isascii() and b.isdigit() and int(b) >= 1)):
            raise InputError(f"{where}: batch must be a whole number, at least 1, or \"auto\" (got {_show(b)})")
        if not all(isinstance(v, str) for v in variants):
            which = "variants" if "variants" in e and e["variants"] else "variant"
            want = ('a list of variant names, e.g. variants = ["blocking", "nonblocking"]' if which == "variants"
                    else 'a name, e.g. variant = "blocking"')
            raise InputError(f"{where}: {which} must be {want} (got {_show(e[which])})")
        for k, v in ((xkey, extra), ("launcher_args", launcher_args)):
            if not all(isinstance(a, (str, int, float)) and not isinstance(a, bool) for a in v):
                raise InputError(f"{where}: {k} must be a list of strings")
        sizes = str(e.get("quick_sizes") if scale < 1 and e.get("quick_sizes") else e.get("sizes", "0:4M"))
        for variant in variants:
            cid = rid if len(variants) == 1 or not variant else f"{rid}-{variant}"
            for k in range(launches):
                full = cid if launches == 1 else f"{cid}.L{k}"
                if full in seen:
                    raise InputError(f"{where}: run id {full!r} appears twice")
                seen.add(full)
                runs.append(RunSpec(
                    id=full, config_id=cid, transport=str(transport),
                    pattern=str(e.get("pattern", "pingpong")), variant=str(variant),
                    options=dict(e["options"]), env=dict(e["env"]), sizes=sizes,
                    iterations=_scaled(counts["iterations"], scale, 5),
                    iterations_large=_scaled(counts["iterations_large"], scale, 3),
                    warmup=_scaled(counts["warmup"], scale, 2),
                    warmup_large=_scaled(counts["warmup_large"], scale, 1),
                    batch=None if e.get("batch") is None else str(e["batch"]),
                    placement=e.get("placement"), cpus=e.get("cpus"),
                    launcher=launcher, launch_id=k, np=np_,
                    extra_args=[str(a) for a in extra], nodes=nodes, hosts=[h.strip() for h in hosts],
                    launcher_args=[str(a) for a in launcher_args],
                    timeout=timeout))
    runs = interleave(runs)
    compare = doc.get("compare", [])
    ids = sorted({r.config_id for r in runs})
    if not isinstance(compare, list):
        raise InputError(f"{path}: [[compare]] must be a list of tables")
    for c in compare:
        if not isinstance(c, dict) or not {"a", "b"} <= set(c):
            raise InputError(f"{path}: each [[compare]] needs a = \"run id\" and b = \"run id\"")
        for side in ("a", "b"):
            if str(c[side]) not in ids:
                raise InputError(f"{path}: [[compare]] {side} = {c[side]!r} is no run of this campaign "
                                 f"(the runs: {', '.join(ids)})")
    return Campaign(str(path), str(doc.get("title", path.stem)), doc.get("study"), runs,
                    [{"a": str(c["a"]), "b": str(c["b"])} for c in compare],
                    str(doc.get("description", "")))


def interleave(runs: list[RunSpec]) -> list[RunSpec]:
    """Launch k of every configuration before launch k + 1 of any (file order kept within a round)."""
    return sorted(runs, key=lambda r: r.launch_id)       # stable: configurations stay in file order


# ---------------------------------------------------------------- the runner

@dataclass
class RunnerInfo:
    path: str
    modules: dict[str, str]      # name -> "yes" or the reason it does not load
    patterns: list[str]
    declared: dict[str, dict] = field(default_factory=dict)  # name -> what the module declares


def probe_runner(path: str) -> RunnerInfo:
    def out(args):
        try:
            p = subprocess.run([path, *args], capture_output=True, text=True, timeout=60,
                               stdin=subprocess.DEVNULL)
            return p.stdout + p.stderr
        except (OSError, subprocess.TimeoutExpired) as ex:
            raise InputError(f"{path} {' '.join(args)}: {ex}") from None
    try:
        declared = vsmod.declared(path)
    except vsmod.ModuleListError as ex:
        raise InputError(str(ex)) from None
    modules = {name: "yes" if m.get("loads") else (m.get("reason") or "does not load")
               for name, m in declared.items()}
    patterns, inside = [], False
    for line in out(["--help"]).splitlines():
        if line.strip() == "Patterns":
            inside = True
            continue
        if inside:
            m = re.match(r"^  (\w[\w-]*)\s", line)
            if m:
                patterns.append(m.group(1))
            elif line and not line.startswith(" "):
                inside = False
    return RunnerInfo(path, modules, patterns, declared)


def choose_launcher(spec: RunSpec, environ: dict, module: dict | None = None) -> str:
    if spec.launcher != "auto":
        return spec.launcher
    return vsmod.default_launcher(module, environ)


def nodes_available(environ: dict, lab: bool = False) -> int:
    """How many nodes the runs of this campaign can spread over: the lab's two boxes, the nodes
    of the Slurm allocation it runs in, else this one."""
    if lab:
        return 2
    for k in ("SLURM_JOB_NUM_NODES", "SLURM_NNODES"):
        try:
            return max(1, int(environ[k]))
        except (KeyError, ValueError):
            pass
    return 1


def build_command(spec: RunSpec, runner: str, out: Path, environ: dict | None = None,
                  declared: dict[str, dict] | None = None, lab: bool = False) -> list[str]:
    """The full argv of one run, launcher included; declared is what the modules say of
    themselves (RunnerInfo.declared).  lab: run it on the boxes of `versus lab` (from box-a;
    runs with nodes > 1 get one box per node, through the lab's remote-shell agent)."""
    environ = os.environ if environ is None else environ
    declared = declared or {}
    args = [runner, "--transport", spec.transport, "--pattern", spec.pattern]
    args += ["--variant", spec.variant] if spec.variant else []
    # the campaign owns its results files: a run it measures again (interrupted, failed) replaces its own
    args += ["--sizes", spec.sizes, "--out", str(out), "--overwrite", "--quiet", "--launch-id", str(spec.launch_id)]
    for k, v in spec.options.items():
        args += ["--transport-opt", f"{k}={v}"]
    for flag, val in (("--iterations", spec.iterations), ("--iterations-large", spec.iterations_large),
                      ("--warmup", spec.warmup), ("--warmup-large", spec.warmup_large),
                      ("--batch", spec.batch), ("--placement", spec.placement), ("--cpus", spec.cpus)):
        if val is not None:
            args += [flag, str(val)]
    args += spec.extra_args
    module = declared.get(spec.transport)
    launcher = choose_launcher(spec, environ, module)
    hosts, largs = spec.hosts, spec.launcher_args
    if lab:
        from . import lab as vslab
    try:
        if lab and (spec.nodes or 1) > 1:
            hosts = hosts or [b.name for b in vslab.BOXES][:spec.nodes]
            largs = vslab.launcher_args(launcher) + largs
            if spec.cpus is None:
                # the boxes share this machine's CPUs: the first rank of each box would take CPU 0
                ncpu = os.cpu_count() or 1
                args += ["--cpus", ",".join(str(i % ncpu) for i in range(spec.np))]
        before, after = vsmod.wrap(launcher, spec.np, module, declared, env_keys=list(spec.env),
                                   nodes=spec.nodes, hosts=hosts, launcher_args=largs)
    except ValueError as ex:
        raise InputError(f"run {spec.id}: {ex}") from None
    if lab:
        return vslab.command("a", before + args + after)
    return before + args + after


# ---------------------------------------------------------------- resume: what was measured
#
# A complete results file is kept on a resume only when it measured the configuration the
# campaign asks for now.  What was measured is read from the file's run record: the runner's
# command line (every argument: transport, options, pattern, variant, sizes, iterations, warm-ups,
# batch, placement, cpus, extra_args), the ranks, the launcher, and the environment variables the
# runner records (VERSUS_ and the module's own prefixes).  What the record cannot show (other
# variables of `env`, nodes, hosts, launcher_args) is read from the manifest of the campaign that
# wrote the file; a part neither states is not compared.

# versus-run's short options as their long names, and those that take a value
_SHORT = {"t": "transport", "o": "transport-opt", "p": "pattern", "V": "variant", "s": "sizes",
          "i": "iterations", "w": "warmup", "b": "batch", "O": "out", "q": "quiet", "v": "verbose",
          "L": "launch", "n": "np", "T": "timeout", "h": "help"}
_SHORT_VALUE = set("topVsiwbOLnT")
# the campaign's bookkeeping (not what is measured), and what is compared as the launcher and ranks
_NOT_COMPARED = {"out", "overwrite", "quiet", "verbose", "launch-id", "launch", "np"}
_ORDER = ["transport", "transport-opt", "pattern", "variant", "sizes"]


def runner_arguments(argv: list) -> dict:
    """A runner command line (its program left out) as {long option name: value}: --transport-opt
    as a table, a flag as True, anything else as given under "arguments"."""
    out: dict = {}
    i = 0
    while i < len(argv):
        tok, i = str(argv[i]), i + 1
        val = True
        if tok.startswith("--") and len(tok) > 2:
            name, eq, v = tok[2:].partition("=")
            if eq:
                val = v
            elif i < len(argv) and not str(argv[i]).startswith("-"):
                val, i = str(argv[i]), i + 1
        elif tok.startswith("-") and len(tok) > 1:
            name = _SHORT.get(tok[1], tok[1:])
            if tok[1] in _SHORT_VALUE:
                if len(tok) > 2:
                    val = tok[2:]
                elif i < len(argv):
                    val, i = str(argv[i]), i + 1
        else:
            out.setdefault("arguments", []).append(tok)
            continue
        if name == "transport-opt":
            k, _, v = str(val).partition("=")
            out.setdefault(name, {})[k] = v
        else:
            out[name] = val
    return out


def asked_configuration(spec: RunSpec, cmd: list[str], runner: str, launcher: str) -> dict:
    """The parts of a run's configuration the campaign asks for (what the manifest keeps)."""
    argv = cmd[cmd.index(runner) + 1:] if runner in cmd else []
    return {"arguments": runner_arguments(argv), "ranks": spec.np, "launcher": launcher,
            "env": dict(spec.env), "nodes": spec.nodes, "hosts": list(spec.hosts),
            "launcher_args": list(spec.launcher_args)}


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


def _recorded(name: str, module: dict | None) -> bool:
    """Whether versus-run writes this environment variable into its run record."""
    module = module or {}
    prefixes = ["VERSUS_"] + [p for p in module.get("env_prefixes") or [] if isinstance(p, str)]
    wiring = [p for p in module.get("env_wiring") or [] if isinstance(p, str)]
    return any(name.startswith(p) for p in prefixes) and not any(name.startswith(p) for p in wiring)


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


def configuration_changes(asked: dict, rec: dict, before: dict | None, module: dict | None,
                          run_env: dict) -> list[str]:
    """What differs between the configuration asked for and the one a results file measured, as
    "part old -> new" (empty when nothing does).  rec: the file's run record; before: its entry
    in the earlier manifest (or None); run_env: the environment the runner is given now."""
    before = before if isinstance(before, dict) else {}
    was = before.get("configuration") if isinstance(before.get("configuration"), dict) else {}
    changes = []
    # the runner's arguments: its own record of its command line, else the earlier manifest's,
    # else (a record of an older runner) the fields the record has
    line = rec.get("command_line")
    only = None
    if isinstance(line, list) and line:
        old_args = runner_arguments(line[1:])
    elif isinstance(was.get("arguments"), dict):
        old_args = was["arguments"]
    else:
        t = rec.get("transport") if isinstance(rec.get("transport"), dict) else {}
        sched = rec.get("schedule") if isinstance(rec.get("schedule"), dict) else {}
        old_args = {k: v for k, v in (("transport", t.get("name")), ("pattern", rec.get("pattern")),
                                      ("variant", rec.get("variant") or None), ("sizes", sched.get("spec")),
                                      ("transport-opt", t.get("options") or None)) if v is not None}
        only = set(old_args) | {"transport-opt"} if "options" in t else set(old_args)
    new_args = asked["arguments"]
    names = (set(old_args) | set(new_args)) - _NOT_COMPARED
    if only is not None:
        names &= only
    for name in sorted(names, key=lambda n: (_ORDER.index(n) if n in _ORDER else len(_ORDER), n)):
        old, new = old_args.get(name), new_args.get(name)
        if name == "transport-opt":
            old, new = old or {}, new or {}
        if old != new:
            label = {"transport-opt": "options"}.get(name, name)
            changes.append(f"{label} {_word(old)} -> {_word(new)}")
    # ranks and launcher: the record's, else the earlier manifest's
    ranks = rec.get("ranks") if isinstance(rec.get("ranks"), int) else was.get("ranks")
    if ranks is not None and ranks != asked["ranks"]:
        changes.append(f"ranks {_word(ranks)} -> {asked['ranks']}")
    launcher = rec.get("launcher", {}).get("name") if isinstance(rec.get("launcher"), dict) else None
    launcher = launcher if isinstance(launcher, str) else was.get("launcher")
    if launcher is not None and launcher != asked["launcher"]:
        changes.append(f"launcher {_word(launcher)} -> {asked['launcher']}")
    # the environment the campaign sets (now, or in the manifest of the file's campaign)
    env_before = before.get("env") if isinstance(before.get("env"), dict) else None
    rec_env = rec.get("env") if isinstance(rec.get("env"), dict) else None
    for name in sorted(set(asked["env"]) | set(env_before or {})):
        if rec_env is not None and _recorded(name, module):
            old, new = rec_env.get(name), run_env.get(name)
        elif env_before is not None:
            old, new = env_before.get(name), asked["env"].get(name)
        else:
            continue
        if old != new:
            changes.append(f"env {name} {_word(old, '(unset)')} -> {_word(new, '(unset)')}")
    # what only the manifest knows
    for part in ("nodes", "hosts", "launcher_args"):
        if part in was and was[part] != asked[part] and not (not was[part] and not asked[part]):
            changes.append(f"{part} {_word(was[part])} -> {_word(asked[part])}")
    return changes


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


# ---------------------------------------------------------------- execution

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


def _tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _stop_group(p: subprocess.Popen) -> None:
    """SIGTERM to the run's process group (the runner writes its end record), SIGKILL after 5 s."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


class Interrupted(Exception):
    """SIGINT or SIGTERM arrived while the campaign ran (signum says which)."""
    def __init__(self, signum: int):
        super().__init__(f"interrupted by signal {signum}")
        self.signum = signum


class ResultsLock:
    """One campaign at a time in a results directory: a lock file holding the owner's pid.  A lock
    whose process is gone is stale and taken over (said on stderr)."""
    def __init__(self, results: Path, stream):
        self.path = results / ".campaign.lock"
        self.stream = stream

    def __enter__(self):
        for _ in range(2):
            if self._take():
                return self
            try:
                pid = int(self.path.read_text(encoding="utf-8").split()[0])
            except (OSError, ValueError, IndexError):
                pid = None
            if pid is not None and _alive(pid):
                raise InputError(f"results directory {self.path.parent}: another campaign (pid {pid}) is "
                                 "running in it; wait for it, stop it, or give another --results") from None
            print(f"versus campaign: removing the stale lock of pid {pid} in {self.path.parent}",
                  file=self.stream)
            self.path.unlink(missing_ok=True)
        raise InputError(f"results directory {self.path.parent}: cannot take its lock {self.path}")

    def _take(self) -> bool:
        """Create the lock with this process's pid already in it (a temporary file linked into
        place, so that no other campaign ever reads it empty and takes it for stale); False when
        there is one."""
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(prefix=".campaign.lock.", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(f"{os.getpid()}\n")
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o644)
            try:
                os.link(tmp, self.path)
            except FileExistsError:
                return False
            except OSError:             # a file system without hard links: create it exclusively
                try:
                    fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
                except FileExistsError:
                    return False
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(f"{os.getpid()}\n")
            return True
        except OSError as ex:
            raise InputError(f"results directory {self.path.parent}: cannot take its lock {self.path.name} "
                             f"({ex.strerror or ex})") from None
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)

    def __exit__(self, *exc):
        self.path.unlink(missing_ok=True)
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def runners_in(results: Path) -> list[tuple[int, list[str]]]:
    """The processes (not this one) that write a results file into results: a command line with
    --out RESULTS/NAME, as the campaign gives every runner (and mpirun passes on to its ranks).
    Empty where there is no /proc to read."""
    want = str(results.resolve())
    found = []
    try:
        pids = [int(d) for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return []
    for pid in pids:
        if pid == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = [a.decode("utf-8", "replace") for a in f.read(1 << 20).split(b"\0")]
        except OSError:
            continue                    # gone meanwhile, or not ours to read
        outs = [argv[i + 1] for i in range(len(argv) - 1) if argv[i] in ("--out", "-O")]
        outs += [a[len("--out="):] for a in argv if a.startswith("--out=")]
        if any(os.path.dirname(os.path.abspath(o)) == want for o in outs if o):
            found.append((pid, argv))
    return found


def refuse_leftovers(results: Path) -> None:
    """Refuse to measure beside runners still writing into this results directory (those of a
    campaign that was killed with SIGKILL before this version, or of a hand-started run)."""
    left = runners_in(results)
    if not left:
        return
    groups = []
    for pid, _ in left:
        with contextlib.suppress(OSError):
            g = os.getpgid(pid)
            if g not in groups:
                groups.append(g)
    pid, argv = left[0]
    what = _word(os.path.basename(argv[0]) if argv else "?")
    out = next((argv[i + 1] for i in range(len(argv) - 1) if argv[i] in ("--out", "-O")), "")
    many = len(left) > 1
    raise InputError(f"results directory {results}: {len(left)} process{'es' if many else ''} of an earlier "
                     f"campaign (or started by hand) still measure{'' if many else 's'} into it (pid {pid}, {what} "
                     f"writing {_word(os.path.basename(out))}); a run beside {'them' if many else 'it'} would measure "
                     f"{'their' if many else 'its'} load too: stop {'them' if many else 'it'} (kill -TERM -- "
                     f"{' '.join(f'-{g}' for g in groups)}) or wait for the end, then run the campaign again")


def _death_signal():
    """For Popen's preexec_fn: the kernel sends the child SIGTERM when the campaign dies, whatever
    kills it, SIGKILL included (Linux's PR_SET_PDEATHSIG; it lasts through exec, so it reaches
    versus-run, mpirun, srun or the lab's ip netns exec as they are).  Their answer to SIGTERM is
    the one to Ctrl-C: versus-run writes its end record and its local launcher ends its ranks
    (SIGKILL after a grace period; each rank also dies with the launcher), mpirun and srun end
    their job's ranks.  None where there is no such call (then only Ctrl-C and SIGTERM stop the
    runner, through the campaign's handler).  The signal comes when the thread that started the
    child ends: the campaign starts its runs from its main thread."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()
    args = [ctypes.c_ulong(1), ctypes.c_ulong(int(signal.SIGTERM))] + [ctypes.c_ulong(0)] * 3   # PR_SET_PDEATHSIG

    def arm():
        prctl(*args)
        if os.getppid() != parent:      # the campaign died before the signal was armed: do not start
            os._exit(1)
    return arm


def execute(spec: RunSpec, cmd: list[str], env: dict, timeout: float) -> dict:
    """Run one command in its own process group (a session of its own, so that Ctrl-C on the
    terminal reaches the campaign alone and the campaign stops the whole group); kill the group on
    timeout; the command gets SIGTERM should the campaign die (_death_signal).  Its output goes to
    unnamed temporary files, not pipes: a runner whose campaign died must not die of SIGPIPE on
    its last words before it has written its end record."""
    t0 = time.monotonic()
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
        try:
            p = subprocess.Popen(cmd, stdout=out_f, stderr=err_f, env=env, stdin=subprocess.DEVNULL,
                                 start_new_session=True, preexec_fn=_death_signal())
        except OSError as ex:
            return {"status": "failed", "rc": None, "duration_s": 0.0,
                    "stderr_tail": f"cannot start {cmd[0]}: {ex.strerror or ex}"}
        try:
            p.wait(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
            _stop_group(p)
        except BaseException:
            # interrupted (Ctrl-C, SIGTERM): the run's whole process group goes with us; the
            # runner writes its end record on SIGTERM, then it gets SIGKILL after 5 s
            _stop_group(p)
            raise
        out, err = _last_words(out_f), _last_words(err_f)
    dur = time.monotonic() - t0
    rc = p.returncode
    if timed_out:
        status = "timeout"
    elif rc == 0:
        status = "ok"
    elif rc == SKIP_EXIT:
        status = "skipped"
    else:
        status = "failed"
    return {"status": status, "rc": rc, "duration_s": round(dur, 3),
            "stderr_tail": _tail((err or "") + ("\n" + out if status != "ok" and out else ""))}


def _last_words(f, limit: int = 64 << 10) -> str:
    """The end of what a run wrote to f (at most limit bytes), as text."""
    try:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - limit))
        return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def run_campaign(camp: Campaign, results: Path, runner: str | None = None,
                 stream=None, environ: dict | None = None, lab: bool = False) -> dict:
    """Execute every run not already complete; write and return the manifest.  A run that asks
    for more nodes than there are (nodes_available) is skipped with the reason; lab: run on the
    boxes of `versus lab`."""
    stream = sys.stderr if stream is None else stream
    environ = dict(os.environ if environ is None else environ)
    environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    output_dir(results, "results directory")
    info = probe_runner(find_runner(runner))
    have_nodes = nodes_available(environ, lab)
    if lab:
        from . import lab as vslab
        if not vslab.status()["up"]:
            raise InputError("--lab: the lab is down: start it with 'versus lab up' (see versus lab up --help)")
    entries = []
    with ResultsLock(results, stream), _signals_raise():
        refuse_leftovers(results)
        try:
            forecast = _run_all(camp, results, info, have_nodes, environ, lab, stream, entries)
        except (KeyboardInterrupt, Interrupted) as ex:
            _write_manifest(results, camp, info, entries)
            raise Interrupted(ex.signum if isinstance(ex, Interrupted) else int(signal.SIGINT)) from None
    return _write_manifest(results, camp, info, entries, forecast)


class _signals_raise:
    """While a campaign runs, SIGTERM (and SIGINT) raise Interrupted in the main thread."""
    def __enter__(self):
        def handler(signum, frame):
            raise Interrupted(signum)
        self.old = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGINT)}
        return self

    def __exit__(self, *exc):
        for sig, h in self.old.items():
            signal.signal(sig, h)
        return False


def _say(stream, text: str) -> None:
    """One line of its own on stderr, past the progress bar on a terminal."""
    tty = bool(getattr(stream, "isatty", lambda: False)())
    stream.write(("\r\033[K" if tty else "") + text + "\n")
    stream.flush()


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


def _run_all(camp, results, info, have_nodes, environ, lab, stream, entries) -> None:
    before = previous_entries(results)
    fc = _Forecast(camp, results, info, have_nodes, before)
    bar = Progress(len(camp.runs), stream, estimate=fc.remaining)
    first = None          # after the first run executed: the forecast of the rest, and when it was made
    for index, spec in enumerate(camp.runs):
        out = results / spec.filename
        entry = {"id": spec.id, "config_id": spec.config_id, "file": spec.filename,
                 "transport": spec.transport, "pattern": spec.pattern, "variant": spec.variant,
                 "options": spec.options, "env": spec.env, "launch_id": spec.launch_id}
        note = _cannot_run(spec, info, have_nodes)
        cmd = None
        if not note:
            try:
                cmd = build_command(spec, info.path, out.resolve(), environ, info.declared, lab)
            except InputError as ex:
                entry.update(status="failed", note=str(ex))
                bar.step(spec.id, "failed", 0.0)
                entries.append(entry)
                continue
            module = info.declared.get(spec.transport)
            entry["configuration"] = asked_configuration(spec, cmd, info.path,
                                                         choose_launcher(spec, environ, module))
        done = False
        if cmd is not None and os.path.lexists(out):
            # the file of an earlier launch of this run: kept when it measured what is asked now
            rec, complete = first_record(out), result_status(out) == "ok"
            changed = (configuration_changes(entry["configuration"], rec, before.get(spec.filename), module,
                                             {**environ, **spec.env}) if rec is not None
                       else None if not complete else [])
            if changed or (complete and rec is None):
                kept = set_aside(results, out)
                why = (f"configuration changed ({'; '.join(changed)})" if changed
                       else f"the run record of {spec.filename} cannot be read")
                _say(stream, f"{spec.id}: {why}; re-measuring, the old results kept as {kept}")
                entry["superseded"] = {"file": kept, "why": why}
            else:
                done = complete
        if note:
            entry.update(status="skipped", note=note)
            bar.step(spec.id, "skipped", 0.0)
        elif done:
            entry.update(status="ok", resumed=True, note="complete result found; not run again")
            bar.step(spec.id, "done before", 0.0)
        else:
            guess = fc.predict(index) if fc.todo[index] else None
            if guess is not None:
                entry["predicted_s"] = round(guess, 3)
            bar.start(spec.id)
            if out.exists():
                out.unlink()
            try:
                res = execute(spec, cmd, {**environ, **spec.env}, spec.timeout)
            except (KeyboardInterrupt, Interrupted) as ex:
                signum = ex.signum if isinstance(ex, Interrupted) else int(signal.SIGINT)
                entry.update(command=cmd, status="interrupted",
                             note=f"stopped by signal {signum} to the campaign; the sizes it finished are in "
                                  "its file, the runs after it were not started")
                entries.append(entry)
                raise Interrupted(signum) from None
            entry.update(command=cmd, **res)
            if res["status"] == "ok" and result_status(out) != "ok":
                entry.update(status="failed", note="exit 0 but the result file has no 'end' record with status ok")
            elif res["status"] == "skipped":
                entry["note"] = "the runner says it cannot run here (exit 77)"
            elif res["status"] == "timeout":
                entry["note"] = f"killed after {spec.timeout:g} s"
            fc.measured(index, out, res["duration_s"])
            bar.step(spec.id, entry["status"], res["duration_s"])
            if first is None:
                first = {"after": spec.id, "predicted_s": fc.remaining(index + 1), "t0": time.monotonic()}
        entries.append(entry)
        _write_manifest(results, camp, info, entries)
    bar.close()
    if first is None or first["predicted_s"] is None:
        return None
    # how far the forecast made after the first run was from what the rest took
    actual = time.monotonic() - first.pop("t0")
    _say(stream, f"forecast after {first['after']}: {_fmt_s(first['predicted_s'])} for the rest; "
                 f"it took {_fmt_s(actual)}")
    return {**first, "predicted_s": round(first["predicted_s"], 3), "actual_s": round(actual, 3)}


def _write_manifest(results: Path, camp: Campaign, info: RunnerInfo, entries: list,
                    forecast: dict | None = None) -> dict:
    counts: dict[str, int] = {}
    for e in entries:
        counts[e["status"]] = counts.get(e["status"], 0) + 1
    doc = {"campaign": camp.path, "title": camp.title, "description": camp.description,
           "study": camp.study, "compare": camp.compare, "runner": info.path,
           "modules": info.modules, "patterns": info.patterns, "counts": counts, "runs": entries}
    if forecast is not None:
        doc["forecast"] = forecast
    # whole or not at all: a full disk or a kill leaves the previous manifest, never a cut one
    write_atomically(results / MANIFEST, json.dumps(doc, indent=1) + "\n", "campaign manifest")
    return doc


def scale_from(quick: bool, environ: dict | None = None) -> float:
    environ = os.environ if environ is None else environ
    raw = environ.get("VERSUS_CAMPAIGN_SCALE")
    if raw:
        try:
            v = float(raw)
        except ValueError:
            raise InputError(f"VERSUS_CAMPAIGN_SCALE={raw!r} is not a number") from None
        if not 0 < v <= 1:
            raise InputError("VERSUS_CAMPAIGN_SCALE must be in (0, 1]")
        return v
    return 0.05 if quick else 1.0


def sbatch_script(camp: Campaign, config: str, results: Path, runner: str, quick: bool,
                  report: str | None, options: list[str]) -> str:
    """A batch script that runs the campaign in one allocation.  Requeued, it runs the same command,
    which resumes: complete results are kept, the others run again."""
    import shlex
    ntasks = max((s.np for s in camp.runs), default=2)
    nodes = max((s.nodes or 1 for s in camp.runs), default=1)
    cmd = [sys.executable, "-m", "versus", "campaign", str(Path(config).resolve()), "--results",
           str(results.resolve()), "--runner", runner]
    cmd += ["--quick"] if quick else []
    cmd += ["--report", str(Path(report).resolve())] if report else []
    pkg = str(Path(__file__).resolve().parents[1])
    for o in options:
        # one #SBATCH line each: a line break would start a shell command in the script
        if not re.fullmatch(r"--?[A-Za-z][A-Za-z0-9-]*(=[^\x00-\x1f\x7f]*)?", o):
            raise InputError(f"--sbatch-option {o!r}: give one sbatch option on one line, as sbatch spells it "
                             "(e.g. --sbatch-option=--time=01:00:00)")
    out_dir = str(results.resolve())
    if re.search(r"[\x00-\x1f\x7f]", out_dir + os.getcwd()):
        raise InputError(f"the results directory {out_dir!r} or the current directory holds a control character "
                         "(a line break in a batch script's #SBATCH line): choose another")
    job = re.sub(r"[^A-Za-z0-9._-]", "-", Path(config).stem)
    lines = ["#!/bin/sh",
             f"#SBATCH --job-name=versus-{job}",
             f"#SBATCH --ntasks={ntasks}",
             *([f"#SBATCH --nodes={nodes}"] if nodes > 1 else []),
             f"#SBATCH --output={out_dir}/slurm-%j.out",
             "#SBATCH --open-mode=append",
             "#SBATCH --requeue"]
    lines += [f"#SBATCH {o}" for o in options]
    lines += ["# versus campaign in one allocation: each run is launched with srun inside it.",
              "# Requeued (scontrol requeue, or a node failure), it resumes: complete results are kept.",
              f"cd {shlex.quote(os.getcwd())}",
              f"export PYTHONPATH={shlex.quote(pkg)}${{PYTHONPATH:+:$PYTHONPATH}}",
              "exec " + " ".join(shlex.quote(c) for c in cmd), ""]
    return "\n".join(lines)


def cmd_campaign(args) -> int:
    camp = load_campaign(args.config, scale_from(args.quick))
    results = Path(args.results or Path("results") / Path(args.config).stem)
    if args.sbatch or args.submit:
        output_dir(results, "results directory")
        script = results / "campaign.sbatch"
        write_atomically(script, sbatch_script(camp, args.config, results, find_runner(args.runner), args.quick,
                                               args.report, args.sbatch_option or []), "batch script")
        try:
            script.chmod(0o755)
        except OSError as ex:
            raise InputError(f"batch script {script}: cannot make it executable ({ex.strerror or ex})") from None
        if not args.submit:
            print(f"versus campaign: batch script {script}; submit it with: sbatch {script}", file=sys.stderr)
            return 0
        try:
            p = subprocess.run(["sbatch", "--parsable", str(script)], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as ex:
            raise InputError(f"cannot submit {script}: {ex}") from None
        if p.returncode:
            raise InputError(f"sbatch {script}: {p.stderr.strip() or 'failed'}")
        print(p.stdout.strip())
        print(f"versus campaign: submitted {script} as job {p.stdout.strip()}; results in {results}",
              file=sys.stderr)
        return 0
    try:
        man = run_campaign(camp, results, args.runner, lab=args.lab)
    except Interrupted as ex:
        print(f"versus campaign: interrupted by signal {ex.signum}; the run in progress was stopped; "
              f"what finished is in {results} (the manifest says which); run the same command to resume",
              file=sys.stderr)
        return 128 + ex.signum
    c = man["counts"]
    print(f"versus campaign: {len(man['runs'])} runs: "
          + ", ".join(f"{v} {k}" for k, v in sorted(c.items()))
          + f"; results and manifest in {results}", file=sys.stderr)
    for e in man["runs"]:
        if e["status"] in ("failed", "timeout"):
            last = (e.get("stderr_tail") or "").splitlines()[-1:] or [""]
            print(f"  {e['status']}: {e['id']}: {e.get('note') or last[0]}", file=sys.stderr)
    if args.report:
        from .report import render_report
        render_report([str(results)], Path(args.report))
        print(f"versus campaign: report in {args.report}/index.html and {args.report}/report.tex",
              file=sys.stderr)
    ok = c.get("ok", 0)
    return 0 if ok > 0 else 1


def add_parser(sub) -> None:
    p = sub.add_parser("campaign", help="run the runs of a campaign file (TOML) and record them")
    p.add_argument("config", metavar="CONFIG.toml")
    p.add_argument("--results", metavar="DIR", help="result directory (default results/<config name>)")
    p.add_argument("--report", metavar="DIR", help="render the report into DIR at the end")
    p.add_argument("--runner", metavar="PATH", help="versus-run to use (default: $VERSUS_RUN, PATH, build/)")
    p.add_argument("--quick", action="store_true",
                   help="reduced repetitions and quick_sizes (or set VERSUS_CAMPAIGN_SCALE=0..1)")
    p.add_argument("--sbatch", action="store_true",
                   help="do not run: write RESULTS/campaign.sbatch, a batch script that runs the campaign in one "
                        "Slurm allocation (srun for every run) and resumes when requeued")
    p.add_argument("--sbatch-option", action="append", metavar="OPT",
                   help="an #SBATCH line for the script, repeatable (e.g. --sbatch-option=--nodes=2 "
                        "--sbatch-option=--time=01:00:00)")
    p.add_argument("--submit", action="store_true", help="write the batch script and submit it with sbatch")
    p.add_argument("--lab", action="store_true",
                   help="run on the two emulated boxes of 'versus lab up' (root): every run starts on box-a, "
                        "runs with nodes = 2 put one rank on each box")
    p.set_defaults(func=cmd_campaign)
