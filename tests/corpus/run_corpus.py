"""The bad-input corpus: every case of a .cases file (EXIT | WORD | ARGUMENTS, one a line) run against
versus-run (runner.cases) or the Python CLI `versus` (cli.cases).  A case passes when the exit status
is the one given, the word is in the output, and nothing crashed: no death by a signal, no Python
traceback, no sanitizer report, no hang (60 s).  Prints the outcome counts (the issue's table) and
fails naming every case that did not pass."""
import concurrent.futures
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

def one(case):
    """(line, outcome, why) of one case; outcome "as expected" when it passed."""
    n, want, word, args = case
    with tempfile.TemporaryDirectory() as tmp:
        argv = target + shlex.split(args.replace("{tmp}", tmp).replace("{inputs}", os.path.join(HERE, "inputs")))
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, cwd=tmp,
                               stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return n, "hang", f"{args}: no end within 60 s"
    out = p.stdout + p.stderr
    if p.returncode < 0:
        return n, "crash", f"{args}: killed by signal {-p.returncode}"
    if "Traceback (most recent call last)" in out:
        return n, "traceback", f"{args}: {out.strip().splitlines()[-1]}"
    if "Sanitizer" in out or "runtime error:" in out:
        return n, "sanitizer", f"{args}: " + next(ln for ln in out.splitlines()
                                                 if "Sanitizer" in ln or "runtime error:" in ln)
    if p.returncode != want:
        return n, "wrong exit", f"{args}: exit {p.returncode}, expected {want}: {out.strip()[-200:]}"
    if word.lower() not in out.lower():
        return n, "word missing", f"{args}: {word!r} not in: {out.strip()[-200:]}"
    return n, "as expected", ""


counts = dict.fromkeys(["as expected", "wrong exit", "word missing", "crash", "traceback", "sanitizer", "hang"], 0)
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
