"""Report sections of the seed studies: each study's table in its own layout,
computed with versus.studies from the campaign's configurations.

A campaign names its study (`study = "seed000"`); the section picks the
configurations it needs by their shape: single-size runs feed the run
statistics tables (seeds 001, 004), multi-size runs the sweeps.
"""
from __future__ import annotations

from .lazy import numpy as np

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
    return analyse_run(c.pooled, min_bytes=min_bytes, include_invalid=_included(c), samples=_launches(c))


def _launches(c):
    """The configuration's launches' samples when it has several (its figures between launches)."""
    return c.samples if len(c.runs) > 1 else None


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
                           labels=(names[1], names[0]), samples=(sweeps[1].samples, sweeps[0].samples))
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
        tables.append(_table(f"seed002-{c.id}", f"{c.id} (progress {_progress(c)}): time to receive and process "
                             "two buffers",
                             [("size", "bytes"), ("samples", "int"), ("mean µs", "us"), ("sd µs", "us"),
                              ("lower limit µs (0.135th percentile)", "us"),
                              ("upper limit µs (99.865th percentile)", "us"), ("outside", "int")], rows,
                             [f"Times are the recorded samples; {cl['rule']}."]))
    if any(_has_refs(s) for c in configs for s in c.pooled.sizes):
        tables.append(overlap_table(configs))
    if len(configs) >= 2:
        for c in configs[1:]:
            cmp = compare_runs(c.runs, configs[0].runs, include_invalid=_included(c),
                               labels=(c.id, configs[0].id), samples=(c.samples, configs[0].samples))
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
        return {"id": study, "title": f"Study {study}", "answer": None, "tables": [],
                "statements": [f"no report section is known for study '{study}' "
                               f"(known: {', '.join(SECTIONS)})"]}
    # a configuration with a launch that ended without its end record (killed at its timeout, or
    # failed) holds a cut curve: it is named, and left out of the answer and the tables
    partial = [c for c in usable if c.pooled.status != "ok"]
    complete = [c for c in usable if c.pooled.status == "ok"]
    if not complete:
        return {"id": study, "title": TITLES[study], "answer": None, "tables": [],
                "statements": ["no usable results for this study (see the runs not measured)"]
                + _partial_note(partial)}
    out = fn(complete)
    answer = ANSWERS[study](complete, partial)
    answer["notes"] = _partial_note(partial) + answer["notes"]
    return {"id": study, "title": TITLES[study], "answer": answer, **out,
            "statements": _partial_note(partial) + out["statements"]}


# --- The question first: each study's questions, its published answer and versus's answer ---------------------
#
# One row per question.  versus's answer is a value with its 95 % interval (percentile bootstrap over the
# samples, or over the launches where the study's unit was a run) and a verdict: "agrees", "differs" or
# "not measured here", each followed by why.  Only complete configurations reach this table: a run killed
# at its timeout (no end record) is named in a note and left out (study_section).

BOOT = 2000
ANSWER_COLUMNS = [("question", "text", 0.2), ("the study's answer", "text", 0.22),
                  ("versus's answer [95 % CI]", "text", 0.24), ("verdict", "text", 0.28)]
VERDICTS = ("agrees", "differs", "not measured here")


def _rng():
    return np.random.default_rng(20020216)        # fixed: the same results give the same interval


def _boot_medians(samples, n=BOOT, rng=None) -> np.ndarray:
    """n bootstrap medians of one sample array."""
    v = np.asarray(samples, dtype=np.float64)
    rng = rng or _rng()
    idx = rng.integers(0, v.size, size=(n, v.size))
    return np.median(v[idx], axis=1)


def _ci(draws) -> list[float]:
    d = np.asarray(draws, dtype=np.float64)
    d = d[np.isfinite(d)]
    return [float(np.percentile(d, 2.5)), float(np.percentile(d, 97.5))] if d.size else [np.nan, np.nan]


def _g(v) -> str:
    return "–" if v is None or not np.isfinite(v) else f"{v:.3g}"


def _val(v, ci=None, unit="") -> str:
    u = f" {unit}" if unit else ""
    if ci is None or not all(np.isfinite(ci)):
        return f"{_g(v)}{u} [interval not determined]" if ci is not None else f"{_g(v)}{u}"
    return f"{_g(v)}{u} [{_g(ci[0])}, {_g(ci[1])}]"


