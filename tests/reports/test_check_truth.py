"""Truth test of `versus check`: real tcp ping-pongs under the local launcher.

Baseline: three launches.  Then three launches of the same configuration (A/A) and three
with the tcp module's test hook delay_ns adding 10 % of the baseline's one-way time before
every send.  One launch first is thrown away (the first after a quiet spell ran 15 % slower
than the rest here), then launches alternate (baseline, A/A, slowed, baseline, ...) so that a
change of the machine's state hits every side alike.  With a tolerance of +5 %:
  - the slowed launches are `regressed` at every size, exit 1, the JUnit file says so;
  - the A/A launches are not `regressed` at any size, exit 0.
The false-alarm rate of the rule over many A/A checks is measured by
bench/check_false_alarms.py (docs/baseline.md), not here.
"""
import json
import os
import subprocess
import sys
from xml.etree import ElementTree as ET

import vstest as vt

vt.need_module("tcp")
SIZES = "8,64,512"
d = vt.tmpdir()


def launch(tag, k, opts=()):
    out = os.path.join(d, f"{tag}{k}.jsonl")
    args = ["--launch", "local", "-n", "2", "-t", "tcp", *opts, "-s", SIZES, "-i", "3000", "-w", "300",
            "--order", "interleaved", "--rounds", "3", "--timeout", "60", "--out", out, "--quiet"]
    p = vt.run(args, timeout=120)
    vt.check(p.returncode == 0, f"{tag} launch {k} exits 0")
    return out


def versus(*args):
    cmd = [sys.executable, "-m", "versus", *args]
    vt.log("$ " + " ".join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    vt.log(p.stdout + p.stderr)
    return p


# the first launch after a quiet spell runs ~15 % slower here (cold caches, clock): not kept
launch("warmup", 0)
base = [launch("base", 0)]
# the delay: 10 % of the baseline's one-way median at 8 B (the sizes cost about the same)
_, sizes, _ = vt.read_jsonl(base[0])
s8 = sorted(x for s in sizes if s["bytes"] == 8 for x in s["samples_ns"])
batch = next(s.get("batch", 1) for s in sizes if s["bytes"] == 8)
one_way = s8[len(s8) // 2] / 2
delay = int(round(0.10 * one_way))
vt.log(f"baseline one-way median at 8 B: {one_way:.0f} ns; injected delay {delay} ns before each send")
aa, slow = [], []
for k in range(3):
    if k:
        base.append(launch("base", k))
    aa.append(launch("aa", k))
    slow.append(launch("slow", k, ["-o", f"delay_ns={delay}"]))

b = os.path.join(d, "base.json")
p = versus("baseline", "save", *base, "-o", b, "--tolerance", "latency:-inf,+5%")
vt.check(p.returncode == 0, "baseline save exits 0")

junit = os.path.join(d, "slow.xml")
p = versus("check", *slow, "--baseline", b, "--json", "--junit", junit)
vt.check(p.returncode == 1, f"the 10 % slowdown: versus check exits 1 (got {p.returncode})")
res = json.loads(p.stdout)
for c in res["cases"]:
    vt.check(c["status"] == "regressed",
             f"{c['bytes']} B: regressed ({c['status']}: {c['words']}, {c['inference']})")
root = ET.parse(junit).getroot()
suite = root.find("testsuite")
vt.check(suite is not None and suite.get("failures") == "3" and suite.get("tests") == "3",
         f"the JUnit file has 3 test cases, 3 failures ({suite.attrib if suite is not None else None})")

p = versus("check", *aa, "--baseline", b, "--json")
res = json.loads(p.stdout)
for c in res["cases"]:
    vt.check(c["status"] != "regressed", f"A/A {c['bytes']} B: not regressed ({c['status']}: {c['words']})")
vt.check(p.returncode == 0, f"A/A: versus check exits 0 (got {p.returncode})")
print("check truth: a 10 % slowdown regressed at every size, the A/A launches passed")
