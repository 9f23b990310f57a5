#!/usr/bin/env python3
"""Run transport_check (two processes driving a module's ops table directly)
against a built module; skip (77) when that module was not built.

usage: run_check.py NAME HARNESS MODULE_PATH [harness arguments...]

A module that brings its own bootstrap is started by the launcher it declares
(`versus-run --list --json`), two processes of the harness; the others are
forked by the harness itself.

Claims (checked by the harness, each printed as an "ok:" line per rank):
payloads intact at every size, early arrivals matched by tag, messages sharing
a tag received in the order sent (early or awaited), -EMSGSIZE with the
module's explanation for a short receive, the stream still usable after it,
600 sends in flight at once all completing, or, with --peer-death, a vanished
peer reported as -ECONNRESET.  With --expect-shm-mapping every buffer is
registered as versus-run registers it and shm must also report single copies
(an eleventh claim).  With --truncation-ends-stream one short receive is
checked, and not what follows it (a claim fewer).

With --rma the one-sided operations are checked instead (seven claims per rank:
exposure, then puts, gets and atomics each way).  The suite runs it for the modules
whose Meson declaration does not say 'one_sided': false (VERSUS_ONE_SIDED_MODULES);
for those a skip is a failure.  Run by hand on another module, one without the
operations skips (77) with the harness's SKIP line as the reason.
"""
import os
import subprocess
import sys

import vstest
from versus import modules as vsmod


def main():
    name, harness, module = sys.argv[1:4]
    args = sys.argv[4:]
    vstest.need_module(name)
    declared = vsmod.declared(os.environ["VERSUS_RUN"])
    mod = declared.get(name)
    vstest.check(mod is not None and mod.get("loads"), f"versus-run --list --json declares {name} and it loads")
    before = []
    if mod.get("bootstrap"):
        if "--peer-death" in args:
            vstest.fail("--peer-death needs a module the harness forks; this one is started by its launcher")
        hint = mod["launcher"]
        vstest.need_program(hint["program"])
        before, _ = vsmod.wrap(hint["kind"], 2, mod, declared)
    cmd = before + [harness, module] + args
    vstest.log("$ " + " ".join(cmd))
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=300, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        vstest.fail(f"transport_check did not finish within 300 s: {' '.join(cmd)}")
    vstest.log(f"rc={p.returncode}\n--- stdout\n{p.stdout}--- stderr\n{p.stderr}---")
    if "--rma" in args:
        return check_rma(p, name)
    vstest.check(p.returncode == 0, "both ranks exit 0")
    oks = [ln for ln in p.stdout.splitlines() if ": ok: " in ln]
    if "--peer-death" in args:
        vstest.check(any("vanished peer is -ECONNRESET" in ln for ln in oks),
                     "a vanished peer is reported as -ECONNRESET")
        vstest.check("rank 1" in p.stderr, "the module's message names the dead rank")
    else:
        for rank in (0, 1):
            mine = [ln for ln in oks if ln.startswith(f"rank {rank}:")]
            want = 11 + ("--expect-shm-mapping" in args) - ("--truncation-ends-stream" in args)
            vstest.check(len(mine) == want, f"rank {rank} passed all {want} checks (got {len(mine)})")
        vstest.check("module says:" in p.stderr, "-EMSGSIZE came with the module's explanation")
    return 0


def check_rma(p, name):
    skips = [ln for ln in p.stdout.splitlines() if ln.startswith("SKIP")]
    declared = [m for m in os.environ.get("VERSUS_ONE_SIDED_MODULES", "").split(",") if m]
    if p.returncode == vstest.SKIP:
        vstest.check(bool(skips), "a skip of the one-sided check says why")
        vstest.check(name not in declared, f"{name} is declared with one-sided operations (its Meson "
                     f"'one_sided' key) and must pass the check, not skip: {skips[0]}")
        print(skips[0], flush=True)
        return vstest.SKIP
    vstest.check(p.returncode == 0 and not skips, "both ranks exit 0")
    oks = [ln for ln in p.stdout.splitlines() if ": ok: " in ln]
    for rank in (0, 1):
        mine = [ln for ln in oks if ln.startswith(f"rank {rank}:")]
        vstest.check(len(mine) == 7, f"rank {rank} passed all 7 one-sided checks (got {len(mine)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
