"""The analysis of one run as plain data: per-size statistics, fitted regimes,
transitions (attributed), staircases.  `summary_document` is what
`versus summary --json` prints and what renderers consume.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .lazy import numpy as np

from . import __version__
from .fit import SegmentedFit, fit_segmented, with_boundaries
from .hostload import run_load
from .load import Run, group_launches
from .stats import (BETWEEN_LAUNCH, LIMITS_RULE, LOCATION_Q, WITHIN_LAUNCH, SizeStats, median_ci_sorted,
                    sorted_median, summarise_run)
from .speedclass import speed_classes
from .transitions import (Staircase, Transition, attribute, attribute_copy, classify, explain_staircases, fill_lattice,
                          find_staircases,
                          label_rest, left_out_summary, replicate_curves, reported_only, targeted_steps,
                          threshold_notes)
from .launches import interval_words, launch_figures, launch_spread, with_launch_figures
from .samples import SampleSet
from .units import run_meaning

PEAK_AGREEMENT = 0.8       # fitted asymptotic bandwidth below 0.8 x the measured peak: disagree
BURST_RATIO = 0.8          # the largest size below 0.8 x the peak: the peak is a burst, not sustained
ASYMPTOTE_REACHED = 0.5    # a fitted asymptote is determined when the largest size reaches half of it


@dataclass
class Analysis:
    run: Run
    sizes: list[SizeStats]
    fit: SegmentedFit | None
    transitions: list[Transition] = field(default_factory=list)
    staircases: list[Staircase] = field(default_factory=list)
    unmatched_thresholds: list[dict] = field(default_factory=list)
    invalid_bytes: list[int] = field(default_factory=list)     # sizes whose payload check failed
    invalid_included: bool = False                             # ... and were fitted anyway
    boundaries_found: int = 0      # boundaries the segmented search placed; the regimes are cut only
                                   # at the reported transitions (the others merged, fit.with_boundaries)
    left_out: dict = field(default_factory=dict)   # what reported_only left out (transitions.left_out_summary)

    def to_dict(self) -> dict:
        """The JSON face (computed once: an analysis does not change once made; callers read it)."""
        if "_dict" not in self.__dict__:
            self.__dict__["_dict"] = self._to_dict()
        return self.__dict__["_dict"]

    def _to_dict(self) -> dict:
        r = self.run
        t = r.transport
        return {
            "source": r.source,
            "run_id": r.record.get("run_id"),
            "launch_id": r.launch_id,
            "status": r.status,
            "complete": r.complete,
            "warnings": list(r.warnings),
            "host_load": run_load(r),
            "transport": {k: t.get(k) for k in ("name", "library", "version", "provider",
                                                "options", "thresholds")},
            "pattern": r.pattern,
            "pattern_params": r.record.get("pattern_params"),
            "time_label": run_meaning(r).time_label,
            "variant": r.variant,
            "hosts": r.record.get("hosts"),
            "sizes": [s.to_dict() for s in self.sizes],
            "control_limits_rule": LIMITS_RULE,
            "invalid_sizes": {"bytes": list(self.invalid_bytes), "included": self.invalid_included,
                              "note": invalid_note(self.invalid_bytes, self.invalid_included)},
            "fit": None if self.fit is None else {
                "model": f"T(n) = s + r*n per regime through medians of the {run_meaning(r).time_label}; "
                         "regime boundaries placed on lower quartiles (penalised segmented least squares)",
                "relative_noise": self.fit.rel_noise,
                "relative_noise_lower_quartile": self.fit.locator.rel_noise,
                "penalty": self.fit.penalty,
                "isolated_sizes_excluded": self.fit.excluded,
                "boundaries_found": self.boundaries_found,
                "regimes_note": (f"the segmented search placed {self.boundaries_found} boundaries; the regimes "
                                 f"are cut at the {len(self.transitions)} reported transitions only, the others "
                                 "merged (one segmentation for regimes and transitions)"),
                "min_bytes": int(self.fit.x[0]) if self.fit.x.size else None},
            "regimes": [g.summary() for g in self.fit.regimes] if self.fit else [],
            "transitions": [_transition_json(x) for x in self.transitions],
            "transitions_left_out": self.left_out,
            "staircases": [s.to_dict() for s in self.staircases],
            "unmatched_thresholds": self.unmatched_thresholds,
            "bandwidth": self.bandwidth(),
        }

    def bandwidth(self) -> dict:
        """The last regime's fitted asymptotic bandwidth beside the measured
        peak (bytes / median one-way time, over the sizes).  With T = s + r*n
        and s >= 0, n / T(n) < 1/r at every size, so a fitted value well
        below the peak means the last regime's line is not to be trusted
        (`agrees` false): quote the peak -- unless the largest sizes run well
        below it (`peak_is_burst`): a rate limiter's bucket or a cache lets a
        few medium sizes through faster than the path sustains, and the largest
        sizes (and the fit through them) are what it sustains.  The same regime's
        line through the lower quartiles (the unloaded path, steadier on a few
        noisy sizes) is given beside it."""
        usable = [s for s in self.sizes if s.bytes > 0 and np.isfinite(s.bandwidth_MBps)
                  and (self.invalid_included or s.valid is not False)]
        peak = max(((s.bandwidth_MBps, s.bytes) for s in usable), default=(None, None))
        largest = max(usable, key=lambda s: s.bytes, default=None)
        sustained = largest.bandwidth_MBps if largest is not None else None
        last = self.fit.regimes[-1].summary() if self.fit and self.fit.regimes else None
        fitted = last["bandwidth_MBps"] if last else None
        ratio = fitted / peak[0] if fitted and peak[0] else None
        loc = self.fit.locator.regimes[-1] if self.fit and self.fit.placement else None
        # the asymptote is what the line tends to far beyond the sizes: it is determined by
        # the data only when the sweep reaches it, at least half of it at the largest size
        # (the largest size at or beyond n½); else it is an extrapolation (seed 001's lines
        # said 16-150 GB/s beside measured peaks of 1-8 GB/s)
        reached = sustained / fitted if fitted and sustained else None
        determined = reached is not None and reached >= ASYMPTOTE_REACHED
        note = None
        if fitted and not determined:
            note = (f"not determined: the largest size measured ({largest.bytes} B) reaches "
                    f"{(reached or 0) * 100:.0f} % of the fitted {fitted:.4g} MB/s, which lies beyond what "
                    "was measured")
        headline, which = headline_bandwidth(fitted, peak[0], sustained)
        return {"asymptotic_MBps": fitted,
                "asymptotic_determined": determined if fitted else None,
                "asymptotic_note": note,
                "headline_MBps": headline, "headline": which,
                "asymptotic_lower_quartile_MBps": (1e3 / loc.r_ns_per_byte
                                                   if loc is not None and loc.r_ns_per_byte > 0 else None),
                "asymptotic_ci_MBps": last["bandwidth_ci_MBps"] if last else None,
                "asymptotic_from_bytes": last["from_bytes"] if last else None,
                "peak_MBps": peak[0], "peak_bytes": peak[1],
                "largest_MBps": sustained, "largest_bytes": largest.bytes if largest is not None else None,
                "peak_is_burst": None if sustained is None or not peak[0] else bool(sustained < BURST_RATIO * peak[0]),
                "asymptotic_over_peak": ratio,
                "agrees": None if ratio is None else bool(ratio >= PEAK_AGREEMENT)}


def headline_bandwidth(fitted: float | None, peak: float | None,
                       largest: float | None) -> tuple[float | None, str | None]:
    """The one bandwidth a table quotes for a curve, and which it is: the fitted
    asymptote (1/r of the last regime) when the largest size reaches at least
    ASYMPTOTE_REACHED of it and it agrees with the measured peak (PEAK_AGREEMENT);
    else the bandwidth at the largest size when the peak is a burst it does not
    sustain (BURST_RATIO); else the measured peak (bytes over the median time)."""
    if fitted and largest and largest >= ASYMPTOTE_REACHED * fitted and peak and fitted >= PEAK_AGREEMENT * peak:
        return fitted, "fitted asymptotic bandwidth (1/r of the last regime)"
    if largest is not None and peak and largest < BURST_RATIO * peak:
        return largest, "bandwidth at the largest size (the peak is a burst)"
    if peak is None:
        return None, None
    return peak, "peak measured bandwidth (bytes over the median time, best size)"


def _transition_json(t: Transition) -> dict:
    d = t.to_dict()
    if d["configured_bytes"] is None:
        del d["configured_bytes"]
        del d["threshold"]
    return d


def invalid_note(invalid: list[int], included: bool) -> str:
    """What happened to the sizes whose payload check failed, for a reader."""
    if not invalid:
        return ""
    where = ", ".join(str(b) for b in invalid)
    if included:
        return (f"payload check failed at {len(invalid)} size(s) ({where} B); "
                "kept in fits and comparisons as asked (--include-invalid)")
    return (f"payload check failed at {len(invalid)} size(s) ({where} B): their statistics are shown "
            "but they are left out of fits, peak bandwidth and comparisons (--include-invalid keeps them)")


def run_replicates(run: Run, x: np.ndarray):
    """Replicates of the lower-quartile curve at the fitted sizes x (transitions.replicate_curves)."""
    div = run_meaning(run).divisor
    visits: dict[int, list[np.ndarray]] = {}
    for s in run.sizes:
        visits.setdefault(s.bytes, []).append(np.asarray(s.samples_ns, dtype=np.float64) / div)
    return replicate_curves([visits.get(int(b), []) for b in x], LOCATION_Q)


def analyse_run(run: Run, min_bytes: int = 0, penalty: float | None = None,
                include_invalid: bool = False, samples: SampleSet | None = None) -> Analysis:
    """Statistics, segmented fit and attributed transitions of one run.  Sizes
    whose payload check failed keep their statistics but are left out of the
    fit unless include_invalid.  `run` may be a configuration's launches pooled
    (report.pool); `samples` is then their SampleSet, and where two or more of
    them measured a size its median, interval and bandwidth are the launches'
    (launches.with_launch_figures: the geometric mean of the launch medians, Student's
    t between launches), as the comparisons read the configuration.  The fit and
    the transitions are made on the pooled samples before that (their medians and
    lower quartiles, replicates per launch)."""
    sizes = summarise_run(run)
    invalid = [s.bytes for s in sizes if s.valid is False]
    pts = [s for s in sizes if s.bytes >= min_bytes and (include_invalid or s.valid is not False)]
    if len(pts) < 2:
        _launch_figures(sizes, samples, run)
        return Analysis(run, sizes, None, invalid_bytes=invalid, invalid_included=include_invalid)
    x = np.array([s.bytes for s in pts], dtype=np.float64)
    y = np.array([s.median_ns for s in pts])
    se = np.array([s.median_se_ns for s in pts])
    loc = np.array([s.q25_ns for s in pts])
    loc_se = np.array([s.q25_se_ns for s in pts])
    fit = fit_segmented(x, y, se, penalty=penalty, loc=loc, loc_se=loc_se)
    reps = run_replicates(run, fit.locator.x)
    trans = classify(fit, reps, test_noise=True)
    # thresholds first: a staircase never takes theirs
    notes = threshold_notes(run.transport.get("attrs") or {})
    unmatched = attribute(trans, run.thresholds, notes=notes)
    found = targeted_steps(fit, reps, trans, run.thresholds, notes=notes)
    unmatched = [u for u in unmatched if u["configured_bytes"] not in found]
    classified = list(trans)
    trans = reported_only(trans)
    attribute_copy(trans, run.copy_thresholds)
    stairs = find_staircases(trans, page_bytes=run.page_bytes)
    if fill_lattice(fit, reps, trans, stairs):     # steps the segmentation drew as a ramp
        for t in trans:
            t.staircase = None
        stairs = find_staircases(trans, page_bytes=run.page_bytes)
    explain_staircases(stairs, run.transport.get("attrs") or {})
    label_rest(trans, stairs)
    _launch_figures(sizes, samples, run)
    # one segmentation: the regimes shown are the pieces between the reported transitions
    placed = len(fit.regimes) - 1
    return Analysis(run, sizes, with_boundaries(fit, [t.before_bytes for t in trans]), trans, stairs,
                    unmatched, invalid, include_invalid, boundaries_found=placed,
                    left_out=left_out_summary(classified, trans))


def _launch_figures(sizes: list[SizeStats], samples: SampleSet | None, run: Run) -> None:
    if samples is not None and samples.n_launches > 1:
        with_launch_figures(sizes, samples, run_meaning(run).bytes_factor)


def summary_document(runs: list[Run], min_bytes: int = 0, penalty: float | None = None,
                     include_invalid: bool = False) -> dict:
    """The `versus summary --json` document."""
    analyses = [analyse_run(r, min_bytes, penalty, include_invalid) for r in runs]
    configs = [(g, SampleSet.of(g)) for g in group_launches(runs)]
    groups = [(g, s) for g, s in configs if s.n_launches > 1]
    return {
        "versus_analysis": __version__,
        "runs": [a.to_dict() for a in analyses],
        "configurations": [configuration_figures(g, s) for g, s in configs],
        "launch_spread": [{"label": g[0].label, "launches": list(s.launches),
                           "sizes": launch_spread(s), "speed_classes": speed_classes(g, s)} for g, s in groups],
    }


def configuration_figures(runs: list[Run], samples: SampleSet) -> dict:
    """One configuration's figure per size, its launches as the unit (launches.launch_figures):
    with two or more launches at a size the geometric mean of their medians and Student's t
    between them (`interval_kind` "between-launch"), with one the launch's median and its
    order-statistic interval ("within-launch"); the bandwidth is the bytes over that time and
    its interval's ends.  The median of every launch's samples pooled is given beside it."""
    m = run_meaning(runs[0])
    pooled = samples.pooled()
    checked: dict[int, set] = {}
    for r in runs:
        for s in r.sizes:
            checked.setdefault(s.bytes, set()).add(s.valid)
    rows = []
    for b, f in launch_figures(samples).items():
        moved = m.bytes_factor * b
        pm, pci = sorted_median(pooled[b]), median_ci_sorted(pooled[b])
        rows.append({
            "bytes": b, "launches": f.launches, "interval_kind": f.kind,
            "median_us": f.median_ns / 1e3,
            "median_ci_us": [v / 1e3 for v in f.ci_ns] if f.ci_ns else None,
            "bandwidth_MBps": moved / f.median_ns * 1e3 if f.median_ns > 0 else None,
            "bandwidth_ci_MBps": [moved / f.ci_ns[1] * 1e3, moved / f.ci_ns[0] * 1e3]
            if f.ci_ns and f.ci_ns[0] > 0 else None,
            "pooled_median_us": pm / 1e3, "pooled_median_ci_us": [v / 1e3 for v in pci] if pci else None,
            "valid": _valid(checked.get(b, {None}))})
    n = samples.n_launches
    kind = BETWEEN_LAUNCH if n > 1 else WITHIN_LAUNCH
    return {"label": runs[0].label, "launches": list(dict.fromkeys(samples.launches)), "n_launches": n,
            "time_label": m.time_label, "interval_kind": kind, "interval": interval_words(kind, n),
            "sizes": rows}


def _valid(seen: set) -> bool | None:
    """A size's payload check over its launches: False when any failed, None when none checked."""
    return False if False in seen else (None if seen == {None} else True)
