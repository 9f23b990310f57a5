"""A real Slurm (private munge, slurmctld and slurmd, single node): the srun lines of the README run
every transport (openmpi with --mpi=pmix, mpich with --mpi=pmi2, the others through the rendezvous
under srun's environment), recorded as launched by srun; a wrong --mpi plugin exits 2 naming the
right one; the fixture comes up quickly and leaves no daemon and no file behind.  Exits 77 when
Slurm or munge is not installed or this is not root."""
import json
import os
import subprocess
import sys
import time

import vstest as vt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import slurmlab  # noqa: E402  (the fixture beside this test)

why = slurmlab.missing()
if why:
    print(f"SKIP: {why}", flush=True)
    sys.exit(77)
for m in ("openmpi", "mpich", "ucx", "ofi", "shm", "tcp"):
    vt.need_module(m)

d = vt.tmpdir()
t0 = time.monotonic()
s = slurmlab.Slurm()
try:
    s.up()
    vt.log(f"private Slurm up in {time.monotonic() - t0:.2f} s")
    matrix = []
    for t, mpi in (("openmpi", "pmix"), ("mpich", "pmi2"), ("tcp", None), ("shm", None), ("ucx", None),
                   ("ofi", None)):
        out = f"{d}/{t}.jsonl"
        args = ["-n", "2"] + ([f"--mpi={mpi}"] if mpi else []) + [vt.RUNNER, "-t", t, "-s", "0,8,64K,1M",
                                                                "-i", "50", "-w", "5", "-q", "-O", out]
        vt.log("$ srun " + " ".join(args))
        p = s.srun(args, cwd=d)
        vt.log(f"rc={p.returncode}\n{p.stdout}{p.stderr}")
        matrix.append(f"{t}: {'pass' if p.returncode == 0 else 'exit %d' % p.returncode}")
        vt.check(p.returncode == 0, f"srun -n 2 {'--mpi=' + mpi + ' ' if mpi else ''}versus-run -t {t} exits 0")
        run, sizes, end = vt.read_jsonl(out)
        vt.check(run["launcher"]["name"] == "srun" and end["status"] == "ok" and len(sizes) == 4,
                 f"{t}: recorded as launched by srun, 4 sizes, status ok")
        vt.check(run["topology"]["provenance"]["slurm_job_id"], f"{t}: the Slurm job id is recorded")
    vt.log("single-node srun matrix: " + ", ".join(matrix))

    for t, mpi, right in (("mpich", "pmix", "pmi2"), ("mpich", "none", "pmi2"), ("openmpi", "pmi2", "pmix"),
                          ("openmpi", "none", "pmix")):
        p = s.srun(["-n", "2", f"--mpi={mpi}", vt.RUNNER, "-t", t, "-s", "8", "-q"], cwd=d)
        vt.log(f"srun --mpi={mpi} -t {t}: rc={p.returncode}\n{p.stderr}")
        vt.check(p.returncode == 2 and f"srun --mpi={right}" in p.stderr,
                 f"{t} under srun --mpi={mpi} exits 2 and names srun --mpi={right}")
finally:
    slurmlab.down_and_check(s)

