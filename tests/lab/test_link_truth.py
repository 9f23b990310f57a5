"""Ground truth with the link between the two boxes: what is imposed on the link is what the fitted
model of a tcp ping-pong sweep reports.  `test_link_truth.py rates` checks the rates, `delays` the
delays (two tests: the rates hold on any host whose launches are not loaded (best_of), the delays
need a steady one, below).

- A rate imposed with the kernel's tbf (100 Mbit/s and 1 Gbit/s): the fitted bandwidth of the
  large-message regime is TCP's goodput at that rate (payload over payload plus 66 B of TCP/IP and
  Ethernet headers per 1448 B segment at MTU 1500) within 5 %.
- A one-way delay imposed by the relay (versus-link; 50 us and 200 us): the fitted latency less the
  latency through the relay with no delay (the model's own overhead: the relay's hops and wake-ups)
  is the delay within 5 %.  With a 100 Mbit/s rate on the relay as well, less also the time its
  headers and the transport's framing take on the wire, and the large-message bandwidth is the goodput within 5 %.

For the delays the ranks block in recv (the tcp transport's mode=block, as NetPIPE does) on CPU 0
and the relay runs on CPU 1; for rates they poll on both CPUs.
The relay polls for the last 100 us before each delivery (SPIN).

The launch is the unit (tests/lib/judged.py): a rate is judged on the launches' fitted bandwidths,
a delay on the rounds' differences (one launch of each relay configuration per round, in turn: a
round's delay less the same round's no-delay latency, so that the host's drift over minutes falls
on both), and a figure passes when a 95 % interval over its launches lies within 5 % of the truth,
fails when one lies wholly outside, and is launched again in between: one launch of a quiet run
fitted tbf at 1 Gbit/s 846 Mbit/s beside 954 and 950, and a best launch or one mean of three
cannot tell such a launch from a missed truth.  A host whose wake-ups scatter (the relay's
no-delay latency went 13.4 to 19.7 us from one launch to the next on a quiet day) widens the
intervals, and more rounds narrow them again.  Each part has its budget (RATES_BUDGET_S,
DELAYS_BUDGET_S, inside the meson timeouts of 240 s); a figure still undecided when the
budget cannot hold another launch exits 77 with every launch's figure and load and what it needed.
A rate's launch that versus-run recorded as loaded is kept out of the judgement (beside a CPU-bound
process tbf at 1 Gbit/s gave 820 Mbit/s for a goodput of 956), except where the load is the lab's
own (best_of); a delay round whose 200 us launch was recorded as loaded likewise (delays).
Exits 77 as well when this machine cannot make network namespaces or versus-link was not built."""
import json
import os
import sys

import vstest as vt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from boxes import across, check_relay_down, lab, launch_load, leftovers, summary  # noqa: E402  (beside this test)
from judged import Budget, band, combine, settle, until_judged  # noqa: E402
from versus import lab as vslab  # noqa: E402  (the relay's counters)

PART = sys.argv[1] if len(sys.argv) > 1 else ""
if PART not in ("rates", "delays"):
    sys.exit("usage: test_link_truth.py rates|delays")
if not os.environ.get("VERSUS_LINK") or not os.access(os.environ["VERSUS_LINK"], os.X_OK):
    print("SKIP: versus-link (the relay) was not built: it needs linux/if_tun.h", flush=True)
    sys.exit(77)

LAUNCHES = 3           # launches of a rate before it is first judged (all a quiet host needs)
ROUNDS = 3             # rounds of the relay's delays before they are first judged
RATES_BUDGET_S = 180   # seconds for the three rates (meson timeout 240)
DELAYS_BUDGET_S = 75   # seconds for the delays' rounds (meson timeout 240; a round takes 15-20 s)
# The relay stops sleeping this close (us) to a deadline: its wake-ups ran more than the default
# 30 us late often enough here that a 50 us delay came out 3.4 us long on average (+5.7 %); with
# 100 the relay was 0.5 us late on average and the delays came out +1.5 % and +1.2 %.  Not for the
# staircase: there the ranks share the relay's CPU while every packet waits its wire time, and
# polling that long cost it steps (16 steps found in 3 of 3 launches at 30, 0 to 13 at 100).
SPIN = "100"
# The relay on the other CPU from the ranks (both on CPU 0, blocking): on theirs, its polling at
# SCHED_FIFO held a woken rank off the CPU while the next packet waited (50 us came out +5 to +9 %
# with the relay on time, 0.4 us late); apart, the same launches gave 49.9 us (-0.2 %).
RELAY_CPU = "1"
TOLERANCE = 0.05
HEADERS = 66                 # TCP (32 with timestamps) + IPv4 (20) + Ethernet (14) per segment
SEGMENT = 1448               # TCP payload per segment at MTU 1500 with timestamps
FRAMING = 64                 # the tcp transport's 16 B header, its payload padded to the 64 B line:
                             # what a message of (next to) no payload puts on the wire