def _row(question, published, answer, verdict, why):
    if verdict not in VERDICTS:
        raise ValueError(f"verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
    return [question, published, answer, f"{verdict}: {why}"]


def _answer_table(study, rows, notes=None):
    t = _table(f"{study}-answer", "The study's questions: its answer and versus's",
               [(c, f) for c, f, _ in ANSWER_COLUMNS], rows,
               (notes or []) + ["versus's answer: the value measured here by the shipped configuration, with its "
                                "95 % interval (bootstrap over the samples, or Student's t over the launches where "
                                "the study's unit was a run). Verdict: agrees, differs, or not measured here; "
                                "each says why."])
    for col, (_, _, w) in zip(t["columns"], ANSWER_COLUMNS):
        col["width"] = w
    return t


def _divisor(c) -> float:
    """What a configuration's samples are divided by to give its reported time (units.py)."""
    return float(run_meaning(c.pooled).divisor)


def _per_launch_medians_us(cfgs, nbytes=None) -> list[float]:
    """Each launch's median round trip (µs): a launch is one of the study's runs or trials.  The study
    averaged its runs' round trips; the median is used here because a mean is dominated by the few
    samples a busy host delays (a launch's mean here: 8 µs against a median of 0.67 µs)."""
    out = []
    for c in cfgs:
        for r in c.runs:
            by = r.sizes_by_bytes()
            s = by.get(nbytes) if nbytes is not None else (by[min(by)] if by else None)
            if s is not None and s.samples_ns.size:
                out.append(float(np.median(s.samples_ns)) / 1e3)
    return out


def _geo_mean(values) -> tuple[float, list[float]]:
    """Geometric mean of per-launch values and its 95 % Student interval on the logs (the launch is the
    unit, as the study's run was)."""
    from scipy import stats as sps
    v = np.log(np.asarray(values, dtype=np.float64))
    m = float(v.mean())
    if v.size < 2:
        return float(np.exp(m)), [np.nan, np.nan]
    h = float(sps.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size))
    return float(np.exp(m)), [float(np.exp(m - h)), float(np.exp(m + h))]


def _ratio_of_geo_means(a, b):
    """Ratio of the geometric means of two sets of per-launch values, with Welch's interval on the logs."""
    from scipy import stats as sps
    la, lb = np.log(np.asarray(a, float)), np.log(np.asarray(b, float))
    d = float(la.mean() - lb.mean())
    va, vb = la.var(ddof=1) / la.size, lb.var(ddof=1) / lb.size
    se = np.sqrt(va + vb)
    if se == 0:
        return float(np.exp(d)), [float(np.exp(d))] * 2
    df = (va + vb) ** 2 / (va ** 2 / (la.size - 1) + vb ** 2 / (lb.size - 1))
    h = float(sps.t.ppf(0.975, df) * se)
    return float(np.exp(d)), [float(np.exp(d - h)), float(np.exp(d + h))]


def _inside(x, ci) -> bool:
    return bool(np.isfinite(ci[0]) and np.isfinite(ci[1]) and ci[0] <= x <= ci[1])


def _steps(c, aligned=False):
    """Rising steps of a sweep's analysis, smallest size first; aligned: of its sizes that are multiples
    of 8 only (seed 003's odd sizes are spikes of their own, not protocol steps)."""
    if aligned:
        from .load import Run
        r = c.pooled
        keep = Run(r.source, r.record, [s for s in r.sizes if s.bytes % 8 == 0], r.end, r.warnings, r.config_name)
        a = analyse_run(keep, include_invalid=_included(c), samples=_launches(c))
    else:
        a = _analysis(c)
    return sorted([t for t in a.transitions if t.kind == "step" and t.jump_us > 0], key=lambda t: t.bytes), a


def _partial_note(partial) -> list[str]:
    return [f"{', '.join(c.id for c in partial)}: incomplete (no end record: killed at its timeout or failed); "
            "its sizes are left out of this study's answer and tables"] if partial else []


def _cut(partial) -> str | None:
    """Why a two-box sweep is missing when its launches were cut short."""
    cut = [c.id for c in partial if _two_boxes(c) and len(c.pooled.sizes_by_bytes()) > 1]
    return (f"the two-box sweep ({', '.join(cut)}) was cut short (killed at its timeout or failed): a partial "
            "curve is not used") if cut else None


