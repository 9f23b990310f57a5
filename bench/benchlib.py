"""Small helpers the bench scripts share: the host's load, a free port, and the
distribution-free interval of a median of per-round ratios."""
import os
import socket
import sys

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
