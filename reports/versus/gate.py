"""`versus check --baseline BASE --run`: launch the baseline's own configuration until
every size is decided, then decide.

The baseline's launches recorded the command that made them (`command_line`), the
launcher and the environment variables of the transport (`env`); a new launch
runs that command again with a new --out in the launch directory (never over a
file: the directory is made new, or must be empty), under the same launcher
(local: versus-run starts its ranks itself; mpirun, mpiexec, srun: wrapped in
that launcher with the recorded number of ranks) and with the same transport
variables.  Its results then go through `versus check` like any other, which
refuses them if their configuration differs from the baseline's.

After each new launch from the first look on (3 new launches, or as many as
were given), every size's interval is a repeated 95 % interval (sequential.py:
a Pocock boundary over the design's looks, against the baseline's fixed
launches), and the check stops when

- every size is decided (pass, regressed or improved: its interval lies within
  or beyond the tolerance), or
- every size still undecided is hopeless: even at the last look its interval,
  at the spread seen so far, would be wider than the tolerance's band, and its
  estimate is not beyond a bound by more than that (futility: stopping without a
  decision makes no false one), or
- --max-launches new launches (default 10) are spent.

Every launch is kept in the launch directory, and the last look's verdict is the
check's.  docs/analysis.md gives the design's measured error rates.
"""
from __future__ import annotations

import datetime as _dt
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .load import InputError

MAX_LAUNCHES = 10
FIRST_LOOK = 3
LAUNCHERS = {"local": None, "mpirun": ["mpirun", "-np"], "mpiexec": ["mpiexec", "-n"], "srun": ["srun", "-n"]}
OUT_OPTIONS = ("-O", "--out")
DROP_OPTIONS = ("--overwrite",)


def _launcher_prefix(rec: dict) -> list[str] | None:
    name = str((rec.get("launcher") or {}).get("name") or "local")
    key = next((k for k in LAUNCHERS if name == k or name.startswith(k + ".")), None)
    if key is None:
        raise InputError(f"--run: the baseline's launches were started by {name!r}, which versus check cannot "
                         f"start again (it starts {', '.join(LAUNCHERS)}); run the launches yourself and "
                         "give their files")
    pre = LAUNCHERS[key]
    if pre is None:
        return None
    exe = name if shutil.which(name) else pre[0]
    return [exe, pre[1], str(int(rec.get("ranks") or 2))]


def launch_command(rec: dict, out: Path, runner: str | None = None) -> tuple[list[str], dict]:
    """The command and environment of one more launch of the run record's configuration."""
    argv = rec.get("command_line")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise InputError("--run: the baseline's run record has no command_line to launch again")
    exe = runner or argv[0]
    if not (os.path.sep in exe and os.access(exe, os.X_OK)) and not shutil.which(exe):
        raise InputError(f"--run: {exe!r} (the command the baseline's launches ran) is not on PATH; put "
                         "versus-run on PATH or give --runner PATH")
    cmd, i = [exe], 1
    while i < len(argv):
        a = argv[i]
        if a in OUT_OPTIONS:
            i += 2
            continue
        if a.startswith("--out=") or (a.startswith("-O") and len(a) > 2) or a in DROP_OPTIONS:
            i += 1
            continue
        cmd.append(a)
        i += 1
    cmd += ["--out", str(out)]
    pre = _launcher_prefix(rec)
    env = dict(os.environ)
    for k, v in (rec.get("env") or {}).items():
        if isinstance(k, str) and isinstance(v, str) and not k.startswith("VERSUS_"):
            env[k] = v
    if pre and pre[0].startswith("mpirun"):
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return (pre + cmd if pre else cmd), env


def launch_dir(path: str | None) -> Path:
    """The directory the new launches go to: made new, or an existing empty one."""
    if path is None:
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        path = f"versus-check-{stamp}"
    p = Path(path)
    if p.exists() or p.is_symlink():
        if not p.is_dir() or p.is_symlink() or any(p.iterdir()):
            raise InputError(f"--launch-dir {path}: exists and is not an empty directory; name a new one")
    else:
        try:
            p.mkdir(parents=False)
        except OSError as e:
            raise InputError(f"--launch-dir {path}: cannot make it ({e.strerror}); name a directory that can be made")
    return p


