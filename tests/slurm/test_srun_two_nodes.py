"""A real two-node Slurm (private munge and slurmctld, one slurmd on each box of `versus lab`, each in
its own network, mount and UTS namespace): `srun -N 2 -n 2` runs every transport with one rank per
node (openmpi with --mpi=pmix, mpich with --mpi=pmi2 over UCX's tcp, the others through the
rendezvous file in the shared working directory); each record names the two hosts, says cross-node
and launched by srun; shm between the two nodes works (the namespaces share memory) and is warned
about; a campaign in `salloc -N 2` with `nodes = 2` runs across the nodes.  Exits 77 when Slurm,
munge or network namespaces are missing, or this is not root."""
import json
import os
import subprocess
import sys
import time

import vstest as vt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import slurmlab  # noqa: E402  (the fixture beside this test)

why = slurmlab.missing() or vt.netns_missing()
if why:
    print(f"SKIP: {why}", flush=True)
    sys.exit(77)
for m in ("openmpi", "mpich", "ucx", "ofi", "shm", "tcp"):
    vt.need_module(m)

UCX_TCP = {"UCX_TLS": "tcp,self", "UCX_NET_DEVICES": "vslab0"}
CASES = [("openmpi", "pmix", [], {}, "network"),
         ("mpich", "pmi2", [], UCX_TCP, "network"),
         ("tcp", None, [], {}, "network"),
         ("ucx", None, [], UCX_TCP, "network"),
         ("ofi", None, ["-o", "provider=tcp"], {}, "network"),
         ("shm", None, [], {}, "shared-memory")]

d = vt.tmpdir()
os.chmod(d, 0o755)
t0 = time.monotonic()
s = slurmlab.Slurm(two_nodes=True)
matrix = []
try:
    s.up()
    vt.log(f"two-node Slurm (two boxes, two slurmd) up in {time.monotonic() - t0:.2f} s")
    for t, mpi, opts, env, medium in CASES:
        out = f"{d}/{t}.jsonl"
        args = ["-N", "2", "-n", "2"] + ([f"--mpi={mpi}"] if mpi else []) + [
            vt.RUNNER, "-t", t, *opts, "-s", "8,64K", "-i", "100", "-w", "10", "--timeout", "30", "-O", out,
            "--overwrite"]    # a try again after a hang at shutdown replaces the test's own file
        vt.log("$ " + " ".join(f"{k}={v}" for k, v in env.items()) + " srun " + " ".join(args))
        p = None
        for attempt in (1, 2, 3):
            p = s.srun(args, cwd=d, env=env, timeout=120)
            vt.log(f"rc={p.returncode}\n{p.stdout}{p.stderr}")
            if p.returncode == 0 or "during shutting down" not in p.stderr:
                break
            # MPICH over UCX's tcp sometimes hangs in MPI_Finalize across hosts (see the lab test):
            # the deadline ends it with every size kept; tried again
            vt.log(f"{t}: hung at shutdown; trying again")
        what = f"srun -N 2 -n 2 {'--mpi=' + mpi + ' ' if mpi else ''}versus-run -t {t} {' '.join(opts)}".strip()
        vt.check(p.returncode == 0, f"{what} exits 0")
        run, sizes, end = vt.read_jsonl(out)
        warned = bool(run["warnings"]) and "different hosts" in p.stderr
        matrix.append(f"{t}: pass ({run['transport']['medium']}{', warned' if warned else ''})")
        vt.check(run["hosts"] == ["box-a", "box-b"] and run["placement"]["relation"] == "cross-node",
                 f"{t}: one rank on each node, cross-node ({run['hosts']}, {run['placement']['relation']})")
        vt.check(run["launcher"]["name"] == "srun" and end["status"] == "ok" and len(sizes) == 2,
                 f"{t}: launched by srun, 2 sizes, status ok")
        vt.check(run["transport"]["medium"] == medium and warned == (medium == "shared-memory"),
                 f"{t}: over {run['transport']['medium']}, warned exactly when that is shared memory between hosts")
    vt.log("two-node srun matrix: " + ", ".join(matrix))

    # a campaign inside a two-node allocation: nodes = 2 spreads the ranks, one per node
    cfg = f"{d}/c.toml"
    with open(cfg, "w", encoding="utf-8") as f:
        f.write('title = "two-node campaign"\n[[run]]\nid = "tcp"\ntransport = "tcp"\nsizes = "8,64K"\n'
                'iterations = 30\nnodes = 2\n[[run]]\nid = "openmpi"\ntransport = "openmpi"\nsizes = "8,64K"\n'
                'iterations = 30\nnodes = 2\n')
    p = subprocess.run(s.client(["salloc", "-N", "2", "-n", "2", sys.executable, "-m", "versus", "campaign",
                                 cfg, "--results", f"{d}/camp"]), cwd=d, timeout=240, env=s.env,
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    vt.log(f"campaign in salloc -N 2: rc={p.returncode}\n{p.stdout}{p.stderr}")
    vt.check(p.returncode == 0, "versus campaign inside salloc -N 2 -n 2 exits 0")
    man = json.load(open(f"{d}/camp/campaign.json", encoding="utf-8"))
    for e in man["runs"]:
        run, _, _ = vt.read_jsonl(f"{d}/camp/{e['file']}")
        vt.check(e["status"] == "ok" and "-N" in e["command"] and run["hosts"] == ["box-a", "box-b"],
                 f"campaign run {e['id']}: srun -N 2, one rank on each node ({run['hosts']})")
finally:
    s.down()
left = s.running()
vt.check(not left and not os.path.exists(s.dir), f"down leaves no daemon and no directory ({left})")
names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
vt.check("versus-box-" not in names, "and no namespace")
