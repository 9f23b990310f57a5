"""LogGP parameters of a stack (L, o_s, o_r, g, G) from the two-sided patterns
(docs/loggp.md says why each pattern gives what):

    o_s  median time inside the send call,    overhead/delayed, smallest size
    o_r  median time inside the receive call, overhead/delayed, smallest size
         (called once the echo has had time to arrive: the message is there)
    L    pingpong round trip / 2 at the smallest size  - o_s - o_r
    g    growth of the stream's window time with the window W (runs with two
         windows or more), smallest size: what each further message adds; with
         one window, (window - pingpong round trip) / (W - 1)
    G    slope of the stream's time per message over the large sizes (ns per byte)

A *stack* is a transport configuration (transport, provider, options, library
settings of the environment, ranks, hosts, placement): the runs of the three
patterns are matched on it, whatever their pattern, variant and pattern
parameters.  Each figure is built from medians (of each launch; with several
launches, their mean), and its 95 % interval is a percentile bootstrap of the
whole computation: per pattern the launches are drawn with replacement (one
draw for all its sizes: a launch's effect is shared by every size it
measured), then each drawn launch's median from its own samples (drawn exactly
from the order statistics, stats.bootstrap_median_draws).  With one launch per
pattern the interval speaks for those launches only (within-launch).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from .lazy import numpy as np

from .load import InputError, Run, _placement_key

SMALL_GROWTH_MAX = 4096      # o_s, o_r growth per byte: fitted over the overhead sizes up to this
LARGE_FROM = 65536           # G: fitted over the stream sizes from this on (or the two largest)
DRAWS = 2000
CLAIM_LAUNCHES = 3

NEEDED = {
    "pingpong": "versus-run --pattern pingpong --variant blocking",
    "overhead/delayed": "versus-run --pattern overhead --variant delayed",
    "stream": "versus-run --pattern stream",
}


def stack_key(run: Run) -> tuple:
    """The transport configuration the LogGP patterns are matched on: load.configuration_key
    without the pattern, its variant and parameters, and the campaign's name for the run."""
    t = run.transport
    rec = run.record
    env = {k: v for k, v in (rec.get("env") or {}).items() if not str(k).startswith("VERSUS_")}
    hosts = rec.get("hosts") or []
    return (t.get("name"), t.get("provider") or "", json.dumps(t.get("options") or {}, sort_keys=True, default=str),
            json.dumps(env, sort_keys=True, default=str), rec.get("ranks"), len(set(map(str, hosts))),
            _placement_key(rec.get("placement")))


def stack_label(run: Run) -> str:
    """transport[/provider]: what the module reports of itself (group_stacks adds the settings
    that tell apart two stacks of one transport)."""
    t = run.transport
    name = str(t.get("name", "?"))
    if t.get("provider"):
        name += "/" + str(t["provider"])
    return name


def _settings(run: Run) -> set[str]:
    """The options and library settings of the environment of a run, as KEY=VALUE words."""
    t = run.transport
    opts = {k: v for k, v in (t.get("options") or {}).items() if k != "provider"}
    env = {k: v for k, v in (run.record.get("env") or {}).items() if not str(k).startswith("VERSUS_")}
    return {f"{k}={v}" for k, v in {**opts, **env}.items()}


def _role(run: Run) -> str | None:
    """Which of the needed measurements a run is, or None."""
    if run.pattern == "pingpong":
        return "pingpong"
    if run.pattern == "overhead" and run.variant == "delayed":
        return "overhead/delayed"
    if run.pattern == "stream":
        return "stream"
    return None


@dataclass
class Source:
    """One needed pattern's launches within a stack."""
    role: str
    runs: list[Run]

    def launches(self) -> list[list[Run]]:
        from .samples import launch_key
        by: dict[str, list[Run]] = {}
        for r in self.runs:
            by.setdefault(launch_key(r), []).append(r)
        return list(by.values())

    def series(self, key: str, nbytes: int) -> list[np.ndarray]:
        """Per launch, the sorted samples (ns) of a series at a size (visits pooled)."""
        out = []
        for launch in self.launches():
            parts = []
            for r in launch:
                s = r.sizes_by_bytes().get(nbytes)
                if s is None or s.valid is False:
                    continue
                parts.append(s.samples_ns if key == "samples_ns" else s.extra.get(key))
            parts = [p for p in parts if p is not None and len(p)]
            if parts:
                out.append(np.sort(np.concatenate(parts).astype(np.float64)))
        return out

    def sizes(self) -> list[int]:
        """Sizes every launch measured with a valid payload check (or none made)."""
        common = None
        for launch in self.launches():
            have = {b for r in launch for b, s in r.sizes_by_bytes().items() if s.valid is not False and s.samples_ns.size}
            common = have if common is None else common & have
        return sorted(common or [])