def _deadline(runs) -> float:
    """Seconds one launch may take: five times the longest baseline launch's measuring, at least 120."""
    longest = max((sum(s.elapsed_ns or 0 for s in r.sizes) / 1e9 for r in runs), default=0.0)
    return max(120.0, 5 * longest + 30)


def one_launch(rec: dict, out: Path, runner: str | None, timeout: float) -> None:
    cmd, env = launch_command(rec, out, runner)
    try:
        p = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise InputError(f"--run: a launch did not end within {timeout:.0f} s ({' '.join(cmd)}); "
                         f"the launches so far are kept in {out.parent}") from None
    if p.returncode != 0:
        tail = " | ".join((p.stderr or "").strip().splitlines()[-3:])
        raise InputError(f"--run: a launch failed with exit {p.returncode} ({' '.join(cmd)}): {tail}; "
                         f"the launches so far are kept in {out.parent}")


def _decided(case: dict) -> bool:
    return case["status"] in ("pass", "regressed", "improved", "unchecked")


def _futile(d: dict) -> bool:
    """Every undecided size is hopeless: even at the design's last look its interval (at the
    spread seen) would be wider than the tolerance's band, and its estimate is not far enough
    beyond a bound to clear it.  An estimate near a bound is not futile: the estimate moves."""
    und = [c for c in d["cases"] if not _decided(c)]
    return bool(und) and all((c.get("needed") or {}).get("hopeless") for c in und)


def run_check(results: list[str], baseline: str, tolerances, strict: bool, unsure: str,
              max_launches: int = MAX_LAUNCHES, directory: str | None = None, runner: str | None = None,
              first: int = FIRST_LOOK, say=None) -> dict:
    """The sequential check (module doc): the dict of baseline.check at the last look, with a
    'sequential' entry saying what the design spent and why it stopped."""
    from .baseline import check, load_baseline
    from .sequential import check_design
    if not 1 <= max_launches <= 1000:
        raise InputError(f"--max-launches {max_launches}: give 1 to 1000 new launches")
    if len(results) > max_launches:
        raise InputError(f"--max-launches {max_launches}: {len(results)} results are given already")
    _, base_runs = load_baseline(baseline)
    rec = base_runs[0].record
    launch_command(rec, Path("probe.jsonl"), runner)        # refuse what cannot be launched before making anything
    where = launch_dir(directory)
    m = len({r.record.get("run_id") for r in base_runs})
    design = check_design(m, max(first, len(results)) if results else first, max_launches)
    files = list(results)
    timeout = _deadline(base_runs)
    looks, d, stopped = [], None, "budget"
    while True:
        n = len(files)
        if n >= design.looks[0] or n >= max_launches:
            d = check(files, baseline, tolerances, strict, unsure=unsure, alpha=design.nominal_alpha,
                      design_words=design.words(n), last_look=design.last)
            cnt = d["counts"]
            looks.append({"launches": n, **cnt})
            if say:
                say(f"look at {n} new launch(es): {cnt['pass']} pass, {cnt['unsure']} unsure, "
                    f"{cnt['regressed']} regressed, {cnt['improved']} improved")
            if all(_decided(c) for c in d["cases"]):
                stopped = "decided"
                break
            if n >= max_launches:
                break
            if _futile(d):
                stopped = "futile"
                break
        out = where / f"launch-{len(files) - len(results) + 1:02d}.jsonl"
        one_launch(rec, out, runner, timeout)
        files.append(str(out))
    spent = len(files) - len(results)
    why = {"decided": "every size decided",
           "futile": "the sizes left undecided could not be decided within the design's launches at this spread",
           "budget": f"--max-launches {max_launches} spent"}[stopped]
    d["sequential"] = {"design": [design.looks[0], design.last], "baseline_launches": m,
                       "nominal_confidence": 1 - design.nominal_alpha, "constant": design.constant,
                       "launched": spent, "given": len(results), "launch_dir": str(where), "looks": looks,
                       "stopped": stopped,
                       "words": (f"sequential check: {spent} new launch(es) run in {where} "
                                 f"({len(files)} in all against the baseline's {m}); stopped: {why}; "
                                 f"{design.words(len(files))}")}
    return d


def progress(text: str) -> None:
    print(f"versus check: {text}", file=sys.stderr, flush=True)


__all__ = ["run_check", "launch_command", "MAX_LAUNCHES"]
