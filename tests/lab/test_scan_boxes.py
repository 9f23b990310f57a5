"""The all-pairs scan's truth test: four emulated hosts on one bridge (versus lab up --boxes 4), one
rank on each, the scan over versus's tcp transport and `versus scan-report --json` on its records.

- one slow host (--slow c:100, tbf on box-c's link both ways): in each of three launches the report
  names box-c as the one bad host at 256 KiB and no bad link; at 8 B (which the token bucket lets
  through) it names nothing;
- one slow link (--slow-link a-b:100, only the traffic between box-a and box-b limited): in each of
  three launches it names the link box-a-box-b and nothing else, no bad host;
- one pair at a time (--serial; all pairs of a round at once is tested over one host in tests/many: here
  the boxes share two CPUs, and two busy-polling pairs at once may share one); the ranks are not bound (--placement none: the boxes share this machine's CPUs, so each box's
  "first core" is the same CPU), and every pair record names two different hosts;
- every box runs cubic, whatever the machine runs, and down gives the machine back its list of
  allowed congestion controls: under bbr (pacing per connection at its own estimate) 24 to 25 of
  240 visits of pairs that nothing slowed took 2.5-3x the typical pair, the same pair in every pass
  of a launch, and 1 launch in 16 to 24 named such a pair a bad link; under cubic 0 of 240;
- bad --slow-link requests exit 2 and down leaves nothing behind.
Exits 77 when this machine cannot make network namespaces."""
import json
import os
import sys

import vstest as vt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from boxes import VERSUS, down_and_check, lab, on_boxes, refused_ups  # noqa: E402  (the helpers beside this test)
from versus import lab as vslab  # noqa: E402  (the machine's allowed list it restores)

LAUNCHES = 3
d = vt.tmpdir()


def scan(tag, launch):
    out = f"{d}/{tag}-{launch}.jsonl"
    # one pair at a time: the four boxes share two CPUs, and two busy-polling pairs at once put both
    # ranks of a pair on one CPU now and then (4 ms time slices: 8 ms round trips, a "bad link")
    rc, err, table, rcs = on_boxes("tcp", out, ["--scan", "--serial", "--sizes", "8,256K", "--passes", "3",
                                                 "--placement", "none"],
                                   boxes=("a", "b", "c", "d"))
    vt.check(rc == 0 and rcs == [0, 0, 0], f"{tag} launch {launch}: the four ranks exit 0 ({rc}, {rcs})")
    pairs = [json.loads(ln) for ln in open(out, encoding="utf-8") if '"record":"pair"' in ln]
    vt.check(len(pairs) == 2 * 3 * 6, f"{tag} launch {launch}: 6 pairs x 2 sizes x 3 passes recorded ({len(pairs)})")
    vt.check(all(not p["same_host"] and p["hosts"][0] != p["hosts"][1] for p in pairs),
             f"{tag} launch {launch}: every pair joins two different hosts")
    p = vt.run_cmd(VERSUS + ["scan-report", out, "--json"], timeout=60)
    vt.check(p.returncode == 0, f"scan-report {tag} launch {launch} exits 0 ({p.stderr.strip()[-300:]})")
    rep = json.loads(p.stdout)
    vt.log(f"{tag} launch {launch}: " + " | ".join(rep["summary"]))
    return {s["bytes"]: s for s in rep["sizes"]}


ALLOWED = vslab.ALLOWED_CC
allowed_before = open(ALLOWED, encoding="utf-8").read().split()
try:
    lab("up", "--boxes", "4", "--slow", "c:100")
    st = json.loads(lab("status", "--json").stdout)
    vt.check([b.get("congestion") for b in st["boxes"]] == ["cubic"] * 4,
             f"every box runs cubic ({[b.get('congestion') for b in st['boxes']]})")
    for k in range(LAUNCHES):
        by = scan("slow-host", k)
        big, small = by[262144], by[8]
        vt.check(big["bad_hosts"] == ["box-c"] and big["bad_links"] == [],
                 f"slow host, launch {k}: 256 KiB names box-c and only it ({big['bad_hosts']}, {big['bad_links']})")
        vt.check(small["bad_hosts"] == [] and small["bad_links"] == [],
                 f"slow host, launch {k}: 8 B names nothing ({small['bad_hosts']}, {small['bad_links']})")
    lab("up", "--boxes", "4", "--slow-link", "a-b:100")
    st = json.loads(lab("status", "--json").stdout)
    vt.check(["htb" in b["qdisc"] for b in st["boxes"]] == [True, True, False, False],
             "--slow-link a-b: only box-a and box-b shape their traffic (htb)")
    for k in range(LAUNCHES):
        by = scan("slow-link", k)
        big, small = by[262144], by[8]
        links = [tuple(x["hosts"]) for x in big["bad_links"]]
        vt.check(links == [("box-a", "box-b")] and big["bad_hosts"] == [],
                 f"slow link, launch {k}: 256 KiB names the link box-a-box-b and nothing else "
                 f"({links}, {big['bad_hosts']})")
        vt.check(small["bad_hosts"] == [] and small["bad_links"] == [],
                 f"slow link, launch {k}: 8 B names nothing ({small['bad_hosts']}, {small['bad_links']})")
    refused_ups(((["--boxes", "4", "--slow-link", "a-a:100"], "two different boxes"),
                 (["--boxes", "4", "--slow-link", "a-b"], "BOX-BOX:MBIT"),
                 (["--boxes", "4", "--slow-link", "a-e:100"], "no box"),
                 (["--boxes", "4", "--slow-link", "a-b:100", "--slow", "b:50"], "not both"),
                 (["--slow-link", "a-b:100"], "more than two boxes")))
finally:
    down_and_check()
allowed_after = open(ALLOWED, encoding="utf-8").read().split()
vt.check(allowed_after == allowed_before,
         f"down gives back the allowed congestion controls ({allowed_before} -> {allowed_after})")
