"""Ground truth: an Open MPI BTL's eager limit set from the environment
(OMPI_MCA_btl_<btl>_eager_limit, not a power of two) is found by
`versus summary` within 5 % and attributed to the `btl_<btl>_eager_limit` the
openmpi module reads through MPI_T.

ob1 over vader: up to the limit (which includes ob1's match header) a message
is copied through the shared-memory FIFO in one fragment; above it ob1 sends
a rendezvous header first and moves the payload with one CMA copy.  On a shared
two-core host that step is +0.09 to +0.26 us, about the size of the host's
own shifts between neighbouring sizes: one launch in three or four put it at
the wrong size.  ob1 over tcp (loopback): above the limit the rendezvous waits
for the peer's acknowledgement, one more round trip through the kernel: a step
of about +11 us in every launch.

usage: gt_openmpi_eager.py THRESHOLD [tcp|vader]
"""
import sys

import gtcommon as gt
import vstest as vt

threshold = int(sys.argv[1]) if len(sys.argv) > 1 else 6000
btl = sys.argv[2] if len(sys.argv) > 2 else "tcp"
if btl not in ("tcp", "vader"):
    vt.fail(f"the second argument names the BTL: tcp or vader, not {btl!r}")
vt.need_module("openmpi")
mpirun = vt.need_program("mpirun.openmpi")
env = {f"OMPI_MCA_btl_{btl}_eager_limit": str(threshold), "OMPI_MCA_btl": f"self,{btl}",
       "OMPI_MCA_pml": "ob1"}
out = gt.run_sweep(f"openmpi-{btl}-eager-{threshold}", ["--transport", "openmpi"], threshold, env,
                   launcher=[mpirun, "--oversubscribe", "-np", "2"])
run = gt.summary(out)
vt.check(run["status"] == "ok", "the run completed")
t = gt.check_detected(run, f"btl_{btl}_eager_limit", threshold)
vt.check(t["jump_us"] > 0, f"the rendezvous costs more at the limit (jump {t['jump_us']:+.3f} us)")