SMALL = "8,64,256,1K"        # one segment each
d = vt.tmpdir()


def goodput(rate_mbit):
    return rate_mbit * SEGMENT / (SEGMENT + HEADERS)


def regimes(out):
    return summary(out)["regimes"]


def best_of(tag, sizes, iterations, pick, truth, budget, extra=(), judge_load=True):
    """Launches of a tcp sweep across the boxes, pick(regimes) -> figure, until the figures of the
    quiet ones judge it against truth (judged.band: an interval over the launches within 5 %),
    from LAUNCHES on, or the budget ends it; returns the Outcome.  A launch versus-run recorded as
    loaded (boxes.launch_load) is logged and kept out (with the host busy the rate no longer sets
    the time: tbf at 1 Gbit/s gave 820 Mbit/s for a goodput of 956 beside a CPU-bound process).
    Not where the load is the lab's own (judge_load=False): the relay is a process polling beside
    the ranks (other processes used 40-44 % of rank 0's CPU on a quiet host), and at 1 Gbit/s the
    kernel's packet work on the ranks' CPUs made the ranks wait 10-39 % of the time on a quiet host;
    there the load says nothing of the host, and every launch is judged."""
    def launch(k):
        out = f"{d}/{tag}-{k}.jsonl"
        run, recs, end, _ = across("tcp", sizes, out, ["-i", str(iterations), "-w", "5", *extra])
        vt.check(end["status"] == "ok", f"{tag} launch {k}: status ok")
        return pick(regimes(out)), (launch_load(out) if judge_load else None)
    return until_judged(tag, launch, lambda got: band(got, truth, TOLERANCE, " Mbit/s"), budget, LAUNCHES)


BLOCK = ["-o", "mode=block", "--cpus", "0,0"]
LARGE = ["--iterations-large", "10", "--warmup-large", "2"]


def relay_late_us():
    """How late the relay delivered since it started (us, mean over both directions)."""
    got = vslab.link_lateness()
    vt.check(got is not None, "the relay reports how late it delivered")
    return got[1]


def latency(regs):
    return regs[0]["latency_us"]


def bandwidth_mbit(regs):
    return regs[-1]["bandwidth_MBps"] * 8


def rates():
    """tbf at 100 Mbit/s and 1 Gbit/s, and the relay's own 100 Mbit/s: the fitted bandwidth is the
    goodput.  Each part gets an even share of what is left of the budget; the first not passed
    ends the test (it cannot pass then)."""
    budget = Budget(RATES_BUDGET_S)
    parts = [(100, "64K,128K,256K,512K,1M"), (1000, "256K,512K,1M,2M,4M"), ("relay", "64K,128K,256K,512K,1M")]
    for i, (rate, sizes) in enumerate(parts):
        if rate == "relay":
            lab("up", "--delay", "200", "--rate", "100")
            o = best_of("relay-r100", sizes, 10, bandwidth_mbit, goodput(100), budget.part(len(parts) - i),
                        LARGE, judge_load=False)
        else:
            lab("up", "--rate", str(rate))
            st = json.loads(lab("status", "--json").stdout)
            vt.check(st["link"] == "veth" and all("tbf" in b["qdisc"] for b in st["boxes"]),
                     f"--rate {rate} puts tbf on both ends of the veth pair")
            # at 1 Gbit/s the kernel's own packet work lands on the ranks' CPUs: on a quiet host the
            # ranks waited for a CPU 10-39 % of the time in such launches (a clean-clone CI run: six of
            # six), so versus-run's load rule cannot tell a busy host there, and they are judged as well
            o = best_of(f"tbf{rate}", sizes, 10, bandwidth_mbit, goodput(rate), budget.part(len(parts) - i),
                        LARGE, judge_load=rate < 1000)
        outcomes.append(o)
        figures.append(o.text())
        if o.state != "pass":
            return


