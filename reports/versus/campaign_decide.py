"""`versus campaign --until-decided`: launch the configurations of undecided comparisons
again, one launch each per round, until every comparison is decided.

A campaign's comparisons are the report's (report.comparison_jobs): the pairs the
campaign asks for, and each library configuration against the fastest of its
group.  A comparison's statements are made over ranges of sizes, each with its
between-launch interval.  After the planned launches (the first look) and after
each round of one more launch of every configuration that takes part in a
comparison still undecided, every comparison is made again with repeated
confidence intervals (sequential.py: a Pocock boundary over looks at n launches a
side, n from the planned launches to --max-launches), and the campaign stops
adding launches to a comparison when each of its ranges is

- decided: its interval excludes 1 (a claim: '+', '-' or '=') or lies within the
  minimum effect on both sides of 1 (no practical difference), or
- futile: at the spread seen, even --max-launches launches a side would not decide
  it (stopping without a decision makes no false one),

or when --max-launches is reached.  A configuration keeps getting launches while
any of its comparisons needs them.  The launches of a round are interleaved (one
of each configuration, in file order) like the planned ones.  The manifest keeps
the design (its looks, its nominal level, why it stopped, what each look found),
and the report reads its comparisons at that nominal level, so that the report's
claims are the ones the design's error rate speaks for.
"""
from __future__ import annotations

import dataclasses
import math

from .load import InputError

MAX_LAUNCHES = 10


def light_configs(results, files: set[str]) -> list:
    """The configurations of the launches `files` (names in the results directory) with the sizes
    comparison_jobs reads (each size's median over the pooled launches, its validity), without
    the analysis a report makes."""
    import json

    from .lazy import numpy as np
    from .load import load_file
    from .report import MANIFEST, group_configs
    # read here, one file after another: the campaign's signal handlers must not reach forked workers
    doc = json.loads((results / MANIFEST).read_text(encoding="utf-8"))
    entries = {str((results / e["file"]).resolve()): e for e in doc.get("runs", [])}
    runs = [r for e in doc.get("runs", []) if e["file"] in files and e.get("status") == "ok"
            for r in load_file(results / e["file"])]
    configs = group_configs(runs, entries)
    for c in configs:
        invalid = {b for r in c.runs for b in r.invalid_bytes()}
        pooled = c.samples.pooled()
        c.sizes = [{"bytes": b, "median_us": float(np.median(v)) / 1e3, "valid": b not in invalid}
                   for b, v in sorted(pooled.items()) if len(v)]
    return configs


def range_state(cmp, regime, min_effect: float, last: int) -> str:
    """'decided', 'futile' or 'open' for one statement of a comparison made at the design's level."""
    from .compare import to_decide
    mark = regime.mark.strip("()")
    if regime.mark in ("+", "-", "="):
        return "decided"
    lo, hi = regime.ratio_ci or (0.0, math.inf)
    if mark == "~" and lo > 0 and 1 - min_effect < lo and hi < 1 / (1 - min_effect):
        return "decided"
    grp = [s for s in cmp.sizes if regime.from_bytes <= s.bytes <= regime.to_bytes]
    conf = 1 - cmp.alpha / max(1, len(cmp.regimes))
    if not grp or not regime.ratio or not (lo > 0 and math.isfinite(hi)):
        return "open"
    # futile when, at the estimate one standard error farther from 1, the launches that would decide
    # it exceed the budget.  At the estimate alone three launches a side stopped a +15 % comparison
    # as futile in 4 of 5 trials that ten launches a side then claimed; at the interval's far end no
    # comparison was ever futile (A/A ran to the budget every time).
    got = to_decide(grp, (regime.ratio, lo, hi), min_effect, conf)
    if got is None:
        return "open"
    la, lb = min(g.launches_a for g in grp), min(g.launches_b for g in grp)
    se = got[2] * math.sqrt(1 / la + 1 / lb)      # the log ratio's standard error, from the launch sd
    bold = regime.ratio * math.exp(se if regime.ratio >= 1 else -se)
    got2 = to_decide(grp, (bold, lo, hi), min_effect, conf)
    if got2 is not None and (not math.isfinite(got2[0]) or got2[0] > last):
        return "futile"
    return "open"


