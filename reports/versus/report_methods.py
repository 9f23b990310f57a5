"""The methods section of the report (after Hoefler & Belli, SC15): every
factor and its levels, software versions, hardware topology, placement and
the measurement settings of each configuration, taken from the run records."""
from __future__ import annotations


def _kv(d) -> str:
    if not d:
        return "none"
    return ", ".join(f"{k}={v}" for k, v in sorted(d.items()))


def _placement(rec: dict) -> str:
    p = rec.get("placement") or {}
    if not p:
        return "not recorded"
    cpus = ",".join(str(r.get("cpus_after", "?")) for r in p.get("ranks", []))
    rel = p.get("relation") or "?"
    return (f"policy {p.get('policy', '?')}, ranks share {rel}"
            + ("" if p.get("relation_exact", True) else " (inexact)")
            + (f", bound to PUs {cpus}" if cpus else "") + f", decided by {p.get('decided_by', '?')}")


def _iterations(rec: dict) -> str:
    it = rec.get("iterations") or {}
    return (f"{it.get('measured', '?')} samples per size ({it.get('measured_large', '?')} from "
            f"{it.get('large_from_bytes', '?')} B), warm-up {it.get('warmup', '?')} "
            f"({it.get('warmup_large', '?')} large), batch {it.get('batch', '?')}")


def _timer(rec: dict) -> str:
    t = rec.get("timer") or {}
    cost = t.get("cost_ns")
    return (f"{t.get('clock', '?')}, resolution {t.get('resolution_ns', '?')} ns, "
            f"cost {cost:.1f} ns per read" if isinstance(cost, (int, float)) else
            f"{t.get('clock', '?')}, resolution {t.get('resolution_ns', '?')} ns")


def config_fields(c) -> list[list[str]]:
    rec = c.pooled.record
    t = c.pooled.transport
    launcher = rec.get("launcher") or {}
    sched = rec.get("schedule") or {}
    env = {k: v for k, v in (rec.get("env") or {}).items() if not k.startswith("VERSUS_")}
    return [
        ["library", f"{t.get('library') or ''} {t.get('version') or ''}".strip() or "?"],
        ["provider / selected path", t.get("provider") or "–"],
        ["transport options", _kv(t.get("options"))],
        ["configured thresholds", _kv(t.get("thresholds"))],
        ["module facts", _kv(t.get("attrs"))],
        ["library environment", _kv(env)],
        ["pattern / variant", f"{c.pooled.pattern} / {c.pooled.variant or '–'}"],
        ["launcher / bootstrap", f"{launcher.get('name', '?')} / {launcher.get('bootstrap', '?')}"],
        ["ranks / hosts", f"{rec.get('ranks', '?')} on {', '.join(rec.get('hosts') or ['?'])}"],
        ["placement", _placement(rec)],
        ["sizes", f"{sched.get('spec', '?')} ({len(sched.get('sizes') or [])} sizes, order "
                  f"{sched.get('order', '?')})"],
        ["iterations", _iterations(rec)],
        ["timer", _timer(rec)],
        ["launches", ", ".join(f"{r.launch_id}: {r.record.get('start_time', '?')} ({r.status})" for r in c.runs)],
        ["runner", f"versus {(rec.get('versus') or {}).get('version', '?')}, revision "
                   f"{(rec.get('versus') or {}).get('revision', '?')}"],
        ["command line (rank 0)", " ".join(rec.get("command_line") or [])],
    ]


def _topology(rec: dict) -> list[list[str]]:
    t = rec.get("topology") or {}
    if not t:
        return [["topology", "not recorded"]]
    prov = t.get("provenance") or {}
    caches = "; ".join(f"L{c.get('level')} {c.get('kind')} {c.get('size_bytes', 0) // 1024} KiB ×{c.get('count')}"
                       for c in t.get("caches") or [])
    return [["host", str(t.get("host", "?"))], ["CPU", str(t.get("cpu_model") or prov.get("cpu_model") or "?")],
            ["packages / NUMA nodes / cores / PUs",
             f"{t.get('packages', '?')} / {t.get('numa_nodes', '?')} / {t.get('cores', '?')} / {t.get('pus', '?')}"],
            ["caches", caches or "?"], ["kernel", str(prov.get("kernel", "?"))],
            ["virtualisation", str(prov.get("virtualization") or "none detected")],
            ["CPU frequency governor", str(prov.get("governor") or "not readable")],
            ["hwloc", str(t.get("hwloc_version", "?"))],
            ["Slurm job", str(prov.get("slurm_job_id") or "none")]]


FACTORS = [("transport", lambda c: c.transport),
           ("provider", lambda c: c.pooled.transport.get("provider") or "–"),
           ("transport options", lambda c: _kv(c.pooled.transport.get("options"))),
           ("library environment", lambda c: _kv({k: v for k, v in (c.pooled.record.get("env") or {}).items()
                                                   if not k.startswith("VERSUS_")})),
           ("pattern", lambda c: c.pooled.pattern), ("variant", lambda c: c.pooled.variant or "–"),
           # the pattern's own parameters: the double buffer's progress mode (library calls while
           # summing or none), a stream's window, ...
           ("pattern parameters", lambda c: _kv(c.pooled.record.get("pattern_params"))),
           ("sizes", lambda c: (c.pooled.record.get("schedule") or {}).get("spec", "?")),
           ("iterations", lambda c: _iterations(c.pooled.record)),
           ("placement", lambda c: (c.pooled.record.get("placement") or {}).get("policy", "?")),
           ("launcher", lambda c: (c.pooled.record.get("launcher") or {}).get("name", "?")),
           ("launches per configuration", lambda c: str(len(c.runs)))]


def methods_section(configs, software: list[list[str]]) -> dict:
    factors = []
    for name, get in FACTORS:
        levels = list(dict.fromkeys(get(c) for c in configs))
        factors.append([name, str(len(levels)), "; ".join(levels)])
    topo_seen, topologies = set(), []
    for c in configs:
        rows = _topology(c.pooled.record)
        key = repr(rows)
        if key not in topo_seen:
            topo_seen.add(key)
            topologies.append(rows)
    return {
        "factors": {"id": "factors", "caption": "Factors and their levels",
                    "columns": [{"title": "factor", "fmt": "text"}, {"title": "levels", "fmt": "text"},
                                {"title": "values", "fmt": "text", "width": "0.7"}], "rows": factors},
        "topologies": topologies,
        "software": software,
        "configs": [{"id": c.id, "fields": config_fields(c)} for c in configs],
    }
