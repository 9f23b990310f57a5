"""The bad-input corpus: every case of a .cases file (EXIT | WORD | ARGUMENTS, one a line) run against
versus-run (runner.cases) or the Python CLI `versus` (cli.cases).  A case passes when the exit status
is the one given, the word is in the output, and nothing crashed: no death by a signal, no Python
traceback, no sanitizer report, no hang (60 s), and no file of inputs/ changed by the case.  Prints
the outcome counts and fails naming every case that did not pass.  The outcomes that are not "as
expected": a "silent acceptance" is exit 0 where a refusal was written (a wrong or unchecked input
taken as good), "data loss" an input file changed or removed by the case, the others as named.
Run against an older tree (VERSUS_RUN and PYTHONPATH pointing there, and a copy of this folder so
its inputs cannot be harmed) it gives the counts before a change."""
import concurrent.futures
import hashlib
import os
import shlex
import subprocess
import sys
import tempfile

import vstest as vt

HERE = os.path.dirname(os.path.abspath(__file__))
cases_file = sys.argv[1]
target = [vt.RUNNER] if os.path.basename(cases_file).startswith("runner") else [sys.executable, "-m", "versus"]
env = dict(os.environ)
env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
env.pop("VERSUS_RANK", None)
env.pop("VERSUS_SIZE", None)

cases = []
with open(cases_file, encoding="utf-8") as f:
    for n, line in enumerate(f, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [p.strip() for p in line.rstrip("\n").split("|", 2)]
        if len(parts) != 3 or not parts[0].lstrip("-").isdigit():
            vt.fail(f"{cases_file}:{n}: expected EXIT | WORD | ARGUMENTS")
        cases.append((n, int(parts[0]), parts[1], parts[2]))

INPUTS = os.path.join(HERE, "inputs")


def digests(args):
    """The SHA-256 of every input file a case names (by {inputs}/NAME), or None where there is none."""
    out = {}
    for tok in shlex.split(args):
        if tok.startswith("{inputs}/"):
            path = os.path.join(INPUTS, tok[len("{inputs}/"):])
            files = [os.path.join(dp, f) for dp, _, fs in os.walk(path) for f in fs] if os.path.isdir(path) else [path]
            for f in files:
                try:
                    with open(f, "rb") as h:
                        out[f] = hashlib.sha256(h.read()).hexdigest()
                except OSError:
                    out[f] = None
    return out


def one(case):
    """(line, outcome, why) of one case; outcome "as expected" when it passed."""
    n, want, word, args = case
    before = digests(args)
    with tempfile.TemporaryDirectory() as tmp:
        argv = target + shlex.split(args.replace("{tmp}", tmp).replace("{inputs}", os.path.join(HERE, "inputs")))
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, cwd=tmp,
                               stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return n, "hang", f"{args}: no end within 60 s"
    out = p.stdout + p.stderr
    after = digests(args)
    changed = [os.path.relpath(f, HERE) for f in before if before[f] != after.get(f)]
    if changed:
        return n, "data loss", f"{args}: changed {', '.join(changed)}"
    if p.returncode < 0:
        return n, "crash", f"{args}: killed by signal {-p.returncode}"
    if "Traceback (most recent call last)" in out:
        return n, "traceback", f"{args}: {out.strip().splitlines()[-1]}"
    if "Sanitizer" in out or "runtime error:" in out:
        return n, "sanitizer", f"{args}: " + next(ln for ln in out.splitlines()
                                                 if "Sanitizer" in ln or "runtime error:" in ln)
    if p.returncode == 0 and want != 0:
        return n, "silent acceptance", f"{args}: exit 0, expected {want}: {out.strip()[-200:]}"
    if p.returncode != want:
        return n, "wrong exit", f"{args}: exit {p.returncode}, expected {want}: {out.strip()[-200:]}"
    if word.lower() not in out.lower():
        return n, "word missing", f"{args}: {word!r} not in: {out.strip()[-200:]}"
    return n, "as expected", ""


counts = dict.fromkeys(["as expected", "wrong exit", "word missing", "silent acceptance", "data loss", "crash",
                        "traceback", "sanitizer", "hang"], 0)
bad = []
# the cases are independent: a few at once (the Python CLI's start-up dominates)
with concurrent.futures.ThreadPoolExecutor(max_workers=max(2, (os.cpu_count() or 1) + 1)) as pool:
    for n, outcome, why in sorted(pool.map(one, cases)):
        counts[outcome] += 1
        if outcome != "as expected":
            bad.append(f"line {n}: {outcome}: {why}")

vt.log(f"{os.path.basename(cases_file)}: {len(cases)} cases: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
for b in bad:
    vt.log("  " + b)
vt.check(not bad, f"every one of the {len(cases)} cases in {os.path.basename(cases_file)} ends as written "
                  f"({len(bad)} did not)")
