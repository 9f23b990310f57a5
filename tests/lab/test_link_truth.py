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
The relay polls for the last 100 us before each delivery (SPIN).  One launch can still be late by a wake-up: every figure is the best of three launches (lowest
latency, highest bandwidth), five for the relay's latencies (its wake-ups move a launch by up to
a third: 18.3, 24.2 and 26.5 us with no delay in one run).
The delays are judged only on a host steady enough to resolve them: 5 % of 50 us is 2.5 us, and when
the relay's launches with no delay (the overhead every delay figure is taken against) scatter by
more than that from launch to launch, a best-of-N difference is luck, not a measurement (one noisy
host: 12.8 to 25.2 us across fifteen launches, and the 50 us figure came out between -0.8 and +7.3 %
in runs of five rounds).  Then the test exits 77 with the figures instead of judging, as soon as
the range passes 2.5 us (it only grows with more launches).
Exits 77 as well when this machine cannot make network namespaces or versus-link was not built."""
import json
import os
import sys

import vstest as vt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from boxes import across, check_relay_down, lab, launch_load, skip_loaded, summary  # noqa: E402  (beside this test)
from versus import lab as vslab  # noqa: E402  (the relay's counters)

PART = sys.argv[1] if len(sys.argv) > 1 else ""
if PART not in ("rates", "delays"):
    sys.exit("usage: test_link_truth.py rates|delays")
if not os.environ.get("VERSUS_LINK") or not os.access(os.environ["VERSUS_LINK"], os.X_OK):
    print("SKIP: versus-link (the relay) was not built: it needs linux/if_tun.h", flush=True)
    sys.exit(77)

LAUNCHES = 3
RELAY_LAUNCHES = 5
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
STEADY_US = TOLERANCE * 50   # the launch-to-launch scatter of the no-delay overhead the delays need
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


def best_of(tag, sizes, iterations, pick, extra=(), launches=LAUNCHES, judge_load=True):
    """`launches` launches of a tcp sweep across the boxes on a quiet host; pick(regimes) -> figure;
    returns the list of figures.  A launch versus-run recorded as loaded (boxes.launch_load) is
    logged and measured again, up to `launches` more attempts; when none was quiet the test exits
    77 with the figures of the loaded ones (with the host busy the rate no longer sets the time:
    tbf at 1 Gbit/s gave 820 Mbit/s for a goodput of 956 beside a CPU-bound process).  Not where
    the load is the lab's own (judge_load=False): the relay is a process polling beside the ranks
    (other processes used 40-44 % of rank 0's CPU on a quiet host), and at 1 Gbit/s the kernel's
    packet work on the ranks' CPUs made the ranks wait 11-19 % of the time on a quiet host; there
    the load says nothing of the host, and those launches are judged as before."""
    got, loads, busy = [], [], []
    for k in range(2 * launches):
        out = f"{d}/{tag}-{k}.jsonl"
        run, recs, end, _ = across("tcp", sizes, out, ["-i", str(iterations), "-w", "5", *extra])
        vt.check(end["status"] == "ok", f"{tag} launch {k}: status ok")
        load = launch_load(out) if judge_load else None
        if load:
            loads.append(f"{tag} launch {k}: {load}")
            busy.append(f"{tag} launch {k}: {pick(regimes(out)):.2f}")
            vt.log(f"{tag} launch {k} not used: {load}")
        else:
            got.append(pick(regimes(out)))
        if len(got) == launches:
            break
    if not got:
        skip_loaded(tag, loads, busy)
    vt.log(f"{tag}: {', '.join(f'{g:.2f}' for g in got)} ({len(loads)} loaded launches not used)")
    return got


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
    goodput."""
    for rate, sizes in ((100, "64K,128K,256K,512K,1M"), (1000, "256K,512K,1M,2M,4M")):
        lab("up", "--rate", str(rate))
        st = json.loads(lab("status", "--json").stdout)
        vt.check(st["link"] == "veth" and all("tbf" in b["qdisc"] for b in st["boxes"]),
                 f"--rate {rate} puts tbf on both ends of the veth pair")
        # at 1 Gbit/s the kernel's own packet work lands on the ranks' CPUs: on a quiet host the
        # ranks waited for a CPU 11-19 % of the time in such launches (a clean-clone CI run: six of
        # six), so versus-run's load rule cannot tell a busy host there, and they are judged as before
        mbit = max(best_of(f"tbf{rate}", sizes, 10, bandwidth_mbit, LARGE, judge_load=rate < 1000))
        err = mbit / goodput(rate) - 1
        figures.append(f"tbf {rate} Mbit/s: fitted {mbit:.1f} Mbit/s, goodput {goodput(rate):.1f} ({100 * err:+.1f} %)")
        vt.check(abs(err) <= TOLERANCE, figures[-1])
    lab("up", "--delay", "200", "--rate", "100")
    mbit = max(best_of("relay-r100", "64K,128K,256K,512K,1M", 10, bandwidth_mbit, LARGE, judge_load=False))
    err = mbit / goodput(100) - 1
    figures.append(f"relay 100 Mbit/s: fitted {mbit:.1f} Mbit/s, goodput {goodput(100):.1f} ({100 * err:+.1f} %)")
    vt.check(abs(err) <= TOLERANCE, figures[-1])


def delays():
    """The relay's delays against the relay with no delay; returns the reason the host was too
    unsteady to judge them, or None when they were judged.

    The host's wake-ups drift: the same configuration's best launch moved from 68 to 73 us within
    minutes here, so the four relay configurations are launched in turn, RELAY_LAUNCHES rounds of
    one launch each, and each figure is its best launch: every configuration sees the same
    stretch of the host's states."""
    configs = [("relay-d0", ["--delay", "0"], 300), ("relay-d50", ["--delay", "50"], 300),
               ("relay-d200", ["--delay", "200"], 300), ("relay-d200-r100", ["--delay", "200", "--rate", "100"], 200)]
    got = {tag: [] for tag, _, _ in configs}
    late = {tag: [] for tag, _, _ in configs}
    wire = (HEADERS + FRAMING) * 8 / 100   # us for one segment's headers and framing at 100 Mbit/s

    def best(tag):
        """The best launch of a configuration: its fitted latency and how late the relay was then."""
        k = min(range(len(got[tag])), key=lambda i: got[tag][i])
        return got[tag][k], late[tag][k]

    def delay_errors():
        """Each delay figure from the best launches so far: (text, relative error).  The relay's
        own lateness is logged, not subtracted: with it on CPU 1 it counted 3.9 us late on
        average in launches whose 50 us came out at 49.6 (its counters include the packets
        nobody waits for, and its wake-up from an idle CPU)."""
        base, late0 = best("relay-d0")
        out = [(f"relay, no delay: fitted latency {base:.2f} us (the model's own overhead; relay "
                f"{late0:.2f} us late)", 0.0)]
        for tag, delay, extra, what in (("relay-d50", 50, 0.0, ""), ("relay-d200", 200, 0.0, ""),
                                        ("relay-d200-r100", 200, wire, f", {wire:.2f} us of headers and framing")):
            lat, lt = best(tag)
            err = (lat - base - extra) / delay - 1
            out.append((f"delay {delay} us{' at 100 Mbit/s' if extra else ''}: fitted latency {lat:.2f} us, less "
                        f"the overhead{what} {lat - base - extra:.2f} us (the relay {lt:.2f} us late on average) "
                        f"({100 * err:+.1f} %)", err))
        return out

    # A host state in which a rank's wake-up after a longer sleep costs more shows as a delay a few
    # per cent long in every round (one CI run: 50 us came out +9.2 % in five rounds whose launches
    # agreed within 1.5 us); such states pass within minutes: up to two more sets of rounds, the
    # best launch of all of them.  The host's steadiness is judged first, over every launch with no
    # delay so far: the figures are judged only when it holds at the end of a set.
    unsteady = None
    for k in range(3 * RELAY_LAUNCHES):
        for tag, up_args, iters in configs:
            lab("up", *up_args, "--spin", SPIN, "--link-cpu", RELAY_CPU)
            out = f"{d}/{tag}-{k}.jsonl"
            _, _, end, _ = across("tcp", SMALL, out, ["-i", str(iters), "-w", "5", *BLOCK])
            vt.check(end["status"] == "ok", f"{tag} launch {k}: status ok")
            got[tag].append(latency(regimes(out)))
            late[tag].append(relay_late_us())
        # the range only grows with more launches: once past the budget, the judgement at the end
        # of the set would find the host unsteady too, so it is given now
        base = got["relay-d0"]
        if max(base) - min(base) > STEADY_US:
            unsteady = (f"the relay's latency with no delay scattered {max(base) - min(base):.2f} us from launch "
                        f"to launch ({min(base):.2f} to {max(base):.2f} us in {len(base)} launches) against "
                        f"{STEADY_US:.2f} us needed to resolve 5 % of a 50 us delay")
            break
        if (k + 1) % RELAY_LAUNCHES == 0:
            errs = delay_errors()
            vt.log(f"after {k + 1} rounds: " + "; ".join(t for t, _ in errs))
            if all(abs(e) <= TOLERANCE for _, e in errs):
                break
    for tag, figs in got.items():
        vt.log(f"{tag}: {', '.join(f'{g:.2f}' for g in figs)}")
    st = json.loads(lab("status", "--json").stdout)
    vt.check(st["link"] == "relay" and st["delay_us"] == 200, "--delay puts the relay in place")
    if unsteady:
        figures.extend(t for t, _ in delay_errors())
        return unsteady
    for text, err in delay_errors():
        figures.append(text)
        vt.check(abs(err) <= TOLERANCE, text)
    return None


figures = []
unsteady = None
pid = None
try:
    if PART == "rates":
        rates()
    else:
        unsteady = delays()
    pid = open("/run/versus-lab/link.pid", encoding="utf-8").read().strip()
finally:
    down = lab("down", check=False)
check_relay_down(down, pid)
vt.log("\n".join(figures))
if unsteady:
    print(f"SKIP: the host was too unsteady to judge the delays: {unsteady}; the figures, not judged: "
          + "; ".join(figures), flush=True)
    sys.exit(77)
