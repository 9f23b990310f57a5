"""The all-pairs scan's analysis: which host or which link is slow.

A scan (`versus-run --scan`) measures every pair of ranks once per pass at a
small and a large size.  Per size, each pair's figure in a pass is its median
round trip.  The scale is the scan itself: the median over all pairs of the
pass: the typical pair is the median over ranks of each rank's median pair
(log figures; a bad host moves its own rank's median, not the others'), the
noise is the scatter of each pair between passes (1.4826 MAD of the log
figures about the pair's median: it holds no host or link effect).  A pair
is *slow in a pass* when it is both SLOW_SIGMAS robust deviations and
SLOW_RATIO times above the typical pair (the ratio keeps pairs that differ
steadily by tens of per cent, as pairs on one host over loopback do, from
being called bad).  Then, per size:

- a pair slow in fewer than all passes is noise (a burst of load, a scheduler
  hiccup), never a finding; with one pass nothing is called, only listed;
- a *bad host* is one whose pairs with other hosts are slow with at least
  HOST_FRACTION of its partners (every partner, with three or four hosts),
  at least two of them;
- a *bad link* is a pair slow in every pass that no bad host explains.

A pair slow in every pass is a finding only when chance would rarely make one: the noise's rate
p is the share of passes in which the other pairs were slow, and P pairs of K passes would give
about P * p**K pairs slow in every pass by chance alone.  Above CHANCE (0.05 pairs per size) the
steady pairs are *unsure*, named with the passes that would keep chance below it, never a
finding (a scan beside other work on 2 CPUs: 10 of 28 pairs slow in some passes, one in all 3).

Pairs on one host (shared memory, not the network) are scaled among
themselves, apart from the pairs between hosts.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from .lazy import numpy as np

from .load import PairRecord, Run

SLOW_SIGMAS = 5.0
# A slow link is a factor, not a few per cent: on one host over a loopback socket the pairs of 8 ranks
# differ steadily by up to 1.48x (15 scans, --serial); a floor of 1.25 named a "bad link" there in
# 1 of 16 scans.  A degraded link (a lane down, a rate misnegotiated) costs 2x or more.
SLOW_RATIO = 2.0
HOST_FRACTION = 0.75
# the pairs slow in every pass that chance alone would give, at most, for the steady ones to be findings
CHANCE = 0.05


@dataclass
class SizeScan:
    bytes: int
    passes: int
    ranks: int
    typical_us: dict[bool, float]                  # same_host -> typical pair's one-way time
    pair_us: dict[tuple[int, int], list[float]]    # per pair, one-way median per pass
    slow_passes: dict[tuple[int, int], int]        # per pair, passes in which it was slow
    hosts: dict[int, str]
    bad_hosts: list[str] = field(default_factory=list)
    bad_links: list[tuple[int, int]] = field(default_factory=list)
    noise: list[tuple[int, int]] = field(default_factory=list)   # slow in some passes only
    unsure: list[tuple[int, int]] = field(default_factory=list)  # slow in every pass, but chance could do it
    noise_rate: float = 0.0        # the share of passes in which the pairs not slow in all were slow
    by_chance: float = 0.0         # the pairs slow in every pass that noise alone would give
    passes_needed: int | None = None   # passes that would keep by_chance below CHANCE

    def matrix(self) -> np.ndarray:
        """ranks x ranks: each pair's median over the passes (µs, one way), NaN on the diagonal."""
        m = np.full((self.ranks, self.ranks), np.nan)
        for (a, b), v in self.pair_us.items():
            m[a, b] = m[b, a] = float(np.median(v))
        return m

    def to_dict(self) -> dict:
        return {"bytes": self.bytes, "passes": self.passes, "pairs": len(self.pair_us),
                "typical_one_way_us": {("same host" if k else "between hosts"): v
                                       for k, v in self.typical_us.items()},
                "bad_hosts": self.bad_hosts,
                "bad_links": [{"ranks": list(p), "hosts": [self.hosts[p[0]], self.hosts[p[1]]],
                               "one_way_us": [round(x, 3) for x in self.pair_us[p]]} for p in self.bad_links],
                "noise": [{"ranks": list(p), "slow_in_passes": self.slow_passes[p]} for p in self.noise],
                "unsure": [{"ranks": list(p), "one_way_us": [round(x, 3) for x in self.pair_us[p]]}
                           for p in self.unsure],
                "noise_rate": round(self.noise_rate, 4), "slow_in_every_pass_by_chance": round(self.by_chance, 4),
                "passes_needed": self.passes_needed}


