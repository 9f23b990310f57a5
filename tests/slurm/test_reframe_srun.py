"""ReFrame's srun variant under a real Slurm (the private single-node one of slurmlab.py) and a
site's own configuration, written here, that names nothing of versus: system `cluster` with a
`login` partition (local scheduler and launcher, environment `plain`) and a `batch` partition
(Slurm, srun; environments `gnu`, with the feature `mpi`, and `plain`, without).

- Selection (`reframe -lC`): VersusSrun only on cluster:batch, its tcp case in both environments,
  its openmpi and mpich cases only in `gnu`; VersusLocal on both partitions.
- A baseline of `srun -n 2 versus-run -t tcp` in that Slurm, exported for cluster:batch.
- `reframe -r -n VersusSrun -n VersusLocal%transport=shm -p gnu -S references_file=...`: the three
  VersusSrun cases are submitted with sbatch, launched with srun (Open MPI with --mpi=pmix, MPICH
  with --mpi=pmi2), pass their sanity function, keep their JSONL; tcp is judged against the
  exported references, the MPI cases (no entry) report their figures without one.  VersusLocal
  over shm passes there too (one task with two CPUs, versus's local launcher inside it).
The private Slurm keeps no accounting, so the partition's scheduler is `squeue` (ReFrame's backend
that polls squeue only).  Exits 77 when Slurm or munge is not installed or this is not root.
usage: test_reframe_srun.py BUILD_DIR"""
import json
import os
import shutil
import subprocess
import sys

import rfmtest as rt
import vstest as vt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import slurmlab  # noqa: E402  (the fixture beside this test)

SITE = """site_configuration = {
    "systems": [{
        "name": "cluster", "descr": "a site's cluster", "hostnames": [".*"],
        "partitions": [
            {"name": "login", "scheduler": "local", "launcher": "local", "environs": ["plain"]},
            {"name": "batch", "scheduler": "squeue", "launcher": "srun", "access": [],
             "environs": ["gnu", "plain"], "max_jobs": 2},
        ],
    }],
    "environments": [
        {"name": "gnu", "cc": "gcc", "features": ["mpi"]},
        {"name": "plain", "cc": "cc"},
    ],
}
"""

why = slurmlab.missing()
if why:
    print(f"SKIP: {why}", flush=True)
    sys.exit(77)
build = os.path.realpath(sys.argv[1])
rt.need_reframe()
for m in ("openmpi", "mpich", "tcp"):
    vt.need_module(m)

tmp = vt.tmpdir()
site = os.path.join(tmp, "site.py")
with open(site, "w", encoding="utf-8") as f:
    f.write(SITE)
