"""Ground truth for the staircase analysis: over the relay's exact rate (100 Mbit/s, no burst) every
64 B of payload costs its wire time, 5.12 us, because the tcp transport pads each payload to 64 B.
A tcp ping-pong sweep from 400 to 1600 B in steps of 8 B between the two boxes must be reported as
one staircase of period 64 B (10 steps or more) whose meaning is the padding, each step within 10 %
of 5.12 us, with the packet step (the MSS) named with its MTU among it; no launch may put a
staircase of another period down to the padding.

The sweep ends two steps past the packet step (1392 B of payload at MTU 1500) because past that the
truth is not a plain staircase: with a second segment on the wire, 31 launches of the earlier sweep
(1000 to 2200 B) gave median steps of 8.3 us at 1592 B, 9.5 at 1848, 2.5 at 1912 and 3.5 at 1976
(5.3 at 1464 and 1528, as the padding says), up to -7.5 and +16.6 in single launches; no padding
explains that and its cause is not established.  Twelve of that sweep's eighteen steps lay past the
packet step, and
launches near the steadiness gate lost the staircase (3 of 17 steady launches saved from earlier
runs, 3 of 11 in a paired experiment on a busy host).  This sweep, interleaved with it in that
experiment: 1 of 14 steady launches failed, where the segmentation fitted a ramp over eight regular
steps (888 to 1400 B) and the staircase kept five: a weakness of the analysis, not of the target,
mended since by fill_lattice (docs/analysis.md, "Steps drawn as a ramp"): all 25 steady launches of
this sweep recorded since report the staircase with 12 to 18 steps (3 did not before).  Two of them,
on a busy host, measured steps of 5.70 and 5.72 us (+11 %) while the relay ran 2.0 and 2.1 us late on
average (0.8 to 1.8 us on the others, all within 10 %): there the relay's own lateness, not the
analysis, is what the height check meets.

A 5.12 us step can only show where the host keeps a size's time steadier than that from one round
to the next.  On some days this two-CPU virtual machine does not: the scatter of a size's median
between the five rounds (1.4826 MAD, the median over sizes) was 6 to 9 us in one stretch, and no
launch showed a staircase, while on others three launches of three found 16 steps.  So each launch's
scatter is measured first, from the samples alone; a launch with scatter above half a step cannot
test the analysis and is launched again (up to three times); a launch below it is analysed and
must pass every check above.

The relay polls through each packet's whole time on the wire (--spin 150: a full 1500 B frame takes
121 us at 100 Mbit/s) instead of sleeping until 30 us before its deadline, as it does by default,
and the boxes run cubic whatever the machine runs (versus lab up sets it).  On a machine whose
TCP ran bbr, which paces each connection at its own bandwidth estimate, one launch in four with
the default measured steps of 5.88 us (+15 %) and a clean run elsewhere 5.86 us; polling, ten of
ten measured 4.96 to 5.25 us.  With cubic, interleaved, five launches with the default measured
4.72 to 5.26 us with 14 to 17 steps, five polling ones 4.84 to 5.23 us with 16 or 17.
When no launch was steady enough, the test exits 77 saying so, with
the figures: it never passes without having checked the analysis.
Exits 77 as well when this machine cannot make network namespaces or versus-link was not built."""
import os
import statistics
import sys

import vstest as vt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from boxes import across, lab, leftovers, summary  # noqa: E402  (the helpers beside this test)
from versus import lab as vslab  # noqa: E402  (the relay's counters)

if not os.environ.get("VERSUS_LINK") or not os.access(os.environ["VERSUS_LINK"], os.X_OK):
    print("SKIP: versus-link (the relay) was not built: it needs linux/if_tun.h", flush=True)
    sys.exit(77)

RATE = 100
STEP_US = 64 * 8 / RATE          # one 64 B line of wire time
STEADY_US = STEP_US / 2          # the most round-to-round scatter a launch may have to be analysed
LAUNCHES = 3
SPIN_US = 150                    # the relay polls through a whole frame's wire time (121 us at 1514 B)
d = vt.tmpdir()