def _robust(logs: np.ndarray) -> tuple[float, float]:
    centre = float(np.median(logs))
    return centre, 1.4826 * float(np.median(np.abs(logs - centre)))


def analyse_size(pairs: list[PairRecord], ranks: int) -> SizeScan:
    """One scan size (all of pairs have the same bytes)."""
    by_pass: dict[int, list[PairRecord]] = defaultdict(list)
    hosts: dict[int, str] = {}
    for p in pairs:
        by_pass[p.pass_].append(p)
        hosts[p.ranks[0]], hosts[p.ranks[1]] = p.hosts
    pair_us: dict[tuple[int, int], list[float]] = defaultdict(list)
    slow: dict[tuple[int, int], int] = defaultdict(int)
    typical: dict[bool, list[float]] = defaultdict(list)
    logs_of: dict[tuple[int, int], list[float]] = defaultdict(list)
    for recs in by_pass.values():
        for p in recs:
            key, one_way_ns = tuple(sorted(p.ranks)), p.median_ns / 2
            pair_us[key].append(one_way_ns / 1e3)
            logs_of[key].append(math.log(one_way_ns))
    for same in (True, False):
        group = {k: v for k, v in logs_of.items() if (hosts[k[0]] == hosts[k[1]]) == same}
        if not group:
            continue
        # the noise: a pair's scatter between passes (no host or link effect in it)
        dev = [x - float(np.median(v)) for v in group.values() if len(v) >= 2 for x in v]
        for k_pass in range(max(len(v) for v in group.values())):
            now = {k: v[k_pass] for k, v in group.items() if len(v) > k_pass}
            # the typical pair: the median over ranks of each rank's median pair (a bad
            # host moves its own rank's median, not the others')
            per_rank: dict[int, list[float]] = defaultdict(list)
            for (a, b), x in now.items():
                per_rank[a].append(x)
                per_rank[b].append(x)
            centre = float(np.median([np.median(v) for v in per_rank.values()]))
            spread = (1.4826 * float(np.median(np.abs(dev))) if dev
                      else _robust(np.array(list(now.values())))[1])
            typical[same].append(math.exp(centre) / 1e3)
            for k, x in now.items():
                if x - centre > max(SLOW_SIGMAS * spread, math.log(SLOW_RATIO)):
                    slow[k] += 1
    n_pass = len(by_pass)
    sc = SizeScan(pairs[0].bytes, n_pass, ranks, {k: float(np.median(v)) for k, v in typical.items()},
                  dict(pair_us), {k: slow.get(k, 0) for k in pair_us}, hosts)
    steady = {k for k, v in sc.slow_passes.items() if v == n_pass and n_pass >= 2}
    sc.noise = sorted(k for k, v in sc.slow_passes.items() if 0 < v and k not in steady)
    if steady:
        others = [v for k, v in sc.slow_passes.items() if k not in steady]
        sc.noise_rate = sum(others) / (len(others) * n_pass) if others else 0.0
        sc.by_chance = len(pair_us) * sc.noise_rate ** n_pass
        if sc.by_chance > CHANCE:
            sc.unsure = sorted(steady)
            sc.passes_needed = chance_passes(len(pair_us), sc.noise_rate)
            steady = set()
    # hosts: the share of each host's partners on other hosts that are steadily slow
    partners: dict[str, set[str]] = defaultdict(set)
    slow_with: dict[str, set[str]] = defaultdict(set)
    for a, b in pair_us:
        ha, hb = hosts[a], hosts[b]
        if ha == hb:
            continue
        partners[ha].add(hb)
        partners[hb].add(ha)
        if (a, b) in steady:
            slow_with[ha].add(hb)
            slow_with[hb].add(ha)
    sc.bad_hosts = sorted(h for h, ps in partners.items()
                          if len(slow_with[h]) >= 2 and len(slow_with[h]) >= HOST_FRACTION * len(ps))
    sc.bad_links = sorted(k for k in steady if hosts[k[0]] not in sc.bad_hosts and hosts[k[1]] not in sc.bad_hosts)
    return sc


