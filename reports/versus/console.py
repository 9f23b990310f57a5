"""Console (plain text) face of the analysis: tables from the plain-data documents."""
from __future__ import annotations

from .compare import fmt_bytes
from .launches import WITHIN, interval_label, interval_words, method_words, scope_words
from .stats import LIMITS_RULE
from .transitions import jump_words, staircase_sentence
from .units import sample_meaning


def _f(v, fmt="{:.3f}", none="-"):
    return none if v is None else fmt.format(v)


def table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = "  ".join(h.rjust(w) for h, w in zip(headers, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(out)


def format_summary(doc: dict) -> str:
    parts = []
    for run in doc["runs"]:
        t = run["transport"]
        head = (f"== {t.get('name')}{'/' + t['provider'] if t.get('provider') else ''} "
                f"{run['pattern']}{'/' + run['variant'] if run['variant'] else ''}"
                f"  ({run['source']}, launch {run['launch_id']}, status {run['status']})")
        parts.append(head)
        for w in run["warnings"]:
            parts.append(f"   warning: {w}")
        hl = run.get("host_load")
        if hl:
            parts.append(f"   {'warning: ' if hl.get('loaded') else ''}host: {hl['words']}")
        m = sample_meaning(run["pattern"], run.get("pattern_params"), run.get("variant") or "")
        parts.append(f"   time = {m.time_label} (a sample is {m.sample_label}, divided by {m.divisor:g}); "
                     "bandwidth = bytes moved / median time; times in us")
        rows = []
        for s in run["sizes"]:
            ci = s["median_ci_us"]
            rows.append([str(s["bytes"]) + (" !" if s.get("valid") is False else ""), str(s["n"]), _f(s["median_us"]),
                         f"[{_f(ci[0])}, {_f(ci[1])}]" if ci else "-",
                         _f(s["mean_us"]), _f(s["std_us"]), _f(s["min_us"]), _f(s["p99_us"]),
                         f"{s['outside_limits']}",
                         "-" if s["normal"] is None else ("yes" if s["normal"] else "no"),
                         _f(s["bandwidth_MBps"], "{:.1f}"), payload_word(s.get("valid"))])
        parts.append(table(["bytes", "n", "median", "95% CI within launch", "mean", "sd", "min", "p99",
                            "outside", "normal", "MB/s", "payload"], rows))
        parts.append(f"   outside = samples outside the {run.get('control_limits_rule') or LIMITS_RULE}")
        inv = run.get("invalid_sizes") or {}
        if inv.get("bytes"):
            parts.append(f"   ! {inv['note']}")
            for s in run["sizes"]:
                if s.get("valid") is False:
                    parts.append(f"     {s['bytes']} B: {validation_words(s.get('validation'))}")
        if run["regimes"]:
            parts.append(f"   regimes (T(n) = s + r*n through medians of the {m.time_label}):")
            rows, notes = [], []
            for g in run["regimes"]:
                bw = g["bandwidth_MBps"]
                below0 = g["latency_us"] is not None and g["latency_us"] < 0
                if below0 and not any(n.startswith("the fitted latency is below 0") for n in notes):
                    notes.append("the fitted latency is below 0 (a regime far from 0 B: its line "
                                 "extrapolated to 0 B is not a latency)")
                rows.append([fmt_bytes(g["from_bytes"]), fmt_bytes(g["to_bytes"]),
                             "n.d." if below0 else f"{_f(g['latency_us'])} {_ci(g['latency_ci_us'], '{:.3f}')}",
                             "-" if bw is None else f"{bw:.1f} {_ci(g['bandwidth_ci_MBps'], '{:.1f}')}",
                             "-" if g["n_half_bytes"] is None else
                             f"{g['n_half_bytes']:.0f} {_ci(g['n_half_ci_bytes'], '{:.0f}')}",
                             f"{g['residual_rel'] * 100:.2f} %"])
                notes += sorted({g[k] for k in ("latency_ci_note", "bandwidth_ci_note", "n_half_ci_note")
                                 if g.get(k)} - set(notes))
            parts.append(table(["from", "to", "latency us [95% CI]", "bandwidth MB/s [95% CI]",
                                "n_half B [95% CI]", "resid"], rows))
            parts += [f"   n.d.: {n}" for n in notes]
        bwc = run.get("bandwidth") or {}
        if bwc.get("peak_MBps") is not None:
            parts.append(f"   bandwidth: fitted asymptotic {_f(bwc['asymptotic_MBps'], '{:.1f}')} MB/s "
                         f"(lower quartiles: {_f(bwc.get('asymptotic_lower_quartile_MBps'), '{:.1f}')}), "
                         f"measured peak {bwc['peak_MBps']:.1f} MB/s at {bwc['peak_bytes']} B"
                         + (f"  (the peak is a burst the largest sizes do not sustain: "
                            f"{bwc['largest_MBps']:.1f} MB/s at {bwc['largest_bytes']} B; quote those or the fit)"
                            if bwc.get("peak_is_burst") else
                            "  (the fit is below the measured peak: quote the peak)"
                            if bwc.get("agrees") is False else ""))
        if run["fit"] and run["fit"]["isolated_sizes_excluded"]:
            parts.append("   isolated sizes (off both neighbours) left out of the fit: "
                         + ", ".join(map(str, run["fit"]["isolated_sizes_excluded"])))
        if run["transitions"]:
            parts.append("   transitions:")
            for tr in run["transitions"]:
                parts.append(f"   - {tr['kind']:5s} at {tr['bytes']} B ({jump_words(tr)}): {tr['label']}")
        for sc in run["staircases"]:
            parts.append(f"   {staircase_sentence(sc)}")
        if (run.get("transitions_left_out") or {}).get("text"):
            parts.append(f"   {run['transitions_left_out']['text']}")
        for th in run["unmatched_thresholds"]:
            parts.append(f"   threshold {th['name']} = {th['configured_bytes']} B: no transition detected there")
        parts.append("")
    for cfg in doc.get("configurations", []):
        if cfg["n_launches"] > 1:
            parts += format_configuration(cfg)
    for grp in doc.get("launch_spread", []):
        parts.append(f"== launch-to-launch spread: {grp['label']} (launches {grp['launches']})")
        sc = grp.get("speed_classes")
        if sc and sc.get("text"):
            parts.append(f"   {sc['text']}")
        parts.append(format_launch_spread(grp["sizes"]))
        parts.append("")
    return "\n".join(parts)


def format_configuration(cfg: dict) -> list[str]:
    """A configuration of several launches: its figure per size with the interval between its
    launches (analysis.configuration_figures), beside the median of its samples pooled."""
    out = [f"== configuration {cfg['label']} ({cfg['n_launches']} launches): each size's figure "
           f"from its launches",
           f"   time = {cfg['time_label']}; median = the geometric mean of the launch medians with its "
           f"{cfg['interval']} (a size only one launch measured: its median, {interval_words(WITHIN)}); "
           "MB/s = bytes over that time and over its interval's ends; pooled = the median of every "
           "launch's samples together, for reference; times in us"]
    rows = [[str(s["bytes"]) + (" !" if s.get("valid") is False else ""), str(s["launches"]),
             _f(s["median_us"]), _ci(s["median_ci_us"], "{:.3f}"), interval_label(s["interval_kind"], s["launches"]),
             "-" if s["bandwidth_MBps"] is None else f"{s['bandwidth_MBps']:.4g} {_ci(s['bandwidth_ci_MBps'], '{:.4g}')}",
             _f(s["pooled_median_us"])] for s in cfg["sizes"]]
    out.append(table(["bytes", "launches", "median", "95% CI", "interval", "MB/s [95% CI]", "pooled"], rows))
    out.append("")
    return out


def _ci(ci, fmt: str) -> str:
    """'[lo, hi]', or '[n.d.]' for an interval that is not determined (the reason is listed below)."""
    return "[n.d.]" if ci is None else f"[{fmt.format(ci[0])}, {fmt.format(ci[1])}]"


def payload_word(valid) -> str:
    """The payload-check column: '-' not checked, 'ok', 'FAILED'."""
    return "-" if valid is None else ("ok" if valid else "FAILED")


def validation_words(v: dict | None) -> str:
    """The first payload mismatch of a size, in words."""
    if not v:
        return "payload check failed (no details recorded)"
    parts = [f"{v['phase']} the measured samples" if v.get("phase") else None,
             f"round {v['round']}" if v.get("round") is not None else None,
             f"direction {v['direction']}" if v.get("direction") else None,
             f"first difference at byte {v['offset']}" if v.get("offset") is not None else None,
             f"expected {v['expected']}, got {v['got']}" if "expected" in v and "got" in v else None,
             f"{v['differing_bytes']} bytes differ" if v.get("differing_bytes") is not None else None]
    return "payload check failed: " + ", ".join(p for p in parts if p)


def format_launch_spread(rows: list[dict]) -> str:
    return table(["bytes", "launches", "median us", "between sd", "within sd", "within median se"],
                 [[str(r["bytes"]), str(r["launches"]), _f(r["median_of_medians_us"]),
                   _f(r["between_launch_sd_us"]), _f(r["within_launch_sd_us"]),
                   _f(r["within_launch_median_se_us"])] for r in rows])


def format_comparison(c: dict) -> str:
    parts = [f"A = {c['a_label']}", f"B = {c['b_label']}"]
    if c.get("crosses"):
        parts.append(c["crosses"])
    parts += [f"times: {c.get('time_label', 'one-way latency (round trip / 2)')}; {method_words(c['sizes'])}; "
              f"a size's mark is its own 95 % interval's: + A faster, - A slower, ~ the interval includes 1, "
              f"= no practical difference (under {c.get('min_effect', 0.02) * 100:g} %); in parentheses where no "
              "statement below claims it; the statements below are the claims (over ranges of sizes)"
              + ("" if c.get("claims") else "; one launch a side: every mark is about these two launches only"),
              f"what the marks speak for: {c.get('scope') or scope_words(c['sizes'])}"]
    rows = [[s["mark"], str(s["bytes"]), _f(s["median_a_us"]), _f(s["median_b_us"]),
             f"{s['ratio']:.3f} [{s['ratio_ci'][0]:.3f}, {s['ratio_ci'][1]:.3f}]",
             f"{s['faster_pct']:+.1f} %", f"{s['p_value']:.2g}"] for s in c["sizes"]]
    parts.append(table(["", "bytes", "A us", "B us", "A/B [95% CI]", "A faster", "p"], rows))
    if c.get("load_note"):
        parts.append(f"host load: {c['load_note']}")
    if c["only_a"] or c["only_b"]:
        parts.append(f"sizes only in A: {c['only_a'] or 'none'}; only in B: {c['only_b'] or 'none'}")
    if c.get("invalid_a") or c.get("invalid_b"):
        how = ("kept as asked (--include-invalid)" if c.get("invalid_included")
               else "left out of the comparison (--include-invalid keeps them)")
        parts.append(f"sizes whose payload check failed, {how}: A {c.get('invalid_a') or 'none'}; "
                     f"B {c.get('invalid_b') or 'none'}")
    parts.append("")
    for r in c["regimes"]:
        parts.append(f"{r['mark']} {r['text']}")
        if r.get("needed"):
            parts.append(f"    what would decide it: {r['needed']}")
    for side in ("a", "b"):
        if c[f"launch_spread_{side}"]:
            parts.append(f"\nlaunch-to-launch spread of {side.upper()}:")
            parts.append(format_launch_spread(c[f"launch_spread_{side}"]))
    return "\n".join(parts)


def format_study(doc: dict) -> str:
    parts = ["== variants (seed 000 table; bandwidth MB/s = bytes/us)"]
    keys = [("send latency us", "send_latency_us", "{:.3f}"), ("receive latency us", "receive_latency_us", "{:.3f}"),
            ("send buffer B", "send_buffer_bytes", "{:.0f}"), ("receive buffer B", "receive_buffer_bytes", "{:.0f}"),
            ("send bandwidth MB/s", "send_bandwidth_MBps", "{:.1f}"),
            ("receive bandwidth MB/s", "receive_bandwidth_MBps", "{:.1f}")]
    v = doc["variants"]
    parts.append(table([""] + [r["run"] for r in v], [[k] + [_f(r[f], fmt) for r in v] for k, f, fmt in keys]))
    for r in v:
        parts.append(f"   {r['run']}: {r['source']}")
        if r.get("send_latency_ci_us") is not None and "send_ns" not in r["source"]:
            ci = r["send_latency_ci_us"]
            parts.append(f"     latency {r['send_latency_us']:.3f} us [{ci[0]:.3f}, {ci[1]:.3f}] at "
                         f"{r['send_latency_bytes']} B: "
                         + interval_words(r["send_latency_interval_kind"], r["send_latency_launches"])
                         + ("; the median: the geometric mean of the launch medians"
                            if r["send_latency_interval_kind"] != WITHIN else ""))
    rs = doc["run_statistics"]
    parts.append(f"\n== run statistics at {rs['bytes']} B ({rs['unit']})")
    cols = ["min", "max", "mean", "median", "std", "stderr"]
    parts.append(table(["run", "n"] + cols,
                       [[f"{d['run']} #{d['launch_id']}", str(d["n"])] + [_f(d[c]) for c in cols]
                        for d in rs["runs"]]))
    a = rs["across_runs"]
    parts.append("across runs (of the run means): " + ", ".join(f"{c} {_f(a[c])}" for c in
                                                                ("mean", "median", "std", "stderr")))
    parts.append("\n== control limits (0.135th and 99.865th percentiles of the samples, us)")
    for run in doc["control_limits"]:
        parts.append(f"   {run['run']} ({run['source']})")
        parts.append(f"   {run.get('rule') or LIMITS_RULE}")
        parts.append(table(["bytes", "n", "mean", "LCL", "UCL", "outside"],
                           [[str(s["bytes"]), str(s["n"]), _f(s["mean_us"]), _f(s["lcl_us"]),
                             _f(s["ucl_us"]), str(s["outside"])] for s in run["sizes"]]))
    return "\n".join(parts)