class Draws:
    """The bootstrap of medians: per source one matrix of launch indexes drawn with
    replacement (shared by every size of that source), and per quantity the mean over
    the drawn launches of each one's bootstrap median."""

    def __init__(self, seed: int, draws: int):
        self.rng = np.random.default_rng(seed)
        self.draws = draws
        self._idx: dict[tuple[str, int], np.ndarray] = {}

    def _launch_idx(self, src: Source, n: int) -> np.ndarray:
        if (src.role, n) not in self._idx:
            self._idx[(src.role, n)] = self.rng.integers(0, n, size=(self.draws, n))
        return self._idx[(src.role, n)]

    def quantity(self, src: Source, key: str, nbytes: int, divisor: float = 1.0) -> tuple[float, np.ndarray]:
        """(point, draws) of the mean over launches of the launch median of `key` at `nbytes`, / divisor."""
        from .stats import bootstrap_median_draws, sorted_median
        arrays = src.series(key, nbytes)
        if not arrays:
            raise InputError(f"{src.role}: no {key} samples at {nbytes} B")
        point = float(np.mean([sorted_median(x) for x in arrays])) / divisor
        meds = np.stack([bootstrap_median_draws(x, self.draws, self.rng) for x in arrays])   # (L, D)
        idx = self._launch_idx(src, len(arrays))
        cols = np.arange(self.draws)
        d = meds[idx.T, cols].mean(axis=0) / divisor
        return point, d