def answer000(configs, partial=()) -> dict:
    rows = []
    by_var = {c.pooled.variant: c for c in _sweeps(configs)}
    calls = {v: c for v, c in by_var.items()
             if c.pooled.sizes and all("send_ns" in s.extra and "recv_ns" in s.extra for s in c.pooled.sizes)}
    pub = {"blocking": "receive 434.07 µs against send 310.15 µs: receive 1.40× (40 % slower)",
           "nonblocking": "receive 431.32 µs against send 310.20 µs: receive 1.39×"}
    for v in ("blocking", "nonblocking"):
        q = f"Is the receive slower than the send at small sizes ({v})?"
        c = calls.get(v)
        if c is None:
            rows.append(_row(q, pub[v], "–", "not measured here",
                             "no run times the send and the receive apart (the overhead pattern does)"))
            continue
        by = c.pooled.sizes_by_bytes()
        s = by[min(by)]
        rng = _rng()
        send, recv = np.asarray(s.extra["send_ns"], float), np.asarray(s.extra["recv_ns"], float)
        ratio = float(np.median(recv) / np.median(send))
        ci = _ci(_boot_medians(recv, rng=rng) / _boot_medians(send, rng=rng))
        ans = (f"receive {_g(np.median(recv) / 1e3)} µs against send {_g(np.median(send) / 1e3)} µs at "
               f"{min(by)} B (medians): receive {_val(ratio, ci, '×')}")
        if ci[0] > 1:
            why = (f"the receive is slower here too, by {_g(ratio)}× (the study 1.4×: its send returned once the "
                   "message left, here an eager send returns after a copy into shared memory)")
            rows.append(_row(q, pub[v], ans, "agrees", why))
        else:
            rows.append(_row(q, pub[v], ans, "differs", "the receive is not shown slower at 95 %"))
    q = "Do blocking and non-blocking receive differ?"
    p = "no: latencies 310.15 / 310.20 µs (send), 434.07 / 431.32 µs (receive)"
    if {"blocking", "nonblocking"} <= set(by_var):
        a, b = by_var["nonblocking"].pooled.sizes_by_bytes(), by_var["blocking"].pooled.sizes_by_bytes()
        n = min(set(a) & set(b))
        # the launch is the unit: launches of one configuration differ by more than their samples say
        ma = _per_launch_medians_us([by_var["nonblocking"]], n)
        mb = _per_launch_medians_us([by_var["blocking"]], n)
        ratio, ci = _ratio_of_geo_means(ma, mb) if len(ma) > 1 and len(mb) > 1 else (
            float(np.median(a[n].samples_ns) / np.median(b[n].samples_ns)), [np.nan, np.nan])
        ans = (f"round trip at {n} B, non-blocking over blocking: {_val(ratio, ci, '×')} "
               f"({len(ma)} and {len(mb)} launches' medians)")
        if _inside(1.0, ci):
            rows.append(_row(q, p, ans, "agrees", "the interval holds 1: no difference shown at 95 %"))
        elif ci[0] > 0.95 and ci[1] < 1.05:
            rows.append(_row(q, p, ans, "agrees", "a difference, but within 5 % at 95 %"))
        else:
            rows.append(_row(q, p, ans, "differs", f"the interval excludes 1 and a 5 % band"))
    else:
        rows.append(_row(q, p, "–", "not measured here", "both variants are needed"))
    c = calls.get("blocking")
    q = "Where do send and receive times start to grow (buffer size)?"
    p = "send 1024 B, receive 256 B: the send buffer is the larger"
    if c is not None:
        v = variant_table([c.pooled], [_analysis(c)])[0]
        sb, rb = v.get("send_buffer_between_bytes"), v.get("receive_buffer_between_bytes")
        ans = (f"send {v.get('send_buffer_bytes') or 'no transition'}"
               + (f" (between {sb[0]} and {sb[1]} B)" if sb else "")
               + f", receive {v.get('receive_buffer_bytes') or 'no transition'}"
               + (f" (between {rb[0]} and {rb[1]} B)" if rb else "") + " (blocking)")
        if sb and rb:
            verdict = "agrees" if sb[0] >= rb[1] else "differs"
            why = ("the send's first transition lies above the receive's" if verdict == "agrees" else
                   "the send's first transition is not above the receive's")
            rows.append(_row(q, p, ans, verdict, why + "; the interval is the gap between the measured sizes "
                             "(powers of two) around each transition"))
        else:
            rows.append(_row(q, p, ans, "not measured here", "a transition is missing on one side in 1 B–4 KiB"))
    else:
        rows.append(_row(q, p, "–", "not measured here", "no run times the send and the receive apart"))
    return _answer_table("seed000", rows)


def _box_rows(rows: list, question: str, boxes: list, unit: str, note: str, judge) -> dict:
    """Seeds 001 and 004: a row per placement (same box, two boxes) with the geometric mean of its
    launches' medians and its interval, judged by judge(name, ci) -> (verdict, why); a placement
    with fewer than two launches is not measured here (its reason given).  Returns the medians of
    each placement measured, for the ratio of the two."""
    m = {}
    for name, cfgs, published, missing in boxes:
        q = question.format(name)
        means = _per_launch_medians_us(cfgs)
        if len(means) < 2:
            rows.append(_row(q, published, "–", "not measured here", missing))
            continue
        m[name] = means
        v, ci = _geo_mean(means)
        verdict, why = judge(name, ci)
        rows.append(_row(q, published, f"{_val(v, ci, 'µs')}: geometric mean of {len(means)} {unit} medians{note}",
                         verdict, why))
    return m


