"""What the transport modules declare, asked of the runner (`versus-run --list --json`),
and the launcher command line that starts a run of one of them.

Nothing here knows a transport by name: a module that brings its own bootstrap
(MPI) names its launcher (kind, program, srun plugin); every other module runs
under versus-run's local launcher or any launcher's environment."""
from __future__ import annotations

import json
import os
import subprocess

LAUNCHERS = ("auto", "local", "mpirun", "mpiexec", "srun")


class ModuleListError(Exception):
    pass


def declared(runner: str, env: dict | None = None, timeout: float = 60) -> dict[str, dict]:
    """name -> the module's declaration (loads, bootstrap, launcher, env_prefixes, options, ...)."""
    try:
        p = subprocess.run([runner, "--list", "--json"], capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL, env=env)
    except (OSError, subprocess.TimeoutExpired) as ex:
        raise ModuleListError(f"{runner} --list --json: {ex}") from None
    try:
        mods = json.loads(p.stdout)
    except json.JSONDecodeError:
        raise ModuleListError(f"{runner} --list --json did not print JSON (exit {p.returncode}): "
                              f"{(p.stderr or p.stdout).strip()[:300]}") from None
    return {m["name"]: m for m in mods if isinstance(m, dict) and "name" in m}


def default_launcher(module: dict | None, environ: dict) -> str:
    """srun inside a Slurm allocation; else the module's own launcher; else local."""
    if environ.get("SLURM_JOB_ID"):
        return "srun"
    hint = (module or {}).get("launcher")
    return hint["kind"] if hint else "local"


def launcher_program(kind: str, module: dict | None, modules: dict[str, dict]) -> str:
    """The command for mpirun or mpiexec: the module's own, else the one a module of that kind declares."""
    hint = (module or {}).get("launcher")
    if hint and hint.get("kind") == kind:
        return hint["program"]
    for m in modules.values():
        h = m.get("launcher")
        if m.get("loads") and h and h.get("kind") == kind:
            return h["program"]
    return kind


def wrap(kind: str, np: int, module: dict | None, modules: dict[str, dict], env_keys=(),
         root: bool | None = None) -> tuple[list[str], list[str]]:
    """(before, after): the launcher's argv before the runner's, and what follows the runner's
    arguments (local: --launch local -n N).  Raises ValueError for a launcher that cannot start it."""
    if root is None:
        root = hasattr(os, "geteuid") and os.geteuid() == 0
    if kind == "local":
        if (module or {}).get("bootstrap"):
            prog = (module.get("launcher") or {}).get("kind", "its MPI launcher")
            raise ValueError(f"transport {module['name']} is started by {prog}, not by the local launcher")
        return [], ["--launch", "local", "-n", str(np)]
    if kind == "mpirun":
        cmd = [launcher_program("mpirun", module, modules), "-np", str(np), "--oversubscribe", "--bind-to", "none"]
        if root:
            cmd.append("--allow-run-as-root")
        for k in env_keys:
            cmd += ["-x", k]
        return cmd, []
    if kind == "mpiexec":
        return [launcher_program("mpiexec", module, modules), "-n", str(np)], []
    if kind == "srun":
        plugin = ((module or {}).get("launcher") or {}).get("srun_mpi")
        # --cpu-bind=none: versus places the ranks (docs/placement.md), as with mpirun --bind-to none
        return ["srun", "-n", str(np), "--cpu-bind=none"] + ([f"--mpi={plugin}"] if plugin else []), []
    raise ValueError(f"unknown launcher {kind!r} ({', '.join(LAUNCHERS)})")
