#!/usr/bin/env python3
"""Truth for LogGP (docs/loggp.md): a send overhead imposed from outside is recovered in o_s,
and not in o_r, g or L.

The tcp module's test hook delay_ns busy-waits before each blocking send, inside the send call:
an overhead of exactly that much on every blocking send of both ranks.  The pingpong, the
overhead pattern's delayed variant and the stream with two windows run with the hook off and at
20 us; `versus loggp` must find o_s larger by 20 us (within 3 us), and o_r, g and L changed by
less than 3 us (the stream's sends are non-blocking: only its acknowledgement pays the hook,
which g, the growth of the window with W, does not see; a one-way time grows by the
sender's 20 us, which o_s takes).

One launch of each is not the unit of the claim: on a shared host the state of the moment moves a
whole launch (the delayed stack's o_s read 24 us above the plain one's in one launch, each within
a 1 us interval).  So a launch here is the eight runs, plain and delayed interleaved, and the
differences are judged over launches (tests/lib/judged.py): o_s's mean difference inside
20 +- 3 us, the others' absolute differences below 3 us, each by a 95 % interval over the
launches, from three launches on and until decided or the budget (BUDGET_S) ends it, which exits 77
with every launch's figures.  A launch whose runs versus-run recorded as loaded is logged and
judged all the same (on this 2-vCPU host a steal of a few per cent marks 20 of 24 launches so; the
launch-to-launch interval carries what the load does).  About 3.5 s a launch.
"""
import importlib.util
import json
import os
import subprocess
import sys

import vstest as vt
from judged import Budget, below, band, combine, settle, until_judged

DELAY_NS = 20000
TOL_US = 3.0
BUDGET_S = 60   # about 16 launches (meson timeout 180)
RUNS = [("pingpong", ["--pattern", "pingpong", "--variant", "blocking"], "0,8"),
        ("overhead", ["--pattern", "overhead", "--variant", "delayed"], "0,8"),
        ("stream16", ["--pattern", "stream", "--window", "16"], "0,64K,256K"),
        ("stream64", ["--pattern", "stream", "--window", "64"], "0,64K,256K")]


def main():
    vt.need_module("tcp")
    missing = [m for m in ("numpy", "scipy") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"SKIP: {sys.executable} lacks {', '.join(missing)} (the analysis package's dependencies)", flush=True)
        raise SystemExit(vt.SKIP)
    from launchload import launch_load
    d = vt.tmpdir()

    def one(k):
        files = []
        for delay in (0, DELAY_NS):
            for name, pat, sizes in RUNS:
                out = os.path.join(d, f"L{k}-d{delay}-{name}.jsonl")
                vt.run(["--launch", "local", "-n", "2", "--transport", "tcp", "--transport-opt", f"delay_ns={delay}",
                        *pat, "--sizes", sizes, "--iterations", "200", "--iterations-large", "20", "--warmup", "20",
                        "--warmup-large", "3", "--out", out, "--timeout", "60", "--quiet"], timeout=120, check_rc=0)
                files.append(out)
        p = vt.run_cmd([sys.executable, "-m", "versus", "loggp", "--json", *files], timeout=120, check_rc=0)
        doc = json.loads(p.stdout)
        by = {("delay" if "delay_ns=20000" in s["stack"] else "none"): s for s in doc["stacks"]}
        vt.check(sorted(by) == ["delay", "none"],
                 f"launch {k}: two stacks told apart by the hook ({[s['stack'] for s in doc['stacks']]})")
        vt.check("against W (16, 64)" in by["delay"]["g"]["from"], f"launch {k}: g from the growth of the window with W")
        busy = [w for w in (launch_load(f) for f in files) if w]
        if busy:   # logged, not left out: a steal of a few per cent marks most launches here as loaded
            vt.log(f"launch {k}: {len(busy)} of {len(files)} runs recorded as loaded, e.g. {busy[0].split(';')[0]}")
        return {q: by["delay"][q]["value"] - by["none"][q]["value"] for q in ("L", "o_s", "o_r", "g")}, None

    def judge(diffs):
        return combine([band([x["o_s"] for x in diffs], DELAY_NS / 1e3, TOL_US / (DELAY_NS / 1e3), " us", log=False)]
                       + [below([abs(x[q]) for x in diffs], TOL_US, " us", f"|change of {q}|")
                          for q in ("o_r", "g", "L")])

    def show(x):
        return ", ".join(f"{q} {x[q]:+.2f} us" for q in ("o_s", "o_r", "g", "L"))

    out = until_judged(f"o_s grows by the imposed {DELAY_NS / 1e3:g} us, o_r, g and L by less than {TOL_US:g} us",
                       one, judge, Budget(BUDGET_S), first=3, show=show)
    settle([out])
    subprocess.run(["rm", "-rf", d])


if __name__ == "__main__":
    main()
