"""The runner side of a campaign: one run executed in a process group of its own that dies with
the campaign and is stopped at its timeout, the lock that keeps one campaign at a time in a results
directory, the refusal to measure beside runners still writing into it, the signals that stop a
campaign, and the batch script that runs a campaign in one Slurm allocation."""
from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .campaign_keys import Campaign, RunSpec, _word
from .load import InputError

SKIP_EXIT = 77


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
