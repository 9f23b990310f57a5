"""Report sections of the seed studies: each study's table in its own layout,
computed with versus.studies from the campaign's configurations.

A campaign names its study (`study = "seed000"`); the section picks the
configurations it needs by their shape: single-size runs feed the run
statistics tables (seeds 001, 004), multi-size runs the sweeps.
"""
from __future__ import annotations

import numpy as np

from .analysis import analyse_run
from .compare import compare_runs, named_statements
from .render import ci_cell
from .stats import describe
from .studies import control_limits, run_statistics, variant_table
from .units import run_meaning

TITLES = {
    "seed000": "Seed 000: blocking vs non-blocking receive (latency, buffer size, bandwidth)",
    "seed001": "Seed 001: one integer, same box, and the 1..10000-integer staircase",
    "seed002": "Seed 002: double buffering, control limits",
    "seed003": "Seed 003: mpptest ranges (short, mid-size, rendezvous)",
    "seed004": "Seed 004: two integers (Table 1.1) and the packet-size sweep",
}


def _table(tid, caption, columns, rows, notes=None):
    return {"id": tid, "caption": caption, "columns": [{"title": t, "fmt": f} for t, f in columns],
            "rows": rows, "notes": notes or []}


def _included(c) -> bool:
    """Whether the report was asked to keep sizes whose payload check failed."""
    return bool(c.analysis and c.analysis.invalid_included)


def _analysis(c, min_bytes=0):
    """The configuration's analysis as the report made it (build_model), or, for a
    study that fits from min_bytes on, one made the same way from that size."""
    if min_bytes == 0 and c.analysis is not None:
        return c.analysis
    return analyse_run(c.pooled, min_bytes=min_bytes, include_invalid=_included(c))


def _single(configs):
    return [c for c in configs if len(c.pooled.sizes_by_bytes()) == 1]


def _sweeps(configs):
    return [c for c in configs if len(c.pooled.sizes_by_bytes()) > 1]


def _two_boxes(c) -> bool:
    """Whether the configuration's ranks ran on two hosts (the configuration key keeps the number
    of hosts, so every launch of it agrees)."""
    return len(set(map(str, c.runs[0].record.get("hosts") or []))) > 1


def _by_boxes(cfgs):
    """(same box, two boxes)"""
    return [c for c in cfgs if not _two_boxes(c)], [c for c in cfgs if _two_boxes(c)]


def _boxes_side_by_side(tid, caption, same, two):
    """Same box and two boxes in one table, as the seeds put them: per trial (launch) the round
    trip's min, max, mean and sd on each side, then the per-launch means across launches.  Returns
    the table and the comparison's statements (two boxes against the same box, between launches)."""
    st = [run_statistics([r for c in side for r in c.runs]) for side in (same, two)]
    n = max(len(x["runs"]) for x in st)
    rows = []

    def cells(x, i):
        if i >= len(x["runs"]):
            return [None] * 4
        d = x["runs"][i]
        return [d["min"], d["max"], d["mean"], d["std"]]
    for i in range(n):
        rows.append([f"trial {i + 1}"] + cells(st[0], i) + cells(st[1], i))
    across = [x["across_runs"] for x in st]
    rows.append(["mean of the trials' means"] + [None, None, across[0]["mean"], across[0]["std"]]
                + [None, None, across[1]["mean"], across[1]["std"]])
    cols = [("", "text")] + [(f"{side} {k}", "us") for side in ("one box", "two boxes")
                             for k in ("min µs", "max µs", "average µs", "sd µs")]
    notes = ["µs per round trip of %s B; one box: %s; two boxes: %s" % (
        st[0]["bytes"], ", ".join(c.id for c in same), ", ".join(c.id for c in two))]
    notes.append("The seed's layout (min, max, average and sd per trial); an average is dominated by the few "
                 "round trips a busy host delays, so the comparison below (medians, the launch as the unit) is "
                 "the answer, and the only ratio this report gives.")
    cmp = compare_runs([r for c in two for r in c.runs], [r for c in same for r in c.runs],
                       include_invalid=_included(two[0]), labels=("two boxes", "one box"))
    return _table(tid, caption, cols, rows, notes), named_statements(cmp, "two boxes", "one box")