def look(results, files: set[str], pairs: list[dict], alpha: float, last: int) -> list[dict]:
    """Every comparison of the campaign made at level alpha: its configurations, its ranges' marks
    and states, and whether it is still open (some range neither decided nor futile)."""
    from .compare import MIN_EFFECT, compare_runs
    from .report import comparison_jobs
    configs = light_configs(results, files)
    out = []
    for key in dict.fromkeys(c.group for c in configs):
        members = [c for c in configs if c.group == key]
        jobs, _ = comparison_jobs(members, pairs)
        for a, b, _why in jobs:
            if len(a.runs) < 2 or len(b.runs) < 2:
                continue
            cmp = compare_runs(a.runs, b.runs, alpha=alpha, samples=(a.samples, b.samples))
            states = [range_state(cmp, r, MIN_EFFECT, last) for r in cmp.regimes]
            out.append({"a": a.id, "b": b.id, "launches": [len(a.runs), len(b.runs)],
                        "configs": [c.entry["config_id"] for c in (a, b) if c.entry and c.entry.get("config_id")],
                        "marks": [r.mark for r in cmp.regimes], "states": states,
                        "open": "open" in states})
    return out


def more_launches(camp, results, wanted: set[str]) -> list:
    """One more launch (RunSpec) of each configuration in `wanted`, in the campaign's file order,
    numbered after the launches its results directory holds."""
    have: dict[str, int] = {}
    for spec in camp.runs:
        have[spec.config_id] = max(have.get(spec.config_id, -1), spec.launch_id)
    firsts: dict[str, object] = {}
    for spec in camp.runs:
        firsts.setdefault(spec.config_id, spec)
    out = []
    for cid, spec in firsts.items():
        if cid in wanted:
            k = have[cid] + 1
            out.append(dataclasses.replace(spec, id=f"{cid}.L{k}", launch_id=k))
    return out


def check_budget(camp, max_launches: int) -> int:
    """The first look: the fewest planned launches of a configuration (at least 2)."""
    if not 2 <= max_launches <= 1000:
        raise InputError(f"--max-launches {max_launches}: give 2 to 1000 launches a configuration")
    planned: dict[str, int] = {}
    for spec in camp.runs:
        planned[spec.config_id] = planned.get(spec.config_id, 0) + 1
    first = min(planned.values()) if planned else 2
    if first > max_launches:
        raise InputError(f"--max-launches {max_launches}: the campaign plans {first} launches a configuration "
                         "already; give more, or leave --until-decided out")
    return max(2, first)


def decide(camp, results, run_round, max_launches: int = MAX_LAUNCHES, say=None) -> dict:
    """The rounds (module doc).  run_round(specs) runs the launches of one round the way the campaign
    runs its own; the returned dict is the manifest's 'sequential' entry."""
    from .sequential import campaign_design
    first = check_budget(camp, max_launches)
    design = campaign_design(first, max_launches)
    alpha = design.nominal_alpha
    looks, rounds, stopped = [], 0, "budget"
    n = first
    while True:
        found = look(results, {s.filename for s in camp.runs}, camp.compare, alpha, design.last)
        opened = [c for c in found if c["open"]]
        looks.append({"launches": n, "comparisons": len(found), "open": len(opened),
                      "decided": sum(s == "decided" for c in found for s in c["states"]),
                      "futile": sum(s == "futile" for c in found for s in c["states"])})
        if say:
            say(f"look at {n} launches a configuration: {len(found) - len(opened)} of {len(found)} comparisons "
                f"decided or futile")
        if not opened:
            stopped = "decided" if all(s == "decided" for c in found for s in c["states"]) else "futile"
            break
        if n >= design.last:
            break
        wanted = {cid for c in opened for cid in c["configs"]}
        specs = more_launches(camp, results, wanted)
        if not specs:
            stopped = "nothing to launch"
            break
        camp.runs.extend(specs)
        run_round(specs)
        rounds += 1
        n += 1
    why = {"decided": "every comparison decided",
           "futile": "the ranges left undecided could not be decided within --max-launches at this spread",
           "budget": f"--max-launches {max_launches} reached",
           "nothing to launch": "the undecided comparisons name no configuration of this campaign"}[stopped]
    return {"design": [design.looks[0], design.last], "nominal_alpha": alpha,
            "nominal_confidence": 1 - alpha, "constant": design.constant, "rounds": rounds,
            "looks": looks, "stopped": stopped, "last": found,
            "words": (f"until decided: {rounds} round(s) of launches after the planned {first}; stopped: {why}; "
                      f"{design.words(n)}")}
