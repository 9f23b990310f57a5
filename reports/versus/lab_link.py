"""The lab's relay, versus-link: a user-space link between two boxes' TUN devices that delays
every packet and serialises it at a rate (lab.py starts it for --delay or --link relay), its
counters, and how late it delivered."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import time

from .load import InputError
from .modules import find_runner, first_executable

RUN_DIR = "/run/versus-lab"                # the remote-shell agent, the MPI host files, the relay's state
LINK_PID = f"{RUN_DIR}/link.pid"
LINK_LOG = f"{RUN_DIR}/link.log"


def find_link_tool() -> str:
    """versus-link: $VERSUS_LINK, then PATH, then beside versus-run's build or install."""
    found = first_executable([os.environ.get("VERSUS_LINK"), shutil.which("versus-link")])
    if found:
        return found
    try:
        runner = os.path.dirname(find_runner())
    except InputError:
        runner = None
    found = runner and first_executable([os.path.join(runner, "versus-link"),
                                         os.path.join(runner, "..", "tools", "versus-link")])
    if found:
        return found
    raise InputError("cannot find versus-link (the relay for --delay): set VERSUS_LINK, put it on PATH, "
                     "or build versus (it is built beside versus-run)")


def start_relay(tool: str, a, b, iface: str, delay_us: float, rate_mbit: float | None, mtu: int,
                cpu: int | None, spin_us: float | None = None) -> None:
    """versus-link between the TUN devices iface of boxes a and b (their network namespaces), in its own session (it outlives this command),
    under SCHED_FIFO so that busy-polling ranks on its CPU cannot starve it, and keeping idle CPUs
    awake (a wake-up from idle here costs more than the precision a delay needs)."""
    argv = [tool, "--a", f"{a.netns}:{iface}", "--b", f"{b.netns}:{iface}", "--delay", f"{delay_us:g}",
            "--mtu", str(mtu), "--fifo", "50", "--awake", "--pidfile", LINK_PID]
    if rate_mbit is not None:
        argv += ["--rate", f"{rate_mbit:g}"]
    if cpu is not None:
        argv += ["--cpu", str(cpu)]
    if spin_us is not None:
        argv += ["--spin", f"{spin_us:g}"]
    with open(LINK_LOG, "w", encoding="utf-8") as log:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    t0 = time.monotonic()
    while not os.path.exists(LINK_PID):
        if p.poll() is not None:
            raise InputError(f"versus-link stopped at once: {open(LINK_LOG, encoding='utf-8').read().strip()}")
        if time.monotonic() - t0 > 5:
            p.kill()
            raise InputError("versus-link did not open the TUN devices within 5 s")
        time.sleep(0.002)


def stop_relay() -> str:
    """End the relay (SIGTERM: it prints its counters to the log); returns the log."""
    try:
        pid = int(open(LINK_PID, encoding="utf-8").read())
    except (OSError, ValueError):
        return ""
    try:
        os.kill(pid, 15)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 2:
            os.kill(pid, 0)
            try:
                os.waitpid(pid, os.WNOHANG)   # our child when up() ran in this process
            except ChildProcessError:
                pass
            time.sleep(0.002)
        os.kill(pid, 9)
    except ProcessLookupError:
        pass
    try:
        os.unlink(LINK_PID)
        return open(LINK_LOG, encoding="utf-8").read()
    except OSError:
        return ""


def link_counters() -> str:
    """The relay's counters so far (it prints them to its log on SIGUSR1)."""
    try:
        pid = int(open(LINK_PID, encoding="utf-8").read())
        os.kill(pid, 10)
        time.sleep(0.05)
        return open(LINK_LOG, encoding="utf-8").read()
    except (OSError, ValueError):
        return ""


def link_lateness() -> tuple[int, float] | None:
    """Packets the relay has delivered since it started, both directions, and how late it
    delivered them on average (us), from its newest counters; None without a relay."""
    lines = [ln for ln in link_counters().splitlines() if ln.startswith("versus-link:")][-2:]
    got = [re.search(r" (\d+) packets .* late by ([\d.]+) us on average", ln) for ln in lines]
    if len(got) != 2 or not all(got):
        return None
    n = sum(int(m.group(1)) for m in got)
    return n, sum(int(m.group(1)) * float(m.group(2)) for m in got) / max(1, n)
