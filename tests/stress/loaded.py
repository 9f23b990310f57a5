"""A loaded node: every pattern over one transport with two CPU-bound processes on the very CPUs
the two ranks are bound to (--cpus 0,1, one process pinned on each), sizes 8 B to 64 KiB across the
library's eager/rendezvous switch.  Per pattern one launch on the host as it is (the reference), then
LAUNCHES loaded launches.  Every launch must end with exit 0 within the deadline and take at most
SLOWER x the reference + SLACK_S (a launcher's own start is slower under load too); each loaded run
must record the load (its ranks waited for a CPU, the end record says how much) and `versus summary`
must call it a loaded host.

openmpi also runs bistream with ob1's shared-memory fragments cut to 8 (btl_vader_free_list_max): a
rank then completes its requests while its last messages still wait in its own queue for its next
call into MPI.  Before core settled the transport and drove it in every wait outside it, 2 of 3 such
launches stuck in the drift probe after a size; now none may.

The machinery (hogs, launches) is bench/loaded_patterns.py's, which runs many more launches.

usage: loaded.py BACKEND   (a module, or MODULE:KEY=VALUE,... as tests/meson.build writes it; how it is
started comes from its declaration, as in every suite over the declared backends)
"""
import os
import subprocess
import sys

import backends
import vstest as vt

sys.path.insert(0, os.path.join(os.environ.get("VERSUS_SOURCE_ROOT", "."), "bench"))
import loaded_patterns as lp  # noqa: E402
from versus.hostload import run_load  # noqa: E402
from versus.load import load_file  # noqa: E402

LAUNCHES = 2
SLOWER = 5.0
SLACK_S = 2.0
DEADLINE_S = 60.0

spec = sys.argv[1]
transport, launcher, args = backends.prepare(spec)     # from the module's declaration; 77 when missing
how = (launcher or [], args)
if os.cpu_count() is None or os.cpu_count() < 2 or not vt.shutil.which("taskset"):
    print("SKIP: needs two CPUs and taskset to pin the load next to each rank", flush=True)
    sys.exit(vt.SKIP)
versus = vt.RUNNER
outdir = vt.tmpdir()


def one(pattern, tag, env=None):
    took, why = lp.launch(versus, transport, pattern, DEADLINE_S, outdir, tag, env=env, how=how)
    vt.log(f"{transport} {pattern} {tag}: {took:.2f} s{'' if why is None else ' FAILED: ' + why}")
    return took, why, os.path.join(outdir, f"{transport}-{pattern}-{tag}.jsonl")


def summary_text(path):
    """`versus summary` of one file, through the command line, as a user reads it."""
    p = subprocess.run([sys.executable, "-m", "versus", "summary", path], capture_output=True,
                       text=True, timeout=120, stdin=subprocess.DEVNULL)
    vt.check(p.returncode == 0, f"versus summary {os.path.basename(path)} exits 0 ({p.stderr.strip()[-200:]})")
    return p.stdout


def recorded_load(path):
    """The run's host load as the summary reads it (hostload.run_load), in this process."""
    (run,) = load_file(path)
    return run_load(run)


failures = []
for pattern in lp.PATTERNS:
    ref, why, _ = one(pattern, "unloaded")
    vt.check(why is None, f"{transport} {pattern}: the unloaded launch ends well ({why})")
    with lp.Hogs(2):
        for i in range(LAUNCHES):
            took, why, path = one(pattern, f"loaded{i}")
            if why is not None:
                failures.append(f"{pattern} launch {i}: {why}")
                continue
            limit = SLOWER * ref + SLACK_S
            if took > limit:
                failures.append(f"{pattern} launch {i}: {took:.2f} s, more than {SLOWER:g} x {ref:.2f} s + "
                                f"{SLACK_S:g} s")
            hl = recorded_load(path)
            if not hl or not hl.get("loaded"):
                # two clean-clone CI runs: the first loaded Open MPI launch recorded its ranks waiting
                # 0.1-0.2 % of the time, every later one beside the same hogs 16-50 % (not understood
                # yet); such a launch is run once more, and that one must show the load
                vt.log(f"  {pattern} launch {i}: the record shows no load ({hl and hl['words']}); once more")
                took, why, path = one(pattern, f"loaded{i}-again")
                hl = recorded_load(path) if why is None else None
                if why is not None or not hl or not hl.get("loaded"):
                    failures.append(f"{pattern} launch {i}: the record does not show a loaded host, twice ({hl})")
                    continue
            vt.log(f"  {hl['words']}")
            if pattern == lp.PATTERNS[0] and i == 0:
                text = summary_text(path)
                vt.check("warning: host: measured on a loaded host" in text,
                         "versus summary warns that the run was measured on a loaded host")
if transport == "openmpi":
    env = {"OMPI_MCA_btl_vader_free_list_max": "8"}
    for i in range(3):
        took, why, _ = one("bistream", f"starved{i}", env=env)
        if why is not None:
            failures.append(f"bistream with 8 vader fragments, launch {i}: {why}")
vt.check(not failures, f"{transport}: every launch ends well and in time under load: "
         + ("; ".join(failures) or "all did"))