def seed000(configs) -> dict:
    runs = [c.pooled for c in _sweeps(configs)]
    v = variant_table(runs, [_analysis(c) for c in _sweeps(configs)])
    names = [c.id for c in _sweeps(configs)]
    metrics = [("Send latency (µs)", "send_latency_us", "us"), ("Receive latency (µs)", "receive_latency_us", "us"),
               ("Send buffer size (bytes)", "send_buffer_bytes", "bytes"),
               ("Receive buffer size (bytes)", "receive_buffer_bytes", "bytes"),
               ("Send bandwidth (bytes/µs)", "send_bandwidth_MBps", "mbps"),
               ("Receive bandwidth (bytes/µs)", "receive_bandwidth_MBps", "mbps")]
    rows = [[label] + [{"v": r[key], "f": f} for r in v] for label, key, f in metrics]
    notes = sorted({f"{r['run']}: {r['source']}" for r in v})
    kinds = sorted({r["send_bandwidth_kind"] for r in v if r.get("send_bandwidth_kind")})
    notes.append("Latency: the median at the smallest size measured; buffer size: the first transition the "
                 "analysis reports (the summary's); bandwidth: " + ("; ".join(kinds) or "none") + ". Each "
                 "figure is the one the summary table and the per-configuration details print.")
    tables = [_table("seed000", "Blocking vs non-blocking (layout of the seed's results table)",
                     [("", "text")] + [(n, "num") for n in names], rows, notes)]
    statements = []
    sweeps = _sweeps(configs)
    if len(sweeps) == 2:         # each side its configuration's launches (between-launch when several)
        cmp = compare_runs(sweeps[1].runs, sweeps[0].runs, include_invalid=_included(sweeps[1]),
                           labels=(names[1], names[0]))
        statements = named_statements(cmp, names[1], names[0])
    return {"tables": tables, "statements": statements}


def _runstats_table(tid, caption, cfgs, nbytes=None):
    runs = [r for c in cfgs for r in c.runs]
    st = run_statistics(runs, nbytes)
    rows = [[f"{d['run']} #{d['launch_id']}", d["n"], d["min"], d["max"], d["mean"], d["median"], d["std"],
             d["stderr"]] for d in st["runs"]]
    a = st["across_runs"]
    rows.append(["across runs (per-run means)", a["n"], a["min"], a["max"], a["mean"], a["median"], a["std"],
                 a["stderr"]])
    med = describe([d["median"] for d in st["runs"]])
    rows.append(["across runs (per-run medians)", med["n"], med["min"], med["max"], med["mean"], med["median"],
                 med["std"], med["stderr"]])
    cols = [("run", "text"), ("n", "int"), ("min µs", "us"), ("max µs", "us"), ("mean µs", "us"),
            ("median µs", "us"), ("sd µs", "us"), ("std error µs", "us")]
    res = None
    if med["n"]:
        # the headline is the comparisons' statistic (launches.py), the geometric mean of the
        # launches' medians, never the average a few descheduled round trips dominate (3.93 us
        # against medians of 0.27-0.73): the figure here and the ratio stated below agree
        gm = float(np.exp(np.mean(np.log([d["median"] for d in st["runs"]]))))
        res = (f"round trip of {st['bytes']} B: {gm:.3g} µs, the geometric mean of {med['n']} launches' "
               f"medians (they range {med['min']:.3g}–{med['max']:.3g} µs; one way {gm / 2:.3g} µs)")
    return _table(tid, caption + f" — round trip of {st['bytes']} B", cols, rows), res


def _transitions_table(tid, caption, cfgs, min_bytes=0):
    """Jumps are given per raw sample (a ping-pong's round trip, as the seeds
    report them): the reported time's jump times the pattern's divisor."""
    rows = []
    for c in cfgs:
        a = _analysis(c, min_bytes)
        div = run_meaning(c.pooled).divisor
        for t in a.transitions:
            rows.append([c.id, t.kind, t.bytes, t.after_bytes, t.before_bytes, t.jump_us * div, t.label])
        if not a.transitions:
            rows.append([c.id, "none detected", None, None, None, None, "one regime fits every size"])
        for sc in a.staircases:
            rows.append([c.id, "staircase", sc.first_bytes, sc.first_bytes, sc.last_bytes,
                         sc.step_height_us * div, f"period {sc.period_bytes:.0f} B{' (the page size)' if sc.page_bytes else ''}, {sc.steps} steps"])
    unit = run_meaning(cfgs[0].pooled).sample_label if cfgs else "one round trip"
    return _table(tid, caption, [("configuration", "text"), ("kind", "text"), ("at", "bytes"),
                                 ("after", "bytes"), ("before", "bytes"), (f"jump µs (per {unit})", "us"),
                                 ("attribution", "text")], rows)


