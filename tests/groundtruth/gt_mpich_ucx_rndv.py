"""Ground truth: MPICH over UCX (ch4:ucx) moves same-host messages through UCP,
so UCX's rendezvous threshold set by UCX_RNDV_THRESH (not a power of two) moves
its step.  The mpich module records the device and netmod, reads UCX's own
configuration and records the threshold as `UCX_RNDV_THRESH`; `versus summary`
finds the step within 5 % and attributes it to that name.  No ch3 variable (which
a ch4 build never reads) may be recorded.  UCX over loopback TCP by default, where
the rendezvous handshake adds a kernel round trip (+25 to +30 us); over sm the
step at 12000 B is too small on a shared host to show in every launch (see
gt_ucx_rndv.py).

usage: gt_mpich_ucx_rndv.py THRESHOLD [tcp|sm]
"""
import json
import sys

import gtcommon as gt
import vstest as vt

threshold = int(sys.argv[1]) if len(sys.argv) > 1 else 12000
tls = sys.argv[2] if len(sys.argv) > 2 else "tcp"
if tls not in ("sm", "tcp"):
    vt.fail(f"the second argument names UCX's transports: tcp or sm, not {tls!r}")
vt.need_module("mpich")
mpiexec = vt.need_program("mpiexec.mpich")
env = {"UCX_RNDV_THRESH": str(threshold), "UCX_TLS": tls, "UCX_WARN_UNUSED_ENV_VARS": "n"}
out = gt.run_visible_sweep(f"mpich-ucx-{tls}-rndv-{threshold}", ["--transport", "mpich"], threshold, env,
                   launcher=[mpiexec, "-n", "2"])
run = gt.summary(out)
vt.check(run["status"] == "ok", "the run completed")
provider = run["transport"]["provider"]
if provider != "ch4:ucx":
    print(f"SKIP: this MPICH's device is {provider!r}, not ch4:ucx: UCX's threshold does not apply", flush=True)
    sys.exit(vt.SKIP)
with open(out, encoding="utf-8") as f:
    attrs = json.loads(f.readline())["transport"]["attrs"]
vt.check(attrs.get("device") == "ch4" and attrs.get("netmod") == "ucx",
         f"the record names the device and netmod ({attrs.get('device')}, {attrs.get('netmod')})")
vt.check(attrs.get("ucx_rndv_thresh") == str(threshold) and "ucx_tls" in attrs,
         f"the record carries UCX's configuration in force (ucx_rndv_thresh {attrs.get('ucx_rndv_thresh')}, "
         f"ucx_tls {attrs.get('ucx_tls')})")
recorded = run["transport"]["thresholds"]
vt.check(not any("CH3" in k or "NEMESIS" in k for k in recorded),
         f"a ch4 build records no ch3 variable ({sorted(recorded)})")
t = gt.check_detected(run, "UCX_RNDV_THRESH", threshold)
# Either way the switch must show; a launch whose data do not show it is launched again.
gt.check_switch_shows(t)
