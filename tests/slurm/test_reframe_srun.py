"""ReFrame's srun variant under a real Slurm (the private single-node one of slurmlab.py): the
VersusSrun checks of contrib/reframe/ are submitted with sbatch, launched with srun (Open MPI
with --mpi=pmix, MPICH with --mpi=pmi2, tcp through the rendezvous under srun's environment),
pass their sanity function and report both performance variables within their references.
The private Slurm keeps no accounting, so ReFrame follows the jobs with squeue
(VERSUS_RFM_SLURM_SCHEDULER=squeue, as contrib/reframe/settings.py documents).  Exits 77 when
Slurm or munge is not installed or this is not root.  usage: test_reframe_srun.py BUILD_DIR"""
import json
import os
import shutil
import subprocess
import sys

import vstest as vt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import slurmlab  # noqa: E402  (the fixture beside this test)

why = slurmlab.missing()
if why:
    print(f"SKIP: {why}", flush=True)
    sys.exit(77)
build = os.path.realpath(sys.argv[1])
src = os.path.realpath(os.environ.get("VERSUS_SOURCE_ROOT", "."))
venv_bin = os.path.dirname(sys.executable)
reframe = os.path.join(venv_bin, "reframe")
if not os.path.exists(reframe):
    vt.fail(f"reframe is not in {venv_bin}: pip install -e 'reports[test]' installs reframe-hpc "
            "(./quickstart.sh test does)")
for m in ("openmpi", "mpich", "tcp"):
    vt.need_module(m)

tmp = vt.tmpdir()
cfg = os.path.join(src, "contrib", "reframe", "settings.py")
chk = os.path.join(src, "contrib", "reframe", "versus_check.py")
report = os.path.join(tmp, "report.json")
s = slurmlab.Slurm()
try:
    s.up()
    env = dict(s.env, PATH=os.path.join(build, "core") + ":" + venv_bin + ":" + os.environ.get("PATH", ""),
               VERSUS_RFM_SLURM_SCHEDULER="squeue", RFM_CHECK_SEARCH_PATH=os.path.join(src, "contrib", "reframe"))
    env.pop("PYTHONPATH", None)
    cmd = [reframe, "-C", cfg, "--system", "slurm", "-c", chk, "-n", "VersusSrun", "-r", "--prefix", tmp,
           "--report-file", report, "-S", "iterations=300"]
    vt.log("$ VERSUS_RFM_SLURM_SCHEDULER=squeue " + " ".join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=420, env=env,
                       stdin=subprocess.DEVNULL, cwd=tmp)
    vt.log(p.stdout[-8000:])
    if p.returncode != 0:
        vt.log(s.logs())
    vt.check(p.returncode == 0, f"reframe -r over the private Slurm exits 0 (got {p.returncode})")
    doc = json.load(open(report, encoding="utf-8"))
    cases = [c for r in doc["runs"] for c in r["testcases"]]
    names = sorted(c["name"] for c in cases)
    vt.check(len(cases) == 3 and all("VersusSrun" in n for n in names), f"three VersusSrun cases ran ({names})")
    for c in cases:
        vt.check(c["result"] == "pass", f"{c['name']}: {c['result']}")
        perf = {k.rsplit(":", 1)[1]: v for k, v in (c.get("perfvalues") or {}).items()}
        vt.check({"latency_8B", "bandwidth_1MiB"} <= set(perf),
                 f"{c['name']}: both performance variables ({sorted(perf)})")
        lat, bw = perf["latency_8B"], perf["bandwidth_1MiB"]
        vt.check(0 < lat[0] < 50 and lat[5] == "pass", f"{c['name']}: latency_8B {lat[0]:.3f} us: {lat[5]}")
        vt.check(bw[0] > 10 and bw[5] == "pass", f"{c['name']}: bandwidth_1MiB {bw[0]:.0f} MB/s: {bw[5]}")
        # The job script ReFrame wrote launches with srun, with the MPI plugin the transport needs.
        stage = c.get("stagedir") or ""
        scripts = [os.path.join(stage, f) for f in os.listdir(stage) if f.endswith(".sh")] if os.path.isdir(stage) else []
        if not scripts:  # ReFrame removes the stage directory of a passed case; its output directory keeps the script
            out = c.get("outputdir") or ""
            scripts = [os.path.join(out, f) for f in os.listdir(out) if f.endswith(".sh")] if os.path.isdir(out) else []
        text = "".join(open(f, encoding="utf-8").read() for f in scripts)
        mpi = {"openmpi": "--mpi=pmix", "mpich": "--mpi=pmi2"}
        t = next((t for t in ("openmpi", "mpich", "tcp") if t in c["name"]), "?")
        want = f"srun {mpi[t]} versus-run" if t in mpi else "srun versus-run"
        vt.check("#SBATCH --ntasks=2" in text and want in text,
                 f"{c['name']}: the batch script asks for 2 tasks and runs '{want}'")
finally:
    daemons_dir = s.dir
    s.down()
left = s.running()
vt.check(not left and not os.path.exists(daemons_dir), f"down leaves no daemon and no directory ({left})")
shutil.rmtree(tmp, ignore_errors=True)
print("reframe: the srun variant passes under a real Slurm for tcp, openmpi and mpich")