def relay_totals():
    """Packets delivered and their summed lateness (us) so far, both directions."""
    n, mean = vslab.link_lateness() or (0, 0.0)
    return n, n * mean


def round_scatter(path):
    """The median over sizes of the scatter (1.4826 MAD, us, one way) of a size's median between
    the rounds: how steady the host kept each size's time, before any analysis."""
    _, sizes, _ = vt.read_jsonl(path)
    per = {}
    for s in sizes:
        per.setdefault(s["bytes"], []).append(statistics.median(s["samples_ns"]) / 2e3)
    spread = []
    for v in per.values():
        if len(v) > 1:
            m = statistics.median(v)
            spread.append(1.4826 * statistics.median(abs(x - m) for x in v))
    return statistics.median(spread)


seen, summ = [], None
try:
    lab("up", "--delay", "0", "--rate", str(RATE), "--spin", str(SPIN_US))
    for attempt in range(1, LAUNCHES + 1):
        out = f"{d}/stairs-{attempt}.jsonl"
        n0, late0 = relay_totals()
        across("tcp", "400:1600:+8", out, ["-i", "40", "-w", "2", "--order", "interleaved", "--rounds", "5",
                                            "-o", "mode=block", "--cpus", "0,0"])
        n1, late1 = relay_totals()
        scatter = round_scatter(out)
        seen.append(f"{scatter:.2f}")
        vt.log(f"launch {attempt}: round-to-round scatter {scatter:.2f} us (at most {STEADY_US:.2f} to be "
               f"analysed); the relay delivered {n1 - n0} packets {(late1 - late0) / max(1, n1 - n0):.2f} us "
               "late on average")
        got = summary(out)
        scs = got["staircases"]
        vt.log(f"launch {attempt}: staircases {[(round(sc['period_bytes'], 1), sc['steps'], sc.get('meaning')) for sc in scs]}")
        pads = [sc for sc in scs if "pads each payload" in (sc.get("meaning") or "")]
        vt.check(all(abs(sc["period_bytes"] - 64) <= 1 for sc in pads),
                 f"launch {attempt}: no staircase is put down to the padding with another period")
        if scatter <= STEADY_US:
            summ = got
            break
finally:
    lab("down", check=False)
vt.check(not leftovers(), "no relay, namespace or host file is left")

if summ is None:
    print(f"SKIP: no launch was steady enough to show a {STEP_US:.2f} us staircase: round-to-round scatter "
          f"{', '.join(seen)} us, at most {STEADY_US:.2f} needed (this host, now)", flush=True)
    sys.exit(77)

pads = [sc for sc in summ["staircases"] if "pads each payload" in (sc.get("meaning") or "")]
vt.check(len(pads) == 1 and abs(pads[0]["period_bytes"] - 64) <= 1 and pads[0]["steps"] >= 10,
         f"the 64 B padding staircase: period {[round(sc['period_bytes'], 1) for sc in summ['staircases']]} B, "
         f"{[sc['steps'] for sc in summ['staircases']]} steps, {[sc.get('meaning') for sc in summ['staircases']]}")
vt.check(abs(pads[0]["step_height_us"] / STEP_US - 1) <= 0.1,
         f"each step is 64 B of wire time at {RATE} Mbit/s: {pads[0]['step_height_us']:.2f} us, expected {STEP_US:.2f}")
named = [t for t in summ["transitions"] if t.get("threshold") == "mss_payload"]
vt.check(len(named) == 1 and "MTU 1500" in named[0]["label"],
         f"the packet step is named with its MTU among the staircase ({named[0]['label'] if named else None})")
print(f"staircase: period {pads[0]['period_bytes']:.1f} B, {pads[0]['steps']} steps of "
      f"{pads[0]['step_height_us']:.2f} us (64 B of wire: {STEP_US:.2f}); packet step at {named[0]['bytes']} B")
