"""ReFrame's srun variant under a real Slurm (the private single-node one of slurmlab.py): the
VersusSrun checks of contrib/reframe/ are submitted with sbatch, launched with srun (Open MPI
with --mpi=pmix, MPICH with --mpi=pmi2, tcp through the rendezvous under srun's environment),
pass their sanity function and report both performance variables within their references.
The private Slurm keeps no accounting, so ReFrame follows the jobs with squeue
(VERSUS_RFM_SLURM_SCHEDULER=squeue, as contrib/reframe/settings.py documents).  Exits 77 when
Slurm or munge is not installed or this is not root.  usage: test_reframe_srun.py BUILD_DIR"""
import os
import shutil
import sys

import rfmtest as rt
import vstest as vt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import slurmlab  # noqa: E402  (the fixture beside this test)

why = slurmlab.missing()
if why:
    print(f"SKIP: {why}", flush=True)
    sys.exit(77)
build = os.path.realpath(sys.argv[1])
rt.need_reframe()
for m in ("openmpi", "mpich", "tcp"):
    vt.need_module(m)

tmp = vt.tmpdir()
s = slurmlab.Slurm()
try:
    s.up()
    env = rt.environment(build, s.env, VERSUS_RFM_SLURM_SCHEDULER="squeue")
    rc, cases = rt.run("slurm", tmp, env, "-n", "VersusSrun", timeout=420, cwd=tmp)
    if rc != 0:
        vt.log(s.logs())
    vt.check(rc == 0, f"reframe -r over the private Slurm (VERSUS_RFM_SLURM_SCHEDULER=squeue) exits 0 (got {rc})")
    names = sorted(c["name"] for c in cases)
    vt.check(len(cases) == 3 and all("VersusSrun" in n for n in names), f"three VersusSrun cases ran ({names})")
    for c in cases:
        rt.check_case(c)
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
    slurmlab.down_and_check(s)
shutil.rmtree(tmp, ignore_errors=True)
print("reframe: the srun variant passes under a real Slurm for tcp, openmpi and mpich")
