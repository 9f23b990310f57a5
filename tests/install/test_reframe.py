"""The ReFrame checks as a site gets them: `meson install` (DESTDIR) puts them under
share/versus/reframe, and ReFrame (reframe-hpc, in the project's virtual environment) runs
that copy with the installed versus-run under its builtin configuration (no -C: system
`generic`, environment `builtin`), which names none of versus's systems.

- Selected by what the partition is: VersusLocal over shm and tcp (2 cases), VersusSrun not
  (the builtin partition launches locally).
- Without a references file: both pass their sanity function, report both performance
  variables without a reference (ReFrame's 0, no bounds) and keep versus.jsonl in their output
  directory.
- With one: a baseline of a real shm run (`versus baseline save`) exported for generic:default
  (`versus baseline export --reframe`) is loaded with -S references_file: the shm case is judged
  against the baseline's medians and bounds, the tcp case (no entry) is not; the same file with
  the 8 B reference made 1000 times smaller, named by VERSUS_RFM_REFERENCES, fails the shm case
  in its performance stage; a file that is not JSON fails it in its setup stage, saying so.
- The srun variant is listed under the example configuration's `slurm` system (tcp, openmpi,
  mpich).
usage: test_reframe.py BUILD_DIR"""
import copy
import glob
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import vstest as vt  # noqa: E402
import rfmtest as rt  # noqa: E402

build = os.path.realpath(sys.argv[1])
rt.need_reframe()
vt.need_module("shm")
vt.need_module("tcp")
tmp = vt.tmpdir()


def sh(cmd, env, ok=(0,)):
    vt.log("$ " + " ".join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120, env=env,
                       stdin=subprocess.DEVNULL, cwd=tmp)
    vt.log(p.stdout[-2000:] + p.stderr[-2000:])
    if p.returncode not in ok:
        vt.fail(f"exit {p.returncode}: {' '.join(cmd)}")
    return p


# --- the installed copy
dest = os.path.join(tmp, "dest")
sh(["meson", "install", "-C", build, "--destdir", dest, "--no-rebuild", "--quiet"], os.environ)
(runner,) = glob.glob(os.path.join(dest, "**", "bin", "versus-run"), recursive=True)
prefix = os.path.dirname(os.path.dirname(runner))
checks = os.path.join(prefix, "share", "versus", "reframe", "versus_check.py")
vt.check(os.path.exists(checks) and os.path.exists(os.path.join(os.path.dirname(checks), "settings.py")),
         "share/versus/reframe/versus_check.py and settings.py are installed")
env = rt.environment(os.path.join(prefix, "bin"), HOME=tmp)  # HOME: no ~/.reframe configuration either

# --- ReFrame's builtin configuration, no references
rc, out, cases = rt.reframe(None, checks, os.path.join(tmp, "plain"), env)
vt.check(rc == 0, f"reframe -r under the builtin configuration exits 0 (got {rc})")
where = sorted((c["name"], f"{c['system']}:{c['partition']}", c["environ"]) for c in cases)
vt.check(len(cases) == 2 and all(n.startswith("VersusLocal") and s == "generic:default" and e == "builtin"
                                 for n, s, e in where),
         f"VersusLocal over shm and tcp selected on generic:default with builtin, VersusSrun not ({where})")
for c in cases:
    rt.check_case(c, judged=False)

# --- a baseline of a real run, exported as references
shm = os.path.join(tmp, "shm.jsonl")
sh([runner, "-t", "shm", "--launch", "local", "-n", "2", "-s", "8,1M", "-i", "300", "--out", shm, "--quiet"], env)
versus = os.path.join(prefix, "bin", "versus")
base = os.path.join(tmp, "base.json")
# wide tolerances: this machine is shared (tcp's 1 MiB bandwidth was seen from 131 to 2554 MB/s
# between runs), and ReFrame compares one run's median with them
sh([versus, "baseline", "save", shm, "-o", base, "--tolerance", "latency:-inf,+1000%",
    "--tolerance", "bandwidth@1M-:-99%,+inf"], env)
refs = os.path.join(tmp, "refs.json")
p = sh([versus, "baseline", "export", "--reframe", "generic:default", base, "-o", refs], env)
vt.check("VersusLocal shm on generic:default: latency_8B" in p.stdout, "export names the check, transport and partition")
doc = json.load(open(refs, encoding="utf-8"))
entry = doc["references"]["VersusLocal"]["shm"]["generic:default"]
vt.log(json.dumps(entry))

rc, out, cases = rt.reframe(None, checks, os.path.join(tmp, "refs"), env, "-S", f"references_file={refs}")
vt.check(rc == 0, f"reframe -r with -S references_file exits 0 (got {rc})")
by = {("shm" if "shm" in c["name"] else "tcp"): c for c in cases}
vt.check(sorted(by) == ["shm", "tcp"], f"both cases ran ({sorted(by)})")
p = rt.check_case(by["shm"], judged=True)
for var in rt.VARIABLES:
    want = entry[var]
    vt.check(p[var][1:4] == want[:3], f"shm {var}: ReFrame's reference {p[var][1:4]} is the exported {want[:3]}")
rt.check_case(by["tcp"], judged=False)

# --- a reference the run cannot meet fails the case
bad = copy.deepcopy(doc)
bad["references"]["VersusLocal"]["shm"]["generic:default"]["latency_8B"][0] = entry["latency_8B"][0] / 1000
tight = os.path.join(tmp, "tight.json")
json.dump(bad, open(tight, "w", encoding="utf-8"))
rc, out, cases = rt.reframe(None, checks, os.path.join(tmp, "tight"), dict(env, VERSUS_RFM_REFERENCES=tight),
                            "-n", "VersusLocal%transport=shm")
vt.check(rc != 0 and len(cases) == 1 and cases[0]["result"] == "fail" and cases[0].get("fail_phase") == "performance"
         and "latency_8B" in (cases[0].get("fail_reason") or ""),
         f"a latency reference 1000 times too small, named by VERSUS_RFM_REFERENCES, fails the shm case in its "
         f"performance stage (exit {rc}: {[(c['result'], c.get('fail_phase'), c.get('fail_reason')) for c in cases]})")

# --- a references file that is not one fails the case in its setup, saying so
junk = os.path.join(tmp, "junk.json")
with open(junk, "w", encoding="utf-8") as f:
    f.write("not references\n")
rc, out, cases = rt.reframe(None, checks, os.path.join(tmp, "junk"), env, "-n", "VersusLocal%transport=shm",
                            "-S", f"references_file={junk}", iterations=50)
vt.check(rc != 0 and len(cases) == 1 and cases[0].get("fail_phase") == "setup"
         and "not JSON; write it with versus baseline export --reframe" in (cases[0].get("fail_reason") or ""),
         f"a references file that is not JSON fails the case in setup with the reason "
         f"({[(c.get('fail_phase'), (c.get('fail_reason') or '')[:120]) for c in cases]})")

# --- the example configuration's slurm system lists the srun variant
p = subprocess.run([rt.REFRAME, "-C", os.path.join(os.path.dirname(checks), "settings.py"), "--system", "slurm",
                    "-c", checks, "-l"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                   env=env, stdin=subprocess.DEVNULL, cwd=tmp)
vt.log(p.stdout[-3000:])
vt.check(p.returncode == 0 and p.stdout.count("VersusSrun") == 3,
         "the srun variant is listed for the example's slurm system over tcp, openmpi and mpich")
shutil.rmtree(tmp, ignore_errors=True)
print("reframe: the installed checks are selected and pass under ReFrame's builtin configuration, with and "
      "without exported references; a reference they cannot meet fails them")
