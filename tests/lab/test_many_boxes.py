"""More than two boxes (versus lab up --boxes N): four hosts on one bridge, each with its own
host name, every pair reachable; --slow c:100 limits box-c's link both ways, so that a 1 MiB
ping-pong of every pair finds exactly the pairs with box-c at TCP's goodput of 100 Mbit/s (within
5 %) and every other pair more than ten times faster; down removes the boxes and the switch; bad
requests exit 2.  Exits 77 when this machine cannot make network namespaces."""
import itertools
import json
import os
import sys

import vstest as vt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from boxes import VERSUS, across, down_and_check, lab, refused_ups  # noqa: E402  (the helpers beside this test)

GOODPUT = 100 * 1448 / (1448 + 66)
d = vt.tmpdir()
try:
    lab("up", "--boxes", "4", "--slow", "c:100")
    st = json.loads(lab("status", "--json").stdout)
    vt.check(st["up"] and st["count"] == 4 and [b["name"] for b in st["boxes"]] == ["box-a", "box-b", "box-c", "box-d"],
             "four boxes are up")
    vt.check(["tbf" in b["qdisc"] for b in st["boxes"]] == [False, False, True, False],
             "only box-c's link has the token bucket")
    for x in "abcd":
        host = vt.run_cmd(VERSUS + ["lab", "run", x, "--", "hostname"], timeout=30).stdout.strip()
        vt.check(host == f"box-{x}", f"box {x} is called box-{x} ({host})")
    rates = {}
    for a, b in itertools.combinations("abcd", 2):
        out = f"{d}/{a}{b}.jsonl"
        run, sizes, end, _ = across("tcp", "1M", out, ["-i", "10", "-w", "2", "--iterations-large", "10",
                                                       "--warmup-large", "2"], boxes=(a, b))
        vt.check(run["hosts"] == [f"box-{a}", f"box-{b}"], f"{a}-{b}: the record names both hosts")
        s = sorted(sizes[0]["samples_ns"])
        rates[a + b] = 1048576 * 8 / (s[len(s) // 2] / 2e9) / 1e6
    vt.log(", ".join(f"{k}: {v:.1f} Mbit/s" for k, v in rates.items()))
    for pair, mbit in rates.items():
        if "c" in pair:
            vt.check(abs(mbit / GOODPUT - 1) <= 0.05, f"{pair}: {mbit:.1f} Mbit/s, goodput {GOODPUT:.1f} (slow host c)")
        else:
            vt.check(mbit > 10 * GOODPUT, f"{pair}: {mbit:.0f} Mbit/s, more than ten times the slow link")
    refused_ups(((["--boxes", "9"], "--boxes"), (["--boxes", "4", "--slow", "e:100"], "no box"),
                 (["--slow", "b:100"], "more than two boxes"), (["--boxes", "3", "--delay", "50"], "relay")))
finally:
    down_and_check()