def _slope(x: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Least-squares slopes of ys (k, ...) against x (k,), along the first axis."""
    xc = x - x.mean()
    return np.tensordot(xc, ys - ys.mean(axis=0), axes=(0, 0)) / float((xc * xc).sum())


@dataclass
class Param:
    name: str
    value: float
    ci: list[float]
    unit: str
    source: str

    def to_dict(self) -> dict:
        return {"value": self.value, "ci": self.ci, "unit": self.unit, "from": self.source}


def _param(name: str, point: float, draws: np.ndarray, scale: float, unit: str, source: str) -> Param:
    d = draws[np.isfinite(draws)]
    ci = [float(np.percentile(d, 2.5)) * scale, float(np.percentile(d, 97.5)) * scale] if d.size else [math.nan] * 2
    return Param(name, point * scale, ci, unit, source)


@dataclass
class StackLogGP:
    label: str
    params: dict[str, Param]
    extra: dict[str, Param]
    launches: dict[str, int]
    sizes: dict[str, object]
    window: int
    notes: list[str] = field(default_factory=list)
    draws: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def within_launch(self) -> bool:
        return min(self.launches.values()) < 2

    def to_dict(self) -> dict:
        return {"stack": self.label, **{k: p.to_dict() for k, p in self.params.items()},
                "growth": {k: p.to_dict() for k, p in self.extra.items()},
                "launches": self.launches, "sizes": self.sizes, "window": self.window,
                "interval": ("within-launch: one launch of some pattern; the intervals speak for these launches only"
                             if self.within_launch else "between-launch: launches drawn with replacement, then each "
                             "launch's median from its samples"),
                "notes": self.notes}


def group_stacks(runs: list[Run]) -> list[tuple[str, dict[str, list[Run]], list[Run]]]:
    """(label, {role: runs}, all runs) per stack, first seen first; runs of other patterns are kept
    only to say the stack exists."""
    order: dict[tuple, tuple[str, dict[str, list[Run]], list[Run]]] = {}
    for r in runs:
        if r.imported is not None:
            continue
        k = stack_key(r)
        if k not in order:
            order[k] = (stack_label(r), {}, [])
        order[k][2].append(r)
        role = _role(r)
        if role:
            order[k][1].setdefault(role, []).append(r)
    out = list(order.values())
    labels = [o[0] for o in out]
    for lab in set(labels):
        same = [i for i, o in enumerate(out) if o[0] == lab]
        if len(same) < 2:
            continue
        # the same transport twice: name what tells them apart (options, environment), else
        # the ranks, hosts and placement
        sets = [_settings(out[i][2][0]) for i in same]
        shared = set.intersection(*sets)
        for i, own in zip(same, sets):
            rec = out[i][2][0].record
            words = sorted(own - shared)
            if not words:
                hosts = len(set(map(str, rec.get("hosts") or [])))
                place = rec.get("placement") if isinstance(rec.get("placement"), dict) else {}
                words = [f"{rec.get('ranks')} ranks", f"{hosts} host{'s' if hosts != 1 else ''}",
                         str(place.get("relation") or place.get("policy") or "")]
            out[i] = (f"{lab} ({', '.join(w for w in words if w)})", out[i][1], out[i][2])
    return out


def missing_roles(roles: dict[str, list[Run]]) -> list[str]:
    return [k for k in NEEDED if k not in roles]


def _pingpong_runs(runs: list[Run]) -> list[Run]:
    """The blocking ping-pong when there is one (the overhead pattern's calls), else the other variant."""
    blocking = [r for r in runs if r.variant == "blocking"]
    return blocking or runs


def _window(run: Run) -> int:
    return int((run.record.get("pattern_params") or {}).get("window") or 64)


def _one_config(runs: list[Run]) -> list[Run]:
    """The runs of the first configuration (pattern parameters) among them: a window or a
    buffer policy is one measurement, not pooled with another."""
    from .load import configuration_key
    k0 = configuration_key(runs[0])
    return [r for r in runs if configuration_key(r) == k0]


def stack_loggp(label: str, roles: dict[str, list[Run]], seed: int = 0, draws: int = DRAWS,
                large_from: int = LARGE_FROM, small_max: int = SMALL_GROWTH_MAX) -> StackLogGP:
    """The LogGP parameters of one stack whose runs are `roles` (every role of NEEDED present)."""
    miss = missing_roles(roles)
    if miss:
        raise InputError(f"{label}: no {', '.join(miss)} run")
    ping = Source("pingpong", _one_config(_pingpong_runs(roles["pingpong"])))
    over = Source("overhead/delayed", _one_config(roles["overhead/delayed"]))
    by_w: dict[int, list[Run]] = {}
    for r in roles["stream"]:
        by_w.setdefault(_window(r), []).append(r)
    windows = sorted(by_w)
    strms = {w: Source("stream" if len(windows) == 1 else f"stream W={w}", _one_config(by_w[w])) for w in windows}
    # G from the window that measured the most large sizes (the larger window on a tie)
    window = max(windows, key=lambda w: (sum(b >= large_from for b in strms[w].sizes()), w))
    strm = strms[window]
    notes: list[str] = []
    ps, os_, ss = ping.sizes(), over.sizes(), strm.sizes()
    for src, sz in [(ping, ps), (over, os_)] + [(x, x.sizes()) for x in strms.values()]:
        if not sz:
            raise InputError(f"{label}: the {src.role} runs hold no size every launch measured validly")
    common = set(ps) & set(os_) & set(ss)
    several = sorted(common & set.intersection(*(set(x.sizes()) for x in strms.values())))
    if len(windows) > 1 and not several:
        notes.append(f"the stream runs of windows {', '.join(map(str, windows))} share no size with the others: "
                     f"g from the window of {window} alone")
        windows, strms = [window], {window: strm}
    common = several if len(windows) > 1 else sorted(common)
    s0 = common[0] if common else None
    sp, so, st = (s0, s0, s0) if s0 is not None else (ps[0], os_[0], ss[0])
    if s0 is None:
        notes.append(f"no size common to the three patterns: smallest sizes {sp}, {so} and {st} B used")
    dr = Draws(seed, draws)
    o_s, o_s_d = dr.quantity(over, "send_ns", so)
    o_r, o_r_d = dr.quantity(over, "recv_ns", so)
    rtt, rtt_d = dr.quantity(ping, "samples_ns", sp)
    L, L_d = rtt / 2 - o_s - o_r, rtt_d / 2 - o_s_d - o_r_d
    if len(windows) > 1:
        # the window's growth with W: what each further message adds, whatever the first message
        # and the acknowledgement cost (Netgauge's growth of the round trip with the messages sent)
        q = [dr.quantity(strms[w], "samples_ns", st) for w in windows]
        xw = np.array(windows, dtype=np.float64)
        g = float(_slope(xw, np.array([p for p, _ in q])))
        g_d = _slope(xw, np.stack([d for _, d in q]))
        g_from = f"slope of the stream's window time against W ({', '.join(map(str, windows))}) at {st} B"
    elif window > 1:
        win, win_d = dr.quantity(strm, "samples_ns", st)
        g, g_d = (win - rtt) / (window - 1), (win_d - rtt_d) / (window - 1)
        g_from = f"(stream window at {st} B - pingpong round trip at {sp} B) / (W - 1), W = {window}"
        notes.append("one window size: g = (window - round trip) / (W - 1) assumes the acknowledgement and the "
                     "window's first message cost one round trip (a blocking send that costs more than the "
                     "window's non-blocking ones biases g by the difference / (W - 1)); stream runs with two "
                     "windows (--window) give g from the growth with W instead")
    else:
        g, g_d = dr.quantity(strm, "samples_ns", st)
        g_from = f"stream window of 1 message at {st} B"
        notes.append("a window of 1 message: g is the whole window (acknowledgement included)")
    large = [b for b in ss if b >= large_from]
    if len(large) < 2:
        large = ss[-2:]
    if len(large) < 2:
        raise InputError(f"{label}: the stream runs hold one size only; G needs two sizes or more (from {large_from} B)")
    pts = [dr.quantity(strm, "samples_ns", b, window) for b in large]
    xl = np.array(large, dtype=np.float64)
    G = float(_slope(xl, np.array([p for p, _ in pts])))
    G_d = _slope(xl, np.stack([d for _, d in pts]))
    params = {
        "L": _param("L", L, L_d, 1e-3, "us", f"pingpong round trip / 2 at {sp} B - o_s - o_r"),
        "o_s": _param("o_s", o_s, o_s_d, 1e-3, "us", f"overhead/delayed send_ns at {so} B"),
        "o_r": _param("o_r", o_r, o_r_d, 1e-3, "us", f"overhead/delayed recv_ns at {so} B"),
        "g": _param("g", g, g_d, 1e-3, "us", g_from),
        "G": _param("G", G, G_d, 1.0, "ns/B", f"slope of the stream's time per message over {large[0]}..{large[-1]} B "
                                             f"({len(large)} sizes)"),
    }
    extra = {}
    small = [b for b in os_ if b <= small_max]
    if len(small) >= 2:
        xs = np.array(small, dtype=np.float64)
        for key, name in (("send_ns", "O_s"), ("recv_ns", "O_r")):
            q = [dr.quantity(over, key, b) for b in small]
            extra[name] = _param(name, float(_slope(xs, np.array([p for p, _ in q]))),
                                 _slope(xs, np.stack([d for _, d in q])), 1.0, "ns/B",
                                 f"slope of overhead/delayed {key} over {small[0]}..{small[-1]} B")
    L_ci = params["L"].ci
    if L_ci[1] < 0:
        notes.append("L below 0: the one-way time (round trip / 2) is shorter than o_s + o_r measured alone, so "
                     "part of the calls overlaps the transfer or the peer's work (LogGP assumes they add up): L is "
                     "not determined by this method here")
    elif L_ci[0] <= 0:
        notes.append("L not distinguishable from 0: o_s + o_r measured alone account for the one-way time (on "
                     "one host the data's transfer, a cache line another core wrote or a kernel copy, happens "
                     "inside the calls)")
    if g < max(o_s, o_r):
        notes.append(f"g below {'o_s' if o_s >= o_r else 'o_r'}: in a stream of calls each costs less than a lone "
                     "call (warm caches, batched notifications), so the stream's time per message is below the "
                     "overhead measured alone; LogGP's g >= o does not hold here")
    launches = {"pingpong": len(ping.launches()), "overhead/delayed": len(over.launches()),
                **{x.role: len(x.launches()) for x in strms.values()}}
    if min(launches.values()) < CLAIM_LAUNCHES:
        notes.append(f"fewer than {CLAIM_LAUNCHES} launches of some pattern: the intervals "
                     + ("speak for these launches only (within-launch)" if min(launches.values()) < 2 else
                        "rest on few launches (a percentile bootstrap over 2 launches is too narrow)"))
    out = StackLogGP(label, params, extra, launches,
                     {"pingpong": sp, "overhead": so, "stream": st, "G_from": large[0], "G_to": large[-1]},
                     window, notes)
    out.draws = {"L": L_d * 1e-3, "o_s": o_s_d * 1e-3, "o_r": o_r_d * 1e-3, "g": g_d * 1e-3, "G": G_d}
    return out


def loggp_document(runs: list[Run], seed: int = 0, draws: int = DRAWS, large_from: int = LARGE_FROM,
                   require_all: bool = True) -> dict:
    """The `versus loggp --json` document: one entry per stack.  require_all: refuse (InputError)
    when a stack lacks a needed pattern; else such stacks are listed under `incomplete`."""
    stacks = group_stacks(runs)
    if not stacks:
        raise InputError("no measured runs")
    done, incomplete = [], []
    for label, roles, _ in stacks:
        miss = missing_roles(roles)
        if miss:
            incomplete.append({"stack": label, "missing": miss})
            continue
        try:
            done.append(stack_loggp(label, roles, seed, draws, large_from))
        except InputError as ex:
            if require_all:
                raise
            incomplete.append({"stack": label, "missing": [], "why": str(ex)})
    if incomplete and require_all:
        lines = [f"{i['stack']}: no {', '.join(i['missing'])} run "
                 f"({'; '.join(NEEDED[m] for m in i['missing'])})" for i in incomplete]
        raise InputError("LogGP needs the pingpong, overhead (variant delayed) and stream patterns of each "
                         "stack: " + " | ".join(lines))
    return {"model": "LogGP (docs/loggp.md)", "units": {"L": "us", "o_s": "us", "o_r": "us", "g": "us", "G": "ns/B"},
            "stacks": [s.to_dict() for s in done], "incomplete": incomplete, "_objects": done}


def _cell(p: dict, digits: int = 3) -> str:
    from .render import sig
    lo, hi = p["ci"]
    return f"{sig(p['value'], digits)} [{sig(lo, digits)}, {sig(hi, digits)}]"


def format_loggp(doc: dict) -> str:
    from .console import table
    rows = [[s["stack"], _cell(s["L"]), _cell(s["o_s"]), _cell(s["o_r"]), _cell(s["g"]), _cell(s["G"])]
            for s in doc["stacks"]]
    parts = ["LogGP parameters per stack (median-based, 95 % bootstrap intervals; docs/loggp.md)",
             table(["stack", "L us", "o_s us", "o_r us", "g us", "G ns/B"], rows),
             "L = round trip / 2 - o_s - o_r; o_s, o_r = time inside the send / the receive call "
             "(receive called once the echo is there); g = growth of the stream's window time per message "
             "added to the window (with one window: (window - round trip) / (W - 1)); "
             "G = slope of the stream's time per message at large sizes (1/G: bytes per ns = GB/s)"]
    for s in doc["stacks"]:
        growth = ", ".join(f"{k} {_cell(v)} ns/B" for k, v in s["growth"].items())
        parts.append(f"  {s['stack']}: sizes {s['sizes']['pingpong']}/{s['sizes']['overhead']}/"
                     f"{s['sizes']['stream']} B (pingpong/overhead/stream), G over {s['sizes']['G_from']}.."
                     f"{s['sizes']['G_to']} B, W = {s['window']}, launches "
                     + ", ".join(f"{k} {v}" for k, v in s["launches"].items())
                     + (f"; growth per byte: {growth}" if growth else ""))
        for n in s["notes"]:
            parts.append(f"    note: {n}")
    for i in doc.get("incomplete", []):
        parts.append(f"  {i['stack']}: not computed, {i.get('why') or 'no ' + ', '.join(i['missing']) + ' run'}")
    return "\n".join(parts)


# ---- comparison of two stacks: which has the lower o_s, the lower G ----

COMPARED = ("o_s", "G")


def compare_loggp(a: StackLogGP, b: StackLogGP, min_effect: float = 0.02) -> list[dict]:
    """Per compared parameter: the ratio A/B with its 95 % bootstrap interval and the mark the
    interval gives (compare.point_mark: + A lower, - A higher, = within the minimum effect, ~
    the interval includes 1), in parentheses unless both sides have several launches of every
    pattern (the claim rule of `versus compare`)."""
    from .compare import point_mark
    claims = not a.within_launch and not b.within_launch
    out = []
    for k in COMPARED:
        pa, pb = a.params[k], b.params[k]
        da, db = a.draws[k], b.draws[k]
        n = min(da.size, db.size)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = da[:n] / db[:n]
        r = r[np.isfinite(r)]
        ratio = pa.value / pb.value if pb.value > 0 and pa.value > 0 else math.nan
        if not (math.isfinite(ratio) and r.size and np.all(r > 0)):
            out.append({"param": k, "a": pa.value, "b": pb.value, "unit": pa.unit, "ratio": None, "ci": None,
                        "mark": "~", "text": f"{k}: not compared (a value or a draw at or below 0)"})
            continue
        ci = [float(np.percentile(r, 2.5)), float(np.percentile(r, 97.5))]
        mark = point_mark(ratio, ci, min_effect)
        lower = a.label if ratio < 1 else b.label
        if mark in ("+", "-"):
            what = f"{lower} has the lower {k}"
        elif mark == "=":
            what = f"no practical difference in {k} (under {min_effect * 100:g} %)"
        else:
            what = f"no significant difference in {k}"
        text = (f"{what}: {pa.value:.4g} against {pb.value:.4g} {pa.unit}, A/B {ratio:.3f} "
                f"[95 % CI {ci[0]:.3f}, {ci[1]:.3f}]")
        if not claims and mark != "~":
            mark, text = f"({mark})", f"in these launches only: {text}"
        out.append({"param": k, "a": pa.value, "b": pb.value, "unit": pa.unit, "ratio": ratio, "ci": ci,
                    "mark": mark, "text": text})
    return out


def is_loggp_side(runs: list[Run]) -> bool:
    """A comparison side that holds the LogGP patterns of one stack (and nothing else)."""
    stacks = group_stacks(runs)
    return len(stacks) == 1 and not missing_roles(stacks[0][1]) and all(_role(r) for r in runs)


def compare_sides(a_runs: list[Run], b_runs: list[Run], seed: int = 0, min_effect: float = 0.02) -> dict:
    (la, ra, _), = group_stacks(a_runs)
    (lb, rb, _), = group_stacks(b_runs)
    if la == lb:
        la, lb = f"{la} [A]", f"{lb} [B]"
    sa, sb = stack_loggp(la, ra, seed), stack_loggp(lb, rb, seed + 1)
    return {"a": sa.to_dict(), "b": sb.to_dict(), "statements": compare_loggp(sa, sb, min_effect),
            "claims": not sa.within_launch and not sb.within_launch}


def format_loggp_comparison(d: dict) -> str:
    parts = [f"A = {d['a']['stack']}", f"B = {d['b']['stack']}",
             "LogGP: which stack has the lower o_s and the lower G (ratio A/B, 95 % bootstrap interval; "
             "+ A lower, - A higher, ~ the interval includes 1, = under the minimum effect"
             + ("" if d["claims"] else "; fewer than 2 launches of some pattern: marks in parentheses, "
                "about these launches only") + ")",
             format_loggp({"stacks": [d["a"], d["b"]]}), ""]
    parts += [f"{s['mark']} {s['text']}" for s in d["statements"]]
    return "\n".join(parts)


def report_table(runs: list[Run], seed: int = 0) -> dict | None:
    """The report's LogGP table (render.py cells), or None when no stack has the three patterns."""
    from .render import ci_cell
    try:
        doc = loggp_document(runs, seed=seed, require_all=False)
    except InputError:
        return None
    if not doc["stacks"]:
        return None
    rows = [[s["stack"]] + [ci_cell(s[k]["value"], s[k]["ci"]) for k in ("L", "o_s", "o_r", "g", "G")]
            for s in doc["stacks"]]
    notes = [f"{s['stack']}: {n}" for s in doc["stacks"] for n in s["notes"]]
    notes += [f"{i['stack']}: no LogGP figures ({i.get('why') or 'no ' + ', '.join(i['missing']) + ' run'})"
              for i in doc["incomplete"]]
    return {"id": "loggp-table", "caption": "LogGP parameters per stack, 95 % bootstrap intervals (L, o_s, o_r, g in µs; "
                                      "G in ns per byte)",
            "columns": [{"title": "stack", "fmt": "text"}, {"title": "L µs", "fmt": "num_ci"},
                        {"title": "o_s µs", "fmt": "num_ci"}, {"title": "o_r µs", "fmt": "num_ci"},
                        {"title": "g µs", "fmt": "num_ci"}, {"title": "G ns/B", "fmt": "num_ci"}],
            "rows": rows, "notes": notes,
            "method": ("o_s and o_r: median time inside rank 0's send and receive call at the smallest size "
                       "(overhead pattern, variant delayed: the receive is called once the echo is there); "
                       "L: pingpong round trip / 2 at that size minus o_s and o_r; g: growth of the stream's "
                       "window time with the window W at that size (with one window: (window - round trip) / "
                       "(W - 1)); G: slope of the stream's time per message over the large "
                       "sizes.  Intervals: percentile bootstrap over launches, then samples.")}