def chance_passes(pairs: int, rate: float) -> int | None:
    """The fewest passes after which pairs * rate**passes <= CHANCE (None: noise in every pass)."""
    if rate >= 1:
        return None
    if rate <= 0:
        return 2
    return max(2, math.ceil(math.log(CHANCE / pairs) / math.log(rate) - 1e-9))


def analyse(run: Run) -> list[SizeScan]:
    """Every size of a scan run, ascending."""
    if not run.pairs:
        return []
    ranks = int(run.record.get("ranks") or 1 + max(max(p.ranks) for p in run.pairs))
    sizes = sorted({p.bytes for p in run.pairs})
    return [analyse_size([p for p in run.pairs if p.bytes == b], ranks) for b in sizes]


def summary_text(run: Run, scans: list[SizeScan]) -> list[str]:
    """The findings in words, one line each."""
    lines = []
    for sc in scans:
        what = f"{sc.bytes} B ({len(sc.pair_us)} pairs, {sc.passes} pass{'es' if sc.passes != 1 else ''})"
        typ = ", ".join(f"{'same host' if k else 'between hosts'} {v:.2f} µs one way"
                        for k, v in sorted(sc.typical_us.items()))
        found = []
        for h in sc.bad_hosts:
            found.append(f"host {h} is slow with every partner (a bad host)")
        for a, b in sc.bad_links:
            ratio = np.median(sc.pair_us[(a, b)]) / sc.typical_us[sc.hosts[a] == sc.hosts[b]]
            found.append(f"the link {sc.hosts[a]}–{sc.hosts[b]} (ranks {a}-{b}) is {ratio:.1f}× the typical pair "
                         f"in every pass (a bad link)")
        if sc.passes < 2:
            found.append("one pass: a slow pair cannot be told from noise; run the scan with --passes 2 or more")
        if sc.unsure:
            more = (f"run the scan with --passes {sc.passes_needed} to tell" if sc.passes_needed
                    else "a quieter host is needed to tell")
            found.append(f"{len(sc.unsure)} pair(s) slow in every pass, but with the other pairs slow in "
                         f"{100 * sc.noise_rate:.0f} % of passes chance alone gives {sc.by_chance:.2f} such pairs: "
                         f"unsure, not a finding ({', '.join(f'ranks {a}-{b}' for a, b in sc.unsure)}); {more}")
        if not found:
            found.append("no host or link stands out")
        if sc.noise:
            found.append(f"{len(sc.noise)} pair(s) slow in some passes only: noise, not reported as findings")
        lines.append(f"{what}: typical {typ}; " + "; ".join(found) + ".")
    return lines


