"""Two boxes on one machine (versus lab): set-up and teardown are quick, repeatable and leave
nothing behind; every transport runs with one rank on each box, the record names two hosts and
the medium, shared memory between the boxes is warned about; the packet step is found at the MSS
after the tcp transport's framing, at MTU 1500 and 9000.  (What the link imposes, rate and delay,
is test_link_truth.py.)
Exits 77 when this machine cannot make network namespaces (not root, no iproute2)."""
import json
import os
import sys
import time

import vstest as vt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from boxes import VERSUS, across, lab, launch_load, leftovers, skip_loaded, summary  # noqa: E402  (beside this test)


INTERLEAVED = ["--order", "interleaved", "--rounds", "10"]
ATTEMPTS = 3   # a run that hangs in MPI_Finalize (below) costs the 10 s deadline


def mpi_across(transport, out, env=(), sizes="8,64K", extra=()):
    """The MPI launchers across the boxes, started on box-a with the lab's remote-shell agent."""
    args = [vt.RUNNER, "-t", transport, "-s", sizes, "-i", "100", "-w", "10", "--cpus", "0,1",
            "--timeout", "10", "-O", out, "--overwrite", *extra]   # tried again after a hang: the test's own file
    if transport == "openmpi":
        launcher = ["mpirun.openmpi", "--hostfile", "/run/versus-lab/hosts", "-np", "2", "--bind-to", "none",
                    "--mca", "plm_rsh_agent", "/run/versus-lab/agent", "--mca", "btl", "self,tcp",
                    "--mca", "btl_tcp_if_include", "vslab0", "--mca", "oob_tcp_if_include", "vslab0",
                    "-x", "VERSUS_MODULE_PATH", "-x", "PATH"]
    else:
        launcher = ["mpiexec.mpich", "-launcher", "ssh", "-launcher-exec", "/run/versus-lab/agent",
                    "-iface", "vslab0", "-hosts", "box-a,box-b", "-n", "2",
                    "-genvlist", ",".join(["VERSUS_MODULE_PATH", "PATH"] + [e.split("=")[0] for e in env])]
    hangs = 0
    for attempt in range(1, ATTEMPTS + 1):
        p = vt.run_cmd(VERSUS + ["lab", "run", "a", "--", "env", *env, *launcher, *args], timeout=120)
        if p.returncode == 0:
            break
        # MPICH 4.0 over UCX hangs in MPI_Finalize across hosts (docs/launching.md: each rank
        # closes its endpoints, then waits in the PMI barrier without driving UCX, while its peer's
        # close may still need it; MPICH later moved the barrier before the close).  Over UCX's tcp
        # alone between the boxes it hung in 1 of 10 runs at one hour and in 6 of 6 at another:
        # nothing versus does reaches it.  What versus owes is checked on every hang: the watchdog
        # ends the run at the deadline, says it was shutting down, and every size is kept with the
        # end record ok.  The run is tried again; if MPICH hangs every time, those checks stand for
        # the exit status.
        run, sizes, end = vt.read_jsonl(out)
        vt.check(transport == "mpich" and "during shutting down" in p.stderr and end and end["status"] == "ok"
                 and {r["bytes"] for r in sizes} == set(run["schedule"]["sizes"]),
                 f"{transport}: a hang at shutdown ends at the deadline with every size kept (exit {p.returncode})")
        hangs += 1
        vt.log(f"{transport}: hung at shutdown (MPI_Finalize), {hangs} of {attempt}")
    vt.check(p.returncode == 0 or hangs == ATTEMPTS,
             f"{transport} {' '.join(env)} across the boxes under its launcher exits 0"
             + (f" (or hangs in MPICH's MPI_Finalize: {hangs} of {ATTEMPTS} launches)" if hangs else ""))
    return (*vt.read_jsonl(out), p.stderr)


