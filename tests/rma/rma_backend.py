"""Every one-sided pattern over one backend, with payload checks on; or, for a backend
whose module has no one-sided operations, the refusal.

usage: rma_backend.py BACKEND     (a spec of vs_test_backends, tests/meson.build)

A module that declares the one-sided operations (`versus-run --list --json`: "rma")
runs put and get (latency and bandwidth), atomic (fadd and cswap, when it declares
"atomics"; else the refusal) and putnotify (ordered and flush).  Claims checked per
run: exit 0 and end status "ok"; one size record per size in order with the requested
sample count of positive integers; every size "valid" (the bytes checked where they
arrived); the run record carries the pattern, its variant, "validate": true and the
window of the bandwidth variants; the stdout table has the pattern's columns and one
row per size; the analysis package loads the file; and the data really moved: no
1 MiB sample is faster than moving its bytes at 100 GB/s.

A module without them: each one-sided pattern exits 77 before any rank starts,
saying that the transport has no one-sided operations, and writes no file.  Either
way the module's Meson declaration ('one_sided', VERSUS_ONE_SIDED_MODULES) must say
the same as `--list --json`.
"""
import os
import sys

import vstest as vt
from backends import declaration, prepare, split
from common import positive_ints

from versus import load as vsload

SIZES = [1, 8, 9000, 1 << 20]
SPEC = "1,8,9000,1M"
ITER, ITER_LARGE = 12, 5
WINDOW = 8
CEILING_BYTES_PER_NS = 100.0  # no copy on this machine runs near 100 GB/s


def run_pattern(launcher, base, pattern, variant, d, sizes=SIZES, spec=SPEC, extra=()):
    out = os.path.join(d, f"{pattern}-{variant}.jsonl")
    args = base + ["--pattern", pattern, "--variant", variant, "--sizes", spec, "--iterations", str(ITER),
                   "--iterations-large", str(ITER_LARGE), "--warmup", "3", "--warmup-large", "1",
                   "--validate", "--out", out, "--timeout", "40"] + list(extra)
    p = vt.run(args, launcher=launcher, timeout=120)
    what = f"{pattern} {variant}"
    vt.check(p.returncode == 0, f"{what} exits 0 (got {p.returncode})")
    run, recs, end = vt.read_jsonl(out)
    vt.check(end is not None and end["status"] == "ok" and end["sizes_completed"] == len(sizes),
             f"{what}: end record says ok after {len(sizes)} sizes")
    vt.check(run["pattern"] == pattern and run["variant"] == variant and run["validate"] is True,
             f"{what}: pattern, variant and validate recorded")
    vt.check([s["bytes"] for s in recs] == sizes, f"{what}: sizes {sizes} in order")
    large = run["iterations"]["large_from_bytes"]
    for s in recs:
        want = ITER_LARGE if s["bytes"] >= large else ITER
        vt.check(s["iterations"] == want == len(s["samples_ns"]) and positive_ints(s["samples_ns"]),
                 f"{what} {s['bytes']} B: {want} positive samples")
        vt.check(s.get("valid") is True and "validation" not in s,
                 f"{what} {s['bytes']} B: the bytes that arrived are the bytes sent")
    rows = [ln for ln in p.stdout.splitlines() if ln and not ln.startswith("#")]
    vt.check(len(rows) == len(sizes), f"{what}: stdout table has one row per size")
    runs = vsload.load_file(out)
    vt.check(len(runs) == 1 and runs[0].pattern == pattern, f"{what}: the analysis package loads the records")
    return run, {s["bytes"]: s for s in recs}, p.stdout


def moved(s, nbytes, what):
    floor = nbytes / CEILING_BYTES_PER_NS
    low = min(s["samples_ns"])
    vt.check(low > floor, f"{what}: fastest sample {low} ns is above the {floor:.0f} ns that {nbytes} B take "
             f"at 100 GB/s (the data really moved)")


def refused(launcher, base, pattern, variant, d, why):
    out = os.path.join(d, f"refused-{pattern}-{variant}.jsonl")
    sizes = "8" if pattern == "atomic" else "8,1K"
    p = vt.run(base + ["--pattern", pattern, "--variant", variant, "--sizes", sizes, "--out", out,
                       "--timeout", "30"], launcher=launcher, timeout=90)
    vt.check(p.returncode == 77, f"{pattern} {variant} exits 77 ({why}; got {p.returncode})")
    vt.check(why in p.stderr, f"{pattern} {variant}: stderr says '{why}' ({p.stderr.strip()[-300:]})")
    vt.check(not os.path.exists(out), f"{pattern} {variant}: no results file for a refused run")


def main():
    spec = sys.argv[1]
    module, _ = split(spec)
    mod, _ = declaration(module)
    _, launcher, base = prepare(spec)
    d = vt.tmpdir()
    vt.check(isinstance(mod.get("rma"), bool) and isinstance(mod.get("atomics"), bool),
             f"--list --json says whether {module} has one-sided operations and atomics ({mod.get('rma')}, "
             f"{mod.get('atomics')})")
    promised = module in [m for m in os.environ.get("VERSUS_ONE_SIDED_MODULES", "").split(",") if m]
    vt.check(promised == mod["rma"], f"{module}: the Meson declaration's 'one_sided' ({promised}) and "
             f"--list --json's rma ({mod['rma']}) agree")
    if not mod["rma"]:
        vt.check(not mod["atomics"], f"{module}: no atomics without the one-sided operations")
        for pattern, variant in (("put", "latency"), ("get", "bandwidth"), ("atomic", "fadd"),
                                 ("putnotify", "ordered")):
            refused(launcher, base, pattern, variant, d, "has no one-sided operations")
        return

    for pattern in ("put", "get"):
        _, by, out = run_pattern(launcher, base, pattern, "latency", d)
        vt.check("Latency [us]" in out, f"{pattern} latency table shows the latency")
        moved(by[1 << 20], 1 << 20, f"{pattern} latency of 1 MiB")
        run, by, out = run_pattern(launcher, base, pattern, "bandwidth", d, extra=["--window", str(WINDOW)])
        vt.check(run["pattern_params"].get("window") == WINDOW, f"{pattern} bandwidth: window {WINDOW} recorded")
        vt.check("Bandwidth [MB/s]" in out, f"{pattern} bandwidth table shows MB/s")
        moved(by[1 << 20], WINDOW << 20, f"{pattern} window of {WINDOW} x 1 MiB")

    for variant in ("fadd", "cswap"):
        if mod["atomics"]:
            _, by, out = run_pattern(launcher, base, "atomic", variant, d, sizes=[8], spec="8")
            vt.check("Rate [op/s]" in out, f"atomic {variant} table shows the rate")
        else:
            refused(launcher, base, "atomic", variant, d, "has no one-sided atomics")

    for variant in ("ordered", "flush"):
        if mod.get("memory") == "module":
            refused(launcher, base, "putnotify", variant, d, "polls its buffer from the host")
            continue
        _, by, out = run_pattern(launcher, base, "putnotify", variant, d)
        moved(by[1 << 20], 2 << 20, f"putnotify {variant} round trip of 1 MiB each way")


if __name__ == "__main__":
    main()
