"""How long the rest of a campaign takes, from the measured cost per size.

Every size record a run writes carries `elapsed_ns`, the time that size took (warm-up
included), and the number of timed units behind it (iterations × batch + warm-up).  Their
ratio is the cost of one unit at that size.  A run still to come is predicted size by size:
its own count of units at each size of its schedule (the campaign knows its sizes,
iterations, warm-ups and batch) times the cost per unit at that size, read from the most
alike run already measured (same transport, pattern, variant, options and node count; else
same transport, pattern and node count; else same pattern and node count; else any),
interpolated linearly in bytes between measured sizes and in proportion to the bytes past
the largest one.  What a launch spends outside its size visits (wall time minus their sum: a
start-up, and a little per visit) is added, fitted over the same most alike runs.  Runs measured before, complete in the results directory,
count as measured.

The average-run ETA this replaces was off 10-60x on campaigns whose runs differ in size
(one size of 10^5 round trips next to 10,000 sizes of 100): the estimate now follows what
each run asks for.  A transport not measured yet is predicted from another one's costs and
corrected after its own first run.
"""
from __future__ import annotations

import bisect
import json
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from .argtypes import parse_bytes

RUNNER_DEFAULTS = {"iterations": 1000, "iterations_large": 100, "warmup": 100, "warmup_large": 10,
                   "large_from": 64 << 10}
_MAX_SIZES = 1 << 20
MAX_BATCH = 100000          # versus-run's largest batch
ADAPTIVE_MAX_SIZES = 200    # versus-run's default --adaptive-max-sizes
PER_VISIT_S = 0.002      # what a size visit costs outside its timed units, measured here (1.9-2.6 ms)


def _bytes(text: str) -> int | None:
    """A size as versus-run reads it (argtypes.parse_bytes), or None."""
    try:
        return parse_bytes(text)
    except ValueError:
        return None


def schedule_sizes(spec: str) -> list[int] | None:
    """The sizes of a --sizes SPEC as versus-run expands them (N, MIN:MAX powers of two plus 0
    when MIN is 0, MIN:MAX:+STEP), sorted, each once; None when it does not parse (the runner
    says why when the run starts)."""
    out: set[int] = set()
    for item in str(spec).split(","):
        f = item.split(":")
        if len(f) > 3:
            return None
        lo = _bytes(f[0])
        if lo is None:
            return None
        if len(f) == 1:
            out.add(lo)
            continue
        hi = _bytes(f[1])
        if hi is None or hi < lo:
            return None
        if len(f) == 3:
            step = _bytes(f[2][1:]) if f[2].startswith("+") else None
            if not step or (hi - lo) // step + 1 > _MAX_SIZES:
                return None
            out.update(range(lo, hi + 1, step))
            continue
        if lo == 0:
            out.add(0)
        v = 1
        while v <= hi:
            if v >= lo:
                out.add(v)
            v <<= 1
    return sorted(out)


def _arg(args: list, name: str) -> str | None:
    """The value of --name in an argument list (--name V or --name=V), the last one given."""
    val = None
    for i, a in enumerate(args):
        a = str(a)
        if a == name and i + 1 < len(args):
            val = str(args[i + 1])
        elif a.startswith(name + "="):
            val = a.split("=", 1)[1]
    return val


@dataclass
class Plan:
    """What a run asks for: per size the number of timed units before batching (iterations,
    warm-up) and the batch when fixed."""
    key: tuple
    sizes: list[int]
    iterations: list[int]
    warmup: list[int]
    batch: int | None
    refine_to: int = 0       # --adaptive: the runner adds sizes up to this many in all


def plan_of(spec) -> Plan | None:
    sizes = schedule_sizes(spec.sizes)
    if sizes is None:
        return None
    extra = [str(a) for a in spec.extra_args]
    lf = _arg(extra, "--large-from")
    large_from = _bytes(lf) if lf is not None else None
    if large_from is None:
        large_from = RUNNER_DEFAULTS["large_from"]

    def count(v, default):
        return int(v) if v is not None else default
    it = count(spec.iterations, RUNNER_DEFAULTS["iterations"])
    it_l = count(spec.iterations_large, RUNNER_DEFAULTS["iterations_large"])
    w = count(spec.warmup, RUNNER_DEFAULTS["warmup"])
    w_l = count(spec.warmup_large, RUNNER_DEFAULTS["warmup_large"])
    batch = int(spec.batch) if spec.batch is not None and str(spec.batch).isdigit() else None
    refine_to = 0
    if "--adaptive" in extra:
        cap = _arg(extra, "--adaptive-max-sizes")
        refine_to = int(cap) if cap is not None and cap.isdigit() else ADAPTIVE_MAX_SIZES
    return Plan(key=run_key(spec.transport, spec.pattern, spec.variant, spec.options, (spec.nodes or 1) > 1),
                sizes=sizes, iterations=[it if b < large_from else it_l for b in sizes],
                warmup=[w if b < large_from else w_l for b in sizes], batch=batch, refine_to=refine_to)


