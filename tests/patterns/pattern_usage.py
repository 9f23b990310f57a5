"""Pattern options that make no sense are refused with exit 2 and a message, before anything runs.

Claims: --window, --progress and --buffers are refused for patterns that do not use them (--window
for put and get's latency variant too), a size other than 8 for atomic;
--window outside 1..4096 and --progress values other than none / poll=N (N >= 1)
are refused; --help lists every pattern; a valid combination gets past parsing
(it then exits 2 only for the missing launcher, with a different message);
pingpong records its buffers mode, and --buffers shared (one buffer per rank)
moves the payload intact in both directions (--validate) over the module named by argv[1]
(one declared 'reference' in transports/: tests/patterns/meson.build).
"""
import json
import os
import sys
import tempfile

import vstest as vt

module = sys.argv[1]
vt.need_module(module)

BAD = [
    (["--pattern", "pingpong", "--window", "8"], "--window applies to the stream and bistream"),
    (["--pattern", "stream", "--progress", "none"], "--progress applies to the doublebuffer"),
    (["--pattern", "stream", "--window", "0"], "--window expects an integer >= 1"),
    (["--pattern", "stream", "--window", "5000"], "more than 4096"),
    (["--pattern", "doublebuffer", "--progress", "poll=0"], "--progress expects"),
    (["--pattern", "doublebuffer", "--progress", "sometimes"], "--progress expects"),
    (["--pattern", "stream", "--variant", "blocking"], "has no variant"),
    (["--pattern", "stream", "--buffers", "shared"], "--buffers applies to the pingpong"),
    (["--pattern", "pingpong", "--buffers", "one"], "--buffers expects 'separate' or 'shared'"),
    (["--pattern", "put", "--window", "8"], "the bandwidth variant of put and get, not 'put' latency"),
    (["--pattern", "atomic", "--sizes", "8,16"], "works on one 64-bit word: --sizes 8"),
    (["--pattern", "putnotify", "--variant", "latency"], "has no variant"),
]

for args, words in BAD:
    p = vt.run(["--transport", module] + args, timeout=20)
    vt.check(p.returncode == 2 and words in p.stderr, f"{' '.join(args)}: exit 2 saying '{words}'")

p = vt.run(["--help"], timeout=20)
for name in ("pingpong", "overhead", "stream", "bistream", "doublebuffer", "put", "get", "atomic", "putnotify"):
    vt.check(f"  {name} " in p.stdout, f"--help lists {name}")

p = vt.run(["--transport", module, "--pattern", "doublebuffer", "--progress", "poll=64"], timeout=20)
vt.check(p.returncode == 2 and "--progress" not in p.stderr and "needs its peers" in p.stderr,
         "doublebuffer --progress poll=64 parses (refused only for the missing launcher)")

with tempfile.TemporaryDirectory() as d:
    for mode in ("separate", "shared"):
        out = os.path.join(d, f"{mode}.jsonl")
        args = ["--transport", module, "--launch", "local", "-n", "2", "--sizes", "8,64K,1M", "--iterations", "20",
                "--iterations-large", "20", "--validate", "--quiet", "--out", out]
        if mode == "shared":
            args += ["--buffers", "shared"]
        p = vt.run(args, timeout=60)
        vt.check(p.returncode == 0, f"pingpong --buffers {mode} over {module} exits 0 ({p.stderr.strip()[-200:]})")
        recs = [json.loads(x) for x in open(out)] if os.path.exists(out) else []
        run = next((r for r in recs if r["record"] == "run"), {})
        sizes = [r for r in recs if r["record"] == "size"]
        vt.check(run.get("pattern_params", {}).get("buffers") == mode, f"run record says buffers {mode}")
        vt.check(len(sizes) == 3 and all(r.get("valid") is True for r in sizes),
                 f"--buffers {mode}: 3 sizes recorded, every payload checked and valid")
