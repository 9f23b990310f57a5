"""Per-size statistics of round-trip samples (vectorised; sorts once).

All times in the returned `SizeStats` are nanoseconds of the pattern's reported
time (units.py: one-way = round trip / 2 for a ping-pong, time per message for
a stream, ...) unless the field name says `rtt`.  Every figure derives from one
statistic, the median reported time with its order-statistic interval: the
bandwidth is the bytes moved over the median time (a ping-pong moves `bytes`
each way per round trip: bytes / (median RTT / 2)), its interval the bytes
over the median's interval; never a mean of per-sample rates, and never over
the mean time, which the few samples a busy host delays dominate.

That interval is the one within a launch.  A configuration of several launches
takes its figure and interval from its launches instead (launches.launch_interval,
applied by launches.with_launch_figures; `interval_kind` says which a size carries).
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache

from .lazy import numpy as np
from .lazy import scipy_stats as sps

from .samples import reported
from .units import run_meaning

CONFIDENCE = 0.95
SHAPIRO_MAX = 5000
LOCATION_Q = 0.25          # the low quantile that places change points (docs/analysis.md)
LIMIT_Q = 0.00135          # control limits: the 0.135th and 99.865th percentiles (normal-equivalent of ±3σ)
LIMITS_RULE = ("control limits: the 0.135th and 99.865th percentiles of the samples (order statistics, "
               "the share a normal sample leaves outside mean ± 3σ); below 741 samples these are the "
               "smallest and largest sample and none lies outside; never below 0")


WITHIN_LAUNCH = "within-launch"      # the kinds of a size's interval (SizeStats.interval_kind)
BETWEEN_LAUNCH = "between-launch"

MEDIAN_SE_FACTOR = 1.2533     # sd of a normal sample's median is sqrt(pi/2) sd / sqrt(n)


def se_from_ci(ci: tuple[float, float] | None, sd: float, n: int, factor: float) -> float:
    """A quantile's standard error from its 95 % order-statistic CI (normal
    approximation), or factor * sd / sqrt(n) where there is no CI (few samples)."""
    if ci is None:
        return sd * factor / np.sqrt(max(n, 1))
    return max((ci[1] - ci[0]) / (2 * 1.96), 0.0)


@dataclass
class SizeStats:
    bytes: int
    n: int
    batch: int
    min_ns: float
    max_ns: float
    median_ns: float
    median_ci_ns: tuple[float, float] | None     # distribution-free 95 % CI (order statistics)
    mean_ns: float
    std_ns: float
    stderr_ns: float
    p5_ns: float
    p95_ns: float
    p99_ns: float
    lcl_ns: float                   # control limits: 0.135th / 99.865th percentiles (LIMITS_RULE)
    ucl_ns: float
    outside_limits: int             # samples outside the control limits
    normality_test: str | None      # 'shapiro' or None when not testable
    normality_p: float | None
    normal: bool | None             # p >= 0.05
    bandwidth_MBps: float           # bytes moved / median reported time, 1 MB = 1e6 bytes
    mean_rtt_ns: float
    bandwidth_ci_MBps: tuple[float, float] | None = None   # bytes over the median's 95 % CI
    q25_ns: float = float("nan")    # lower quartile: where change points are placed
    q25_ci_ns: tuple[float, float] | None = None
    valid: bool | None = None       # payload check: None not checked, False failed (left out of fits)
    validation: dict | None = None  # the first failure (docs/results-schema.md)
    # which interval median_ci_ns is: "within-launch" (order statistics of the samples of one
    # launch), or "between-launch" once launches.with_launch_figures has set median_ns to the
    # geometric mean of the launch medians and median_ci_ns to Student's t over their logs
    interval_kind: str = WITHIN_LAUNCH
    launches: int = 1               # launches that measured this size (behind median_ns)
    pooled_median_ns: float | None = None                  # every launch's samples together: their
    pooled_median_ci_ns: tuple[float, float] | None = None  # median and its order-statistic interval

    def pooled_values(self) -> tuple[float, tuple[float, float] | None]:
        """The median of all the samples pooled and its order-statistic interval (the
        figures themselves until launches.with_launch_figures replaced them)."""
        if self.pooled_median_ns is None:
            return self.median_ns, self.median_ci_ns
        return self.pooled_median_ns, self.pooled_median_ci_ns

    @property
    def q25_se_ns(self) -> float:
        """Standard error of the lower quartile from its order-statistic CI."""
        return se_from_ci(self.q25_ci_ns, self.std_ns, self.n, 1.3)

    @property
    def median_se_ns(self) -> float:
        """Standard error of the median from its CI (normal approximation)."""
        return se_from_ci(self.median_ci_ns, self.std_ns, self.n, MEDIAN_SE_FACTOR)

    def to_dict(self) -> dict:
        # a shallow copy of the fields (dataclasses.asdict deep-copies: slow for a large report)
        d = {k: getattr(self, k) for k in _size_fields()}
        d["validation"] = dict(self.validation) if self.validation else self.validation
        d["median_ci_ns"] = list(self.median_ci_ns) if self.median_ci_ns else None
        d["bandwidth_ci_MBps"] = list(self.bandwidth_ci_MBps) if self.bandwidth_ci_MBps else None
        # The JSON face speaks microseconds; keep both.
        for k in ("min", "max", "median", "mean", "std", "stderr", "p5", "p95", "p99", "lcl", "ucl"):
            d[f"{k}_us"] = d[f"{k}_ns"] / 1e3
        d["median_ci_us"] = [v / 1e3 for v in self.median_ci_ns] if self.median_ci_ns else None
        pm, pci = self.pooled_values()
        d["pooled_median_ns"], d["pooled_median_ci_ns"] = pm, list(pci) if pci else None
        d["pooled_median_us"] = pm / 1e3
        d["pooled_median_ci_us"] = [v / 1e3 for v in pci] if pci else None
        d["q25_ci_ns"] = list(self.q25_ci_ns) if self.q25_ci_ns else None
        d["q25_us"] = self.q25_ns / 1e3
        d["q25_ci_us"] = [v / 1e3 for v in self.q25_ci_ns] if self.q25_ci_ns else None
        return d


@lru_cache(maxsize=1)
def _size_fields() -> tuple[str, ...]:
    """SizeStats' field names (dataclasses.fields costs more than the copy, 45,000 times a report)."""
    return tuple(f.name for f in fields(SizeStats))