def answer001(configs, partial=()) -> dict:
    rows = []
    same, two = _by_boxes(_single(configs))
    runs = "mean of ten runs of a million round trips, ± std error"

    def judge(name, ci):
        ref = 1.12 if name == "same box" else 34.0
        if _inside(ref, ci):
            return "agrees", "the study's value lies in the interval"
        return "differs", ("another machine: the study's 2017 cluster against this host"
                           + (" and the lab's emulated link (veth between namespaces)" if name == "two boxes" else ""))
    m = _box_rows(rows, "Round trip of one int, {}?",
                  [("same box", same, f"1.12 ± 0.04 µs ({runs})", "fewer than two same box launches"),
                   ("two boxes", two, f"34.0 ± 1.0 µs ({runs})",
                    "no two boxes launches (two boxes need two nodes or the lab)")],
                  "launches'", " (a sample: the mean of its batch of round trips)", judge)
    q = "How much longer does the round trip take between boxes?"
    p = "about 30× (\"2900 % longer\")"
    if len(m) == 2:
        r, ci = _ratio_of_geo_means(m["two boxes"], m["same box"])
        ans = f"{_val(r, ci, '×')} (two boxes over the same box, the launches' medians)"
        if _inside(30.0, ci):
            rows.append(_row(q, p, ans, "agrees", "30× lies in the interval"))
        else:
            rows.append(_row(q, p, ans, "differs", ("two boxes slower here too, " if ci[0] > 1 else "")
                             + "by another factor: both ends of the ratio are this machine's"))
    else:
        rows.append(_row(q, p, "–", "not measured here", "needs both the same-box and the two-box launches"))
    q = "Where does one more int change the time drastically (two boxes)?"
    p = "first major jump near 1500 ints (6000 B; 1500–2700 ints by run), the next at 3500–5000 ints"
    sw = [c for c in _sweeps(configs) if _two_boxes(c)]
    if sw:
        steps, _ = _steps(sw[0])
        if steps:
            t = steps[0]
            ans = (f"first step at {t.bytes} B = {t.bytes // 4} ints (between {t.after_bytes} and {t.before_bytes} "
                   f"B), {len(steps)} steps in 4–40000 B" + (f", the second at {steps[1].bytes} B" if len(steps) > 1
                                                              else ""))
            ok = 6000 <= t.bytes <= 10800
            rows.append(_row(q, p, ans, "agrees" if ok else "differs",
                             "within the study's 1500–2700 ints" if ok else
                             "elsewhere: the step sits where this link's segments fill, not the study's network's"))
        else:
            _, a = _steps(sw[0])
            bends = [t.bytes for t in a.transitions if t.kind == "slope"]
            rows.append(_row(q, p, "no rising step detected" + (f"; slope changes at {', '.join(map(str, bends))} B"
                                                                 if bends else ""), "differs",
                             "the two-box curve has no step here: the link between the boxes (the lab's, without a "
                             "rate limit) moves a segment in far less time than the study's network"))
    else:
        rows.append(_row(q, p, "–", "not measured here", _cut(partial) or "the two-box staircase needs two nodes or "
                         "the lab"))
    return _answer_table("seed001", rows)


def _db_series(s):
    return (s.samples_ns.astype(float), np.asarray(s.extra["compute_ns"], float),
            np.asarray(s.extra["comm_ns"], float))


def overlap(s, rng=None):
    """Overlap of one doublebuffer size record: (comp + comm - both) / min(comp, comm) from the medians of
    the three series, with a percentile bootstrap interval (each series resampled on its own)."""
    both, comp, comm = _db_series(s)
    f = lambda b, c, m: (c + m - b) / np.minimum(c, m)   # noqa: E731
    v = float(f(np.median(both), np.median(comp), np.median(comm)))
    rng = rng or _rng()
    d = f(_boot_medians(both, rng=rng), _boot_medians(comp, rng=rng), _boot_medians(comm, rng=rng))
    return v, _ci(d), float(np.median(comp)), float(np.median(comm)), float(np.median(both))


def overlap_over(records):
    """The median of the per-size overlaps of several size records, and its interval: each bootstrap draw
    takes the median over the sizes of that draw's overlaps."""
    vals, draws = [], []
    for s in records:
        both, comp, comm = _db_series(s)
        rng = _rng()
        vals.append(float((np.median(comp) + np.median(comm) - np.median(both))
                          / min(np.median(comp), np.median(comm))))
        b, c, m = _boot_medians(both, rng=rng), _boot_medians(comp, rng=rng), _boot_medians(comm, rng=rng)
        draws.append((c + m - b) / np.minimum(c, m))
    return float(np.median(vals)), _ci(np.median(np.array(draws), axis=0)), len(vals)


