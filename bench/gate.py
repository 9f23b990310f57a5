"""The nightly gate on a shared node: is `versus check --run` green when nothing changed
and red when the stack got slower, and how many launches does it spend?

A baseline of --baseline-launches launches of one configuration (local launcher), saved
with a +-TOL % latency tolerance; then --trials pairs of trials in turn:

- A/A: `versus check --baseline B --run --max-launches N` of the same configuration;
  counted green when it exits 0;
- slowed: the same with bench/slow_shim.so preloaded (each sendmsg / payload memcpy of
  versus-run spins for a fraction of the time since its previous one: the stack slower by
  about 1 / (1 - 2 g), nothing in the run record changed); counted red when it exits 1
  with every size `regressed`.

--load runs two CPU-bound processes pinned to the ranks' CPUs (0 and 1) for the whole
bench, baseline included.  Prints each trial, then the counts, the launches each kind of
trial used (mean, max) and the slowdown the slowed launches measured (median over trials
of the check's per-size ratios).

    .venv/bin/python bench/gate.py --transport tcp [--load] [--trials 20]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIZES = {"tcp": "8,64,512,4K,32K", "shm": "4K,8K,16K,32K,64K"}


def versus():
    return [sys.executable, "-m", "versus"]


def runner():
    for c in (os.environ.get("VERSUS_RUN"), os.path.join(ROOT, "build", "core", "versus-run")):
        if c and os.path.exists(c):
            return c
    sys.exit("no versus-run: build first (meson compile -C build) or set VERSUS_RUN")


def hogs():
    return [subprocess.Popen(["taskset", "-c", str(c), "sh", "-c", "while :; do :; done"]) for c in (0, 1)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--transport", choices=sorted(SIZES), default="tcp")
    ap.add_argument("--sizes", help="default: tcp 8,64,512,4K,32K; shm 4K..64K (its payload copies)")
    ap.add_argument("--trials", type=int, default=20, help="trials of each kind (default 20)")
    ap.add_argument("--baseline-launches", type=int, default=10)
    ap.add_argument("--max-launches", type=int, default=10)
    ap.add_argument("--tolerance", type=float, default=10.0, help="+-%% latency (default 10)")
    ap.add_argument("--slow", type=float, default=1 / 12, help="the shim's fraction g (default 1/12: +20 %%)")
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--load", action="store_true", help="two CPU-bound processes on CPUs 0 and 1")
    a = ap.parse_args()
    run = runner()
    sizes = a.sizes or SIZES[a.transport]
    env = dict(os.environ, PATH=os.path.dirname(run) + os.pathsep + os.environ.get("PATH", ""),
               PYTHONPATH=os.path.join(ROOT, "reports"))
    env.setdefault("VERSUS_MODULE_PATH", os.path.join(ROOT, "build", "transports"))
    busy = hogs() if a.load else []
    try:
        with tempfile.TemporaryDirectory() as d:
            shim = os.path.join(d, "slow_shim.so")
            subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", shim, os.path.join(HERE, "slow_shim.c"), "-ldl"],
                           check=True)
            base = []
            for i in range(a.baseline_launches):
                out = os.path.join(d, f"base{i}.jsonl")
                subprocess.run(["versus-run", "-t", a.transport, "-L", "local", "-n", "2", "-s", sizes,
                                "-i", str(a.iterations), "-O", out, "-q"], check=True, env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
                base.append(out)
            bfile = os.path.join(d, "base.json")
            tol = f"latency:-{a.tolerance:g}%,+{a.tolerance:g}%"
            p = subprocess.run(versus() + ["baseline", "save", *base, "-o", bfile, "--tolerance", tol],
                               env=env, capture_output=True, text=True, check=True)
            print(p.stderr.strip(), flush=True)
            tally = {"aa": [0, 0, []], "slow": [0, 0, []]}
            ratios = []
            for t in range(a.trials):
                for kind in ("aa", "slow"):
                    e = dict(env)
                    if kind == "slow":
                        e.update(LD_PRELOAD=shim, SLOW_FRACTION=str(a.slow))
                    ld = os.path.join(d, f"{kind}{t}")
                    p = subprocess.run(versus() + ["check", "--baseline", bfile, "--run", "--launch-dir", ld,
                                                   "--max-launches", str(a.max_launches), "--json"],
                                       env=e, capture_output=True, text=True, stdin=subprocess.DEVNULL)
                    if p.returncode not in (0, 1):
                        sys.exit(f"versus check exited {p.returncode}: {p.stderr.strip()}")
                    doc = json.loads(p.stdout)
                    used = doc["sequential"]["launched"]
                    st = [c["status"] for c in doc["cases"]]
                    ok = (p.returncode == 0) if kind == "aa" else (p.returncode == 1 and set(st) == {"regressed"})
                    tally[kind][0] += ok
                    tally[kind][1] += 1
                    tally[kind][2].append(used)
                    if kind == "slow":
                        ratios += [c["ratio"] for c in doc["cases"] if c.get("ratio")]
                    print(f"trial {t + 1:2d} {kind:4s} exit {p.returncode} launches {used:2d} "
                          f"stopped {doc['sequential']['stopped']:7s} "
                          + " ".join(f"{c['bytes']}:{c['status'][:4]}:{100 * (c.get('ratio', 1) - 1):+.0f}%"
                                     for c in doc["cases"]), flush=True)
            ratios.sort()
            med = ratios[len(ratios) // 2] if ratios else float("nan")
            print(f"\n{a.transport} {'loaded' if a.load else 'quiet'}, baseline {a.baseline_launches} launches, "
                  f"tolerance {tol}, at most {a.max_launches} new launches:")
            for kind, words in (("aa", "A/A green"), ("slow", "slowed red at every size")):
                ok, n, used = tally[kind]
                print(f"  {words}: {ok} of {n}; launches a trial mean {sum(used) / max(n, 1):.1f}, "
                      f"max {max(used) if used else 0}")
            print(f"  the slowed launches measured {100 * (med - 1):+.1f} % (median over sizes and trials)")
    finally:
        for h in busy:
            h.kill()
            h.wait()


if __name__ == "__main__":
    main()
