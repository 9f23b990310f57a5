"""LogGP truth through the lab's relay: a one-way delay imposed on the link between the two boxes
is recovered in L, and not in the overheads o_s and o_r.

The tcp stack's LogGP parameters (`versus loggp`: the blocking ping-pong, the overhead pattern with
the delayed receive and a stream) are measured across the boxes with the relay holding every
packet 0 us and DELAY_US, one launch of each pattern with each in a round, the two configurations
in turn (the host's wake-ups drift over minutes: each round's two see the same stretch of them).
The round is the unit (tests/lib/judged.py): its figures are differences of the round's two
configurations, L = one-way time at 0 B - o_s - o_r of each, as `versus loggp` computes it from
the launches' medians.  Judged, after every round from ROUNDS on:

- L(delay) - L(no delay) is the delay within 5 % (2.5 us at 50 us, the rule of the relay's own
  delay test, tests/lab/test_link_truth.py delays): a 95 % interval over the rounds inside
  50 us +- 5 % passes, one wholly outside fails;
- o_s and o_r grow by at most 2.5 us: a 95 % interval of their growth over the rounds below that
  passes, one above it fails.  A delay that leaked into an overhead would add the delay itself to
  o_s, or up to the whole added round trip (100 us) to o_r: the blocking receive of the ping-pong
  waits for it, which is why o_r is the delayed receive's.  Through the relay the send call took
  2.1 us in some launches and 12 us in others here, a state of the host and the relay that holds
  for a whole launch: such launches widen the interval (the test allowed the overheads their own
  no-delay range before), and more rounds narrow it.

Arrangement as in the relay's delay test: both ranks block in recv (tcp mode=block) on CPU 0, the
relay polls on CPU 1 for the last 100 us before each delivery.  The relay's launches are loaded by
construction (it polls beside the ranks), so versus-run's load record is not read and every round
is judged.  Rounds go on until every figure is decided or the budget (BUDGET_S, inside the meson
timeout of 180 s) cannot hold another; then the test exits 77 with every round's figures and what
the judgement needed.  Exits 77 as well when this machine cannot make network namespaces
or versus-link was not built."""
import json
import os
import sys

import numpy as np
import vstest as vt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from boxes import across, check_relay_down, lab  # noqa: E402  (beside this test)
from judged import Budget, band, below, combine, settle, until_judged  # noqa: E402
from versus.load import load_file  # noqa: E402
from versus.loggp import loggp_document  # noqa: E402

if not os.environ.get("VERSUS_LINK") or not os.access(os.environ["VERSUS_LINK"], os.X_OK):
    print("SKIP: versus-link (the relay) was not built: it needs linux/if_tun.h", flush=True)
    sys.exit(77)

DELAY_US = 50
ROUNDS = 3                           # rounds before the first judgement (all a steady host needs)
BUDGET_S = 60                        # seconds for the rounds (meson timeout 150)
TOLERANCE = 0.05
O_FLOOR_US = TOLERANCE * DELAY_US    # o_s and o_r may grow by this much with the delay
SPIN, RELAY_CPU = "100", "1"
BLOCK = ["-o", "mode=block", "--cpus", "0,0"]
PATTERNS = [("pingpong", "0,8", ["-p", "pingpong", "-V", "blocking", "-i", "300"]),
            ("overhead", "0,8", ["-p", "overhead", "-V", "delayed", "-i", "300"]),
            ("stream", "0,1K", ["-p", "stream", "--window", "16", "-i", "40"])]
CONFIGS = [("d0", "0"), (f"d{DELAY_US}", str(DELAY_US))]
d = vt.tmpdir()


def one_round(k):
    """One launch of each pattern with no delay, then with DELAY_US; the round's figures per
    configuration: one-way time, o_s, o_r and L at 0 B (us)."""
    got = {}
    for tag, delay in CONFIGS:
        lab("up", "--delay", delay, "--spin", SPIN, "--link-cpu", RELAY_CPU)
        mine = []
        for pat, sizes, args in PATTERNS:
            out = f"{d}/{tag}-{pat}-{k}.jsonl"
            _, _, end, _ = across("tcp", sizes, out, ["-w", "5", *args, *BLOCK])
            vt.check(end["status"] == "ok", f"{tag} {pat} launch {k}: status ok")
            files[tag].append(out)
            mine.append(out)
        (ow,), ov = one_way_us(mine), overheads_us(mine)
        got[tag] = {"one-way": ow, "o_s": ov["o_s"][0], "o_r": ov["o_r"][0]}
        got[tag]["L"] = ow - got[tag]["o_s"] - got[tag]["o_r"]
    return got, None


def show(got):
    return "; ".join(f"{tag}: one-way {g['one-way']:.2f}, o_s {g['o_s']:.2f}, o_r {g['o_r']:.2f}, L {g['L']:.2f} us"
                     for tag, g in got.items())


def judge(rounds):
    """L grew by the delay within 5 %, o_s and o_r by at most O_FLOOR_US: intervals over the rounds."""
    grew = {k: [r[f"d{DELAY_US}"][k] - r["d0"][k] for r in rounds] for k in ("L", "o_s", "o_r")}
    return combine([band(grew["L"], DELAY_US, TOLERANCE, " us", log=False)]
                   + [below(grew[k], O_FLOOR_US, " us", f"{k} grew") for k in ("o_s", "o_r")])


def one_way_us(files):
    """Per ping-pong launch, its median one-way time at 0 B (us)."""
    out = []
    for f in files:
        for r in load_file(f):
            if r.pattern == "pingpong":
                out.append(float(np.median(r.sizes_by_bytes()[0].samples_ns)) / 2e3)
    return out


def overheads_us(files):
    """Per overhead launch, its median send and receive time at 0 B (us): o_s and o_r of that launch."""
    out = {"o_s": [], "o_r": []}
    for f in files:
        for r in load_file(f):
            if r.pattern == "overhead":
                s = r.sizes_by_bytes()[0]
                out["o_s"].append(float(np.median(s.extra["send_ns"])) / 1e3)
                out["o_r"].append(float(np.median(s.extra["recv_ns"])) / 1e3)
    return out


def loggp_figures(files):
    """`versus loggp` of every launch of each configuration, for the log."""
    out = []
    for tag, _ in CONFIGS:
        (st,) = loggp_document([r for f in files[tag] for r in load_file(f)])["stacks"]
        out.append(f"relay {tag}: L {fig(st['L'])} us, o_s {fig(st['o_s'])} us, o_r {fig(st['o_r'])} us, "
                   f"g {fig(st['g'])} us ({st['launches']['pingpong']} launches of each pattern)")
    return out


def fig(p):
    v, (lo, hi) = p["value"], p["ci"]
    return f"{v:.2f} [{lo:.2f}, {hi:.2f}]"


files, pid, outcome = {tag: [] for tag, _ in CONFIGS}, None, None
try:
    outcome = until_judged(f"L, o_s and o_r with a {DELAY_US} us relay delay against none, round by round",
                           one_round, judge, Budget(BUDGET_S), ROUNDS, show)
    vt.log("\n".join(loggp_figures(files)))
    pid = open("/run/versus-lab/link.pid", encoding="utf-8").read().strip()
    st = json.loads(lab("status", "--json").stdout)
    vt.check(st["link"] == "relay" and st["delay_us"] == DELAY_US, "--delay puts the relay in place")
finally:
    down = lab("down", check=False)
check_relay_down(down, pid)
settle([outcome])
vt.log("PASS")