def _progress(c) -> str:
    pp = c.pooled.record.get("pattern_params") or {}
    mode = pp.get("progress", "none")
    return f"{mode}={pp['poll_every']}" if mode == "poll" and pp.get("poll_every") else str(mode)


def _has_refs(s) -> bool:
    return "compute_ns" in s.extra and "comm_ns" in s.extra


def overlap_table(configs) -> dict:
    rows = []
    for c in configs:
        for b, s in c.pooled.sizes_by_bytes().items():
            if not _has_refs(s):
                continue
            v, ci, comp, comm, both = overlap(s)
            rows.append([c.transport, _progress(c), b, comp / 1e3, comm / 1e3, both / 1e3,
                         {"v": [v, ci[0], ci[1], None], "f": "ratio_ci"}])
    return _table("seed002-overlap", "Overlap of receiving and summing, by library and progress mode",
                  [("library", "text"), ("progress", "text"), ("size", "bytes"), ("sum only µs", "us"),
                   ("receive only µs", "us"), ("both µs", "us"), ("overlap [95 % CI]", "ratio_ci")], rows,
                  ["overlap = (sum only + receive only − both) / min(sum only, receive only), from the medians of "
                   "the three series of each size (20 samples each in the study's design): 1 when the shorter "
                   "activity hides entirely behind the longer, 0 when they add up, below 0 when doing both costs "
                   "more than their sum. Interval: percentile bootstrap, each series resampled on its own. Only "
                   "meaningful where both references are well above the clock (tens of µs: the large sizes)."])


def answer002(configs, partial=()) -> dict:
    rows = []
    big = {}
    for c in configs:
        by = {b: s for b, s in c.pooled.sizes_by_bytes().items() if b >= 16384 and _has_refs(s)}
        if by:
            big[c.id] = (c, by)
    q = "How much of the summing hides behind the transfer (overlap, 16 KiB and up)?"
    p = "not given as a figure: the study shows the time of two buffers against size"
    for cid, (c, by) in big.items():
        # per launch the median over the sizes; across launches their mean and Student's interval (the
        # launch is the unit: the pooled samples' bootstrap missed launch-to-launch changes of 0.3 or more)
        per = []
        for r in c.runs:
            rb = {b: s for b, s in r.sizes_by_bytes().items() if b in by and _has_refs(s)}
            if rb:
                per.append(overlap_over(rb.values())[0])
        if len(per) >= 2:
            from scipy import stats as sps
            v = float(np.mean(per))
            h = float(sps.t.ppf(0.975, len(per) - 1) * np.std(per, ddof=1) / np.sqrt(len(per)))
            ci, how = [v - h, v + h], f"mean of {len(per)} launches' medians over {len(by)} sizes"
        else:
            v, ci, _ = overlap_over(by.values())
            how = f"median over {len(by)} sizes, one launch (bootstrap over its samples)"
        rows.append(_row(f"{q} {c.transport}, progress {_progress(c)}", p,
                         f"{_val(v, ci)}: {how}, {min(by)}–{max(by)} B", "not measured here",
                         "the study did not quantify the overlap; this is versus's figure (1: the sum hides "
                         "entirely behind the transfer, 0: they add up)"))
    if not big:
        rows.append(_row(q, p, "–", "not measured here", "no size of 16 KiB or more carries the references"))
    q = "Does progress without library calls matter above 16 KB (application bypass)?"
    p = ("yes: Portals, which needs no MPI call to progress, is 14 % faster than MPICH/GM (> 16 KB) despite "
         "25 % less peak bandwidth")
    libs = sorted({c.transport for c, _ in big.values()})
    said = False
    for lib in libs:
        none = [x for x in big.values() if x[0].transport == lib and _progress(x[0]) == "none"]
        poll = [x for x in big.values() if x[0].transport == lib and _progress(x[0]).startswith("poll")]
        if not none or not poll:
            continue
        (cn, bn), (cp, bp) = none[0], poll[0]
        common = sorted(set(bn) & set(bp))

        def level(c):
            """Per launch, the geometric mean over the common sizes of the median time (µs)."""
            out = []
            for r in c.runs:
                by = r.sizes_by_bytes()
                if all(b in by for b in common):
                    out.append(float(np.exp(np.mean([np.log(np.median(by[b].samples_ns)) for b in common]))))
            return out
        ln, lp = level(cn), level(cp)
        if len(ln) > 1 and len(lp) > 1:      # the launch is the unit (Welch on the logs)
            r, ci = _ratio_of_geo_means(ln, lp)
        else:
            r = float(np.exp(np.mean([np.log(np.median(bn[b].samples_ns) / np.median(bp[b].samples_ns))
                                      for b in common])))
            ci = [np.nan, np.nan]
        ans = (f"{lib}: time without calls over time with {_progress(cp)}: {_val(r, ci, '×')} "
               f"(geometric mean over {common[0]}–{common[-1]} B; {len(ln)} and {len(lp)} launches)")
        if ci[0] > 1:
            rows.append(_row(q, p, ans, "agrees", f"{lib} moves large buffers faster when called while summing: "
                             "it does not progress on its own, as the study says of MPICH/GM"))
        elif ci[1] < 1:
            rows.append(_row(q, p, ans, "differs", f"{lib} is slower when called while summing"))
        else:
            rows.append(_row(q, p, ans, "differs", f"{lib} shows no effect of the calls at 95 %: on one host an "
                             "eager shared-memory copy needs no progress from the receiver"))
        said = True
    if not said:
        rows.append(_row(q, p, "–", "not measured here", "needs one library with both progress modes"))
    q = "Is Portals faster than MPICH/GM above 16 KB?"
    rows.append(_row(q, "yes, by 14 %", "–", "not measured here",
                     "neither Portals nor MPICH/GM (Myrinet) is on this machine; MPICH and Open MPI stand in "
                     "(their comparison follows the tables)"))
    return _answer_table("seed002", rows)


