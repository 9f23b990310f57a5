"""LogGP over two stacks end to end: the three patterns it needs (pingpong, overhead
with the delayed receive, stream) run with versus-run over each backend named, then
`versus loggp` computes the table.

usage: loggp_stacks.py BACKEND,BACKEND...   (the reference backends, tests/meson.build; the one whose
                                           module declares the "floor" role is the fast one)

Claims checked: versus-run writes the delayed overhead variant (send + receive within
the iteration, which also holds the delay); `versus loggp` exits 0, prints one row per
stack and, in its JSON, o_s, o_r, g and G are above 0 with a 95 % interval around
each, and L is above 0 or said not to be determined (below 0 where the calls overlap
the transfer: a loopback socket delivers inside the send call); the other stack's o_s, o_r
and one-way time L + o_s + o_r are above the floor's (over the reference modules: system
calls against stores into shared memory); and with one pattern's file left out it exits 2 naming the missing pattern.
Small on purpose: a few seconds a backend.
"""
import importlib.util
import json
import os
import subprocess
import sys

import vstest as vt
from common import prepare
from versus import modules as vsmod

RUNS = [  # (name, pattern arguments, sizes)
    ("pingpong", ["--pattern", "pingpong", "--variant", "blocking"], "0,8,1K"),
    ("overhead", ["--pattern", "overhead", "--variant", "delayed"], "0,8,1K"),
    ("stream", ["--pattern", "stream", "--window", "16"], "0,8,64K,256K"),
    ("stream64", ["--pattern", "stream", "--window", "64"], "0,8"),   # g: the growth with the window
]


def measure(spec, d):
    _, launcher, base = prepare(spec)
    files = []
    for name, pat, sizes in RUNS:
        out = os.path.join(d, f"{spec.replace(':', '-')}-{name}.jsonl")
        p = vt.run(base + pat + ["--sizes", sizes, "--iterations", "200", "--iterations-large", "20",
                                 "--warmup", "20", "--warmup-large", "3", "--out", out, "--timeout", "60"],
                   launcher=launcher, timeout=120)
        vt.check(p.returncode == 0, f"{spec} {name}: versus-run exits 0 (got {p.returncode})")
        files.append(out)
    run, sizes, end = vt.read_jsonl(files[1])
    vt.check(run["variant"] == "delayed" and end and end["status"] == "ok", f"{spec}: overhead/delayed recorded, ok")
    for s in sizes:
        inside = [a + b for a, b in zip(s["send_ns"], s["recv_ns"])]
        vt.check(all(0 < x <= t for x, t in zip(inside, s["samples_ns"])),
                 f"{spec} overhead/delayed {s['bytes']} B: send + receive within the iteration (which holds the delay)")
    return files


def versus(args):
    cmd = [sys.executable, "-m", "versus"] + args
    return vt.run_cmd(cmd, timeout=120)


def main():
    specs = [b for b in sys.argv[1].split(",") if b]
    if len(specs) < 2:
        print("SKIP: fewer than two reference backends declared", flush=True)
        raise SystemExit(vt.SKIP)
    for b in specs:
        vt.need_module(b.split(":")[0])
    declared = vsmod.declared(vt.RUNNER)
    floors = [b for b in specs if "floor" in (declared.get(b.split(":")[0], {}).get("roles") or [])]
    if not floors:
        print("SKIP: no reference backend declares the floor role", flush=True)
        raise SystemExit(vt.SKIP)
    fast, slow = floors[0], next(b for b in specs if b != floors[0])
    missing = [m for m in ("numpy", "scipy") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"SKIP: {sys.executable} lacks {', '.join(missing)} (the analysis package's dependencies)", flush=True)
        raise SystemExit(vt.SKIP)
    d = vt.tmpdir()
    ff, fs = measure(fast, d), measure(slow, d)
    p = versus(["loggp", "--json", *ff, *fs])
    vt.check(p.returncode == 0, f"versus loggp exits 0 (got {p.returncode})")
    doc = json.loads(p.stdout)
    by = {s["stack"].split(" ")[0].split("/")[0]: s for s in doc["stacks"]}
    names = [fast.split(":")[0], slow.split(":")[0]]
    vt.check(sorted(by) == sorted(names), f"one LogGP entry per stack ({sorted(by)})")
    for name, s in by.items():
        for k in ("o_s", "o_r", "g", "G"):
            v, (lo, hi) = s[k]["value"], s[k]["ci"]
            vt.check(v > 0 and lo <= v <= hi, f"{name} {k} = {v:.4g} above 0, inside its interval [{lo:.4g}, {hi:.4g}]")
        v, (lo, hi) = s["L"]["value"], s["L"]["ci"]
        # L is what remains of the one-way time: below 0 where the calls overlap the transfer (a
        # loopback socket delivers inside the send call), which the output must then say
        vt.check(lo <= v <= hi and (v > 0 or any(n.startswith(("L below 0", "L not distinguishable")) for n in s["notes"])),
                 f"{name} L = {v:.4g} inside its interval [{lo:.4g}, {hi:.4g}], above 0 or said not determined")
        vt.check("against W (16, 64)" in s["g"]["from"] and "over 65536..262144 B" in s["G"]["from"],
                 f"{name}: g from the two windows, G from the window that has the large sizes")
    fast_s, slow_s = by[names[0]], by[names[1]]
    for k in ("o_s", "o_r"):
        vt.check(slow_s[k]["value"] > fast_s[k]["value"],
                 f"{names[1]}'s {k} ({slow_s[k]['value']:.3g} us) above {names[0]}'s ({fast_s[k]['value']:.3g} us)")
    one_way = {n: by[n]["L"]["value"] + by[n]["o_s"]["value"] + by[n]["o_r"]["value"] for n in names}
    vt.check(one_way[names[1]] > one_way[names[0]],
             f"{names[1]}'s L + o_s + o_r ({one_way[names[1]]:.3g} us) above {names[0]}'s ({one_way[names[0]]:.3g} us)")
    p = versus(["loggp", *ff, *fs])
    vt.check(p.returncode == 0 and "o_s us" in p.stdout and all(
        any(ln.strip().startswith(n) for ln in p.stdout.splitlines()) for n in names),
        "the table names both stacks under the LogGP columns")
    p = versus(["loggp", ff[0], ff[2], *fs])
    vt.check(p.returncode == 2 and "overhead/delayed" in p.stderr and "Traceback" not in p.stderr,
             "a stack without its overhead run: exit 2 naming the missing pattern")
    p = versus(["compare", ",".join(ff), ",".join(fs)])
    vt.check(p.returncode == 0 and "lower o_s" in p.stdout, "compare of two stacks' LogGP runs names the lower o_s")
    subprocess.run(["rm", "-rf", d])


if __name__ == "__main__":
    main()
