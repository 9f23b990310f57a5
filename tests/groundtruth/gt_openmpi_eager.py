"""Ground truth: Open MPI's shared-memory eager limit set from the environment
(OMPI_MCA_btl_vader_eager_limit, not a power of two) is found by
`versus summary` within 5 % and attributed to the `btl_vader_eager_limit` the
openmpi module reads through MPI_T.

ob1 over vader: up to the limit (which includes ob1's match header) a message
is copied through the shared-memory FIFO in one fragment; above it ob1 sends
a rendezvous header first and moves the payload with one CMA copy.

usage: gt_openmpi_eager.py THRESHOLD
"""
import sys

import gtcommon as gt
import vstest as vt

threshold = int(sys.argv[1]) if len(sys.argv) > 1 else 6000
vt.need_module("openmpi")
mpirun = vt.need_program("mpirun.openmpi")
env = {"OMPI_MCA_btl_vader_eager_limit": str(threshold), "OMPI_MCA_btl": "self,vader",
       "OMPI_MCA_pml": "ob1"}
out = gt.run_sweep(f"openmpi-eager-{threshold}", ["--transport", "openmpi"], threshold, env,
                   launcher=[mpirun, "--oversubscribe", "-np", "2"])
run = gt.summary(out)
vt.check(run["status"] == "ok", "the run completed")
t = gt.check_detected(run, "btl_vader_eager_limit", threshold)
vt.check(t["jump_us"] > 0, f"the rendezvous costs more at the limit (jump {t['jump_us']:+.3f} us)")
