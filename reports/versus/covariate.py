"""The host's state as a covariate of launch-to-launch variance.

Every size record carries `drift_ns`, the placement drift probe's cache-line
round trip between the ranks' CPUs measured beside that size.  On a shared host
whose vCPUs move, a launch's whole speed follows it: here the probe reads about
55, 115 or 490 ns from launch to launch, and over 30 launches of each reference
transport the log median correlated 0.92-1.00 with its log (launch sd 0.2-0.7
in the log; docs/analysis.md has the figures).  Two launches of one configuration
that landed in different host states then differ by 2-4x, and a comparison that
treats the launch as the unit needs dozens of launches to see 20 %.

The adjustment (docs/analysis.md, "The host as a covariate") compares launches
at like host state: an analysis of covariance over the launches of both sides at
one size (or over a range, each launch's mean over the range's sizes),

    log median = a + delta * [side A] + sum_k g_k * [host class k] + b * log drift + e,

where the host classes are the groups of the launches' log drift split at gaps
of at least ln 1.5 (the probe's states are 2-4x apart, its noise within a state
a few per cent), and the slope b takes the rest of the relation.  delta is the
log ratio A/B at like host state; its standard error is the least-squares one
with the residual variance on L - p degrees of freedom (p parameters), and the
interval uses one degree of freedom less, as the unadjusted between-launch t
does (launches.launch_df), for launch effects that are not quite normal.

The share of the time the ranks waited for a CPU beside each size (host_load
`waited`, hostload.py) enters the same model as a further slope where it varies:
a launch that shared its CPUs with other work runs slower by an amount the
probe does not see.

The covariate is used only where it explains the variance: when the partial F
test of its terms (classes and slope) against the model without them has
p < 0.05 and at least 2 degrees of freedom remain.  Where it does not (a host
whose probe stays in one state, a transport whose time does not follow it), the
unadjusted between-launch inference stands and the comparison says so.  A side
whose launches all sat in a class the other side never visited contributes no
contrast there; when no class is shared at all the effect cannot be separated
from the host's state and None is returned (the unadjusted inference stands,
and the host note of hostload.py says the sides ran on unlike hosts).

The drift probe is measured by versus-run's core, outside the transport's code
path, so a slower stack does not move it: adjusting for it cannot absorb a
real difference (tests/python/test_sequential.py: 20 % slower launches in
other host states stay 20 % slower after adjustment).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .lazy import numpy as np
from .lazy import scipy_stats as sps

CLASS_GAP = math.log(1.5)      # host states at least 1.5x apart in the probe's round trip
P_ENTER = 0.05                 # the covariate's partial F test must reach this
MIN_DF = 2                     # degrees of freedom left for the interval


@dataclass
class Adjusted:
    """A log ratio A/B at like host state."""
    log_ratio: float
    se: float
    df: float                  # of the interval (residual df less one)
    classes: int               # host classes among the launches
    slope: float               # b: the log time per log drift within classes
    p_host: float              # the partial F test of the host terms
    se_unadjusted: float       # the same model without the host terms, for the words

    @property
    def reduction(self) -> float:
        """How much the host terms narrowed the interval (1 - se / se without them)."""
        return 1 - self.se / self.se_unadjusted if self.se_unadjusted > 0 else 0.0


def host_classes(x: np.ndarray) -> np.ndarray:
    """Class index (0 = fastest) of each log drift, split at gaps >= CLASS_GAP."""
    order = np.argsort(x, kind="stable")
    out = np.zeros(x.size, dtype=int)
    k = 0
    for i in range(1, x.size):
        if x[order[i]] - x[order[i - 1]] >= CLASS_GAP:
            k += 1
        out[order[i]] = k
    return out


def _fit(y: np.ndarray, X: np.ndarray) -> tuple[np.ndarray, float, int, np.ndarray] | None:
    """Least squares: coefficients, residual sum of squares, residual df, (X'X)^-1; None when
    X is rank deficient or no df remains."""
    n, p = X.shape
    if n - p < 1 or np.linalg.matrix_rank(X) < p:
        return None
    xtx_inv = np.linalg.inv(X.T @ X)
    beta = xtx_inv @ (X.T @ y)
    r = y - X @ beta
    return beta, float(r @ r), n - p, xtx_inv


def adjusted(ya, ca, yb, cb, p_enter: float = P_ENTER) -> Adjusted | None:
    """The log ratio A/B of launch values ya / yb (log medians) at like host state, their
    log drift ca / cb beside them; None when the host terms do not explain the variance
    (partial F p >= p_enter), the effect cannot be separated from the host's state, or
    too few launches remain for an interval."""
    ya, yb = np.asarray(ya, float), np.asarray(yb, float)
    ca, cb = np.asarray(ca, float), np.asarray(cb, float)
    ca, cb = (ca.reshape(-1, 1) if ca.ndim == 1 else ca), (cb.reshape(-1, 1) if cb.ndim == 1 else cb)
    if ya.size < 1 or yb.size < 1 or ca.shape[0] != ya.size or cb.shape[0] != yb.size:
        return None
    if not (np.isfinite(ca).all() and np.isfinite(cb).all()):
        return None
    y = np.concatenate([ya, yb])
    cc = np.concatenate([ca, cb])
    c = cc[:, 0]
    extra = [cc[:, j] for j in range(1, cc.shape[1]) if np.ptp(cc[:, j]) > 0]
    side = np.concatenate([np.ones(ya.size), np.zeros(yb.size)])
    cls = host_classes(c)
    k = int(cls.max()) + 1
    shared = [j for j in range(k) if side[cls == j].min() == 0 and side[cls == j].max() == 1]
    if not shared:
        return None
    cols = [np.ones(y.size), side] + [(cls == j).astype(float) for j in range(1, k)] + extra + [c]
    full = _fit(y, np.column_stack(cols))
    reduced = _fit(y, np.column_stack(cols[:2]))
    if full is None or reduced is None:
        return None
    beta, rss, df_res, inv = full
    _, rss_r, df_r, inv_r = reduced
    q = df_r - df_res
    if df_res - 1 < MIN_DF or q < 1:
        return None
    if rss <= 0:
        p_host = 0.0 if rss_r > 0 else 1.0
    else:
        f = ((rss_r - rss) / q) / (rss / df_res)
        p_host = float(sps.f.sf(f, q, df_res)) if f > 0 else 1.0
    if p_host >= p_enter:
        return None
    se = math.sqrt(max(rss / df_res * inv[1, 1], 0.0))
    se_r = math.sqrt(max(rss_r / df_r * inv_r[1, 1], 0.0))
    return Adjusted(float(beta[1]), se, float(df_res - 1), k, float(beta[-1]), p_host, se_r)


def launch_drift(runs, launch_key) -> dict[int, dict[str, tuple[float, float]]]:
    """Per size, per launch (launch_key(run)), the host's state beside it: the log of the drift
    probe and the share of the time the ranks waited for a CPU (hostload.py; 0 where not
    recorded), where the probe was recorded (the first run of a launch that recorded it)."""
    out: dict[int, dict[str, tuple[float, float]]] = {}
    for r in runs:
        key = launch_key(r)
        waited: dict[int, list[float]] = {}
        for s in r.sizes:
            w = (s.host_load or {}).get("waited") if isinstance(s.host_load, dict) else None
            if isinstance(w, (int, float)) and math.isfinite(w) and 0 <= w <= 1:
                waited.setdefault(s.bytes, []).append(float(w))
        for b, s in r.sizes_by_bytes().items():
            d = getattr(s, "drift_ns", None)
            if d and d > 0:
                w = waited.get(b)
                out.setdefault(b, {}).setdefault(key, (math.log(d), sum(w) / len(w) if w else 0.0))
    return out


def words(a: Adjusted) -> str:
    """What the adjustment did, for a comparison's method line."""
    return (f"at like host state: adjusted for the drift probe ({a.classes} host class"
            f"{'es' if a.classes != 1 else ''}, slope {a.slope:.2f}, F test p {a.p_host:.2g}), "
            f"interval {100 * a.reduction:.0f} % narrower")
