"""What the ReFrame tests share: finding reframe in the project's virtual environment, the
settings and checks of contrib/reframe, running it with a JSON report, and checking each case's
result and performance variables."""
import json
import os
import subprocess
import sys

import vstest as vt

SRC = os.path.realpath(os.environ.get("VERSUS_SOURCE_ROOT", "."))
SETTINGS = os.path.join(SRC, "contrib", "reframe", "settings.py")
CHECKS = os.path.join(SRC, "contrib", "reframe", "versus_check.py")
VENV_BIN = os.path.dirname(sys.executable)
REFRAME = os.path.join(VENV_BIN, "reframe")


def need_reframe():
    if not os.path.exists(REFRAME):
        vt.fail(f"reframe is not in {VENV_BIN}: pip install -e 'reports[test]' installs reframe-hpc "
                "(./quickstart.sh test does)")


def environment(build, base=None, **extra):
    """The environment reframe runs in: the build's versus-run and the venv first on PATH, the
    checks' directory as ReFrame's search path, nothing of the source tree on PYTHONPATH."""
    base = os.environ if base is None else base
    env = dict(base, PATH=os.path.join(build, "core") + ":" + VENV_BIN + ":" + base.get("PATH", ""),
               RFM_CHECK_SEARCH_PATH=os.path.dirname(CHECKS), **extra)
    env.pop("PYTHONPATH", None)
    return env


def run(system, prefix, env, *more, timeout=600, cwd=None):
    """reframe -r on a system with a JSON report; returns (exit status, the report's test cases)."""
    report = os.path.join(prefix, "report.json")
    cmd = [REFRAME, "-C", SETTINGS, "--system", system, "-c", CHECKS, *more, "-r", "--prefix", prefix,
           "--report-file", report, "-S", "iterations=300"]
    vt.log("$ " + " ".join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout, env=env,
                       stdin=subprocess.DEVNULL, cwd=cwd)
    vt.log(p.stdout[-8000:])
    cases = []
    if os.path.exists(report):
        cases = [c for r in json.load(open(report, encoding="utf-8"))["runs"] for c in r["testcases"]]
    return p.returncode, cases


def check_case(c):
    """A case passed, with both performance variables within their references (perfvalues:
    "system:partition:name" -> [value, reference, lower, upper, unit, result])."""
    vt.check(c["result"] == "pass", f"{c['name']}: {c['result']}")
    perf = {k.rsplit(":", 1)[1]: v for k, v in (c.get("perfvalues") or {}).items()}
    vt.check({"latency_8B", "bandwidth_1MiB"} <= set(perf), f"{c['name']}: both performance variables ({sorted(perf)})")
    lat, bw = perf["latency_8B"], perf["bandwidth_1MiB"]
    vt.check(0 < lat[0] < 50 and lat[4] == "us" and lat[5] == "pass",
             f"{c['name']}: latency_8B {lat[0]:.3f} us against reference {lat[1]} (upper +{lat[3]}): {lat[5]}")
    vt.check(bw[0] > 10 and bw[4] == "MB/s" and bw[5] == "pass",
             f"{c['name']}: bandwidth_1MiB {bw[0]:.0f} MB/s against reference {bw[1]} (lower {bw[2]}): {bw[5]}")