s = slurmlab.Slurm()
try:
    s.up()
    env = rt.environment(os.path.join(build, "core"), s.env, HOME=tmp)

    # --- selection under the site's configuration
    cases, p = rt.listed(site, rt.CHECKS, env, cwd=tmp)
    vt.check(p.returncode == 0, f"reframe -lC under the site's configuration exits 0 (got {p.returncode})")
    srun = sorted((n.split("%transport=")[1].split()[0], part, e) for n, part, e in cases if n.startswith("VersusSrun"))
    vt.check(srun == [("mpich", "cluster:batch", "gnu"), ("openmpi", "cluster:batch", "gnu"),
                      ("tcp", "cluster:batch", "gnu"), ("tcp", "cluster:batch", "plain")],
             f"VersusSrun on the srun partition only; MPI transports only in the environment with feature mpi ({srun})")
    local = sorted({part for n, part, e in cases if n.startswith("VersusLocal")})
    vt.check(local == ["cluster:batch", "cluster:login"], f"VersusLocal on every partition ({local})")

    # --- references from a baseline measured under srun
    d = os.path.join(tmp, "base")
    os.makedirs(d)
    q = s.srun(["-n", "2", vt.RUNNER, "-t", "tcp", "-s", "8,1M", "-i", "300", "--out", "tcp.jsonl", "-q"], cwd=d,
               env={"PATH": env["PATH"]})
    vt.check(q.returncode == 0, f"srun -n 2 versus-run -t tcp in the private Slurm ({q.stderr[-500:]})")
    versus = [sys.executable, "-m", "versus"]
    # wide tolerances: the machine is shared (tcp's 1 MiB bandwidth was seen from 131 to 2554 MB/s)
    for cmd in (["baseline", "save", "tcp.jsonl", "-o", "base.json", "--tolerance", "latency:-inf,+1000%",
                 "--tolerance", "bandwidth@1M-:-99%,+inf"],
                ["baseline", "export", "--reframe", "cluster:batch", "base.json", "-o", "refs.json"]):
        q = subprocess.run(versus + cmd, capture_output=True, text=True, cwd=d, timeout=120)
        vt.log(q.stdout + q.stderr)
        vt.check(q.returncode == 0, "versus " + " ".join(cmd))
    refs = os.path.join(d, "refs.json")
    entry = json.load(open(refs, encoding="utf-8"))["references"]["VersusSrun"]["tcp"]["cluster:batch"]

    # --- the run
    rc, out, ran = rt.reframe(site, rt.CHECKS, os.path.join(tmp, "rfm"), env, "-n", "VersusSrun",
                              "-n", "VersusLocal%transport=shm", "-p", "gnu", "-S", f"references_file={refs}",
                              timeout=420)
    if rc != 0:
        vt.log(s.logs())
    vt.check(rc == 0, f"reframe -r over the private Slurm exits 0 (got {rc})")
    names = sorted(c["name"] for c in ran)
    vt.check(names == ["VersusLocal %transport=shm", "VersusSrun %transport=mpich", "VersusSrun %transport=openmpi",
                       "VersusSrun %transport=tcp"]
             and all((c["system"], c["partition"], c["environ"]) == ("cluster", "batch", "gnu") for c in ran),
             f"three VersusSrun cases and VersusLocal over shm ran on cluster:batch with gnu ({names})")
    shm = next(c for c in ran if c["name"].startswith("VersusLocal"))
    rt.check_case(shm, judged=False)
    text = "".join(open(os.path.join(shm["outputdir"], f), encoding="utf-8").read()
                   for f in os.listdir(shm["outputdir"]) if f.endswith(".sh"))
    vt.check("#SBATCH --ntasks=1" in text and "#SBATCH --cpus-per-task=2" in text and "--launch local" in text,
             "VersusLocal in a Slurm partition: one task with two CPUs, versus's local launcher inside it")
    for c in (c for c in ran if c["name"].startswith("VersusSrun")):
        t = next((t for t in ("openmpi", "mpich", "tcp") if t in c["name"]), "?")
        perf = rt.check_case(c, judged=(t == "tcp"))
        if t == "tcp":
            for var in rt.VARIABLES:
                vt.check(perf[var][1:4] == entry[var][:3],
                         f"tcp {var}: ReFrame's reference {perf[var][1:4]} is the exported {entry[var][:3]}")
        # The job script ReFrame wrote launches with srun, with the MPI plugin the transport needs.
        outdir = c.get("outputdir") or ""
        scripts = [os.path.join(outdir, f) for f in os.listdir(outdir) if f.endswith(".sh")] if os.path.isdir(outdir) else []
        text = "".join(open(f, encoding="utf-8").read() for f in scripts)
        mpi = {"openmpi": "--mpi=pmix", "mpich": "--mpi=pmi2"}
        want = f"srun {mpi[t]} versus-run" if t in mpi else "srun versus-run"
        vt.check("#SBATCH --ntasks=2" in text and want in text,
                 f"{c['name']}: the batch script asks for 2 tasks and runs '{want}'")
finally:
    slurmlab.down_and_check(s)
shutil.rmtree(tmp, ignore_errors=True)
print("reframe: under a site's configuration the srun variant is selected on the srun partition and passes under a "
      "real Slurm for tcp (against exported references), openmpi and mpich")