def _median_curve(c):
    by = c.pooled.sizes_by_bytes()
    x = np.array(sorted(by), dtype=float)
    return x, by


def _slope_boot(c, lo, hi, rng):
    """Slope (ns/B of the round trip) of the medians over sizes lo..hi, and bootstrap draws of it."""
    x, by = _median_curve(c)
    keep = [b for b in x if lo <= b <= hi]
    if len(keep) < 3:
        return None, None
    xs = np.array(keep)
    y = np.array([np.median(by[int(b)].samples_ns) for b in keep])
    slope = float(np.polyfit(xs, y, 1)[0])
    draws = np.array([_boot_medians(by[int(b)].samples_ns, n=400, rng=rng) for b in keep])   # sizes x draws
    A = np.vstack([xs, np.ones_like(xs)]).T
    coef = np.linalg.lstsq(A, draws, rcond=None)[0]
    return slope, coef[0]


def _odd_excess(c, rng):
    """Median excess (µs, round trip) of each odd size over its neighbour that is a multiple of 8 (the
    size it was perturbed from), and bootstrap draws of that median."""
    by = c.pooled.sizes_by_bytes()
    pairs = [(o, o - 1 if (o - 1) % 8 == 0 else o + 1) for o in by if o % 2 == 1]
    pairs = [(o, n) for o, n in pairs if n in by and n % 8 == 0]
    if not pairs:
        return None, None, 0
    ex = [np.median(by[o].samples_ns) - np.median(by[n].samples_ns) for o, n in pairs]
    draws = np.array([_boot_medians(by[o].samples_ns, n=400, rng=rng) - _boot_medians(by[n].samples_ns, n=400,
                                                                                        rng=rng) for o, n in pairs])
    return float(np.median(ex)) / 1e3, np.median(draws, axis=0) / 1e3, len(pairs)


def _find(cfgs, prefix, two):
    return next((c for c in cfgs if c.id.split("-")[0] == prefix and _two_boxes(c) == two), None)


