#!/usr/bin/env python3
"""versus's one-sided patterns over UCX against ucx_perftest's own one-sided tests, on the
same two CPUs, with the buffers from the same allocator (memory=ucx: ucp_mem_map with
UCP_MEM_MAP_ALLOCATE, as ucx_perftest's):

  put latency, 8 B     versus putnotify ordered (one-way)  vs  ucp_put_lat (p50 one-way)
  put bandwidth, 1 MiB versus put bandwidth --window 16    vs  ucp_put_bw -O 16 (bytes / time)

Each round runs A B B A (versus, perftest, perftest, versus) back to back, so that a drift of
the host's speed within the round falls on both sides alike.  Per round:
  A/A  ln(V2/V1) and ln(P2/P1): how much each tool disagrees with itself a moment later;
  A/B  ln(sqrt(V1 V2) / sqrt(P1 P2)).
If both tools measure the same thing, ln A/B has variance (sv^2 + sp^2) / 2, no more than the
noisier tool's ln A/A (2 s^2), so the A/B ratio should fall within the largest A/A disagreement
seen in the same rounds: that is the tolerance, measured, never a constant.  The median of the
rounds' A/B ratios must lie within it.

Put latency is not quite the same loop: ucp_put_lat sends one put per message, its sequence
number in the last byte, and never flushes; putnotify puts the payload, then its 8-byte flag,
and ends the epoch (ucp_ep_flush_nbx).  The extra per one-way trip is one put, its wait and one
END, which is what versus's own put latency at 8 B times (X, measured in each round between the
two perftest runs).  Part of it overlaps the trip (the flush runs while the store travels), so
versus's one-way time must lie between perftest's and perftest's + X, each widened by the
tolerance: ln(V/P) in [-tol, ln((P + X) / P) + tol] for the median round.

A round with a launch versus-run recorded as loaded (tests/lib/launchload.py) is not judged and is
run again (tests/lib/judged.py), until ROUNDS rounds are quiet or the budget (BUDGET_S seconds,
shared evenly by the two figures, inside the meson timeout of 180 s) cannot hold another round;
then the test exits 77 with every round's figures and loads.  Exit 77 too without the ucx
module or ucx_perftest (Debian ucx-utils)."""
import math
import os
import shutil
import statistics
import sys

import vstest as vt
from judged import Budget, Verdict, settle, until_judged

sys.path.insert(0, os.path.join(os.environ.get("VERSUS_SOURCE_ROOT", "."), "bench"))

ROUNDS = 3
# put_bw's launches with the bench's counts last 0.1-0.2 s, where a daemon's few milliseconds on the
# measuring CPUs already read as a loaded host; four times the operations, on both sides alike
SCALE = {"put_bw": 4}
BUDGET_S = 120  # seconds for the rounds of both figures (meson timeout 180)
CPUS = ",".join(str(c) for c in sorted(os.sched_getaffinity(0))[:2])  # rank 0 / client, rank 1 / server
MIB = 1 << 20
PAIRS = (("put_lat", 8, "us"), ("put_bw", MIB, "MB/s"))


