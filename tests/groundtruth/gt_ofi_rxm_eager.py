"""Ground truth: libfabric's tcp;ofi_rxm eager size set by FI_OFI_RXM_BUFFER_SIZE
(not a power of two; rxm's eager limit follows the buffer size unless
FI_OFI_RXM_EAGER_LIMIT says otherwise) is found by `versus summary` within 5 %
and attributed to the `eager_limit` the ofi module records.

Up to the limit rxm sends a message in one bounce buffer; above it, it
segments (SAR) or asks the peer first: over loopback TCP a step of tens of us.

usage: gt_ofi_rxm_eager.py THRESHOLD
"""
import sys

import gtcommon as gt
import vstest as vt

threshold = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
vt.need_module("ofi")
env = {"FI_OFI_RXM_BUFFER_SIZE": str(threshold), "FI_PROVIDER": "tcp;ofi_rxm"}
out = gt.run_sweep(f"ofi-rxm-{threshold}",
                   ["--transport", "ofi", "--transport-opt", "provider=tcp", "--launch", "local", "-n", "2"],
                   threshold, env, iterations=20)
run = gt.summary(out)
vt.check(run["status"] == "ok", "the run completed")
vt.check(run["transport"]["provider"] == "tcp;ofi_rxm", f"provider tcp;ofi_rxm ({run['transport']['provider']})")
vt.check(run["transport"]["thresholds"].get("rxm_buffer_size") == threshold,
         f"the run record carries rxm_buffer_size = {threshold}")
t = gt.check_detected(run, "eager_limit", threshold)
vt.check(t["jump_us"] > 0, f"leaving the eager path costs more (jump {t['jump_us']:+.3f} us)")