@lru_cache(maxsize=4096)
def median_ci_ranks(n: int, confidence: float = CONFIDENCE) -> tuple[int, int] | None:
    """0-based indexes (lo, hi) into the sorted sample bounding the median with
    at least `confidence` coverage (binomial order statistics), or None if n is
    too small for any such interval."""
    alpha = (1 - confidence) / 2
    l = int(sps.binom.ppf(alpha, n, 0.5))      # P(B <= l-1) < alpha
    if l < 1:
        return None
    return l - 1, n - l


@lru_cache(maxsize=4096)
def quantile_ci_ranks(n: int, q: float, confidence: float = CONFIDENCE) -> tuple[int, int] | None:
    """0-based indexes (lo, hi) into the sorted sample bounding the q-quantile
    with about `confidence` coverage (binomial order statistics: the count of
    samples below the quantile is Bin(n, q)), or None when n is too small."""
    alpha = (1 - confidence) / 2
    lo = int(sps.binom.ppf(alpha, n, q))           # count below: at least lo with prob >= alpha
    hi = int(sps.binom.ppf(1 - alpha, n, q))
    if lo < 1 or hi >= n:
        return None
    return lo - 1, hi


def quantile_ci_sorted(sorted_x: np.ndarray, q: float,
                       confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    r = quantile_ci_ranks(int(sorted_x.size), q, confidence)
    if r is None:
        return None
    return float(sorted_x[r[0]]), float(sorted_x[r[1]])


def median_ci_sorted(sorted_x: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    r = median_ci_ranks(int(sorted_x.size), confidence)
    if r is None:
        return None
    return float(sorted_x[r[0]]), float(sorted_x[r[1]])


def sorted_median(x: np.ndarray) -> float:
    """The median of an ascending array, without sorting it again."""
    n = x.size
    h = n // 2
    return float(x[h]) if n % 2 else float(0.5 * (x[h - 1] + x[h]))


def median_summary(x: np.ndarray) -> tuple[int, float, float, float]:
    """(n, median, sd, standard error of the median) of an ascending array, without
    the tests summarise_sorted runs (what a launch spread needs of each launch)."""
    n = int(x.size)
    sd = float(x.std(ddof=1)) if n > 1 else 0.0
    return n, sorted_median(x), sd, se_from_ci(median_ci_sorted(x), sd, n, MEDIAN_SE_FACTOR)


def normality(x: np.ndarray, seed: int = 0) -> tuple[str | None, float | None]:
    """Shapiro-Wilk on at most 5000 samples (a seeded random subset when larger)."""
    if x.size < 3 or np.ptp(x) == 0:
        return None, None
    if x.size > SHAPIRO_MAX:
        rng = np.random.default_rng(seed)
        x = rng.choice(x, SHAPIRO_MAX, replace=False)
    # scipy's function without its array-API wrapper (same test on a 1-D finite array; the
    # wrapper's argument handling took 5x the test's time, most of a large report's analysis)
    shapiro = getattr(sps.shapiro, "__wrapped__", sps.shapiro)
    res = shapiro(x)
    return "shapiro", float(res.pvalue)


def sorted_percentiles(x: np.ndarray, qs) -> tuple[float, ...]:
    """np.percentile's default (linear) percentiles of an ascending array, read off
    it by index instead of partitioning it again."""
    pos = np.asarray(qs, dtype=np.float64) / 100 * (x.size - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, x.size - 1)
    frac = pos - lo
    return tuple(float(v) for v in x[lo] + (x[hi] - x[lo]) * frac)


def control_limits_sorted(x: np.ndarray) -> tuple[float, float]:
    """Control limits of an ascending sample: its LIMIT_Q and 1 - LIMIT_Q quantiles
    as order statistics (the k-th smallest and k-th largest sample, k = floor(n q) + 1),
    never interpolated past the data.  Not mean ± 3σ: on timing data with a long upper
    tail that puts the lower limit below 0 (seed 002: -10,014 us).  A sample of
    times is never negative, so neither are these."""
    k = int(np.floor(x.size * LIMIT_Q))
    return float(x[k]), float(x[x.size - 1 - k])


def summarise_size(nbytes: int, samples_ns: np.ndarray, batch: int = 1,
                   divisor: float = 2.0, bytes_factor: float = 1.0) -> SizeStats:
    """Statistics of one size from its samples (ns).  Each sample / divisor is
    the reported time (a ping-pong's round trip / 2 = one-way latency; see
    units.py for the other patterns), during which bytes_factor * nbytes move."""
    raw = np.asarray(samples_ns, dtype=np.float64)
    if raw.size == 0:
        raise ValueError(f"size {nbytes}: no samples")
    return summarise_sorted(nbytes, np.sort(raw) / divisor, batch, divisor, bytes_factor)


def summarise_sorted(nbytes: int, x: np.ndarray, batch: int = 1,
                     divisor: float = 2.0, bytes_factor: float = 1.0) -> SizeStats:
    """summarise_size of samples already sorted and in the reported time
    (samples.reported: sample / divisor)."""
    n = int(x.size)
    if n == 0:
        raise ValueError(f"size {nbytes}: no samples")
    mean = float(x.mean())
    std = float(x.std(ddof=1)) if n > 1 else 0.0
    p5, q25, med, p95, p99 = sorted_percentiles(x, (5, 100 * LOCATION_Q, 50, 95, 99))
    lcl, ucl = control_limits_sorted(x)
    outside = int(np.searchsorted(x, lcl, "left") + (n - np.searchsorted(x, ucl, "right")))
    test, p = normality(x)
    mean_rtt = divisor * mean
    moved = bytes_factor * nbytes
    bw = moved / med * 1e3 if med > 0 else float("nan")   # bytes/ns -> MB/s
    med_ci = median_ci_sorted(x)
    bw_ci = (moved / med_ci[1] * 1e3, moved / med_ci[0] * 1e3) if med_ci and med_ci[0] > 0 else None
    return SizeStats(
        bytes=int(nbytes), n=n, batch=int(batch),
        min_ns=float(x[0]), max_ns=float(x[-1]), median_ns=med,
        median_ci_ns=med_ci, mean_ns=mean, std_ns=std,
        stderr_ns=std / np.sqrt(n) if n > 1 else 0.0,
        p5_ns=p5, p95_ns=p95, p99_ns=p99, lcl_ns=lcl, ucl_ns=ucl, outside_limits=outside,
        normality_test=test, normality_p=p, normal=None if p is None else bool(p >= 0.05),
        bandwidth_MBps=bw, mean_rtt_ns=mean_rtt, bandwidth_ci_MBps=bw_ci,
        q25_ns=q25, q25_ci_ns=quantile_ci_sorted(x, LOCATION_Q))


def summarise_run(run) -> list[SizeStats]:
    """Per-size statistics of a run, sizes ascending (repeated visits pooled)."""
    m = run_meaning(run)
    view = reported(run)
    out = []
    for b, s in run.sizes_by_bytes().items():
        st = summarise_sorted(b, view[b], s.batch, m.divisor, m.bytes_factor)
        st.valid, st.validation = s.valid, s.validation
        out.append(st)
    return out


def describe(values) -> dict:
    """Mean, median, std dev, std error, min, max of a list of values (seed 001/004 tables)."""
    v = np.asarray(values, dtype=np.float64)
    n = int(v.size)
    if n == 0:
        return {"n": 0, "mean": None, "median": None, "std": None, "stderr": None,
                "min": None, "max": None}
    sd = float(v.std(ddof=1)) if n > 1 else 0.0
    return {"n": n, "mean": float(v.mean()), "median": float(np.median(v)), "std": sd,
            "stderr": sd / np.sqrt(n) if n > 1 else 0.0, "min": float(v.min()), "max": float(v.max())}


@lru_cache(maxsize=256)
def _median_rank_cdf(n: int) -> np.ndarray:
    """P(median of a resample of n <= x_(k)) for k = 1..n: P(Bin(n, k/n) >= n//2 + 1)."""
    k = np.arange(1, n + 1)
    cdf = sps.binom.sf(n // 2, n, k / n)
    cdf.flags.writeable = False
    return cdf


@lru_cache(maxsize=256)
def median_rank_probabilities(n: int) -> np.ndarray:
    """P(the median of a resample of n is x_(k)), k = 1..n: the exact bootstrap
    distribution of the sample median over the order statistics."""
    p = np.diff(_median_rank_cdf(n), prepend=0.0)
    p.flags.writeable = False
    return p


def bootstrap_median_draws(sorted_x: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Draws from the exact bootstrap distribution of the sample median.

    The median of a resample of size n is the k-th order statistic x_(k) with
    P(median* <= x_(k)) = P(Bin(n, k/n) >= m), m = n//2 + 1 (upper median).
    Sampling k by inverting that CDF costs O(n) instead of `draws` resamples.
    """
    n = sorted_x.size
    if n == 1:
        return np.full(draws, float(sorted_x[0]))
    cdf = _median_rank_cdf(int(n))
    u = rng.random(draws)
    idx = np.searchsorted(cdf, u, side="left")
    return sorted_x[np.minimum(idx, n - 1)].astype(np.float64)
