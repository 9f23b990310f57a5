"""Small helpers the bench scripts share: the host's load, a free port, the
distribution-free interval of a median of per-round ratios, and a fabtests-style
server/client pair run."""
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reports"))
try:  # the project's order-statistics interval, when run with the project's environment
    import numpy as np
    from versus.stats import median_ci_sorted
except ImportError:
    median_ci_sorted = None


def loadavg():
    """The host's 1-minute load average as text: figures taken on a busy host are not floors."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "?"


def free_port():
    """A TCP port on the loopback interface that nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def median_interval_words(xs):
    """'95 % CI [lo, hi]' of the median of xs (order statistics), or why there is none."""
    if median_ci_sorted is None:
        return "no interval: run with the project's .venv python"
    c = median_ci_sorted(np.sort(np.asarray(xs, dtype=float)))
    return f"95 % CI [{c[0]:.3f}, {c[1]:.3f}]" if c else "too few rounds for a 95 % CI"


class ToolFailed(RuntimeError):
    """A native tool (or versus-run, for the scripts that say so) did not give its figure."""


def server_client(commands, name, tries=5, client_timeout=120, server_timeout=60):
    """Run a fabtests-style pair: the server in the background, the client a moment later.
    commands() gives (server argv, client argv), called afresh per try (new ports); a try whose
    client could not connect is made again, up to `tries`.  Returns (client's CompletedProcess,
    client argv); raises ToolFailed with both sides' output otherwise."""
    for _ in range(tries):
        srv_cmd, cli_cmd = commands()
        srv = subprocess.Popen(srv_cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               stdin=subprocess.DEVNULL)
        try:
            time.sleep(0.3)
            try:
                cli = subprocess.run(cli_cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     timeout=client_timeout, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                raise ToolFailed(f"{name}: no end after {client_timeout} s (killed): {' '.join(cli_cmd)}")
            try:
                _, srv_err = srv.communicate(timeout=server_timeout)
            except subprocess.TimeoutExpired:
                srv_err = f"(server killed after {server_timeout} s)"
        finally:
            if srv.poll() is None:
                srv.kill()
                srv.wait()
        if cli.returncode == 0 and srv.returncode == 0:
            return cli, cli_cmd
        if "connect" not in (cli.stdout + cli.stderr).lower():  # UCX's errors go to stdout
            raise ToolFailed(f"{name} failed (client {cli.returncode}, server {srv.returncode}): "
                             f"{' '.join(cli_cmd)}\n{cli.stdout}{cli.stderr}{srv_err}")
    raise ToolFailed(f"{name}: the client never reached the server: {' '.join(cli_cmd)}")
