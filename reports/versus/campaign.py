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

This module is the campaign itself: the command line of each run, what changed since a results file
was measured, the loop over the runs and `versus campaign`.  Its parts live beside it:
campaign_keys.py (the table of the file's keys, which checks them, and the loader), campaign_run.py
(a run executed, the results directory's lock, the signals, the batch script), campaign_results.py
(the results files, the manifest, the forecast) and where.py (where the ranks run: here, a Slurm
allocation, or the boxes of `versus lab`); every name a caller used is still here.
"""
from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from .campaign_decide import MAX_LAUNCHES
from .campaign_keys import RUN_KEYS, TOP_KEYS, Campaign, RunSpec, _word, interleave, load_campaign
from .campaign_results import (MANIFEST, RunnerInfo, _cannot_run, _Forecast, _write_manifest, first_record,
                               previous_entries, probe_runner, result_status, set_aside)
from .campaign_run import (SKIP_EXIT, Interrupted, ResultsLock, _say, _signals_raise, execute, refuse_leftovers,
                           runners_in, sbatch_script, scale_from)
from .load import InputError, output_dir, write_atomically
from .modules import find_runner
from . import modules as vsmod
from .progress import Progress, _fmt_s
from . import where

__all__ = ["Campaign", "RunSpec", "RunnerInfo", "Interrupted", "ResultsLock", "MANIFEST", "RUN_KEYS", "TOP_KEYS",
           "SKIP_EXIT", "load_campaign", "interleave", "find_runner", "probe_runner", "choose_launcher",
           "nodes_available", "build_command", "runner_arguments", "asked_configuration", "configuration_changes",
           "first_record", "previous_entries", "set_aside", "result_status", "execute", "refuse_leftovers",
           "runners_in", "run_campaign", "scale_from", "sbatch_script", "cmd_campaign", "add_parser"]


def choose_launcher(spec: RunSpec, environ: dict, module: dict | None = None) -> str:
    if spec.launcher != "auto":
        return spec.launcher
    return vsmod.default_launcher(module, environ)


def nodes_available(environ: dict, lab: bool = False) -> int:
    """How many nodes the runs of this campaign can spread over (where.py: the lab's boxes, the
    nodes of the Slurm allocation it runs in, else this one)."""
    return where.ranks_run(environ, lab).nodes


def build_command(spec: RunSpec, runner: str, out: Path, environ: dict | None = None,
                  declared: dict[str, dict] | None = None, lab: bool = False, place=None) -> list[str]:
    """The full argv of one run, launcher included; declared is what the modules say of
    themselves (RunnerInfo.declared).  place: where the ranks run (where.py), by default here or,
    with lab, on the boxes of `versus lab`."""
    environ = os.environ if environ is None else environ
    place = place or where.ranks_run(environ, lab)
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
    try:
        hosts, largs, more = place.place(spec, launcher)
        before, after = vsmod.wrap(launcher, spec.np, module, declared, env_keys=list(spec.env),
                                   nodes=spec.nodes, hosts=hosts, launcher_args=largs)
    except ValueError as ex:
        raise InputError(f"run {spec.id}: {ex}") from None
    return place.command(before + args + more + after)


# ---------------------------------------------------------------- resume: what was measured
#
# A complete results file is kept on a resume only when it measured the configuration the
# campaign asks for now.  What was measured is read from the file's run record: the runner's
# command line (every argument: transport, options, pattern, variant, sizes, iterations, warm-ups,
# batch, placement, cpus, extra_args), the ranks, the launcher, and the environment variables the
# runner records (VERSUS_ and the module's own prefixes).  What the record cannot show (other
# variables of `env`, nodes, hosts, launcher_args) is read from the manifest of the campaign that
# wrote the file; a part neither states is not compared.

# the campaign's bookkeeping (not what is measured), and what is compared as the launcher and ranks
_NOT_COMPARED = {"out", "overwrite", "quiet", "verbose", "launch-id", "launch", "np"}
_ORDER = ["transport", "transport-opt", "pattern", "variant", "sizes"]


def runner_arguments(argv: list, options: list[dict] | None = None) -> dict:
    """A runner command line (its program left out) as {long option name: value}: --transport-opt
    as a table, a flag as True, anything else as given under "arguments".  options: the runner's
    table (RunnerInfo.options) says which options take a value and what the short ones stand for;
    without it a long option takes the next word unless that starts with "-"."""
    longs = {o["name"]: o for o in options or []}
    shorts = {o["short"]: o for o in options or [] if o.get("short")}
    out: dict = {}
    i = 0
    while i < len(argv):
        tok, i = str(argv[i]), i + 1
        val = True
        if tok.startswith("--") and len(tok) > 2:
            name, eq, v = tok[2:].partition("=")
            takes = longs[name].get("value") if name in longs else i < len(argv) and not str(argv[i]).startswith("-")
            if eq:
                val = v
            elif takes and i < len(argv):
                val, i = str(argv[i]), i + 1
        elif tok.startswith("-") and len(tok) > 1:
            name = shorts[tok[1]]["name"] if tok[1] in shorts else tok[1:]
            if tok[1] in shorts and shorts[tok[1]].get("value"):
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


def asked_configuration(spec: RunSpec, cmd: list[str], runner: str, launcher: str,
                        options: list[dict] | None = None) -> dict:
    """The parts of a run's configuration the campaign asks for (what the manifest keeps);
    options: the runner's own (RunnerInfo.options)."""
    argv = cmd[cmd.index(runner) + 1:] if runner in cmd else []
    return {"arguments": runner_arguments(argv, options), "ranks": spec.np, "launcher": launcher,
            "env": dict(spec.env), "nodes": spec.nodes, "hosts": list(spec.hosts),
            "launcher_args": list(spec.launcher_args)}


def _recorded(name: str, module: dict | None) -> bool:
    """Whether versus-run writes this environment variable into its run record."""
    module = module or {}
    prefixes = ["VERSUS_"] + [p for p in module.get("env_prefixes") or [] if isinstance(p, str)]
    wiring = [p for p in module.get("env_wiring") or [] if isinstance(p, str)]
    return any(name.startswith(p) for p in prefixes) and not any(name.startswith(p) for p in wiring)


def configuration_changes(asked: dict, rec: dict, before: dict | None, module: dict | None,
                          run_env: dict, options: list[dict] | None = None) -> list[str]:
    """What differs between the configuration asked for and the one a results file measured, as
    "part old -> new" (empty when nothing does).  rec: the file's run record; before: its entry
    in the earlier manifest (or None); run_env: the environment the runner is given now;
    options: the runner's own (RunnerInfo.options)."""
    before = before if isinstance(before, dict) else {}
    was = before.get("configuration") if isinstance(before.get("configuration"), dict) else {}
    changes = []
    # the runner's arguments: its own record of its command line, else the earlier manifest's,
    # else (a record of an older runner) the fields the record has
    line = rec.get("command_line")
    only = None
    if isinstance(line, list) and line:
        old_args = runner_arguments(line[1:], options)
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


def run_campaign(camp: Campaign, results: Path, runner: str | None = None,
                 stream=None, environ: dict | None = None, lab: bool = False,
                 until_decided: int | None = None) -> dict:
    """Execute every run not already complete; write and return the manifest.  A run that asks
    for more nodes than there are (nodes_available) is skipped with the reason; lab: run on the
    boxes of `versus lab`; until_decided: then add rounds of launches until the comparisons are
    decided, at most that many launches a configuration (campaign_decide.py)."""
    stream = sys.stderr if stream is None else stream
    environ = dict(os.environ if environ is None else environ)
    environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    output_dir(results, "results directory")
    info = probe_runner(find_runner(runner))
    place = where.ranks_run(environ, lab)
    place.ready()
    entries = []
    seq = None
    if until_decided is not None:
        from .campaign_decide import check_budget
        check_budget(camp, until_decided)
    with ResultsLock(results, stream), _signals_raise():
        refuse_leftovers(results)
        try:
            forecast = _run_all(camp, results, info, place, environ, stream, entries)
            if until_decided is not None:
                from .campaign_decide import decide

                def one_round(specs):
                    _run_all(camp, results, info, place, environ, stream, entries, specs)
                seq = decide(camp, results, one_round, until_decided, lambda t: _say(stream, t))
        except (KeyboardInterrupt, Interrupted) as ex:
            _write_manifest(results, camp, info, entries)
            raise Interrupted(ex.signum if isinstance(ex, Interrupted) else int(signal.SIGINT)) from None
    return _write_manifest(results, camp, info, entries, forecast, seq)


def _kept(spec: RunSpec, out: Path, entry: dict, before: dict, module: dict | None, run_env: dict,
          results: Path, stream, options: list[dict] | None = None) -> bool:
    """Whether the file of an earlier launch of this run is complete and measured what is asked now
    (then it is kept, not run again); one that measured something else, or whose run record cannot
    be read, is set aside (the entry says where and why, and so does a line on stream)."""
    rec, complete = first_record(out), result_status(out) == "ok"
    changed = (configuration_changes(entry["configuration"], rec, before.get(spec.filename), module, run_env,
                                     options)
               if rec is not None else None if not complete else [])
    if changed or (complete and rec is None):
        kept = set_aside(results, out)
        why = (f"configuration changed ({'; '.join(changed)})" if changed
               else f"the run record of {spec.filename} cannot be read")
        _say(stream, f"{spec.id}: {why}; re-measuring, the old results kept as {kept}")
        entry["superseded"] = {"file": kept, "why": why}
        return False
    return complete


def _judge(entry: dict, out: Path, timeout: float) -> None:
    """The entry of a run that was executed: its status checked against its file, a note for the
    statuses that need one."""
    if entry["status"] == "ok" and result_status(out) != "ok":
        entry.update(status="failed", note="exit 0 but the result file has no 'end' record with status ok")
    elif entry["status"] == "skipped":
        entry["note"] = "the runner says it cannot run here (exit 77)"
    elif entry["status"] == "timeout":
        entry["note"] = f"killed after {timeout:g} s"


def _run_all(camp, results, info, place, environ, stream, entries, specs=None) -> dict | None:
    """Run `specs` (default: the campaign's runs), appending their manifest entries to `entries`."""
    specs = camp.runs if specs is None else specs
    before = previous_entries(results)
    fc = _Forecast(dataclasses.replace(camp, runs=specs), results, info, place.nodes, before)
    bar = Progress(len(specs), stream, estimate=fc.remaining)
    first = None          # after the first run executed: the forecast of the rest, and when it was made
    for index, spec in enumerate(specs):
        out = results / spec.filename
        entry = {"id": spec.id, "config_id": spec.config_id, "file": spec.filename,
                 "transport": spec.transport, "pattern": spec.pattern, "variant": spec.variant,
                 "options": spec.options, "env": spec.env, "launch_id": spec.launch_id}
        note = _cannot_run(spec, info, place.nodes)
        cmd = None
        if not note:
            try:
                cmd = build_command(spec, info.path, out.resolve(), environ, info.declared, place=place)
            except InputError as ex:
                entry.update(status="failed", note=str(ex))
                bar.step(spec.id, "failed", 0.0)
                entries.append(entry)
                continue
            module = info.declared.get(spec.transport)
            entry["configuration"] = asked_configuration(spec, cmd, info.path,
                                                         choose_launcher(spec, environ, module), info.options)
        done = cmd is not None and os.path.lexists(out) and _kept(spec, out, entry, before, module,
                                                                  {**environ, **spec.env}, results, stream,
                                                                  info.options)
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
            _judge(entry, out, spec.timeout)
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
        if args.max_launches is not None and not args.until_decided:
            raise InputError("--max-launches goes with --until-decided (the launches it may add)")
        budget = (args.max_launches or MAX_LAUNCHES) if args.until_decided else None
        man = run_campaign(camp, results, args.runner, lab=args.lab, until_decided=budget)
    except Interrupted as ex:
        print(f"versus campaign: interrupted by signal {ex.signum}; the run in progress was stopped; "
              f"what finished is in {results} (the manifest says which); run the same command to resume",
              file=sys.stderr)
        return 128 + ex.signum
    c = man["counts"]
    print(f"versus campaign: {len(man['runs'])} runs: "
          + ", ".join(f"{v} {k}" for k, v in sorted(c.items()))
          + f"; results and manifest in {results}", file=sys.stderr)
    if man.get("sequential"):
        print(f"versus campaign: {man['sequential']['words']}", file=sys.stderr)
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
    p.add_argument("--until-decided", action="store_true",
                   help="after the planned launches, add rounds of one launch of each configuration whose "
                        "comparisons are undecided, until every comparison is decided (or cannot be, at the "
                        "spread seen) or --max-launches are spent; intervals are repeated 95 %% intervals "
                        "(a Pocock boundary over the looks), so looking after each round keeps the "
                        "false-claim rate")
    p.add_argument("--max-launches", type=int, metavar="N",
                   help="with --until-decided: at most N launches a configuration (default 10)")
    p.set_defaults(func=cmd_campaign)
