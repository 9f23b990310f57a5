"""Eight local ranks, the all-pairs scan one pair at a time over argv[1] (a module
declared 'reference' in transports/): every one of the 28 pairs measured in each pass, and `versus scan-report`
names no host and no link (one host: nothing is slow)."""
import json
import os
import sys

import vstest as vt

module = sys.argv[1]
vt.need_module(module)
out = os.path.join(vt.tmpdir(), "scan8.jsonl")
vt.run(["--transport", module, "--launch", "local", "-n", "8", "--scan", "--serial", "--passes", "3",
        "--sizes", "8,256K", "--iterations", "30", "--iterations-large", "6", "--out", out, "--timeout", "60"],
       timeout=300, check_rc=0)
q = vt.run_cmd([sys.executable, "-m", "versus", "scan-report", out, "--json"], timeout=120, check_rc=0)
doc = json.loads(q.stdout)
vt.check([s["pairs"] for s in doc["sizes"]] == [28, 28] and all(s["passes"] == 3 for s in doc["sizes"]),
         "28 pairs at each size, 3 passes")
for s in doc["sizes"]:
    vt.check(not s["bad_hosts"] and not s["bad_links"],
             f"{s['bytes']} B: no bad host and no bad link among eight ranks of one host "
             f"(noise: {len(s['noise'])} pair(s) slow in some passes only)")
