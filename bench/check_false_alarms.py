"""How often `versus check` flags a regression that is not there (A/A), and how often it
catches an injected one: real tcp ping-pongs under the local launcher, the slowdown from
the tcp module's delay_ns test hook (10 % of the one-way time), tolerance +5 %.

Each round: one launch thrown away (the first after a quiet spell runs slow), then
--launches triples of launches in turn: baseline, A/A, slowed.  Checked per round: all
launches a side (between-launch inference) and each single launch against a single
baseline launch (within-launch inference: one launch a side).

    .venv/bin/python bench/check_false_alarms.py [--rounds 20] [--sizes 8,64,512]

Prints per scheme the sizes checked, the A/A sizes flagged `regressed` (the false-alarm
rate, with a 95 % upper bound) and the slowed sizes flagged (the detection rate).
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reports"))
from versus.baseline import check, save  # noqa: E402
from versus.load import load_file  # noqa: E402
from versus import samples  # noqa: E402

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402


def runner():
    for c in (os.environ.get("VERSUS_RUN"), "build/core/versus-run"):
        if c and os.path.exists(c):
            return c
    sys.exit("no versus-run: build first (meson compile -C build) or set VERSUS_RUN")


def launch(run, d, tag, sizes, opts=()):
    out = os.path.join(d, f"{tag}.jsonl")
    env = dict(os.environ, VERSUS_MODULE_PATH=os.environ.get("VERSUS_MODULE_PATH", "build/transports"))
    cmd = [run, "--launch", "local", "-n", "2", "-t", "tcp", *opts, "-s", sizes, "-i", "3000", "-w", "300",
           "--order", "interleaved", "--rounds", "3", "--timeout", "60", "--out", out, "--quiet"]
    subprocess.run(cmd, check=True, env=env, stdin=subprocess.DEVNULL)
    return out


def upper95(k, n):
    return stats.beta.ppf(0.95, k + 1, n - k) if n else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--sizes", default="8,64,512")
    ap.add_argument("--launches", type=int, default=3, help="launches a side (default 3)")
    a = ap.parse_args()
    run = runner()
    many = f"{a.launches} launches a side"
    tally = {s: {"aa": [0, 0], "slow": [0, 0]} for s in (many, "1 launch a side")}
    with tempfile.TemporaryDirectory() as d:
        for r in range(a.rounds):
            launch(run, d, f"w{r}", a.sizes)
            base, aa, slow = [], [], []
            for k in range(a.launches):
                base.append(launch(run, d, f"b{r}-{k}", a.sizes))
                if k == 0:
                    (b0,) = load_file(base[0])
                    one_way = float(np.median(samples.reported(b0)[min(samples.reported(b0))]))
                    delay = int(round(0.10 * one_way))
                aa.append(launch(run, d, f"a{r}-{k}", a.sizes))
                slow.append(launch(run, d, f"s{r}-{k}", a.sizes, ["-o", f"delay_ns={delay}"]))
            bj = os.path.join(d, f"base{r}.json")
            save(base, bj, ["latency:-inf,+5%"])
            for side, files in (("aa", aa), ("slow", slow)):
                res = check(files, bj)
                t = tally[many][side]
                t[0] += sum(c["status"] == "regressed" for c in res["cases"])
                t[1] += len(res["cases"])
                for k in range(a.launches):
                    bk = os.path.join(d, f"base{r}-{k}.json")
                    save([base[k]], bk, ["latency:-inf,+5%"])
                    res = check([files[k]], bk)
                    t = tally["1 launch a side"][side]
                    t[0] += sum(c["status"] == "regressed" for c in res["cases"])
                    t[1] += len(res["cases"])
            print(f"round {r + 1}/{a.rounds}: delay {delay} ns; " + "; ".join(
                f"{s}: A/A {v['aa'][0]}/{v['aa'][1]}, slowed {v['slow'][0]}/{v['slow'][1]}"
                for s, v in tally.items()), flush=True)
    print(f"\n{'scheme':>20} {'A/A flagged':>12} {'rate':>7} {'95% upper':>10} {'slowed flagged':>15} {'rate':>7}")
    for s, v in tally.items():
        (fa, na), (ds, ns) = v["aa"], v["slow"]
        print(f"{s:>20} {f'{fa}/{na}':>12} {fa / na:7.3f} {upper95(fa, na):10.3f} {f'{ds}/{ns}':>15} {ds / ns:7.3f}")


if __name__ == "__main__":
    main()
