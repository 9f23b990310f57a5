"""The report's comparisons across the transport interface: per stack, its
put-with-notification (one-sided) against its two-sided ping-pong, and each
stack's put-with-notification against the fastest two-sided ping-pong of the
other stacks (those without one-sided operations included).

Both report one quantity, one-way latency (round trip / 2) at each size
(units.crossing), so each pair is an ordinary comparison (compare.compare_runs:
the same per-size intervals, statements over ranges and claim rule as every
other comparison), made by report.comparison_doc on the configurations'
launches.  A stack is loggp.stack_key: the transport configuration whatever
the pattern.  The figure draws one statistic: each series' median one-way
latency with its 95 % interval.
"""
from __future__ import annotations

from .launches import band_words
from .units import crossing

ONE_SIDED, TWO_SIDED = "putnotify", "pingpong"


def _pick_pingpong(cs: list) -> object | None:
    """A stack's two-sided ping-pong: the blocking variant when there is one (as `versus loggp`)."""
    cs = [c for c in cs if c.pooled.pattern == TWO_SIDED and c.sizes]
    return next((c for c in cs if c.pooled.variant == "blocking"), cs[0] if cs else None)


def stacks(configs: list) -> list[tuple[str, object | None, list]]:
    """(stack label, its ping-pong configuration or None, its put-with-notification configurations)
    for every stack, first seen first."""
    from .loggp import group_stacks
    pooled = [c.pooled for c in configs]
    by_run = {id(c.pooled): c for c in configs}
    out = []
    for label, _, runs in group_stacks(pooled):
        cs = [by_run[id(r)] for r in runs]
        out.append((label, _pick_pingpong(cs), [c for c in cs if c.pooled.pattern == ONE_SIDED and c.sizes]))
    return out


def interface_jobs(configs: list, pairs: list[dict]) -> list[tuple]:
    """The comparisons, as (A, B, why, stack): those asked for (--compare, the campaign's compare)
    that cross the interface; per stack each put-with-notification against its ping-pong; then
    each stack's put-with-notification against the fastest ping-pong of the other stacks, with
    or without one-sided operations (the lowest geometric mean of medians over the sizes they
    have in common)."""
    from .report import _geo_mean_median, _usable
    by_id = {c.id: c for c in configs}
    jobs = []
    for p in pairs:
        a, b = by_id.get(p["a"]), by_id.get(p["b"])
        if a and b and a.sizes and b.sizes and crossing(a.pooled.pattern, b.pooled.pattern):
            jobs.append((a, b, "asked for in the campaign", ""))
    every = stacks(configs)
    for label, pp, pns in every:
        for pn in pns:
            if pp is not None:
                jobs.append((pn, pp, "the same stack across the interface", label))
    for label, pp, pns in every:
        others = [o for _, o, _ in every if o is not None and o is not pp]
        for pn in pns:
            cands = [o for o in others if {s["bytes"] for s in _usable(o)} & {s["bytes"] for s in _usable(pn)}]
            if not cands:
                continue
            common = set.intersection(*({s["bytes"] for s in _usable(o)} for o in cands))
            best = min(cands, key=lambda o: _geo_mean_median(o, common) if common else 0.0)
            jobs.append((pn, best, "against the fastest two-sided ping-pong of the other stacks "
                         "(lowest geometric mean of medians over common sizes)", label))
    seen, out = set(), []
    for j in jobs:
        if (id(j[0]), id(j[1])) not in seen:
            seen.add((id(j[0]), id(j[1])))
            out.append(j)
    return out


def named(c) -> str:
    """A configuration's id, with its pattern when the id does not say it (default ids name the
    transport, options and variant only)."""
    p = c.pooled.pattern
    return c.id if p in c.id else f"{c.id} ({p})"


def _at_smallest(doc: dict) -> dict | None:
    rows = doc["table"]["rows"]
    return rows[0] if rows else None


def interface_section(configs: list, pairs: list[dict], include_invalid: bool, pdf_dir) -> dict | None:
    """The report's section, or None when no stack has a put-with-notification beside some
    ping-pong and nothing crossing the interface was asked for."""
    from . import charts, plots
    from .render import ci_cell
    from .report import comparison_doc, fork_map
    jobs = interface_jobs(configs, pairs)
    if not jobs:
        return None
    docs = fork_map(lambda i: comparison_doc(jobs[i][0], jobs[i][1], jobs[i][2], include_invalid), len(jobs))
    comparisons, rows = [], []
    for (a, b, why, stack), d in zip(jobs, docs):
        if d is None:
            continue
        d["stack"] = stack
        d["a"], d["b"] = named(a), named(b)
        comparisons.append(d)
        first = _at_smallest(d)
        ratio = first[4]["v"] if first else None
        rows.append([stack or "-", d["a"], d["b"], first[1] if first else None,
                     first[2] if first else None, first[3] if first else None,
                     ci_cell(ratio[0], ratio[1:]) if ratio else None,
                     "; ".join(f"{s['mark']} {s['text']}" for s in d["statements"]) or "-"])
    if not comparisons:
        return None
    drawn, series = set(), []
    for a, b, _, _ in jobs:
        for c in (b, a):
            if id(c) not in drawn and c.sizes:
                drawn.add(id(c))
                side = "two-sided" if c.pooled.pattern == TWO_SIDED else "one-sided"
                series.append({"label": f"{named(c)}, {side}", "sizes": c.sizes,
                               "keep": [t.bytes for t in c.analysis.transitions] if c.analysis else []})
    statistic = ("one-way latency (round trip / 2), "
                 + band_words([x for sr in series for x in sr["sizes"]]).replace("95 % CI", "95 % CI band", 1))
    title = "Two-sided ping-pong and put-with-notification"
    table = {"id": "interface-table",
             "caption": "Across the interface: A (one-sided put-with-notification) against B (two-sided "
                        "ping-pong), one-way latency; the first size in common, then the statements",
             "columns": [{"title": "stack", "fmt": "text", "width": 0.15},
                         {"title": "A", "fmt": "text", "width": 0.1}, {"title": "B", "fmt": "text", "width": 0.1},
                         {"title": "size", "fmt": "bytes", "width": 0.05},
                         {"title": "A µs", "fmt": "us", "width": 0.06}, {"title": "B µs", "fmt": "us", "width": 0.06},
                         {"title": "A/B [95 % CI]", "fmt": "num_ci", "width": 0.12},
                         {"title": "statements (the claims)", "fmt": "text", "width": 0.36}],
             "rows": rows, "notes": []}
    return {"title": title, "statistic": statistic, "table": table, "comparisons": comparisons,
            "method": ("Both patterns report the one-way latency (round trip / 2) at each size: the "
                       "ping-pong's round trip of two-sided messages, the put-with-notification's round trip "
                       "of two notified puts (docs/patterns.md). Each pair is compared as any two "
                       "configurations are: ratio of medians A/B per size with its 95 % CI (the launch as "
                       "the unit with several launches), statements over ranges of sizes with intervals "
                       "simultaneous at 95 %, and no claim from one launch a side."),
            "plots": [p for p in plots.comparison_plots("fig-interface", title, series, None, pdf_dir,
                                                        "one-way latency", kinds=("latency",))],
            "charts": charts.comparison_charts("interface", title, series, None, "one-way latency",
                                               kinds=("latency",))}
