"""The MPI module's active-target one-sided modes (sync=fence, sync=pscw) over one MPI:
put and get latency with payload checks complete and record the mode, putnotify (whose
target polls its buffer without an epoch) is refused with 77 and the reason instead of
hanging, and an unknown mode exits 2 naming the three.

usage: test_rma_sync.py FLAVOUR   (openmpi or mpich)
"""
import os
import sys

import vstest as vt
from launchers import LAUNCH

flavour = sys.argv[1]
vt.need_module(flavour)
vt.need_program(LAUNCH[flavour][0])
d = vt.tmpdir()
SIZES = [8, 4096, 65536]


def base(sync, pattern, variant, out):
    return ["--transport", flavour, "--transport-opt", f"sync={sync}", "--pattern", pattern, "--variant", variant,
            "--sizes", ",".join(str(s) for s in SIZES), "--iterations", "20", "--iterations-large", "20", "--warmup", "3", "--validate",
            "--out", out, "--timeout", "30"]


for sync in ("fence", "pscw"):
    for pattern in ("put", "get"):
        out = os.path.join(d, f"{sync}-{pattern}.jsonl")
        p = vt.run(base(sync, pattern, "latency", out), launcher=LAUNCH[flavour], timeout=90)
        what = f"{pattern} latency with sync={sync}"
        vt.check(p.returncode == 0, f"{what} exits 0 (got {p.returncode}: {p.stderr.strip()[-300:]})")
        run, recs, end = vt.read_jsonl(out)
        vt.check(end is not None and end["status"] == "ok", f"{what}: end record says ok")
        vt.check([s["bytes"] for s in recs] == SIZES, f"{what}: one record per size")
        for s in recs:
            vt.check(s.get("valid") is True, f"{what} {s['bytes']} B: the bytes that arrived are the bytes sent")
            vt.check(len(s["samples_ns"]) == 20 and min(s["samples_ns"]) > 0, f"{what} {s['bytes']} B: 20 samples")
        tr = run["transport"]
        vt.check(tr["attrs"].get("rma_sync") == sync and tr["options"].get("sync") == sync,
                 f"{what}: the run record says sync={sync} ({tr['attrs'].get('rma_sync')}, {tr['options']})")

    out = os.path.join(d, f"{sync}-putnotify.jsonl")
    p = vt.run(base(sync, "putnotify", "ordered", out), launcher=LAUNCH[flavour], timeout=90)
    vt.check(p.returncode == 77, f"putnotify with sync={sync} exits 77 rather than waiting for ever "
             f"(got {p.returncode})")
    vt.check("needs passive target" in p.stderr and "use sync=lock" in p.stderr,
             f"putnotify with sync={sync}: stderr says why ({p.stderr.strip()[-300:]})")

p = vt.run(["--transport", flavour, "--transport-opt", "sync=lazy", "--pattern", "put", "--sizes", "8"],
           launcher=LAUNCH[flavour], timeout=60)
vt.check(p.returncode == 2, f"sync=lazy exits 2 (got {p.returncode})")
vt.check("lock|fence|pscw" in p.stderr, f"sync=lazy: stderr names the three modes ({p.stderr.strip()[-200:]})")
