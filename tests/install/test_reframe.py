"""ReFrame (reframe-hpc, installed into the project's virtual environment) runs the versus
checks of contrib/reframe/ against its local system: VersusLocal over shm and tcp passes
its sanity function (the JSONL ends with status ok and holds every size) and reports the
two performance variables within their references; the srun variant is listed for the
slurm system.  usage: test_reframe.py BUILD_DIR"""
import glob
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import vstest as vt  # noqa: E402

build = os.path.realpath(sys.argv[1])
src = os.path.realpath(os.environ.get("VERSUS_SOURCE_ROOT", "."))
venv_bin = os.path.dirname(sys.executable)
reframe = os.path.join(venv_bin, "reframe")
if not os.path.exists(reframe):
    vt.fail(f"reframe is not in {venv_bin}: pip install -e 'reports[test]' installs reframe-hpc "
            "(./quickstart.sh test does)")
vt.need_module("shm")
vt.need_module("tcp")
tmp = vt.tmpdir()
env = dict(os.environ, PATH=os.path.join(build, "core") + ":" + venv_bin + ":" + os.environ.get("PATH", ""),
           RFM_CHECK_SEARCH_PATH=os.path.join(src, "contrib", "reframe"))
env.pop("PYTHONPATH", None)
cfg = os.path.join(src, "contrib", "reframe", "settings.py")
chk = os.path.join(src, "contrib", "reframe", "versus_check.py")
report = os.path.join(tmp, "report.json")
cmd = [reframe, "-C", cfg, "--system", "local", "-c", chk, "-r", "--prefix", tmp, "--report-file", report,
       "-S", "iterations=300"]
vt.log("$ " + " ".join(cmd))
p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600, env=env,
                   stdin=subprocess.DEVNULL)
vt.log(p.stdout[-6000:])
vt.check(p.returncode == 0, f"reframe -r exits 0 (got {p.returncode})")
doc = json.load(open(report))
cases = [c for r in doc["runs"] for c in r["testcases"]]
names = sorted(c["name"] for c in cases)
vt.check(len(cases) == 2 and all("VersusLocal" in n for n in names), f"two VersusLocal cases ran ({names})")
for c in cases:
    vt.check(c["result"] == "pass", f"{c['name']}: {c['result']}")
    # perfvalues: "system:partition:name" -> [value, reference, lower, upper, unit, result]
    perf = {k.rsplit(":", 1)[1]: v for k, v in (c.get("perfvalues") or {}).items()}
    vt.check({"latency_8B", "bandwidth_1MiB"} <= set(perf), f"{c['name']}: both performance variables ({sorted(perf)})")
    lat, bw = perf["latency_8B"], perf["bandwidth_1MiB"]
    vt.check(0 < lat[0] < 50 and lat[4] == "us" and lat[5] == "pass",
             f"{c['name']}: latency_8B {lat[0]:.3f} us against reference {lat[1]} (upper +{lat[3]}): {lat[5]}")
    vt.check(bw[0] > 10 and bw[4] == "MB/s" and bw[5] == "pass",
             f"{c['name']}: bandwidth_1MiB {bw[0]:.0f} MB/s against reference {bw[1]} (lower {bw[2]}): {bw[5]}")
p = subprocess.run([reframe, "-C", cfg, "--system", "slurm", "-c", chk, "-l"], stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
vt.log(p.stdout[-3000:])
vt.check(p.returncode == 0 and p.stdout.count("VersusSrun") == 3,
         "the srun variant is listed for the slurm system over tcp, openmpi and mpich")
shutil.rmtree(tmp, ignore_errors=True)
print("reframe: versus's checks pass on the local system; the srun variant is there for Slurm")
