"""The one-sided patterns against a known truth: the fake's one-sided operations move
real bytes (its partner's buffer mapped here) and complete half a round trip of their
size after they are posted, rtt(len) = base_ns + len * ns_per_byte, as its sends do.

Claims, over fake (base_ns 20000, 1 ns/B, no step) at 8 and 9000 B, every run with
--validate and every size valid:
  put and get latency, atomic fadd and cswap: the fastest sample is at least rtt/2
    (core waited for the completion) and under 1.3 x rtt/2 + 3 us (it waited for
    nothing else);
  put bandwidth, window of 4: the operations of a window overlap, so a window takes
    one rtt/2, not four;
  putnotify: a round trip of two notifications is one rtt (payload and flag in
    flight together), and with the flush variant rtt(len)/2 + rtt(8)/2 each way.
fakemem (the same, owning its buffers: core reaches them only through mem_fill and
mem_compare) validates put, get and atomic, and putnotify, which polls its buffer from
the host, is refused with 77.  fake4, a module of interface 4 whose table ends at the
very end of a page, loads (--list --json: interface 4, no one-sided operations), runs
pingpong, and is refused for put with 77 and the reason.  The fake with rma=refuse (its
library, as it were, has no one-sided operations after all) ends a put run with 77, its
reason, and an end record that says why.
"""
import json
import os

import vstest as vt

BASE_NS, NS_PER_BYTE = 20000, 1.0
OPTS = ["--transport-opt", f"base_ns={BASE_NS}", "--transport-opt", f"ns_per_byte={NS_PER_BYTE:g}",
        "--transport-opt", "step_ns=0"]
SIZES = [8, 9000]


def half(n):
    return (BASE_NS + n * NS_PER_BYTE) / 2


def run(module, pattern, variant, d, spec="8,9000", extra=()):
    out = os.path.join(d, f"{module}-{pattern}-{variant}.jsonl")
    p = vt.run(["--launch", "local", "-n", "2", "-t", module, "-p", pattern, "-V", variant, "-s", spec,
                "-i", "30", "-w", "5", "--validate", "-O", out, "--timeout", "60"] + OPTS + list(extra), timeout=120)
    vt.check(p.returncode == 0, f"{pattern} {variant} over {module} exits 0 (got {p.returncode})")
    _, recs, end = vt.read_jsonl(out)
    vt.check(end["status"] == "ok" and all(s.get("valid") is True for s in recs),
             f"{pattern} {variant} over {module}: every size valid, status ok")
    return {s["bytes"]: min(s["samples_ns"]) for s in recs}


def near(got, want, what):
    vt.check(want <= got <= 1.3 * want + 3000, f"{what}: fastest sample {got} ns, known time {want:.0f} ns")


d = vt.tmpdir()
for pattern, variant in (("put", "latency"), ("get", "latency")):
    low = run("fake", pattern, variant, d)
    for n in SIZES:
        near(low[n], half(n), f"fake {pattern} latency at {n} B")
low = run("fake", "put", "bandwidth", d, extra=["--window", "4"])
for n in SIZES:
    near(low[n], half(n), f"fake put window of 4 at {n} B (overlapping)")
for variant in ("fadd", "cswap"):
    low = run("fake", "atomic", variant, d, spec="8")
    near(low[8], half(8), f"fake atomic {variant}")
low = run("fake", "putnotify", "ordered", d)
for n in SIZES:
    near(low[n], 2 * half(n), f"fake putnotify round trip at {n} B")
low = run("fake", "putnotify", "flush", d)
for n in SIZES:
    near(low[n], 2 * (half(n) + half(8)), f"fake putnotify flush round trip at {n} B")

for pattern, variant, spec in (("put", "latency", "8,9000"), ("get", "bandwidth", "8,9000"),
                               ("atomic", "cswap", "8")):
    run("fakemem", pattern, variant, d, spec=spec)
p = vt.run(["--launch", "local", "-n", "2", "-t", "fakemem", "-p", "putnotify", "-s", "8"], timeout=60)
vt.check(p.returncode == 77 and "polls its buffer from the host" in p.stderr,
         f"putnotify refuses a module that owns its buffers with 77 and the reason ({p.returncode})")

# a module that has the operations but whose library refuses them at run time: 77, the reason, an end record
out = os.path.join(d, "refused.jsonl")
p = vt.run(["--launch", "local", "-n", "2", "-t", "fake", "-p", "put", "-s", "8", "--transport-opt", "rma=refuse",
            "-O", out], timeout=60)
vt.check(p.returncode == 77 and "one-sided operations refused (rma=refuse)" in p.stderr,
         f"a library refusing one-sided operations at run time ends the run with 77 and its words ({p.returncode})")
_, recs, end = vt.read_jsonl(out)
vt.check(end is not None and end["status"] == "error" and not recs and "rma_expose" in end["message"],
         f"... and its results file ends with the reason, no size measured ({end and end['message']})")

mods = {m["name"]: m for m in json.loads(vt.run(["--list", "--json"], timeout=60).stdout)}
f4 = mods.get("fake4", {})
vt.check(f4.get("loads") and f4.get("interface") == 4 and f4.get("rma") is False and f4.get("atomics") is False,
         f"fake4 loads as interface 4 without one-sided operations ({f4})")
vt.check(mods.get("fake", {}).get("interface") == 5 and mods["fake"].get("rma") and mods["fake"].get("atomics"),
         "fake is interface 5 with one-sided operations and atomics")
p = vt.run(["--launch", "local", "-n", "2", "-t", "fake4", "-s", "8,1K", "-i", "20", "-O", f"{d}/f4.jsonl"],
           timeout=60)
vt.check(p.returncode == 0, f"pingpong over an interface-4 module runs (exit {p.returncode})")
p = vt.run(["--launch", "local", "-n", "2", "-t", "fake4", "-p", "put", "-s", "8"], timeout=60)
vt.check(p.returncode == 77 and "transport fake4 has no one-sided operations (interface 4 module" in p.stderr,
         f"put over an interface-4 module: exit 77 and the reason ({p.returncode}: {p.stderr.strip()})")