def run_key(transport, pattern, variant, options, multi: bool) -> tuple:
    opts = tuple(sorted((str(k), str(v)) for k, v in (options or {}).items()))
    return (str(transport), str(pattern), str(variant or ""), opts, bool(multi))


def _levels(key: tuple) -> list[tuple]:
    transport, pattern, variant, opts, multi = key
    return [key, (transport, pattern, multi), (pattern, multi), (multi,), ()]


@dataclass
class Measured:
    """One measured run: cost per timed unit at each size, its batch there, and its start-up."""
    key: tuple
    sizes: list[int] = field(default_factory=list)
    unit_ns: list[float] = field(default_factory=list)
    batch: list[int] = field(default_factory=list)
    startup_s: float | None = None   # wall time outside the size visits: start-up and per-visit work
    visits: int = 0                  # size visits (records) it made
    clock_floor_ns: float = 30.0     # the larger of its clock's cost and resolution (run record)
    auto_batch: bool = True          # the runner chose its batch (not --batch K)

    def cost_ns(self, b: int) -> float:
        """Cost of one unit at b bytes: linear between measured sizes; past the largest (from
        1 KiB on) in proportion to the bytes; else along the nearest two (never below a tenth of
        the nearest measured cost)."""
        xs, ys = self.sizes, self.unit_ns
        if len(xs) == 1:
            return ys[0]
        i = bisect.bisect_left(xs, b)
        if i < len(xs) and xs[i] == b:
            return ys[i]
        if i >= len(xs) and xs[-1] >= 1024:
            # past the largest size measured: in proportion to the bytes (the slope of the last
            # two sizes is noise more often than not)
            return ys[-1] * b / xs[-1]
        lo, hi = (0, 1) if i == 0 else (len(xs) - 2, len(xs) - 1) if i >= len(xs) else (i - 1, i)
        x0, x1, y0, y1 = xs[lo], xs[hi], ys[lo], ys[hi]
        y = y0 + (y1 - y0) * (b - x0) / (x1 - x0) if x1 != x0 else y0
        near = ys[0] if i == 0 else ys[-1] if i >= len(xs) else min(y0, y1)
        return max(y, near / 10)

    def batch_at(self, b: int) -> int:
        i = min(bisect.bisect_left(self.sizes, b), len(self.sizes) - 1)
        return self.batch[i]



def read_costs(path: Path, key: tuple | None, wall_s: float | None = None) -> Measured | None:
    """The cost per unit at each size of a results file (its size records' elapsed_ns), or None
    when it has no size record with a time.  key None: what the run record says it measured."""
    m = Measured(key=key)
    total_ns = 0.0
    try:
        with open(path, "rb") as f:
            for line in f:
                if b'"run"' in line[:32]:
                    try:
                        run = json.loads(line)
                        tr = run.get("transport") or {}
                        if key is None:
                            m.key = run_key(tr.get("name"), run.get("pattern"), run.get("variant"),
                                            tr.get("options") or {}, len(set(run.get("hosts") or [])) > 1)
                        m.auto_batch = str((run.get("iterations") or {}).get("batch", "auto")) == "auto"
                        timer = run.get("timer") or {}
                        floor = max(float(timer.get("cost_ns") or 0), float(timer.get("resolution_ns") or 0))
                        if floor > 0:
                            m.clock_floor_ns = floor
                    except (ValueError, TypeError, AttributeError):
                        pass
                    continue
                if b'"size"' not in line[:32]:        # samples make a line long: parse size records only
                    continue
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(rec, dict) or rec.get("record") != "size":
                    continue
                el, b = rec.get("elapsed_ns"), rec.get("bytes")
                it, w, bt = rec.get("iterations"), rec.get("warmup") or 0, rec.get("batch") or 1
                if not all(isinstance(v, (int, float)) and v >= 0 for v in (el, b, it, w, bt)):
                    continue
                units = it * bt + w
                if units <= 0 or el <= 0:
                    continue
                m.sizes.append(int(b))
                m.unit_ns.append(el / units)
                m.batch.append(int(bt))
                m.visits += 1
                total_ns += el
    except OSError:
        return None
    if not m.sizes or m.key is None:
        return None
    # the same size visited again (rounds, passes): the median cost there
    by: dict[int, list] = {}
    for b, u, bt in zip(m.sizes, m.unit_ns, m.batch):
        by.setdefault(b, []).append((u, bt))
    m.sizes = sorted(by)
    m.unit_ns = [statistics.median(u for u, _ in by[b]) for b in m.sizes]
    m.batch = [max(bt for _, bt in by[b]) for b in m.sizes]
    if wall_s is not None:
        m.startup_s = max(0.0, wall_s - total_ns / 1e9)
    return m