def packet_step(transport, mtu, step, payload, launch):
    """The packet step of `transport` at `mtu`: launch(out) runs a sweep with `step` B between sizes
    and returns its run record; payload(attrs) is the payload at which a message needs a second
    segment, after the transport's framing.  A disturbed launch can hide the step (one CI run on a
    noisy host: the sweep's bandwidth scattered 6 to 25 MB/s and no step was named; here one Open
    MPI launch in eight named none): up to three launches; in each, a step named mss_payload must
    sit within one sweep step of the payload the record gives and name the MTU, and one launch
    must name it.  The sizes are interleaved (every size in ten rounds): in a sweep taken in one
    go, a host that slows down halfway is a level shift at whatever size was running then, which
    is a step (a CI run named Open MPI's step at 1440 B against 1424 in such a sweep).  A launch
    versus-run recorded as loaded is not judged and does not count among the three
    (boxes.launch_load): beside a CPU-bound process the 8880 B step went unseen in three launches,
    and another launch named a slope change 12 B above it; after six attempts with fewer than three
    quiet ones the test exits 77 with the loads."""
    quiet, loads, found = 0, [], False
    for attempt in range(1, 7):
        out = f"{d}/mss{mtu}-{transport}-{attempt}.jsonl"
        run = launch(out)
        attrs, thr = run["transport"]["attrs"], run["transport"]["thresholds"]
        want = payload(attrs)
        vt.check(attrs.get("path_iface") == "vslab0" and attrs.get("mtu") == str(mtu)
                 and thr.get("mss_payload") == want,
                 f"{transport}: the record says {attrs.get('path_iface')}, MTU {attrs.get('mtu')}, "
                 f"MSS {attrs.get('mss')}, mss_payload {thr.get('mss_payload')}")
        named = [t for t in summary(out)["transitions"] if t.get("threshold") == "mss_payload"]
        load = launch_load(out)      # a loaded launch is not judged and does not count (boxes.py)
        if load:
            loads.append(f"{transport} MTU {mtu} launch {attempt}: {load}")
            vt.log(f"not judged: {loads[-1]}; it named {[(t['bytes'], t['label']) for t in named]}")
            continue
        quiet += 1
        vt.check(all(abs(t["bytes"] - want) <= step and f"MTU {mtu}" in t["label"] for t in named),
                 f"{transport} MTU {mtu} launch {attempt}: a step named mss_payload sits within {step} B of "
                 f"{want} and names the packet step with its MTU ({[(t['bytes'], t['label']) for t in named]})")
        found = len(named) == 1
        if found or quiet == 3:
            break
    if not found and quiet < 3:
        skip_loaded(f"the packet step of {transport} at MTU {mtu} ({quiet} quiet launches of three)", loads)
    vt.check(found, f"{transport} MTU {mtu}: the step is found and named mss_payload (configured "
             f"{want}, sweep step {step} B), in launch {attempt} of up to three on a quiet host")


