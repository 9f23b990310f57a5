"""What the ReFrame tests share: finding reframe in the project's virtual environment, the
checks of contrib/reframe (or their installed copy), running reframe with a JSON report under a
given configuration (None: ReFrame's builtin one), and checking each case's result, performance
variables, references and kept files."""
import glob
import json
import os
import re
import subprocess
import sys

import vstest as vt

SRC = os.path.realpath(os.environ.get("VERSUS_SOURCE_ROOT", "."))
SETTINGS = os.path.join(SRC, "contrib", "reframe", "settings.py")
CHECKS = os.path.join(SRC, "contrib", "reframe", "versus_check.py")
VENV_BIN = os.path.dirname(sys.executable)
REFRAME = os.path.join(VENV_BIN, "reframe")
VARIABLES = ("latency_8B", "bandwidth_1MiB")


def need_reframe():
    if not os.path.exists(REFRAME):
        vt.fail(f"reframe is not in {VENV_BIN}: pip install -e 'reports[test]' installs reframe-hpc "
                "(./quickstart.sh test does)")


def environment(bindir, base=None, **extra):
    """The environment reframe runs in: bindir (where versus-run is) and the venv first on PATH;
    nothing of ReFrame's own environment (RFM_*: no configuration file, search path or prefix
    from outside the test), nothing of the source tree on PYTHONPATH, no references file."""
    base = os.environ if base is None else base
    env = {k: v for k, v in base.items()
           if not k.startswith("RFM_") and k not in ("PYTHONPATH", "VERSUS_RFM_REFERENCES", "VERSUS_MODULE_PATH")}
    env["PATH"] = bindir + ":" + VENV_BIN + ":" + base.get("PATH", "")
    env.update(extra)
    return env


def reframe(config, checks, prefix, env, *more, timeout=600, cwd=None, iterations=300):
    """reframe -r (config None: ReFrame's builtin configuration) with a JSON report; returns
    (exit status, its output, the report's test cases)."""
    os.makedirs(prefix, exist_ok=True)
    report = os.path.join(prefix, "report.json")
    cmd = [REFRAME, *(["-C", config] if config else []), "-c", checks, *more, "-r", "--prefix", prefix,
           "--report-file", report, "-S", f"iterations={iterations}"]
    vt.log("$ " + " ".join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout, env=env,
                       stdin=subprocess.DEVNULL, cwd=cwd or prefix)
    vt.log(p.stdout[-8000:])
    cases = []
    if os.path.exists(report):
        cases = [c for r in json.load(open(report, encoding="utf-8"))["runs"] for c in r["testcases"]]
    return p.returncode, p.stdout, cases


def listed(config, checks, env, *more, timeout=300, cwd=None):
    """The test cases `reframe -lC` lists (concretised: one line per partition and environment),
    as (name, partition, environment), and reframe's output."""
    cmd = [REFRAME, *(["-C", config] if config else []), "-c", checks, *more, "-lC"]
    vt.log("$ " + " ".join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout, env=env,
                       stdin=subprocess.DEVNULL, cwd=cwd)
    vt.log(p.stdout[-4000:])
    out = []
    for line in p.stdout.splitlines():   # "- VersusSrun %transport=NAME /923fa10f @cluster:batch+gnu"
        m = re.match(r"- (.+?) /[0-9a-f]+ @(\S+?)\+(\S+)$", line.strip())
        if m:
            out.append(m.groups())
    return out, p


def perf(c):
    """variable -> [value, reference, lower, upper, unit, result] of a case."""
    return {k.rsplit(":", 1)[1]: v for k, v in (c.get("perfvalues") or {}).items()}


def check_case(c, judged=True):
    """A case passed, with both performance variables (perfvalues: "system:partition:name" ->
    [value, reference, lower, upper, unit, result]) and its JSONL kept in its output directory;
    judged: both within a reference with a bound on the side that fails; else none (ReFrame's
    0 with no bounds: reported, not judged)."""
    vt.check(c["result"] == "pass", f"{c['name']}: {c['result']} {c.get('fail_reason') or ''}")
    p = perf(c)
    vt.check(set(VARIABLES) <= set(p), f"{c['name']}: both performance variables ({sorted(p)})")
    lat, bw = p["latency_8B"], p["bandwidth_1MiB"]
    vt.check(0 < lat[0] < 1e6 and lat[4] == "us" and bw[0] > 0 and bw[4] == "MB/s",
             f"{c['name']}: latency_8B {lat[0]:.3f} us, bandwidth_1MiB {bw[0]:.0f} MB/s")
    if judged:
        vt.check(lat[1] > 0 and lat[3] is not None and bw[1] > 0 and bw[2] is not None,
                 f"{c['name']}: judged against references: latency {lat[1]} us (upper {lat[3]}), bandwidth "
                 f"{bw[1]} MB/s (lower {bw[2]})")
    else:
        vt.check(lat[1:4] == [0, None, None] and bw[1:4] == [0, None, None],
                 f"{c['name']}: no reference (reported only): {lat[1:4]} {bw[1:4]}")
    kept = glob.glob(os.path.join(c.get("outputdir") or "", "versus.jsonl"))
    vt.check(len(kept) == 1 and sum(1 for _ in open(kept[0], encoding="utf-8")) >= 3,
             f"{c['name']}: versus.jsonl kept in the output directory {c.get('outputdir')}")
    return p