# A campaign inside an allocation launches with srun, leaving the placement to versus.
s2 = slurmlab.Slurm()
try:
    s2.up()
    cfg = f"{d}/c.toml"
    with open(cfg, "w", encoding="utf-8") as f:
        f.write('title = "srun campaign"\n[[run]]\nid = "tcp"\ntransport = "tcp"\nsizes = "8,64K"\n'
                'iterations = 30\n[[run]]\nid = "mpich"\ntransport = "mpich"\nsizes = "8,64K"\niterations = 30\n')
    p = subprocess.run(["salloc", "-n", "2", sys.executable, "-m", "versus", "campaign", cfg, "--results",
                        f"{d}/camp"], cwd=d, timeout=240, env=s2.env, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    vt.log(f"campaign in an allocation (salloc): rc={p.returncode}\n{p.stdout}{p.stderr}")
    vt.check(p.returncode == 0, "versus campaign inside salloc -n 2 exits 0")
    man = json.load(open(f"{d}/camp/campaign.json", encoding="utf-8"))
    for e in man["runs"]:
        vt.check(e["status"] == "ok" and e["command"][:2] == ["srun", "-n"] and "--cpu-bind=none" in e["command"],
                 f"campaign run {e['id']}: launched with srun --cpu-bind=none, ok ({e.get('command', [])[:6]})")
        run, _, _ = vt.read_jsonl(f"{d}/camp/{e['file']}")
        vt.check(run["placement"]["decided_by"] == "versus", f"campaign run {e['id']}: versus placed the ranks")
finally:
    s2.down()

# Outside an allocation: --sbatch writes a batch script, --submit submits it; the job runs every run
# with srun inside its allocation; requeued, it resumes (complete results are kept, not measured again).
s3 = slurmlab.Slurm()
try:
    s3.up()

    def wait_job(job, timeout=180):
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            q = subprocess.run(["squeue", "-h", "-j", job, "-o", "%T"], capture_output=True, text=True, env=s3.env)
            if not q.stdout.strip():
                return
            time.sleep(0.3)
        vt.fail(f"job {job} still in the queue after {timeout} s:\n{s3.logs()}")

    camp = f"{d}/batch"
    p = subprocess.run([sys.executable, "-m", "versus", "campaign", cfg, "--results", camp, "--sbatch"],
                       capture_output=True, text=True, env=s3.env, cwd=d, timeout=60)
    vt.log(p.stderr)
    script = open(f"{camp}/campaign.sbatch", encoding="utf-8").read()
    vt.log(script)
    vt.check(p.returncode == 0 and "#SBATCH --requeue" in script and "#SBATCH --ntasks=2" in script,
             "--sbatch writes a requeueable batch script for 2 tasks and does not run anything")
    vt.check(not os.path.exists(f"{camp}/campaign.json"), "--sbatch alone measures nothing")
    p = subprocess.run([sys.executable, "-m", "versus", "campaign", cfg, "--results", camp, "--submit"],
                       capture_output=True, text=True, env=s3.env, cwd=d, timeout=60)
    job = p.stdout.strip()
    vt.check(p.returncode == 0 and job.isdigit(), f"--submit submits it (job {job})")
    wait_job(job)
    man = json.load(open(f"{camp}/campaign.json", encoding="utf-8"))
    vt.check(all(e["status"] == "ok" and e["command"][0] == "srun" for e in man["runs"]),
             f"the batch job ran every run with srun ({[(e['id'], e['status']) for e in man['runs']]})")
    first = {e["id"]: os.path.getmtime(f"{camp}/{e['file']}") for e in man["runs"]}
    os.unlink(f"{camp}/{man['runs'][0]['file']}")  # as if the job had died during this run
    before = os.path.getmtime(f"{camp}/campaign.json")
    r = subprocess.run(["scontrol", "requeue", job], capture_output=True, text=True, env=s3.env)
    vt.check(r.returncode == 0, f"scontrol requeue {job} ({r.stderr.strip()})")
    t0 = time.monotonic()   # the job's second run has written its manifest, and left the queue
    while os.path.getmtime(f"{camp}/campaign.json") == before and time.monotonic() - t0 < 180:
        time.sleep(0.3)
    vt.check(os.path.getmtime(f"{camp}/campaign.json") != before,
             f"the requeued job ran again within {time.monotonic() - t0:.1f} s")
    wait_job(job)
    man = json.load(open(f"{camp}/campaign.json", encoding="utf-8"))
    vt.log(json.dumps([{k: e.get(k) for k in ("id", "status", "resumed", "note")} for e in man["runs"]]))
    redo, kept = man["runs"][0], man["runs"][1:]
    vt.check(redo["status"] == "ok" and not redo.get("resumed"), f"requeued: the missing run {redo['id']} ran again")
    vt.check(all(e.get("resumed") and os.path.getmtime(f"{camp}/{e['file']}") == first[e["id"]] for e in kept),
             "requeued: the complete runs were kept, not measured again")
finally:
    s3.down()
