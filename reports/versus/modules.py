"""What the transport modules declare, asked of the runner (`versus-run --list --json`),
and the launcher command line that starts a run of one of them.

Nothing here knows a transport by name: a module that brings its own bootstrap
(MPI) names its launcher (kind, program, srun plugin); every other module runs
under versus-run's local launcher or any launcher's environment."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from .load import InputError

LAUNCHERS = ("auto", "local", "mpirun", "mpiexec", "srun")


class ModuleListError(Exception):
    pass


def first_executable(cands) -> str | None:
    """The first candidate path that is an executable file, made absolute."""
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    return None


def find_runner(explicit: str | None = None) -> str:
    """--runner, then $VERSUS_RUN, then PATH, then the build tree next to the sources."""
    root = Path(__file__).resolve().parents[2]
    if explicit is not None:
        explicit = explicit if os.sep in explicit else shutil.which(explicit) or explicit
        if not first_executable([explicit]):
            raise InputError(f"--runner {explicit}: no executable there (give the path of versus-run)")
    found = first_executable([explicit, os.environ.get("VERSUS_RUN"), shutil.which("versus-run"),
                              str(root / "build" / "core" / "versus-run")])
    if found:
        return found
    raise InputError("cannot find versus-run: give --runner PATH, set VERSUS_RUN, put it on PATH, "
                     "or build it (meson setup build && ninja -C build)")


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
         root: bool | None = None, nodes: int | None = None, hosts=(), launcher_args=()) -> tuple[list[str], list[str]]:
    """(before, after): the launcher's argv before the runner's, and what follows the runner's
    arguments (local: --launch local -n N).  nodes spreads the ranks evenly over that many nodes
    (np / nodes per node); hosts names them for mpirun and mpiexec; launcher_args go to the
    launcher as they are.  Raises ValueError for a launcher that cannot start it."""
    if root is None:
        root = hasattr(os, "geteuid") and os.geteuid() == 0
    per_node = np // nodes if nodes else None
    if kind == "local":
        if (module or {}).get("bootstrap"):
            prog = (module.get("launcher") or {}).get("kind", "its MPI launcher")
            raise ValueError(f"transport {module['name']} is started by {prog}, not by the local launcher")
        if (nodes or 1) > 1 or hosts or launcher_args:
            raise ValueError("the local launcher starts every rank on this host: for nodes, hosts or "
                             "launcher_args use launcher = \"mpirun\", \"mpiexec\" or \"srun\"")
        return [], ["--launch", "local", "-n", str(np)]
    if kind in ("mpirun", "mpiexec") and nodes and len(hosts) not in (0, nodes):
        raise ValueError(f"nodes = {nodes} but {len(hosts)} hosts are named")
    if kind == "mpirun":
        cmd = [launcher_program("mpirun", module, modules), "-np", str(np), "--bind-to", "none"]
        if hosts:
            cmd += ["--host", ",".join(f"{h}:{per_node or np}" for h in hosts)]
        else:
            cmd.append("--oversubscribe")
        if per_node:
            cmd += ["--map-by", f"ppr:{per_node}:node"]
        if root:
            cmd.append("--allow-run-as-root")
        for k in env_keys:
            cmd += ["-x", k]
        return cmd + list(launcher_args), []
    if kind == "mpiexec":
        cmd = [launcher_program("mpiexec", module, modules), "-n", str(np)]
        cmd += ["-hosts", ",".join(hosts)] if hosts else []
        cmd += ["-ppn", str(per_node)] if per_node else []
        return cmd + list(launcher_args), []
    if kind == "srun":
        plugin = ((module or {}).get("launcher") or {}).get("srun_mpi")
        # --cpu-bind=none: versus places the ranks (docs/placement.md), as with mpirun --bind-to none
        cmd = ["srun", "-n", str(np)]
        cmd += ["-N", str(nodes), f"--ntasks-per-node={per_node}"] if nodes else []
        cmd += ["--cpu-bind=none"] + ([f"--mpi={plugin}"] if plugin else [])
        return cmd + list(launcher_args), []
    raise ValueError(f"unknown launcher {kind!r} ({', '.join(LAUNCHERS)})")
