"""versus-run's options are one table: --help, --help --json and the parser agree.

--help --json lists every option once (name, short name, value, kind, choices, default, group,
help); --help shows the grouped ones in the same order and the same patterns; the parser takes
a value exactly for the options the table says take one, accepts every default and every
choice the table gives, refuses a value outside the choices by naming them, and refuses an
option given twice (but --transport-opt)."""
import json
import re

import vstest as vt

p = vt.run(["--help", "--json"], timeout=30)
vt.check(p.returncode == 0, f"--help --json exits 0 ({p.stderr.strip()})")
try:
    doc = json.loads(p.stdout)
except ValueError:
    vt.fail(f"--help --json printed no JSON: {p.stdout[:80]!r}")
opts = doc["options"]
names = [o["name"] for o in opts]
shorts = [o["short"] for o in opts if o["short"]]
vt.check(len(names) == len(set(names)) and len(shorts) == len(set(shorts)),
         f"{len(names)} options, {len(shorts)} short names, none twice")
for o in opts:
    vt.check(isinstance(o["kind"], str) and o["kind"] and isinstance(o["help"], str) and o["help"]
             and "%D" not in o["help"], f"--{o['name']} has a kind ({o['kind']}) and a help text")

text = vt.run(["--help"], timeout=30).stdout
listed = re.findall(r"^  (?:-\w, |    )--([a-z][a-z-]*)", text, re.M)
grouped = [o["name"] for o in opts if o["group"]]
# --json is shown as "--list --json"
vt.check(listed == ["list" if n == "json" else n for n in grouped] and "      --list --json  " in text,
         f"--help shows the {len(grouped)} grouped options of the table, in its order")
for o in opts:
    if o["group"]:
        vt.check(o["group"] in text.splitlines(), f"--{o['name']}: its group '{o['group']}' is a --help heading")
pats = re.findall(r"^  (\w+) ", text.split("\nPatterns\n", 1)[1], re.M)
vt.check(pats == [x["name"] for x in doc["patterns"]] and all(x["variants"] for x in doc["patterns"]),
         f"the patterns of --help and --help --json are the same: {pats}")

# the parser is made from the same table: rules are checked after every option is read, so an
# option that parsed leaves --json's own complaint ("goes with --list") as the only one
PARSED = "--json goes with --list"


def parse(args):
    r = vt.run(args + ["--json"], timeout=30)
    return r.returncode, r.stderr


for o in opts:
    flag = "--" + o["name"]
    if o["kind"] == "action":
        continue
    if o["value"] is None:
        if o["name"] != "json":
            rc, err = parse([flag])
            vt.check(rc == 2 and PARSED in err, f"{flag} takes no value and parses alone")
        rc, err = vt.run([flag + "=x"], timeout=30).returncode, ""
        vt.check(rc == 2, f"{flag}=x is refused: {flag} takes no value")
        continue
    r = vt.run([flag], timeout=30)
    vt.check(r.returncode == 2 and "needs a value" in r.stderr, f"{flag} without its value: {r.stderr.strip()}")
    if o["short"]:
        r = vt.run(["-" + o["short"]], timeout=30)
        vt.check(r.returncode == 2 and "needs a value" in r.stderr, f"-{o['short']} is {flag}: it takes a value too")
    values = ([o["default"]] if o["default"] is not None else []) + (o["choices"] or [])
    for v in values:
        rc, err = parse([flag, v])
        vt.check(rc == 2 and PARSED in err, f"{flag} {v} (its default or a choice) parses ({err.strip()})")
    if o["choices"]:
        rc, err = parse([flag, "no-such-choice"])
        vt.check(rc == 2 and PARSED not in err and all(c in err for c in o["choices"]),
                 f"{flag} no-such-choice is refused naming {o['choices']} ({err.strip()})")
    if values and not o["repeatable"]:
        rc, err = parse([flag, values[0], flag, values[0]])
        vt.check(rc == 2 and "given twice" in err, f"{flag} given twice is refused")

rc, err = parse(["--transport-opt", "a=1", "--transport-opt", "b=2"])
vt.check(rc == 2 and PARSED in err, "--transport-opt repeats")
print(f"options table: {len(opts)} options, {len(doc['patterns'])} patterns; --help, --help --json and "
      f"the parser agree")
