"""Comparisons that decide: `versus campaign --until-decided` against a fixed 10-launch design.

Each trial is two campaigns of two configurations of one transport, both with
`launches = --first` planned and `--until-decided --max-launches N`:

- A/A: the same configuration under two names; a false claim is a range stated
  '+' or '-' (a '=' says "significant but under the minimum effect", which is not
  a false difference);
- effect: the second configuration with bench/slow_shim.so preloaded (each send or
  payload copy spins for a fraction g of the time since the previous one: about
  1 / (1 - 2 g) slower, nothing in the run record changed); a size is claimed with
  the right sign when the statement over its range says the slowed one is slower.

After each adaptive campaign the same results directory is filled up to N launches
a configuration (a campaign of `launches = N`, which keeps the launches already
there), and the fixed design's comparison (95 %, N launches a side) is made from
it: the adaptive design's cost is its launches over the fixed one's, and its
decisions are set beside the fixed design's.

--load runs two CPU-bound processes pinned to CPUs 0 and 1 for the whole bench.

    .venv/bin/python bench/campaign_decide.py --transport tcp [--load] [--trials 20]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "reports"))
SIZES = {"tcp": "8,64,512,4K,32K", "shm": "4K,8K,16K,32K,64K"}

CAMPAIGN = """launches = {launches}
timeout = 120
[[run]]
id = "a"
transport = "{t}"
sizes = "{sizes}"
iterations = {iters}
[[run]]
id = "b"
transport = "{t}"
sizes = "{sizes}"
iterations = {iters}
{env}
"""


def runner():
    for c in (os.environ.get("VERSUS_RUN"), str(ROOT / "build" / "core" / "versus-run")):
        if c and os.path.exists(c):
            return c
    sys.exit("no versus-run: build first (meson compile -C build) or set VERSUS_RUN")


def hogs():
    return [subprocess.Popen(["taskset", "-c", str(c), "sh", "-c", "while :; do :; done"]) for c in (0, 1)]


def campaign(text, results, env, *args):
    cfg = results.with_suffix(".toml")
    cfg.write_text(text, encoding="utf-8")
    p = subprocess.run([sys.executable, "-m", "versus", "campaign", str(cfg), "--results", str(results), *args],
                       env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        sys.exit(f"versus campaign exited {p.returncode}: {p.stderr[-2000:]}")
    return json.loads((results / "campaign.json").read_text())


def sides(results, files):
    from versus.load import load_file
    a = [r for f in files if f.startswith("a.") for r in load_file(results / f)]
    b = [r for f in files if f.startswith("b.") for r in load_file(results / f)]
    return b, a            # A = the second configuration (slowed in the effect trials), B = the first


def size_marks(results, files, alpha):
    """Each size's claim: the mark of the statement over its range (bare, '~' when none)."""
    from versus.compare import compare_runs
    a, b = sides(results, files)
    c = compare_runs(a, b, alpha=alpha)
    marks = {}
    for s in c.sizes:
        r = next(r for r in c.regimes if r.from_bytes <= s.bytes <= r.to_bytes)
        marks[s.bytes] = r.mark
    return marks, c


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--transport", choices=sorted(SIZES), default="tcp")
    ap.add_argument("--sizes")
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--first", type=int, default=3, help="launches planned a configuration (default 3)")
    ap.add_argument("--max-launches", type=int, default=10)
    ap.add_argument("--slow", type=float, default=0.065, help="the shim's fraction g (default 0.065: +15 %%)")
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--load", action="store_true", help="two CPU-bound processes on CPUs 0 and 1")
    ap.add_argument("--kinds", default="aa,effect")
    a = ap.parse_args()
    run = runner()
    sizes = a.sizes or SIZES[a.transport]
    env = dict(os.environ, PATH=os.path.dirname(run) + os.pathsep + os.environ.get("PATH", ""),
               PYTHONPATH=str(ROOT / "reports"), OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.setdefault("VERSUS_MODULE_PATH", str(ROOT / "build" / "transports"))
    busy = hogs() if a.load else []
    tally = {k: {"trials": 0, "false": 0, "eq": 0, "right": 0, "sizes": 0, "wrong": 0, "used": [], "fixed_right": 0,
                 "agree": 0, "ranges": 0} for k in a.kinds.split(",")}
    try:
        with tempfile.TemporaryDirectory() as d:
            shim = os.path.join(d, "slow_shim.so")
            subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", shim, str(HERE / "slow_shim.c"), "-ldl"],
                           check=True)
            for t in range(a.trials):
                for kind in tally:
                    extra = (f'env = {{ LD_PRELOAD = "{shim}", SLOW_FRACTION = "{a.slow}" }}'
                             if kind == "effect" else "")
                    res = Path(d) / f"{kind}{t}"
                    text = CAMPAIGN.format(launches=a.first, t=a.transport, sizes=sizes, iters=a.iterations, env=extra)
                    man = campaign(text, res, env, "--until-decided", "--max-launches", str(a.max_launches))
                    seq = man["sequential"]
                    files = [e["file"] for e in man["runs"] if e["status"] == "ok"]
                    used = len(files)
                    marks, c = size_marks(res, files, seq["nominal_alpha"])
                    # the fixed design: the same directory filled up to N launches a side, at 95 %
                    full = campaign(CAMPAIGN.format(launches=a.max_launches, t=a.transport, sizes=sizes,
                                                    iters=a.iterations, env=extra), res, env)
                    fixed, _ = size_marks(res, [e["file"] for e in full["runs"] if e["status"] == "ok"], 0.05)
                    k = tally[kind]
                    k["trials"] += 1
                    k["used"].append(used)
                    claims = [m for m in marks.values() if m in ("+", "-")]
                    if kind == "aa":
                        k["false"] += bool(claims)
                        k["eq"] += sum(m == "=" for m in marks.values())
                    else:
                        k["right"] += sum(m == "-" for m in marks.values())
                        k["wrong"] += sum(m == "+" for m in marks.values())
                        k["fixed_right"] += sum(m == "-" for m in fixed.values())
                    k["sizes"] += len(marks)
                    k["agree"] += sum(marks[s] == fixed.get(s) for s in marks)
                    print(f"trial {t + 1:2d} {kind:6s} launches {used:2d} stopped {seq['stopped']:8s} "
                          + " ".join(f"{s}:{marks[s]}/{fixed.get(s, '?')}:{100 * (x.ratio - 1):+.0f}%"
                                     for s, x in zip(marks, c.sizes)), flush=True)
    finally:
        for h in busy:
            h.kill()
            h.wait()
    full = 2 * a.max_launches
    print(f"\n{a.transport} {'loaded' if a.load else 'quiet'}, {a.first} launches planned, at most "
          f"{a.max_launches} a side; size marks adaptive/fixed:")
    for kind, k in tally.items():
        n = max(k["trials"], 1)
        mean = sum(k["used"]) / n
        line = (f"  {kind}: {k['trials']} trials, launches a trial mean {mean:.1f} of the fixed {full} "
                f"({100 * mean / full:.0f} %), max {max(k['used'], default=0)}; size marks agreeing with the "
                f"fixed design {k['agree']} of {k['sizes']}")
        if kind == "aa":
            line += f"; trials with a false claim {k['false']} of {k['trials']}; sizes '=' {k['eq']}"
        else:
            line += (f"; sizes claimed slower (right) {k['right']} of {k['sizes']} "
                     f"({100 * k['right'] / max(k['sizes'], 1):.0f} %), wrong sign {k['wrong']}; "
                     f"the fixed design {k['fixed_right']}")
        print(line, flush=True)


if __name__ == "__main__":
    main()
