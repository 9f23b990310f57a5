"""What the host did besides a run, as versus-run recorded it (docs/results-schema.md,
"host_load"), and when a run, or a comparison, must say so.

versus-run records on rank 0's host:
  waited  the share of the time its ranks were ready to run but had no CPU
          (/proc/PID/schedstat, exact): 0 when each rank has its CPU to itself,
          about 0.5 when each shares it with one CPU-bound process;
  others  the share of the measuring CPUs' time that anything but the run used
          (/proc/stat less the ranks' own time, in 10 ms ticks);
  steal   the share the hypervisor took (a virtual machine);
per size visit (waited always; others and steal over at least a second of CPU
time) and over the whole run (the end record), with the load averages at the
start and the end.

A run is *loaded* when over the whole run waited >= LOADED_WAITED, or others
>= LOADED_OTHERS, or steal >= LOADED_STEAL.  Two sides of a comparison were
measured under *different load* when one is loaded and the other not, or their
waited shares differ by DIFFERENT_WAITED or more.
"""
from __future__ import annotations

import math

LOADED_WAITED = 0.10
LOADED_OTHERS = 0.10
LOADED_STEAL = 0.05
DIFFERENT_WAITED = 0.20

RULE = (f"loaded: over the run the ranks waited for a CPU {LOADED_WAITED:.0%} of the time or more, or other "
        f"processes used {LOADED_OTHERS:.0%} or more of the measuring CPUs, or the hypervisor stole "
        f"{LOADED_STEAL:.0%} or more")


def _num(v, hi: float = math.inf) -> float | None:
    """A finite number in [0, hi], else None (a record written by hand or damaged says nothing)."""
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and 0 <= v <= hi
    return float(v) if ok else None


def run_load(run) -> dict | None:
    """The run's host load as plain data, or None when the run recorded none (older
    versus-run, an imported run)."""
    start = run.record.get("host_load") if isinstance(run.record.get("host_load"), dict) else None
    end = run.end or {}
    waited, others, steal = (_num(end.get(k), 1.0) for k in ("host_load_waited", "host_load_others",
                                                             "host_load_steal"))
    if start is None and waited is None and others is None:
        return None
    per_size = [s.host_load["waited"] for s in run.sizes if s.host_load and "waited" in s.host_load]
    la0 = start.get("loadavg") if start else None
    d = {
        "waited": waited, "others": others, "steal": steal,
        "cpus": [c for c in start.get("cpus") if isinstance(c, int) and not isinstance(c, bool)]
        if start and isinstance(start.get("cpus"), list) else [],
        "online_cpus": start.get("online_cpus") if start and _num(start.get("online_cpus")) else None,
        "loadavg_start": _num(la0[0]) if isinstance(la0, list) and la0 else None,
        "loadavg_end": _num(end.get("host_loadavg_end")),
        "sizes_waited_max": max(per_size) if per_size else None,
        "sizes_loaded": sum(w >= LOADED_WAITED for w in per_size),
        "sizes_with_figures": len(per_size),
    }
    d["loaded"] = is_loaded(d)
    d["words"] = describe(d)
    return d


def is_loaded(d: dict | None) -> bool:
    if not d:
        return False
    return ((d.get("waited") or 0) >= LOADED_WAITED or (d.get("others") or 0) >= LOADED_OTHERS
            or (d.get("steal") or 0) >= LOADED_STEAL)


def _pct(v) -> str:
    return "unknown" if v is None else f"{100 * v:.0f} %"


def describe(d: dict | None) -> str:
    """One sentence: loaded or quiet, with the figures that say so."""
    if not d:
        return "the host's load was not recorded"
    cpus = ",".join(str(c) for c in d.get("cpus") or []) or "?"
    la = ""
    if d.get("loadavg_start") is not None:
        la = f"; load average {d['loadavg_start']:.2f}"
        if d.get("loadavg_end") is not None:
            la += f" at the start, {d['loadavg_end']:.2f} at the end"
        if d.get("online_cpus"):
            la += f", {d['online_cpus']} CPUs online"
    known = []
    if d.get("waited") is not None:
        known.append(f"the ranks waited for a CPU {_pct(d['waited'])} of the time")
    if d.get("others") is not None:
        known.append(f"other processes used {_pct(d['others'])} of the measuring CPUs ({cpus})")
    if d.get("steal") is not None:
        known.append(f"steal {_pct(d['steal'])}")
    figures = ", ".join(known) + la if known else la.lstrip("; ")
    if d.get("loaded"):
        n, m = d.get("sizes_loaded") or 0, d.get("sizes_with_figures") or 0
        some = f"; {n} of {m} size visits had their ranks wait 10 % or more" if m else ""
        return ("measured on a loaded host: " + figures + some +
                "; its times include the waits, and a difference against a quiet run may be the host's")
    return "measured on a quiet host: " + figures


def side_load(runs) -> dict:
    """The load of one side of a comparison (its launches): the largest waited and others
    over its launches, and how many were loaded."""
    loads = [run_load(r) for r in runs]
    known = [d for d in loads if d]
    vals = [d["waited"] for d in known if d.get("waited") is not None]
    oth = [d["others"] for d in known if d.get("others") is not None]
    return {"launches": len(runs), "recorded": len(known), "loaded": sum(d["loaded"] for d in known),
            "waited_max": max(vals) if vals else None, "waited_min": min(vals) if vals else None,
            "others_max": max(oth) if oth else None}


def comparison_note(a_runs, b_runs, a_label: str = "A", b_label: str = "B") -> str:
    """What a comparison must say of the two sides' load ("" when nothing)."""
    a, b = side_load(a_runs), side_load(b_runs)
    if not a["recorded"] and not b["recorded"]:
        return ""
    parts = []
    for lab, s in ((a_label, a), (b_label, b)):
        if not s["recorded"]:
            parts.append(f"{lab}: load not recorded")
        else:
            parts.append(f"{lab}: {s['loaded']} of {s['recorded']} launches on a loaded host (ranks waited for a "
                         f"CPU up to {_pct(s['waited_max'])} of the time)")
    a_l, b_l = a["loaded"] > 0, b["loaded"] > 0
    wa, wb = a["waited_max"], b["waited_max"]
    differ = (a_l != b_l) or (wa is not None and wb is not None and abs(wa - wb) >= DIFFERENT_WAITED)
    if differ:
        return ("the two sides were measured under different load (" + "; ".join(parts) +
                "): a difference between them may be the host's, not the configurations'")
    if a_l or b_l:
        return "both sides were measured on a loaded host (" + "; ".join(parts) + ")"
    return ""


def config_words(runs) -> str | None:
    """One sentence on the host load of a configuration's launches, or None when none recorded it."""
    loads = [run_load(r) for r in runs]
    known = [d for d in loads if d]
    if not known:
        return None
    if len(runs) == 1:
        return describe(known[0])
    waited = [d["waited"] for d in known if d.get("waited") is not None]
    span = (f" (the ranks waited for a CPU {_pct(min(waited))} to {_pct(max(waited))} of the time)"
            if waited else "")
    k = sum(d["loaded"] for d in known)
    if k:
        return (f"{k} of {len(runs)} launches measured on a loaded host{span}; their times include the waits")
    return f"all {len(known)} launches with a recorded load measured on a quiet host{span}"
