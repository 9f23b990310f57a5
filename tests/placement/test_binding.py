"""Usage: test_binding.py BACKEND MODE

MODE is a placement (auto, same-l3, same-package) or cpus-reversed (--cpus LAST,FIRST).
Claim: the binding versus records for each rank is the binding the kernel
(and hwloc) reports for that rank's process while the run is measuring, one
PU per rank, distinct, and where --cpus asked.
"""
import json
import os
import signal
import subprocess
import sys
import time

import vstest as vt
import placement_common as pc

backend, mode = sys.argv[1], sys.argv[2]
module, launcher, extra = pc.need_backend(backend)
cpus = pc.usable_cpus()
if len(cpus) < 2:
    print("SKIP: fewer than 2 usable CPUs", flush=True)
    sys.exit(vt.SKIP)
facts = pc.machine_facts()
if mode == "cpus-reversed":
    place = ["--cpus", f"{cpus[-1]},{cpus[0]}"]
    want = [{cpus[-1]}, {cpus[0]}]
else:
    place = ["--placement", mode]
    want = None


def stop(proc, msg):
    os.killpg(proc.pid, signal.SIGKILL)
    o, e = proc.communicate(timeout=30)
    vt.fail(f"{msg}\n--- stdout\n{o}--- stderr\n{e}")


def attempt(scale):
    """Start a run long enough to be read mid-way: several sizes, many samples (scale times
    more when the first try was over before its binding could be read: a module that moves
    1 MiB in a few tens of microseconds).  Returns (proc, out, observed), or None when the run
    ended first (it is then finished)."""
    out = os.path.join(vt.tmpdir(), "run.jsonl")
    args = ["--transport", module, "--sizes", "8,64K,1M", "--iterations", str(4000 * scale),
            "--iterations-large", str(300 * scale), "--out", out, "--quiet", "--timeout", "60"] + extra + place
    cmd = (launcher or []) + [vt.RUNNER] + args
    vt.log("$ " + " ".join(cmd))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    observed = None
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with open(out, encoding="utf-8") as f:
                lines = f.read().split("\n")
        except FileNotFoundError:
            lines = []
        if len(lines) >= 2:  # the run record is complete (newline-terminated)
            run = json.loads(lines[0])
            if any('"record":"end"' in ln for ln in lines[1:]):
                vt.log(f"the run ended before its binding could be read (scale {scale})")
                proc.communicate(timeout=150)
                return None
            observed = []
            for r in run["placement"]["ranks"]:
                allowed, state = pc.kernel_binding(r["pid"])
                observed.append((r, allowed, state, pc.hwloc_binding(r["pid"])))
            break
        time.sleep(0.02)
    if observed is None and proc.poll() == 0:
        vt.log(f"the run ended before its binding could be read (scale {scale})")
        proc.communicate(timeout=30)
        return None
    if observed is None:
        stop(proc, "no run record within 90 s" if proc.poll() is None else f"runner exited early (rc={proc.returncode})")
    return proc, out, observed


got_it = attempt(1) or attempt(10)
if got_it is None:
    vt.fail("the run ended before its binding could be read, also with ten times the samples; make it longer")
proc, out, observed = got_it
try:
    o, e = proc.communicate(timeout=150)
except subprocess.TimeoutExpired:
    stop(proc, "run did not finish within 150 s (hang)")
vt.log(f"rc={proc.returncode}\n--- stderr\n{e}---")
vt.check(proc.returncode == 0, f"{backend} run with {' '.join(place)} exits 0")

run, sizes, end = vt.read_jsonl(out)
vt.check(end is not None and end["status"] == "ok" and len(sizes) == 3, "run completed all sizes")
pl = run["placement"]
vt.check(len(pl["ranks"]) == 2, "placement lists both ranks")
vt.check(pl["policy"] == ("cpus" if mode == "cpus-reversed" else mode), f"policy recorded ({pl['policy']})")
afters = []
for i, (r, allowed, state, hw) in enumerate(observed):
    vt.log(f"rank {i}: pid {r['pid']} recorded {r['cpus_after']}, kernel {allowed} ({state}), hwloc {hw}")
    vt.check(allowed is not None and not state.startswith("Z"), f"rank {i} was alive when read")
    vt.check(r["cpus_after"] == allowed,
             f"rank {i}: recorded binding {r['cpus_after']} == /proc/{r['pid']}/status Cpus_allowed_list {allowed}")
    if hw is not None:
        vt.check(hw == pc.cpu_set(allowed), f"rank {i}: hwloc-bind --get agrees ({sorted(hw)})")
    got = pc.cpu_set(r["cpus_after"])
    vt.check(len(got) == 1, f"rank {i} holds exactly one PU")
    if mode == "auto":
        vt.check(r["bound_by"] in ("versus", "launcher"), f"rank {i} was bound ({r['bound_by']})")
    else:
        vt.check(r["bound_by"] == "versus", f"rank {i} was bound by versus")
    if want:
        vt.check(got == want[i], f"rank {i} holds CPU {sorted(want[i])} as --cpus asked")
    afters.append(got)
vt.check(afters[0] != afters[1], "the two ranks hold different PUs")
expect_rel = {"same-l3": {"l3"}, "same-package": {"l3", "package"}}.get(mode)
if expect_rel and facts["smt"] == 1:
    vt.check(pl["relation"] in expect_rel, f"relation {pl['relation']} is one of {sorted(expect_rel)}")
vt.check(pl["relation"] not in ("pu", "none"), "relation of two PUs on one host is recorded")
topo = run["topology"]
vt.check(topo["pus"] >= 2 and topo["cores"] >= 1 and isinstance(topo["caches"], list), "topology summary present")
vt.check(topo["provenance"]["kernel"].startswith(os.uname().sysname), "provenance names the kernel")
