#!/bin/sh
# Repetitions to a precision target against a fixed count.
#
# The shm ping-pong is measured twice over the same sizes: once with a fixed
# 10,000 samples per size (OSU's default iteration count) and once with
# --precision 1 (stop when the 95 % interval of the median is within 1 % of
# it).  Prints, per size and in total, the samples, round trips and wall time
# of each run, both medians with their intervals, and whether the intervals
# overlap (the two runs agree).  Exits 1 if the precision run needed more
# round trips than the fixed one, or if a pair of intervals do not overlap.
#
# Usage: bench/precision_vs_fixed.sh [BUILD_DIR] [SIZES]
#   BUILD_DIR  meson build directory (default: build)
#   SIZES      comma-separated sizes (default: 8,256,4K,64K)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
sizes=${2:-8,256,4K,64K}
case $build in /*) ;; *) build=$here/$build ;; esac
run=$build/core/versus-run
py=$here/.venv/bin/python
[ -x "$run" ] || { echo "no $run: build first (meson setup $build && ninja -C $build)" >&2; exit 2; }
[ -x "$py" ] || { echo "no $py: python3 -m venv .venv && .venv/bin/pip install -e reports" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

now() { date +%s.%N; }
measure() { # name, size, extra args...: one run of one size, its wall time kept
    name=$1 size=$2; shift 2
    t0=$(now)
    "$run" --transport shm --launch local -n 2 --quiet --sizes "$size" --out "$out/$name-$size.jsonl" "$@"
    echo "$t0 $(now)" > "$out/$name-$size.wall"
    PYTHONPATH=$here/reports "$py" -m versus summary --json "$out/$name-$size.jsonl" > "$out/$name-$size.json"
}

# Pairs, size by size, back to back and alternating which goes first, so
# that both runs of a size see the same load on the machine.
i=0
for size in $(echo "$sizes" | tr , ' '); do
    if [ $((i % 2)) = 0 ]; then
        measure fixed "$size" --iterations 10000 --iterations-large 10000
        measure precision "$size" --precision 1
    else
        measure precision "$size" --precision 1
        measure fixed "$size" --iterations 10000 --iterations-large 10000
    fi
    i=$((i + 1))
done

"$py" - "$out" <<'PY'
import glob, json, sys
out = sys.argv[1]

def load(name):
    sizes, summ, wall = {}, {}, 0.0
    for path in sorted(glob.glob(f"{out}/{name}-*.jsonl")):
        for line in open(path):
            r = json.loads(line)
            if r["record"] == "size":
                s = sizes.setdefault(r["bytes"], {"n": 0, "rt": 0, "el": 0, "stop": None, "prec": None})
                s["n"] += r["iterations"]
                s["rt"] += r["iterations"] * r["batch"]
                s["el"] += r["elapsed_ns"]
                s["stop"] = r.get("stop") or s["stop"]
                s["prec"] = r.get("precision_pct")
        base = path[:-len(".jsonl")]
        summ.update({s["bytes"]: s for s in json.load(open(base + ".json"))["runs"][0]["sizes"]})
        t0, t1 = map(float, open(base + ".wall").read().split())
        wall += t1 - t0
    return sizes, summ, wall

fx, fs, fw = load("fixed")
pr, ps, pw = load("precision")
print(f"{'bytes':>8} | {'fixed: samples':>14} {'round trips':>11} {'meas. s':>8} {'median us [95% CI]':>26}"
      f" | {'precision: samples':>18} {'round trips':>11} {'meas. s':>8} {'median us [95% CI]':>26} {'achieved':>8} {'stop':>9} | agree")
bad = 0
for b in sorted(fx):
    f, p, a, c = fx[b], pr[b], fs[b], ps[b]
    fa, fb = a["median_ci_us"]
    pa, pb = c["median_ci_us"]
    agree = fa <= pb and pa <= fb
    bad += not agree
    print(f"{b:>8} | {f['n']:>14} {f['rt']:>11} {f['el']/1e9:>8.3f} {a['median_us']:>8.3f} [{fa:7.3f},{fb:7.3f}]"
          f" | {p['n']:>18} {p['rt']:>11} {p['el']/1e9:>8.3f} {c['median_us']:>8.3f} [{pa:7.3f},{pb:7.3f}]"
          f" {p['prec']:>7.2f}% {p['stop']:>9} | {'yes' if agree else 'NO'}"
          f" (precision/fixed median {c['median_us'] / a['median_us']:.3f})")
tf = sum(v["rt"] for v in fx.values()); tp = sum(v["rt"] for v in pr.values())
nf = sum(v["n"] for v in fx.values()); np_ = sum(v["n"] for v in pr.values())
mf = sum(v["el"] for v in fx.values()) / 1e9; mp = sum(v["el"] for v in pr.values()) / 1e9
print(f"total fixed:     {nf} samples, {tf} round trips, {mf:.3f} s measuring, {fw:.2f} s wall (all its runs)")
print(f"total precision: {np_} samples, {tp} round trips, {mp:.3f} s measuring, {pw:.2f} s wall (all its runs)")
print(f"precision/fixed: samples {np_/nf:.3f}, round trips {tp/tf:.3f}, wall {pw/fw:.3f}")
ok = tp < tf and bad == 0
if tp >= tf:
    print("FAIL: the precision run needed as many round trips as the fixed one")
if bad:
    print(f"FAIL: {bad} size(s) whose medians disagree beyond their intervals (the intervals are "
          "within-launch; two launches also differ by launch-to-launch spread)")
sys.exit(0 if ok else 1)
PY