def answer003(configs, partial=()) -> dict:
    rows = []
    cfgs = _sweeps(configs)
    rng = _rng()
    intra, inter = _find(cfgs, "short", False), _find(cfgs, "short", True)
    q = "Do the intra- and inter-node slopes differ (short messages)?"
    p = "yes: \"note differing slopes\", inter-node on top"
    if intra and inter:
        si, di = _slope_boot(intra, 200, 1024, rng)
        se, de = _slope_boot(inter, 200, 1024, rng)
        if si is not None and se is not None:
            # a difference, not a ratio: a slope near 0 (a flat TCP curve) makes a ratio meaningless
            d = se - si
            ci = _ci(de - di)
            ans = (f"slope of the round trip over 200–1024 B: intra {_g(si)} ns/B, inter {_g(se)} ns/B; inter − "
                   f"intra {_val(d, ci, 'ns/B')}")
            rows.append(_row(q, p, ans, "differs" if _inside(0.0, ci) else "agrees",
                             "the interval holds 0: no difference shown" if _inside(0.0, ci) else
                             "the slopes differ at 95 %"))
        else:
            rows.append(_row(q, p, "–", "not measured here", "fewer than three sizes in 200–1024 B"))
    else:
        rows.append(_row(q, p, "–", "not measured here", "needs the short runs within a node and between two"))
    mi, me = intra, inter                     # the short sweep goes on to the mid sizes (4096 B)
    q = "Do the two curves cross (mid-size, to 4096 B)?"
    p = "yes: a cross-over, then similar slopes after about 1200 B"
    if mi and me:
        (xi, bi), (xe, be) = _median_curve(mi), _median_curve(me)
        common = sorted(b for b in set(bi) & set(be) if b >= 1024)
        d = np.array([np.median(be[b].samples_ns) - np.median(bi[b].samples_ns) for b in common]) / 1e3
        flips = [common[i + 1] for i in range(len(d) - 1) if np.sign(d[i]) != np.sign(d[i + 1])]
        if flips:
            ans = f"the inter-node curve crosses the intra-node one at {', '.join(map(str, flips))} B"
            rows.append(_row(q, p, ans, "agrees", "a sign change of inter − intra between neighbouring sizes"))
        else:
            side = "above" if d[0] > 0 else "below"
            ans = (f"no cross-over in {common[0]}–{common[-1]} B: inter-node {side} intra-node by "
                   f"{_g(float(np.min(np.abs(d))))}–{_g(float(np.max(np.abs(d))))} µs (round trip)")
            rows.append(_row(q, p, ans, "differs", "on the lab the inter-node path (TCP between namespaces) costs "
                             "more at every size; Blue Waters' network beat its intra-node copy at mid sizes"))
    else:
        rows.append(_row(q, p, "–", "not measured here", "needs the sweeps within a node and between two"))
    q = "Is there a jump at the rendezvous threshold (inter-node, to 16 KiB)?"
    p = "yes: a large jump at 8 KiB, different slopes before and after"
    rv = _find(cfgs, "rendezvous", True) or _find(cfgs, "rendezvous", False)
    if rv:
        steps, _ = _steps(rv, aligned=True)
        where = "between two nodes" if _two_boxes(rv) else "within a node (no second node)"
        if steps:
            t = max(steps, key=lambda t: t.jump_us)
            ans = (f"largest step {where}: at {t.bytes} B (between {t.after_bytes} and {t.before_bytes} B), "
                   f"{_g(t.jump_us * _divisor(rv))} µs per round trip"
                   + (f" [{_g(t.jump_ci_us[0] * _divisor(rv))}, {_g(t.jump_ci_us[1] * _divisor(rv))}]"
                      if t.jump_ci_us else ""))
            ok = t.after_bytes < 8192 + 1024 and t.before_bytes > 8192 - 1024
            if not _two_boxes(rv):
                rows.append(_row(q, p, ans, "not measured here", "no second node: the study's jump is inter-node"))
            else:
                rows.append(_row(q, p, ans, "agrees" if ok else "differs",
                                 "at 8 KiB, as the study's" if ok else
                                 "the step is at this library's own threshold, not Blue Waters' 8 KiB"))
        elif not _two_boxes(rv):
            rows.append(_row(q, p, f"no rising step {where} in 4–16 KiB", "not measured here",
                             "no second node: the study's jump is inter-node"))
        else:
            rows.append(_row(q, p, f"no rising step {where} in 4–16 KiB", "differs",
                             "this library switches protocol elsewhere or without a step"))
    else:
        rows.append(_row(q, p, "–", "not measured here", "no rendezvous-range run"))
    q = "Do odd sizes (not a multiple of 8) cost more?"
    p = "yes: \"significantly more costly (over 2 µs)\", between nodes above 8 KiB"
    said = False
    for two in (False, True):
        c = _find(cfgs, "rendezvous", two)
        if c is None:
            continue
        v, draws, n = _odd_excess(c, rng)
        where = "between two nodes" if two else "within a node"
        if v is None:
            continue
        ci = _ci(draws)
        ans = (f"{where}: odd over the neighbouring multiple of 8, median of {n} pairs: {_val(v, ci, 'µs')} "
               "per round trip")
        if ci[0] > 0:
            rows.append(_row(q, p, ans, "agrees", "odd sizes are slower at 95 %"
                             + ("" if v > 2 else f" (by {_g(v)} µs, not over 2 µs)")))
        else:
            rows.append(_row(q, p, ans, "differs", "no excess shown at 95 %: this library copies odd sizes "
                             "as fast as aligned ones"))
        said = True
    if not said:
        rows.append(_row(q, p, "–", "not measured here", "no run with odd sizes beside multiples of 8"))
    return _answer_table("seed003", rows)


