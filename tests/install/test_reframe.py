"""ReFrame (reframe-hpc, installed into the project's virtual environment) runs the versus
checks of contrib/reframe/ against its local system: VersusLocal over shm and tcp passes
its sanity function (the JSONL ends with status ok and holds every size) and reports the
two performance variables within their references; the srun variant is listed for the
slurm system.  usage: test_reframe.py BUILD_DIR"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import vstest as vt  # noqa: E402
import rfmtest as rt  # noqa: E402

build = os.path.realpath(sys.argv[1])
rt.need_reframe()
vt.need_module("shm")
vt.need_module("tcp")
tmp = vt.tmpdir()
env = rt.environment(build)
rc, cases = rt.run("local", tmp, env)
vt.check(rc == 0, f"reframe -r exits 0 (got {rc})")
names = sorted(c["name"] for c in cases)
vt.check(len(cases) == 2 and all("VersusLocal" in n for n in names), f"two VersusLocal cases ran ({names})")
for c in cases:
    rt.check_case(c)
p = subprocess.run([rt.REFRAME, "-C", rt.SETTINGS, "--system", "slurm", "-c", rt.CHECKS, "-l"], stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
vt.log(p.stdout[-3000:])
vt.check(p.returncode == 0 and p.stdout.count("VersusSrun") == 3,
         "the srun variant is listed for the slurm system over tcp, openmpi and mpich")
shutil.rmtree(tmp, ignore_errors=True)
print("reframe: versus's checks pass on the local system; the srun variant is there for Slurm")