d = vt.tmpdir()
try:
    t0 = time.monotonic()
    lab("up")
    took = time.monotonic() - t0
    st = json.loads(lab("status", "--json").stdout)
    vt.check(st["up"] and all(b["mtu"] == 1500 for b in st["boxes"]), "both boxes are up with MTU 1500")
    lab("up")
    vt.check(json.loads(lab("status", "--json").stdout)["up"], "a second 'up' rebuilds the boxes")
    host = lab("run", "b", "--", "hostname").stdout.strip()
    vt.check(host == "box-b", f"a command on box b sees host name box-b ({host})")
    vt.log(f"first up (with the CLI's start) took {took:.2f} s")

    run, sizes, end, _ = across("tcp", "8,64K", f"{d}/tcp.jsonl", ["-i", "100", "-w", "10"])
    vt.check(run["hosts"] == ["box-a", "box-b"], f"the record names the two hosts ({run['hosts']})")
    vt.check(end["status"] == "ok" and len(sizes) == 2, "two sizes measured, status ok")
    vt.check(run["placement"]["relation"] == "cross-node" and run["transport"]["medium"] == "network",
             "the record says cross-node, over the network")

    # every transport that meets through the rendezvous; the ones that find shared memory
    # between the namespaces are warned about, in the run and in the analysis
    cases = [("ucx", [], ["UCX_TLS=tcp", "UCX_NET_DEVICES=vslab0"], "network"),
             ("ofi", ["-o", "provider=tcp"], [], "network"),
             ("ucx", [], [], "shared-memory"),
             ("shm", [], [], "shared-memory")]
    for t, opts, env, medium in cases:
        what = f"{t} {' '.join(opts + env)}".strip()
        out = f"{d}/{t}-{medium}.jsonl"
        run, sizes, end, err = across(t, "8,64K", out, ["-i", "100", "-w", "10", *opts], env)
        vt.check(run["transport"]["medium"] == medium, f"{what}: medium {run['transport']['medium']}")
        warned = bool(run["warnings"]) and "different hosts" in err
        vt.check(warned == (medium == "shared-memory"),
                 f"{what}: warned in the record and on stderr exactly when it is shared memory ({run['warnings']})")
        summ = vt.run_cmd(VERSUS + ["summary", out], timeout=60)
        vt.check(("different hosts" in summ.stdout + summ.stderr) == (medium == "shared-memory"),
                 f"{what}: versus summary repeats the warning exactly then")

    mpi_cases = [("openmpi", [], "network"),
                 ("mpich", ["UCX_TLS=tcp,self", "UCX_NET_DEVICES=vslab0"], "network"),
                 ("mpich", [], "shared-memory-allowed")]
    for t, env, medium in mpi_cases:
        what = f"{t} {' '.join(env)}".strip()
        run, sizes, end, err = mpi_across(t, f"{d}/{t}-{medium}.jsonl", env)
        vt.check(run["hosts"] == ["box-a", "box-b"] and run["placement"]["relation"] == "cross-node",
                 f"{what}: one rank on each box, cross-node")
        vt.check(run["transport"]["medium"] == medium, f"{what}: medium {run['transport']['medium']}")
        warned = bool(run["warnings"]) and "allowed to use shared memory" in err
        vt.check(warned == (medium == "shared-memory-allowed"),
                 f"{what}: warned exactly when the library may use shared memory ({run['warnings']})")

    # the packet step: over a rate-limited link each extra segment costs its headers' time; the
    # tcp module records the path (interface, MTU, MSS) and the payload at which a message needs a
    # second segment, and the analysis finds the step there, within one sweep step (8 B); so does
    # Open MPI's module over its TCP BTL (seed 004's path: it finds the BTL's connection), 4 B
    for mtu, lo, hi in ((1500, 1200, 1600), (9000, 8700, 9100)):
        lab("up", "--rate", "100", "--mtu", str(mtu))
        packet_step("tcp", mtu, 8, lambda attrs: int(attrs.get("mss", 0)) // 64 * 64 - 16,
                    lambda out: across("tcp", f"{lo}:{hi}:+8", out, ["-i", "100", "-w", "5", *INTERLEAVED])[0])
        packet_step("openmpi", mtu, 4, lambda attrs: int(attrs.get("mss", 0)) - 24,
                    lambda out: mpi_across("openmpi", out, extra=INTERLEAVED,
                                           sizes="1360:1480:+4" if mtu == 1500 else "8860:8980:+4")[0])

    lab("up", "--mtu", "9000")
    st = json.loads(lab("status", "--json").stdout)
    vt.check(all(b["mtu"] == 9000 for b in st["boxes"]), "--mtu 9000 is set on both ends")
    p = vt.run_cmd(VERSUS + ["lab", "up", "--mtu", "70000"], timeout=30)
    vt.check(p.returncode == 2 and "MTU" in p.stderr, "an impossible MTU exits 2 and says what to give")
finally:
    lab("down", check=False)
    lab("down", check=False)
left = leftovers()
vt.check(not left, f"'down' (twice) leaves no namespace and no host file behind ({left})")