def plot_scan(sc: SizeScan, path_heat: str, path_hist: str) -> None:
    """The pair matrix as a heat map (ranks in order, host names on the axes) and the
    histogram of the pairs' figures.  A matrix spanning more than a factor of ten is coloured on
    a log scale: on a linear one a 100x slow host leaves every other pair the same colour."""
    from matplotlib.colors import LogNorm

    from .plots import plt
    m = sc.matrix()
    fig, ax = plt.subplots(figsize=(5.2, 4.4))
    finite = m[np.isfinite(m) & (m > 0)]
    wide = finite.size and finite.max() > 10 * finite.min()
    im = ax.imshow(m, cmap="viridis", interpolation="nearest",
                   norm=LogNorm(finite.min(), finite.max()) if wide else None)
    labels = [f"{r} {sc.hosts.get(r, '?')}" for r in range(sc.ranks)]
    if sc.ranks <= 32:
        ax.set_xticks(range(sc.ranks), labels, rotation=90, fontsize=7)
        ax.set_yticks(range(sc.ranks), labels, fontsize=7)
    ax.set_title(f"{sc.bytes} B: median one-way time per pair (us{', log scale' if wide else ''})", fontsize=9)
    fig.colorbar(im, ax=ax, label="us")
    fig.tight_layout()
    fig.savefig(path_heat, dpi=90)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(5.2, 3.0))
    ax.hist([float(np.median(v)) for v in sc.pair_us.values()], bins=min(40, max(5, len(sc.pair_us) // 2)))
    ax.set_xlabel("median one-way time per pair (us)")
    ax.set_ylabel("pairs")
    ax.set_title(f"{sc.bytes} B: {len(sc.pair_us)} pairs", fontsize=9)
    fig.tight_layout()
    fig.savefig(path_hist, dpi=90)
    plt.close(fig)


def add_parser(sub) -> None:
    p = sub.add_parser("scan-report", help="the all-pairs scan: heat maps, histogram, the slow host or link",
                       description="Analyse an all-pairs scan (versus-run --scan): per size, a heat map of the "
                                   "pairs, a histogram, the slowest pairs, and the bad hosts and bad links found "
                                   "(a pair slow in every pass; a host slow with its partners). Prints the "
                                   "findings; with -o writes an HTML page and scan.json there.")
    p.add_argument("results", help="the scan's JSONL file")
    p.add_argument("-o", "--output", metavar="DIR", help="write index.html, the figures and scan.json here")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.set_defaults(func=_cmd_scan_report)


def _cmd_scan_report(args) -> int:
    import json
    import os

    from .load import InputError, load_file, output_dir
    runs = [r for r in load_file(args.results) if r.pairs]
    if not runs:
        raise InputError(f"{args.results}: no pair records: not a scan (run versus-run --scan)")
    run = runs[0]
    scans = analyse(run)
    doc = {"source": args.results, "ranks": run.record.get("ranks"), "transport": run.transport.get("name"),
           "sizes": [s.to_dict() for s in scans], "summary": summary_text(run, scans)}
    if args.output:
        output_dir(args.output, "report directory")
        from .render import html_env
        figs = []
        for sc in scans:
            heat, hist = f"scan-{sc.bytes}-heat.png", f"scan-{sc.bytes}-hist.png"
            plot_scan(sc, os.path.join(args.output, heat), os.path.join(args.output, hist))
            slowest = sorted(sc.pair_us, key=lambda k: -float(np.median(sc.pair_us[k])))[:10]
            figs.append({"bytes": sc.bytes, "heat": heat, "hist": hist,
                         "slowest": [{"ranks": f"{a}-{b}", "hosts": f"{sc.hosts[a]}–{sc.hosts[b]}",
                                      "us": [f"{x:.2f}" for x in sc.pair_us[(a, b)]],
                                      "slow_passes": sc.slow_passes[(a, b)]} for a, b in slowest]})
        html = html_env().get_template("scan.html.j2").render(doc=doc, figs=figs, run=run)
        with open(os.path.join(args.output, "index.html"), "w", encoding="utf-8") as f:
            f.write(html)
        with open(os.path.join(args.output, "scan.json"), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
    print(json.dumps(doc, indent=1) if args.json else "\n".join(doc["summary"]))
    return 0
