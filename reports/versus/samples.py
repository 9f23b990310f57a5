"""The samples every consumer reads, made once and handed over.

One run's samples per size, pooled over repeated visits, sorted, as float64 in
ns of the pattern's reported time (units.py: a ping-pong's round trip / 2, a
stream's time per message, ...) is `reported(run)`.  A `SampleSet` holds that
for each of a list of runs (one configuration's launches, or a side of a
comparison) with the launch each run is: built once with `SampleSet.of(runs)`
and passed to what reads it (statistics, comparisons, launch spreads, speed
classes), which compute over its arrays and never convert a run again.

    reported(run)             {bytes: sorted float64 ns}, sizes ascending
    launch_key(run)           the launch a run is (its run_id)
    SampleSet.of(runs)        the runs' samples, per run and size
    s.pooled(skip)            {bytes: sorted ns}: every run's samples together
    s.by_launch(skip)         {bytes: {launch: sorted ns}}: the runs of one launch together
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .lazy import numpy as np

from .units import run_meaning


def reported(run) -> dict[int, np.ndarray]:
    """Sorted samples per size in ns of the reported time (read-only arrays)."""
    div = run_meaning(run).divisor
    out = {}
    for b, s in sorted(run.sizes_by_bytes().items()):
        x = np.sort(np.asarray(s.samples_ns, dtype=np.float64)) / div
        x.flags.writeable = False
        out[b] = x
    return out


def launch_key(run) -> str:
    """What identifies one process launch: its run_id (else file and launch index).
    Runs that carry one run_id (the same file given twice) are one launch."""
    rid = run.record.get("run_id")
    if isinstance(rid, str) and rid:
        return rid
    return f"{run.source}#{run.launch_id}"


def _together(parts: list[np.ndarray]) -> np.ndarray:
    return parts[0] if len(parts) == 1 else np.sort(np.concatenate(parts))


@dataclass(frozen=True, eq=False)
class SampleSet:
    """The samples of some runs, one entry per run in the order given: the
    launch it is and its sorted samples per size (reported(run)).  What is
    derived from them (pooled, by launch, a launch spread) is computed the first
    time it is asked of this set and kept with it (`once`)."""
    launches: tuple[str, ...]
    times: tuple[dict[int, np.ndarray], ...]
    _kept: dict = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, runs) -> SampleSet:
        return cls(tuple(launch_key(r) for r in runs), tuple(reported(r) for r in runs))

    def __len__(self) -> int:
        return len(self.times)

    @property
    def n_launches(self) -> int:
        return len(set(self.launches))

    def once(self, what, compute):
        """compute() the first time `what` is asked of this set; then what it returned."""
        if what not in self._kept:
            self._kept[what] = compute()
        return self._kept[what]

    def pooled(self, skip: set[int] | frozenset = frozenset()) -> dict[int, np.ndarray]:
        """Per size (ascending, sizes in `skip` left out) every run's samples together, sorted."""
        def pool():
            out: dict[int, list[np.ndarray]] = {}
            for t in self.times:
                for b, x in t.items():
                    if b not in skip:
                        out.setdefault(b, []).append(x)
            return {b: _together(v) for b, v in sorted(out.items())}
        return self.once(("pooled", frozenset(skip)), pool)

    def by_launch(self, skip: set[int] | frozenset = frozenset()) -> dict[int, dict[str, np.ndarray]]:
        """Per size (ascending, sizes in `skip` left out), per launch measuring it (first
        seen first), that launch's samples sorted (its runs together)."""
        def split():
            out: dict[int, dict[str, list[np.ndarray]]] = {}
            for key, t in zip(self.launches, self.times):
                for b, x in t.items():
                    if b not in skip:
                        out.setdefault(b, {}).setdefault(key, []).append(x)
            return {b: {k: _together(v) for k, v in d.items()} for b, d in sorted(out.items())}
        return self.once(("by launch", frozenset(skip)), split)