class Estimator:
    """Predicts the seconds a planned run takes from the runs measured so far."""

    def __init__(self):
        self.measured: list[Measured] = []

    def add(self, m: Measured | None) -> None:
        if m is not None:
            self.measured.append(m)

    def _alike(self, key: tuple) -> list[Measured]:
        want = _levels(key)
        for j, level in enumerate(want):
            found = [m for m in self.measured if _levels(m.key)[j] == level]
            if found:
                return found
        return []

    def predict(self, plan: Plan | None) -> float | None:
        if plan is None or not self.measured:
            return None
        alike = self._alike(plan.key)
        guesses = []
        for m in alike:
            costs = []
            for b, it, w in zip(plan.sizes, plan.iterations, plan.warmup):
                # a fixed batch: that many units per sample; else the runner's own choice: the
                # one the alike run made at that size when it chose too, or else the rule it
                # follows from the unit's time, to make the clock's cost under 1 % of a sample
                # (vs_timer_batch_for: K = ceil(100 x clock floor / unit), 1 to 100,000)
                u = m.cost_ns(b)
                if plan.batch is not None:
                    batch = plan.batch
                elif m.auto_batch:
                    batch = m.batch_at(b)
                else:
                    batch = min(MAX_BATCH, max(1, math.ceil(100.0 * m.clock_floor_ns / u))) if u > 0 else 1
                costs.append(u * (it * batch + w))
            # sizes --adaptive adds (taken to reach its cap: a staircase does): each at the
            # mean cost of the schedule's sizes, between which they fall
            extra = max(0, plan.refine_to - len(costs))
            guesses.append((sum(costs) + extra * (sum(costs) / len(costs) if costs else 0.0)) / 1e9)
        visits = max(len(plan.sizes), plan.refine_to)
        return statistics.median(guesses) + self._outside(alike, visits)

    def _outside(self, alike: list[Measured], visits: int) -> float:
        """Wall time outside the size visits, for a run of `visits` visits: a start-up plus a
        cost per visit (agreeing on the batch, writing the record).  The start-up is the median
        of what runs of fewer than 10 visits spent outside them, and the cost per visit the
        median of what the others spent beyond it per visit (PER_VISIT_S while none has 10
        visits or more); with no short run, a straight line through (visits, time outside).""" 
        pts = [(m.visits, m.startup_s) for m in alike if m.startup_s is not None] or \
            [(m.visits, m.startup_s) for m in self.measured if m.startup_s is not None]
        if not pts:
            return 0.0
        short = [g for n, g in pts if n < 10]
        ns = [n for n, _ in pts]
        if short:
            start = statistics.median(short)
            long_ = [max(0.0, (g - start) / n) for n, g in pts if n >= 10]
            per = statistics.median(long_) if long_ else PER_VISIT_S
        elif len(set(ns)) >= 2:        # no short run: a straight line through (visits, gap)
            mn, mg = statistics.fmean(ns), statistics.fmean(g for _, g in pts)
            per = max(0.0, sum((n - mn) * (g - mg) for n, g in pts) / sum((n - mn) ** 2 for n in ns))
            start = mg - per * mn
            if start < 0:
                start, per = 0.0, sum(n * g for n, g in pts) / sum(n * n for n in ns)
        else:
            gap = statistics.median(g for _, g in pts)
            per = min(PER_VISIT_S, gap / ns[0])
            start = gap - per * ns[0]
        return start + per * visits


__all__ = ["Estimator", "Measured", "Plan", "plan_of", "read_costs", "run_key", "schedule_sizes"]
