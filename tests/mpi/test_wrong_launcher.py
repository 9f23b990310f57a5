"""An MPI module started by the other MPI's launcher, or by none, exits 2 and names the right launcher."""
import sys

import vstest as vt
from launchers import LAUNCH, OTHER

flavour = sys.argv[1]
vt.need_module(flavour)
right = LAUNCH[flavour][0]
wrong = LAUNCH[OTHER[flavour]]
vt.need_program(wrong[0])

p = vt.run(["--transport", flavour, "--sizes", "8", "--iterations", "5"], launcher=wrong, timeout=60)
vt.check(p.returncode != 0, f"{flavour} under {wrong[0]} fails (exit {p.returncode})")
vt.check(p.returncode == 2, f"{flavour} under {wrong[0]} exits 2")
vt.check(right in p.stderr, f"the message names {right}")

p = vt.run(["--transport", flavour, "--sizes", "8", "--iterations", "5"], timeout=60)
vt.check(p.returncode == 2, f"{flavour} without a launcher exits 2")
vt.check("not started by an MPI launcher" in p.stderr and right in p.stderr, f"the message names {right}")

p = vt.run(["--transport", flavour, "--launch", "local", "-n", "2", "--sizes", "8"], timeout=60)
vt.check(p.returncode == 2 and right.split(".")[0] in p.stderr, f"{flavour} refuses --launch local and names its launcher")

# A world smaller than the tasks srun started (the library did not reach Slurm's process manager
# and each task runs alone, as MPICH does under srun --mpi=pmix or none): exit 2, naming the plugin.
# The Slurm step is simulated in the ranks' environment only; one rank is started.
plugin = {"openmpi": "pmix", "mpich": "pmi2"}[flavour]
step = {"SLURM_NTASKS": "2", "SLURM_STEP_NUM_TASKS": "2", "SLURM_STEP_ID": "0", "SLURM_JOB_ID": "77"}
if flavour == "openmpi":
    one = LAUNCH[flavour][:1] + ["-np", "1"] + [x for k, v in step.items() for x in ("-x", f"{k}={v}")]
    env = None
else:
    one = LAUNCH[flavour][:1] + ["-n", "1"]
    env = step
p = vt.run(["--transport", flavour, "--sizes", "8", "--iterations", "5"], launcher=one, env=env, timeout=60)
vt.check(p.returncode == 2, f"{flavour}: a world of 1 in a step of 2 tasks exits 2 (exit {p.returncode})")
vt.check("sees a world of 1" in p.stderr and f"srun --mpi={plugin}" in p.stderr,
         f"the message says the world is too small and names srun --mpi={plugin}")