def rounds(exe, kind, size, tmp, env, budget):
    """Rounds until ROUNDS of them had no versus launch recorded as loaded, or the budget ends it;
    returns the Outcome, whose verdict is verdict()'s on the quiet rounds."""
    import ucx_onesided_vs_perftest as b
    from launchload import launch_load

    def one(r):
        keep = []
        k = SCALE.get(kind, 1)
        v1, info = b.versus_figure(kind, exe, size, CPUS, env, tmp, "ucx", keep=keep, scale=k)
        p1 = b.perftest_figure(kind, size, CPUS, env, scale=k)
        x = b.versus_figure("put_lat_extra", exe, 8, CPUS, env, tmp, "ucx", keep=keep)[0] \
            if kind == "put_lat" else 0.0
        p2 = b.perftest_figure(kind, size, CPUS, env, scale=k)
        v2, _ = b.versus_figure(kind, exe, size, CPUS, env, tmp, "ucx", keep=keep, scale=k)
        vt.check(info["memory"] == "ucx", f"the versus run recorded memory=ucx ({info['memory']})")
        busy = [w for w in (launch_load(p) for p in keep) if w]
        load = f"{len(busy)} of {len(keep)} versus launches loaded, e.g. {busy[0].split(';')[0]}" if busy else None
        return (v1, p1, p2, v2, x), load

    def judge(rs):
        good, words = verdict(kind, rs[:ROUNDS])
        return Verdict("pass" if good else "fail", words)

    def show(v):
        return f"versus {v[0]:.3f} {v[3]:.3f}, ucx_perftest {v[1]:.3f} {v[2]:.3f}" + (f", extra {v[4]:.3f}" if v[4] else "")

    return until_judged(f"{kind} at {size} B, versus over UCX within ucx_perftest's figure by its own A/A spread", one, judge, budget, ROUNDS, show)


def verdict(kind, rs):
    """(ok, words): the A/B median against the largest A/A disagreement (and, for put latency,
    the extra operations' time)."""
    aa = [abs(math.log(v2 / v1)) for v1, _, _, v2, _ in rs] + \
         [abs(math.log(p2 / p1)) for _, p1, p2, _, _ in rs]
    # above 0: versus slower (a longer time, a lower bandwidth)
    sign = -1 if kind == "put_bw" else 1
    ab = [sign * 0.5 * math.log(v1 * v2 / (p1 * p2)) for v1, p1, p2, v2, _ in rs]
    extra = statistics.median(math.log(1 + x / math.sqrt(p1 * p2)) for _, p1, p2, _, x in rs)
    tol, med = max(aa), statistics.median(ab)
    words = (f"median A/B {math.exp(med):.3f} (rounds: {', '.join(f'{math.exp(x):.3f}' for x in ab)}), "
             f"tolerance from A/A {math.exp(tol):.3f} (largest of {', '.join(f'{math.exp(x):.3f}' for x in aa)})")
    if kind == "put_lat":
        words += (f"; the extra put, wait and END per message took {statistics.median(r[4] for r in rs):.3f} us "
                  f"alone (allowed above 1: x {math.exp(extra):.3f})")
    return -tol <= med <= extra + tol, words


def main():
    vt.need_module("ucx")
    if not shutil.which("ucx_perftest"):
        print("SKIP: ucx_perftest not found (Debian: ucx-utils)", flush=True)
        return vt.SKIP
    try:
        from launchload import launch_load
    except ImportError as e:
        print(f"SKIP: the analysis package is needed to read a launch's load ({e})", flush=True)
        return vt.SKIP
    if len(os.sched_getaffinity(0)) < 2:
        print("SKIP: needs two CPUs", flush=True)
        return vt.SKIP
    import ucx_onesided_vs_perftest as b
    env = dict(os.environ)
    for k in ("UCX_TLS", "UCX_NET_DEVICES"):
        env.pop(k, None)  # both tools on UCX's own choice (sysv, posix, cma between local ranks)
    tmp = vt.tmpdir()
    budget, res = Budget(BUDGET_S), []
    try:
        for i, (kind, size, unit) in enumerate(PAIRS):
            res.append(rounds(vt.RUNNER, kind, size, tmp, env, budget.part(len(PAIRS) - i)))
            if res[-1].state == "skip":
                break
    except b.ToolFailed as e:
        vt.check(False, str(e))
    for (kind, size, unit), o in zip(PAIRS, res):
        for r in o.launches:
            if r.load is None:
                v1, p1, p2, v2, x = r.value
                print(f"{kind} {size} B: versus {v1:.3f} {v2:.3f} {unit}, ucx_perftest {p1:.3f} {p2:.3f} {unit}"
                      + (f", versus put latency 8 B {x:.3f} us" if x else ""))
    settle(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