def delays():
    """The relay's delays against the relay with no delay, judged round by round.

    The host's wake-ups drift: the same configuration's best launch moved from 68 to 73 us within
    minutes here, so the four relay configurations are launched in turn, one launch each per round,
    and each delay figure is the round's difference: its fitted latency less the same round's with
    no delay (less, at 100 Mbit/s, the wire time of the headers and framing).  Judged from ROUNDS
    rounds on, after every round, until every delay's interval over the rounds is inside or one is
    outside 5 % (judged.band), or the budget ends it.  The relay's lateness is logged, not
    subtracted: with it on CPU 1 it counted 3.9 us late on average in launches whose 50 us came
    out at 49.6 (its counters include the packets nobody waits for, and its wake-up from an idle
    CPU).  Most of the relay's launches are loaded by construction (both blocking ranks share CPU 0,
    and the relay polls beside them: the ranks waited 5-31 % of the time on a quiet host, other
    processes used 26-42 % of the CPUs with no delay), so versus-run's load record says nothing of
    the host in them.  With 200 us and no rate the relay sleeps through most of each delay, and
    that launch's record does speak for the host (other processes used 4-8 % of the CPUs on a
    quiet host, 49-87 % while another benchmark ran): a round whose 200 us launch is recorded as
    loaded is kept out of the judgement.  In three such rounds the 200 us delay came out +15 to
    +20 % (the relay 0.8 to 2.2 us late), 50 us -13 to +2 %: a judgement on them failed the test
    for the host's sake.  Every other round is judged: a round with a
    lucky no-delay launch gives a long difference and one with an unlucky one a short difference, so
    choosing rounds by their no-delay latency (within 2.5 us of the lowest, as the test used to
    require of all of them) biases the delay long: in one run the six rounds so chosen gave 50 us
    +11 % on average, all sixteen quiet ones +1.5 %.  At a round-to-round spread of 5 us a 50 us
    delay needs some 35 rounds to be told from 52.5 us (DELAYS_BUDGET_S holds about 4); a host
    whose wake-ups hold still decides in three."""
    configs = [("relay-d0", ["--delay", "0"], 300), ("relay-d50", ["--delay", "50"], 300),
               ("relay-d200", ["--delay", "200"], 300), ("relay-d200-r100", ["--delay", "200", "--rate", "100"], 200)]
    wire = (HEADERS + FRAMING) * 8 / 100   # us for one segment's headers and framing at 100 Mbit/s
    delays_of = (("relay-d50", 50, 0.0), ("relay-d200", 200, 0.0), ("relay-d200-r100", 200, wire))

    def one_round(k):
        got, load = {}, None
        for tag, up_args, iters in configs:
            lab("up", *up_args, "--spin", SPIN, "--link-cpu", RELAY_CPU)
            out = f"{d}/{tag}-{k}.jsonl"
            _, _, end, _ = across("tcp", SMALL, out, ["-i", str(iters), "-w", "5", *BLOCK])
            vt.check(end["status"] == "ok", f"{tag} launch {k}: status ok")
            got[tag] = (latency(regimes(out)), relay_late_us())
            if tag == "relay-d200":
                load = launch_load(out)
        return got, load

    def show(got):
        base = got["relay-d0"][0]
        return (f"no delay {base:.2f} us (relay {got['relay-d0'][1]:.2f} us late); "
                + ", ".join(f"{tag[6:]} {got[tag][0]:.2f} us -> {got[tag][0] - base - extra:.2f} "
                            f"(relay {got[tag][1]:.2f} us late)" for tag, _, extra in delays_of))

    def judge(rounds):
        return combine([band([r[tag][0] - r["relay-d0"][0] - extra for r in rounds], delay, TOLERANCE, " us",
                             log=False) for tag, delay, extra in delays_of])

    o = until_judged("the relay's delays of 50, 200 and 200 us at 100 Mbit/s, round by round", one_round,
                     judge, Budget(DELAYS_BUDGET_S), ROUNDS, show)
    st = json.loads(lab("status", "--json").stdout)
    vt.check(st["link"] == "relay" and st["delay_us"] == 200, "--delay puts the relay in place")
    outcomes.append(o)
    figures.append(o.text())


figures, outcomes = [], []
pid = None
try:
    if PART == "rates":
        rates()
    else:
        delays()
    if os.path.exists("/run/versus-lab/link.pid"):   # not when a rate before the relay's ended the test
        pid = open("/run/versus-lab/link.pid", encoding="utf-8").read().strip()
finally:
    down = lab("down", check=False)
if pid:
    check_relay_down(down, pid)
else:
    vt.check(not leftovers(), f"down leaves no box, no switch and no host file ({leftovers()})")
vt.log("\n".join(figures))
settle(outcomes)
