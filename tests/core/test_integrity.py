"""Every line versus-run writes is sealed with the SHA-256 of its bytes, and the loader refuses a
line changed after writing, a seal removed, a line copied, and values no run can produce, each with
exit 2 and one line naming file and line; the untouched files and a last line cut short by a kill
still load. Real runs over shm: a ping-pong, a stream (window), an all-pairs scan (pair records)."""
import hashlib
import json
import os
import re
import subprocess
import sys

import vstest as vt

d = vt.tmpdir()
files = {}
for name, args in (("pingpong", ["-p", "pingpong", "-s", "8:4K", "--order", "interleaved", "--rounds", "2"]),
                   ("stream", ["-p", "stream", "--window", "16", "-s", "8:1K"]),
                   ("scan", ["-n", "4", "--scan", "-s", "8,64"])):
    out = os.path.join(d, f"{name}.jsonl")
    extra = [] if "-n" in args else ["-n", "2"]
    vt.run(["-t", "shm", "--launch", "local", *extra, *args, "-i", "20", "-w", "2", "-q", "-O", out],
           timeout=120, check_rc=0)
    files[name] = open(out, encoding="utf-8").read().splitlines()

# the runner's seal, checked here independently of the loader
SEAL = re.compile(r',"line_sha256":"([0-9a-f]{64})"\}$')
for name, lines in files.items():
    for i, line in enumerate(lines, 1):
        m = SEAL.search(line)
        vt.check(m is not None and hashlib.sha256(line[:m.start()].encode()).hexdigest() == m.group(1),
                 f"{name}:{i} ends with the SHA-256 of the bytes before it")
    vt.check(json.loads(lines[0]).get("integrity") == "line_sha256", f"{name}: the run record promises the seal")


def summary(lines, newline="\n"):
    p = os.path.join(d, "t.jsonl")
    with open(p, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + newline)
    return subprocess.run([sys.executable, "-m", "versus", "summary", p], capture_output=True, text=True,
                          timeout=120)


def first(lines, kind):
    return next(i for i, x in enumerate(lines) if json.loads(x)["record"] == kind)


def edit(lines, i, fn):
    """Apply fn to record i's text (the seal stays as written: an edit by hand)."""
    out = list(lines)
    out[i] = fn(out[i])
    return out


def reseal_without(lines, i, key_fn):
    """Rewrite record i with its seal recomputed: the check must come from the values, not the seal."""
    out = list(lines)
    obj = json.loads(out[i])
    obj.pop("line_sha256", None)
    key_fn(obj)
    head = json.dumps(obj, separators=(",", ":"))[:-1]
    out[i] = head + ',"line_sha256":"' + hashlib.sha256(head.encode()).hexdigest() + '"}'
    return out


pp, st, sc = files["pingpong"], files["stream"], files["scan"]
s1 = first(pp, "size")


def shift_samples(line):
    obj = json.loads(line)
    s = obj["samples_ns"]
    s[0] += 30
    s[1] -= 60
    s[2] += 30
    return line[:line.index('"samples_ns":[')] + '"samples_ns":' + json.dumps(s, separators=(",", ":")) + \
        line[line.index("]", line.index('"samples_ns":[')) + 1:]


CASES = [
    ("three samples +30/-60/+30 ns (the sums unchanged)", edit(pp, s1, shift_samples), "does not match its line_sha256"),
    ("bytes changed", edit(pp, s1, lambda x: x.replace('"bytes":8,', '"bytes":9,', 1)), "does not match"),
    ("a host name changed in the run record", edit(pp, 0, lambda x: x.replace('"hosts":["', '"hosts":["x', 1)),
     "does not match"),
    ("the stream window changed", edit(st, 0, lambda x: x.replace('"window":16', '"window":32', 1)), "does not match"),
    ("the seal removed from one line",
     edit(pp, s1, lambda x: x[:x.index(',"line_sha256"')] + "}"), "has no line_sha256"),
    ("a line added without a seal", pp[:-1] + [json.dumps(json.loads(pp[s1]) | {"position": 999})[:-1]
                                               .replace(',"line_sha256"', ',"x"') + "}"] + pp[-1:],
     "has no line_sha256"),
    ("a size line duplicated", pp[:s1 + 1] + [pp[s1]] + pp[s1 + 1:], "repeats the size record of line"),
    ("a pair line duplicated", sc[:first(sc, "pair") + 1] + [sc[first(sc, "pair")]] + sc[first(sc, "pair") + 1:],
     "repeats the pair record of line"),
    ("10^30 bytes, resealed", reseal_without(pp, s1, lambda o: o.update(bytes=10 ** 30)), "valid 'bytes'"),
    ("iterations not the number of samples, resealed",
     reseal_without(pp, s1, lambda o: o.update(iterations=o["iterations"] * 2)), "'iterations' says"),
    ("a negative stream window, resealed", reseal_without(st, 0, lambda o: o["pattern_params"].update(window=-16)),
     "'window' must be a whole number"),
]

for what, lines, word in CASES:
    p = summary(lines)
    vt.check(p.returncode == 2 and word in p.stderr and "Traceback" not in p.stderr
             and len(p.stderr.strip().splitlines()) == 1,
             f"{what}: exit 2 with one line saying '{word}' (got {p.returncode}: {p.stderr.strip()[:300]})")
    vt.check(re.search(r"t\.jsonl:\d+", p.stderr) is not None, f"{what}: the message names file and line")

for name, lines in files.items():
    p = summary(lines)
    vt.check(p.returncode == 0, f"{name}: the untouched file loads ({p.stderr.strip()[:300]})")
# a baseline keeps the records it checked when saved; checking against it reads them unsealed
pp_path = os.path.join(d, "pingpong.jsonl")
base = os.path.join(d, "base.json")
for args in (["baseline", "save", pp_path, "-o", base], ["check", pp_path, "--baseline", base]):
    p = subprocess.run([sys.executable, "-m", "versus", *args], capture_output=True, text=True, timeout=120)
    vt.check(p.returncode in (0, 1) and "Traceback" not in p.stderr,
             f"versus {args[0]} over sealed results works ({p.returncode}: {p.stderr.strip()[-300:]})")
# a kill while writing cuts the last line: a warning, the rest kept
cut = pp[:-1] + [pp[-1][:len(pp[-1]) // 2]]
p = summary(cut, newline="")
vt.check(p.returncode == 0 and "cut short" in p.stdout + p.stderr,
         f"a last line cut short loads with a warning ({p.stderr[:300]})")
print(f"{sum(map(len, files.values()))} sealed lines verified; {len(CASES)} kinds of tampering refused")