def _regimes_table(tid, caption, cfgs, min_bytes=0):
    rows = []
    for c in cfgs:
        a = _analysis(c, min_bytes)
        for g in a.to_dict()["regimes"]:
            rows.append([c.id, g["from_bytes"], g["to_bytes"],
                         ci_cell(g["latency_us"], g["latency_ci_us"], g["latency_ci_note"]),
                         ci_cell(g["bandwidth_MBps"], g["bandwidth_ci_MBps"], g["bandwidth_ci_note"]),
                         ci_cell(g["n_half_bytes"], g["n_half_ci_bytes"], g["n_half_ci_note"])])
    return _table(tid, caption, [("configuration", "text"), ("from", "bytes"), ("to", "bytes"),
                                 ("s µs [95 % CI]", "us_ci"), ("1/r MB/s [95 % CI]", "mbps_ci"),
                                 ("n½ [95 % CI]", "bytes_ci")], rows)


def seed001(configs) -> dict:
    tables, statements = [], []
    same, two = _by_boxes(_single(configs))
    if same:
        t, res = _runstats_table("seed001-runs", "Runs of one integer, same box (Tables 1 and 2)", same)
        tables.append(t)
        statements += [f"same box: {res}"] if res else []
    if two:
        t, res = _runstats_table("seed001-runs-two-boxes", "Runs of one integer, two boxes (Tables 3 and 4)", two)
        tables.append(t)
        statements += [f"two boxes: {res}"] if res else []
    if same and two:
        t, said = _boxes_side_by_side("seed001-boxes", "One integer: same box against two boxes", same, two)
        tables.append(t)
        statements += said
    if _sweeps(configs):
        tables.append(_transitions_table("seed001-stairs", "Staircase: where one more integer changes the time",
                                         _sweeps(configs)))
    return {"tables": tables, "statements": statements}


def seed002(configs) -> dict:
    tables, statements = [], []
    for c in configs:
        cl = control_limits([c.pooled])[0]
        rows = [[s["bytes"], s["n"], s["mean_us"], s["std_us"], s["lcl_us"], s["ucl_us"], s["outside"]]
                for s in cl["sizes"]]
        tables.append(_table(f"seed002-{c.id}", f"{c.id}: time to receive and process two buffers",
                             [("size", "bytes"), ("samples", "int"), ("mean µs", "us"), ("sd µs", "us"),
                              ("lower limit µs (0.135th percentile)", "us"),
                              ("upper limit µs (99.865th percentile)", "us"), ("outside", "int")], rows,
                             [f"Times are the recorded samples; {cl['rule']}."]))
    if len(configs) >= 2:
        for c in configs[1:]:
            cmp = compare_runs(c.runs, configs[0].runs, include_invalid=_included(c),
                               labels=(c.id, configs[0].id))
            statements += named_statements(cmp, c.id, configs[0].id)
    return {"tables": tables, "statements": statements}


def seed003(configs) -> dict:
    cfgs = _sweeps(configs)
    return {"tables": [
        _regimes_table("seed003-all", "Fitted regimes over every size", cfgs),
        _regimes_table("seed003-skip", "Fitted regimes leaving out sizes below 200 B (the seed's advice)",
                       cfgs, min_bytes=200),
        _transitions_table("seed003-trans", "Transitions (steps: e.g. the rendezvous jump; slope changes)", cfgs)],
        "statements": []}


def seed004(configs) -> dict:
    tables, statements = [], []
    same, two = _by_boxes(_single(configs))
    if same and two:
        t, said = _boxes_side_by_side("seed004-runs", "Two integers, one box and two boxes (Table 1.1 layout)",
                                      same, two)
        tables.append(t)
        statements += said
    elif same or two:
        where = "one box" if same else "two boxes"
        t, res = _runstats_table("seed004-runs", f"Two integers, {where} (Table 1.1 layout)", same or two)
        tables.append(t)
        statements += [f"{where}: {res}"] if res else []
    if _sweeps(configs):
        tables.append(_regimes_table("seed004-regimes", "Packet-size sweep: fitted regimes", _sweeps(configs)))
        tables.append(_transitions_table("seed004-stairs", "Packet-size sweep: steps and staircases",
                                         _sweeps(configs)))
    return {"tables": tables, "statements": statements}


SECTIONS = {"seed000": seed000, "seed001": seed001, "seed002": seed002, "seed003": seed003, "seed004": seed004}


def study_section(study: str, configs) -> dict:
    fn = SECTIONS.get(study)
    usable = [c for c in configs if c.pooled.sizes]
    if fn is None:
        return {"id": study, "title": f"Study {study}", "tables": [],
                "statements": [f"no report section is known for study '{study}' "
                               f"(known: {', '.join(SECTIONS)})"]}
    if not usable:
        return {"id": study, "title": TITLES[study], "tables": [],
                "statements": ["no usable results for this study (see the runs not measured)"]}
    return {"id": study, "title": TITLES[study], **fn(usable)}
