"""Run one libFuzzer harness for a bounded time (VERSUS_FUZZ_SECONDS, default 20) from a copy of its
seed corpus; print the executions and the coverage it reached; fail on any finding (libFuzzer exits
non-zero and writes the input that crashed)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import vstest as vt

exe, seeds = sys.argv[1], sys.argv[2]
seconds = int(os.environ.get("VERSUS_FUZZ_SECONDS", "20"))
with tempfile.TemporaryDirectory() as d:
    corpus = os.path.join(d, "corpus")
    shutil.copytree(seeds, corpus)
    p = subprocess.run([exe, f"-max_total_time={seconds}", "-print_final_stats=1", f"-artifact_prefix={d}/",
                        "-timeout=10", "-rss_limit_mb=2048", corpus], capture_output=True, text=True,
                       timeout=seconds + 90)
    out = p.stdout + p.stderr
    execs = re.search(r"stat::number_of_executed_units:\s*(\d+)", out)
    cov = re.findall(r"cov: (\d+) ft: (\d+)", out)
    vt.log(f"{os.path.basename(exe)}: {execs.group(1) if execs else '?'} executions in {seconds} s, "
           f"coverage {cov[-1][0] if cov else '?'} edges, {cov[-1][1] if cov else '?'} features, "
           f"corpus {len(os.listdir(corpus))} inputs")
    if p.returncode:
        found = [f for f in os.listdir(d) if f.startswith(("crash-", "leak-", "timeout-", "oom-"))]
        for f in found:
            vt.log(f"{f}: {open(os.path.join(d, f), 'rb').read()[:200]!r}")
        vt.log(out[-4000:])
    vt.check(p.returncode == 0, f"{os.path.basename(exe)}: no finding in {seconds} s (exit {p.returncode})")