def answer004(configs, partial=()) -> dict:
    rows = []
    same, two = _by_boxes(_single(configs))
    def judge(name, ci):
        lo, hi = (2.0, 3.0) if name == "one box" else (52.0, 60.0)
        if ci[0] <= hi and ci[1] >= lo:
            return "agrees", "the interval meets the study's range"
        return "differs", "another machine: this host" + ("'s shared memory" if name == "one box" else
                                                           " and the lab's emulated 100 Mbit/s link")
    m = _box_rows(rows, "Round trip of two ints, {}?",
                  [("one box", same, "2–3 µs (trial averages 2.14, 2.29, 2.86 µs)", "fewer than two launches"),
                   ("two boxes", two, "about 52 µs (trial averages 59.7, 52.2, 52.9 µs)",
                    "two boxes need two nodes or the lab")],
                  "trials'", "", judge)
    q = "Is the same box at least 20× faster?"
    p = "yes: \"the same box is at least 20 times faster\""
    if len(m) == 2:
        r, ci = _ratio_of_geo_means(m["two boxes"], m["one box"])
        ans = f"two boxes over one box: {_val(r, ci, '×')} (the trials' medians)"
        if ci[0] >= 20:
            rows.append(_row(q, p, ans, "agrees", "the whole interval is above 20×"))
        else:
            rows.append(_row(q, p, ans, "differs", "not shown: the interval reaches below 20×"))
    else:
        rows.append(_row(q, p, "–", "not measured here", "needs both the one-box and the two-box trials"))
    sw = [c for c in _sweeps(configs) if _two_boxes(c)]
    q1 = "Are the first 40 ints slower than what follows (two boxes)?"
    p1 = "yes: about 140 µs up to 40 ints, then a drop to about 35 µs near 42 ints"
    q2 = "Steps: how high, and how much does one packet carry (two boxes)?"
    p2 = "each step 143 µs; a packet carries at most 65536 bits (8192 B)"
    if not sw:
        why = _cut(partial) or "the two-box sweep needs two nodes or the lab"
        rows.append(_row(q1, p1, "–", "not measured here", why))
        rows.append(_row(q2, p2, "–", "not measured here", why))
        return _answer_table("seed004", rows)
    c = sw[0]
    by = c.pooled.sizes_by_bytes()
    small = [b for b in by if b <= 160]
    after = [b for b in by if 168 <= b <= 400]
    if small and after:
        rng = _rng()
        a = np.concatenate([by[b].samples_ns for b in small]).astype(float)
        b2 = np.concatenate([by[b].samples_ns for b in after]).astype(float)
        r = float(np.median(a) / np.median(b2))
        ci = _ci(_boot_medians(a, rng=rng) / _boot_medians(b2, rng=rng))
        ans = (f"median round trip 4–160 B over 168–400 B: {_val(r, ci, '×')} ({_g(np.median(a) / 1e3)} against "
               f"{_g(np.median(b2) / 1e3)} µs)")
        if ci[0] > 1.5:
            rows.append(_row(q1, p1, ans, "agrees", "the small sizes are slower at 95 %"))
        else:
            rows.append(_row(q1, p1, ans, "differs", "no slow start: this Open MPI sends small messages the same "
                             "way as those after them"))
    else:
        rows.append(_row(q1, p1, "–", "not measured here", "the sweep lacks sizes on one side of 40 ints"))
    steps, a = _steps(c)
    div = _divisor(c)
    if steps:
        h = np.array([t.jump_us * div for t in steps])
        gaps = np.diff([t.bytes for t in steps])
        rng = _rng()
        hv, hci = float(np.median(h)), _ci(np.median(h[rng.integers(0, h.size, size=(BOOT, h.size))], axis=1))
        per = float(np.median(gaps)) if gaps.size else None
        sc = max(a.staircases, key=lambda s: s.steps) if a.staircases else None
        ans = (f"{len(steps)} steps in 4–40000 B, median height {_val(hv, hci, 'µs')} per round trip; "
               + (f"staircase period {_g(sc.period_bytes)} B" + (f" [{_g(sc.period_ci_bytes[0])}, "
                  f"{_g(sc.period_ci_bytes[1])}]" if sc.period_ci_bytes else "") if sc else
                  f"median spacing {_g(per)} B" if per else "one step"))
        spacing = sc.period_bytes if sc else per
        ok = spacing is not None and 0.9 * 8192 <= spacing <= 1.1 * 8192 and 100 <= hv <= 190
        rows.append(_row(q2, p2, ans, "agrees" if ok else "differs",
                         "steps of about 143 µs every 8 KiB" if ok else
                         "the steps follow this link's segments and rate (100 Mbit/s, 1500 B frames), not the "
                         "study's network"))
    else:
        rows.append(_row(q2, p2, "no rising step detected", "differs", "the two-box curve has no step here"))
    return _answer_table("seed004", rows)


ANSWERS = {"seed000": answer000, "seed001": answer001, "seed002": answer002, "seed003": answer003,
           "seed004": answer004}
