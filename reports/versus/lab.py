"""versus lab: emulated hosts on one machine, to rehearse a cross-node campaign.

Two network namespaces joined by a veth pair, each with an address of its own and, for every
command run in it, a host name of its own (a UTS namespace):

    box-a  10.213.7.1  (namespace versus-box-a)  <-- vslab0 veth vslab0 -->  box-b  10.213.7.2

Options: the MTU of the link, a rate and a one-way delay.  The link is a veth pair, with the
rate imposed by the kernel's tbf on both ends (a token bucket lets a short burst through at line
rate, so medium messages can beat the rate), or, with --delay or --link relay, two TUN devices
joined by versus-link, a user-space relay that delays every packet and serialises it at the rate
(no burst; it costs a few microseconds per packet and a CPU while packets flow, so pin it with
--link-cpu and give busy-polling ranks the other CPU; while it runs, idle CPUs are kept out of
deep idle states so that wake-ups are on time).  `up` first removes what an earlier `up`
left; `down` removes the namespaces, the link, the relay, the processes still in them and the host
files; both are safe to repeat.  Needs root (network namespaces) and iproute2.

Network namespaces share /dev/shm, SysV shared memory and CMA: libraries that look for a
shared-memory path (UCX, MPICH over UCX) find one between the boxes unless told to use the
network (UCX_TLS=tcp, UCX_NET_DEVICES=vslab0)."""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass

from .load import InputError
from .modules import first_executable

IFACE = "vslab0"
PREFIX = 24
RUN_DIR = "/run/versus-lab"                # the remote-shell agent, the MPI host files, the relay's state
AGENT = f"{RUN_DIR}/agent"
STATE = f"{RUN_DIR}/lab.json"              # how the link was made (status reads it)
LINK_PID = f"{RUN_DIR}/link.pid"
LINK_LOG = f"{RUN_DIR}/link.log"


@dataclass(frozen=True)
class Box:
    name: str       # its host name
    netns: str      # its network namespace
    addr: str       # its address on the link


MAX_BOXES = 8
SWITCH = "versus-lab-switch"               # with more than two boxes: the namespace of their bridge
BRIDGE = "vslabbr"


def make_boxes(n: int) -> tuple[Box, ...]:
    return tuple(Box(f"box-{chr(97 + i)}", f"versus-box-{chr(97 + i)}", f"10.213.7.{i + 1}") for i in range(n))


ALL_BOXES = make_boxes(MAX_BOXES)
BOXES = ALL_BOXES[:2]                      # the default lab: two boxes joined by a veth pair


def current() -> tuple[Box, ...]:
    """The boxes of the lab that is up (two when it says nothing)."""
    try:
        return make_boxes(int(json.load(open(STATE, encoding="utf-8")).get("boxes", 2)))
    except (OSError, ValueError, TypeError):
        return BOXES


def box(which: str) -> Box:
    boxes = current()
    for b in boxes:
        if which.lower() in (b.name, b.name[-1], b.netns):
            return b
    raise InputError(f"no box {which!r}: the boxes are {', '.join(b.name for b in boxes)} "
                     f"(or {', '.join(b.name[-1] for b in boxes)})")


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and p.returncode:
        raise InputError(f"ip {' '.join(args)}: {p.stderr.strip() or 'failed'}")
    return p


def _need_root() -> None:
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        raise InputError("the lab needs root (it creates network namespaces): run it with sudo or as root")
    if not shutil.which("ip"):
        raise InputError("the lab needs iproute2's ip command (apt install iproute2)")


def present() -> list[str]:
    """The lab's namespaces that exist now (boxes, and the switch of a lab of more than two)."""
    p = _ip("netns", "list", check=False)
    names = {ln.split()[0] for ln in p.stdout.splitlines() if ln.strip()}
    return [ns for ns in [b.netns for b in ALL_BOXES] + [SWITCH] if ns in names]


def down() -> str:
    """Remove everything `up` made; nothing to do is fine.  Returns the relay's last counters
    (empty without a relay)."""
    _need_root()
    relay_log = _stop_relay()
    for ns in present():
        pids = _ip("netns", "pids", ns, check=False).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), 9)
            except (ProcessLookupError, ValueError):
                pass
        _ip("netns", "delete", ns, check=False)  # the veth pairs go with it
    for b in ALL_BOXES:
        shutil.rmtree(f"/etc/netns/{b.netns}", ignore_errors=True)
    try:
        os.rmdir("/etc/netns")  # only when nothing else is in it
    except OSError:
        pass
    _restore_congestion()
    shutil.rmtree(RUN_DIR, ignore_errors=True)
    left = present()
    if left:
        raise InputError(f"could not remove the namespaces {', '.join(left)}")
    return relay_log


def _check_up(rate_mbit, mtu, delay_us, link, link_cpu, boxes, slow, slow_links, spin_us=None):
    """up()'s arguments checked (InputError naming the option); returns the link kind, the slow
    boxes by name, the slow pairs as ((name, name), rate) and the relay's path (None without the
    relay)."""
    if not 2 <= boxes <= MAX_BOXES:
        raise InputError(f"--boxes {boxes}: give 2 to {MAX_BOXES} boxes")
    slow = {box_of(k, boxes).name: v for k, v in (slow or {}).items()}
    for name, v in slow.items():
        if not 0 < v <= 100000:
            raise InputError(f"--slow {name}:{v}: give a rate in Mbit/s, above 0 and at most 100000")
    pairs = {}
    for (x, y), v in (slow_links or {}).items():
        key = tuple(sorted((box_of(x, boxes).name, box_of(y, boxes).name)))
        if key[0] == key[1]:
            raise InputError(f"--slow-link {x}-{y}: name two different boxes, e.g. --slow-link a-b:100")
        if not 0 < v <= 100000:
            raise InputError(f"--slow-link {x}-{y}:{v}: give a rate in Mbit/s, above 0 and at most 100000")
        both = [n for n in key if n in slow]
        if both:
            raise InputError(f"--slow-link {x}-{y} and --slow {both[0][-1]}: a box is either slow with every "
                             "partner (--slow) or on slow links (--slow-link), not both")
        pairs[key] = v
    if (slow or pairs) and boxes == 2:
        raise InputError("--slow and --slow-link name one box's or one pair's link among several, which needs "
                         "more than two boxes (--boxes 3 or more); with two, --rate limits the one link")
    if boxes > 2 and (delay_us is not None or link == "relay"):
        raise InputError("--delay and the relay join two boxes; with more use --rate or --slow (tbf)")
    if not 576 <= mtu <= 65535:
        raise InputError(f"--mtu {mtu}: give an MTU from 576 to 65535 (1500 and 9000 are the usual)")
    if rate_mbit is not None and not (0 < rate_mbit <= 100000):
        raise InputError(f"--rate {rate_mbit}: give a rate in Mbit/s, above 0 and at most 100000")
    if delay_us is not None and not (0 <= delay_us <= 1e6):
        raise InputError(f"--delay {delay_us}: give a one-way delay in microseconds, from 0 to 1000000")
    link = link or ("relay" if delay_us is not None else "veth")
    if link not in ("veth", "relay"):
        raise InputError(f"--link {link}: give veth or relay")
    if link == "veth" and delay_us is not None:
        raise InputError("--delay needs the relay (this kernel's veth has no delay without netem): "
                         "leave out --link veth")
    tool = find_link_tool() if link == "relay" else None
    if spin_us is not None and not (0 <= spin_us <= 10000):
        raise InputError(f"--spin {spin_us}: give microseconds from 0 to 10000")
    if link_cpu is not None and not 0 <= link_cpu < (os.cpu_count() or 1):
        raise InputError(f"--link-cpu {link_cpu}: this machine has CPUs 0 to {(os.cpu_count() or 1) - 1}")
    return link, slow, pairs, tool


def up(rate_mbit: float | None = None, mtu: int = 1500, delay_us: float | None = None,
       link: str | None = None, link_cpu: int | None = 0, boxes: int = 2,
       slow: dict[str, float] | None = None,
       slow_links: dict[tuple[str, str], float] | None = None, spin_us: float | None = None) -> dict:
    """Build the boxes; returns their description (also what `status` prints).  link is
    "veth" (rate by tbf) or "relay" (versus-link: delay and rate); --delay implies the relay.
    More than two boxes hang off one bridge (in a namespace of its own); slow limits the named
    boxes' links (both directions) to their rates, e.g. {"c": 100}; slow_links limits the traffic
    between two boxes only (both directions), e.g. {("a", "b"): 100}.  spin_us: how close to a
    deadline the relay stops sleeping and polls (versus-link --spin; its default when None)."""
    _need_root()
    link, slow, slow_links, tool = _check_up(rate_mbit, mtu, delay_us, link, link_cpu, boxes, slow, slow_links,
                                             spin_us)
    down()
    the_boxes = make_boxes(boxes)
    a, b = the_boxes[:2]
    try:
        _allow_congestion()
        for x in the_boxes:
            _ip("netns", "add", x.netns)
        if boxes > 2:
            _ip("netns", "add", SWITCH)
            _ip("-n", SWITCH, "link", "add", BRIDGE, "type", "bridge")
            _ip("-n", SWITCH, "link", "set", BRIDGE, "mtu", str(mtu), "up")
            for x in the_boxes:
                port = f"port-{x.name[-1]}"
                _ip("link", "add", IFACE, "netns", x.netns, "type", "veth", "peer", "name", port, "netns", SWITCH)
                _ip("-n", SWITCH, "link", "set", port, "mtu", str(mtu), "master", BRIDGE, "up")
                if x.name in slow:       # towards the box: the switch port's egress
                    _tbf(SWITCH, port, slow[x.name], mtu, f"the switch port of {x.name}")
                elif rate_mbit is not None:
                    _tbf(SWITCH, port, rate_mbit, mtu, f"the switch port of {x.name}")
        elif link == "veth":
            _ip("link", "add", IFACE, "netns", a.netns, "type", "veth", "peer", "name", IFACE, "netns", b.netns)
        else:
            for x in the_boxes:
                _ip("-n", x.netns, "tuntap", "add", "dev", IFACE, "mode", "tun")
                _ip("-n", x.netns, "link", "set", IFACE, "txqueuelen", "1000")
        hosts = "127.0.0.1 localhost\n" + "".join(f"{x.addr} {x.name}\n" for x in the_boxes)
        for x in the_boxes:
            _ip("-n", x.netns, "addr", "add", f"{x.addr}/{PREFIX}", "dev", IFACE)
            _ip("-n", x.netns, "link", "set", "lo", "up")
            _ip("-n", x.netns, "link", "set", IFACE, "mtu", str(mtu), "up")
            if _congestion(x.netns) != CONGESTION:
                raise InputError(f"{x.name}: cannot set its TCP congestion control to {CONGESTION} "
                                 "(is the tcp_cubic module there? modprobe tcp_cubic)")
            if x.name in slow:
                _tbf(x.netns, IFACE, slow[x.name], mtu, x.name)
            elif rate_mbit is not None and link == "veth":
                _tbf(x.netns, IFACE, rate_mbit, mtu, x.name)
            towards = [(y, r) for (p, q), r in slow_links.items() for y in the_boxes
                       if x.name in (p, q) and y.name in (p, q) and y is not x]
            if towards:
                _slow_towards(x, towards, mtu)
            os.makedirs(f"/etc/netns/{x.netns}", exist_ok=True)
            with open(f"/etc/netns/{x.netns}/hosts", "w", encoding="utf-8") as f:
                f.write(hosts)
        os.makedirs(RUN_DIR, exist_ok=True)
        if link == "relay":
            _start_relay(tool, delay_us or 0.0, rate_mbit, mtu, link_cpu, spin_us)
        _wait_carrier(the_boxes)
        _write_agent(the_boxes)
        with open(STATE, "w", encoding="utf-8") as f:
            json.dump({"boxes": boxes, "link": link if boxes == 2 else "bridge", "rate_mbit": rate_mbit,
                       "delay_us": delay_us if link == "relay" else None, "slow_mbit": slow,
                       "slow_links_mbit": {f"{p}-{q}": r for (p, q), r in slow_links.items()},
                       "mtu": mtu, "link_cpu": link_cpu if link == "relay" else None}, f)
    except BaseException:
        down()
        raise
    return status()


def box_of(which: str, n: int) -> Box:
    for b in make_boxes(n):
        if which.lower() in (b.name, b.name[-1]):
            return b
    raise InputError(f"no box {which!r} among {n}: give a letter from a to {chr(96 + n)}")


# Each box's TCP congestion control, whatever the machine under the lab uses.  A new network
# namespace inherits the machine's, and where that is bbr, which paces each connection at its own
# estimate of the bandwidth, a ping-pong's application-limited samples left some connections of a
# four-box scan pacing at 7-24 Gbit/s and others at 220-280: 256 KiB took 2.5-3x as long on the
# slow ones, in every pass of a launch, and the scan named them bad links (1 launch in 16-24).
# cubic is Linux's default and what a cluster's hosts most often run.
# A namespace other than the machine's may pick only the algorithms the machine allows
# (net.ipv4.tcp_allowed_congestion_control, one list for the whole machine): up adds CONGESTION
# to it when it is missing and down puts the list back as it was.
CONGESTION = "cubic"
ALLOWED_CC = "/proc/sys/net/ipv4/tcp_allowed_congestion_control"
ALLOWED_SAVED = f"{RUN_DIR}/allowed_congestion"


def _allow_congestion() -> None:
    """CONGESTION among the machine's allowed algorithms (the list as it was kept for down)."""
    try:
        allowed = open(ALLOWED_CC, encoding="utf-8").read().split()
    except OSError:
        return
    if CONGESTION in allowed:
        return
    os.makedirs(RUN_DIR, exist_ok=True)
    with open(ALLOWED_SAVED, "w", encoding="utf-8") as f:
        f.write(" ".join(allowed))
    try:
        with open(ALLOWED_CC, "w", encoding="utf-8") as f:
            f.write(" ".join(allowed + [CONGESTION]))
    except OSError as e:
        raise InputError(f"cannot allow the {CONGESTION} congestion control in the boxes ({ALLOWED_CC}: "
                         f"{e.strerror}); is tcp_cubic available? modprobe tcp_cubic") from None


def _restore_congestion() -> None:
    """The machine's allowed algorithms back as up found them."""
    try:
        saved = open(ALLOWED_SAVED, encoding="utf-8").read().strip()
    except OSError:
        return
    try:
        with open(ALLOWED_CC, "w", encoding="utf-8") as f:
            f.write(saved)
    except OSError:
        pass


CC_KNOB = "/proc/sys/net/ipv4/tcp_congestion_control"


def _box_congestion(netns: str) -> str:
    """The congestion control the box uses ("" when it cannot be read)."""
    return subprocess.run(["ip", "netns", "exec", netns, "cat", CC_KNOB], capture_output=True,
                          text=True).stdout.strip()


def _congestion(netns: str) -> str:
    """Set the box's congestion control to CONGESTION; return the one it uses."""
    subprocess.run(["ip", "netns", "exec", netns, "sh", "-c", f'echo {CONGESTION} > {CC_KNOB}'],
                   capture_output=True, text=True)
    return _box_congestion(netns)


def _tbf(netns: str, dev: str, rate_mbit: float, mtu: int, what: str, parent: str = "root") -> None:
    """The kernel's token bucket on dev's egress: a bucket of two frames (the smallest that passes
    a full frame), or 200 us at the rate when that is more: the qdisc's timer wakes late, and a
    bucket smaller than that lateness loses rate (at 1 Gbit/s two frames gave 823-874 Mbit/s of
    TCP's 956; 100 us gave 950-954 on a quiet day and 905-942 on a noisy one, when 200 us gave
    951-955).  A full bucket passes at line rate, which moves a fit's intercept, not its slope."""
    burst = max(2 * (mtu + 14), int(rate_mbit * 1e6 / 8 * 200e-6))
    where = ["root"] if parent == "root" else ["parent", parent]
    p = subprocess.run(["tc", "-n", netns, "qdisc", "replace", "dev", dev, *where, "tbf",
                        "rate", f"{rate_mbit}mbit", "burst", str(burst), "latency", "50ms"],
                       capture_output=True, text=True)
    if p.returncode:
        raise InputError(f"tc tbf on {what}: {p.stderr.strip() or 'failed'}")


def _slow_towards(x: Box, towards: list[tuple[Box, float]], mtu: int) -> None:
    """Limit what box x sends to each of some boxes only: an htb at the root whose unclassified
    traffic goes out unshaped (htb's direct queue: no default class), a class per slow partner
    chosen by its address (u32) with the token bucket of _tbf beneath it, so that the one pair is
    limited as a slow host's link would be."""
    def tc(*args: str) -> None:
        p = subprocess.run(["tc", "-n", x.netns, *args], capture_output=True, text=True)
        if p.returncode:
            raise InputError(f"tc {' '.join(args)} on {x.name}: {p.stderr.strip() or 'failed'} "
                             "(a slow link needs the kernel's htb and u32)")
    tc("qdisc", "replace", "dev", IFACE, "root", "handle", "1:", "htb")
    for i, (y, rate) in enumerate(towards, start=1):
        cls = f"1:{i}"
        tc("class", "add", "dev", IFACE, "parent", "1:", "classid", cls, "htb", "rate", "100gbit",
           "quantum", "200000")
        _tbf(x.netns, IFACE, rate, mtu, f"{x.name} towards {y.name}", parent=cls)
        tc("filter", "add", "dev", IFACE, "parent", "1:", "protocol", "ip", "prio", "1", "u32",
           "match", "ip", "dst", f"{y.addr}/32", "flowid", cls)


def find_link_tool() -> str:
    """versus-link: $VERSUS_LINK, then PATH, then beside versus-run's build or install."""
    found = first_executable([os.environ.get("VERSUS_LINK"), shutil.which("versus-link")])
    if found:
        return found
    from .campaign import find_runner     # only now: it brings the analysis stack with it
    try:
        runner = os.path.dirname(find_runner())
    except InputError:
        runner = None
    found = runner and first_executable([os.path.join(runner, "versus-link"),
                                         os.path.join(runner, "..", "tools", "versus-link")])
    if found:
        return found
    raise InputError("cannot find versus-link (the relay for --delay): set VERSUS_LINK, put it on PATH, "
                     "or build versus (it is built beside versus-run)")


def _start_relay(tool: str, delay_us: float, rate_mbit: float | None, mtu: int, cpu: int | None,
                 spin_us: float | None = None) -> None:
    """versus-link between the two TUN devices, in its own session (it outlives this command),
    under SCHED_FIFO so that busy-polling ranks on its CPU cannot starve it, and keeping idle CPUs
    awake (a wake-up from idle here costs more than the precision a delay needs)."""
    a, b = BOXES
    argv = [tool, "--a", f"{a.netns}:{IFACE}", "--b", f"{b.netns}:{IFACE}", "--delay", f"{delay_us:g}",
            "--mtu", str(mtu), "--fifo", "50", "--awake", "--pidfile", LINK_PID]
    if rate_mbit is not None:
        argv += ["--rate", f"{rate_mbit:g}"]
    if cpu is not None:
        argv += ["--cpu", str(cpu)]
    if spin_us is not None:
        argv += ["--spin", f"{spin_us:g}"]
    with open(LINK_LOG, "w", encoding="utf-8") as log:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    t0 = time.monotonic()
    while not os.path.exists(LINK_PID):
        if p.poll() is not None:
            raise InputError(f"versus-link stopped at once: {open(LINK_LOG, encoding='utf-8').read().strip()}")
        if time.monotonic() - t0 > 5:
            p.kill()
            raise InputError("versus-link did not open the TUN devices within 5 s")
        time.sleep(0.002)


def _stop_relay() -> str:
    """End the relay (SIGTERM: it prints its counters to the log); returns the log."""
    try:
        pid = int(open(LINK_PID, encoding="utf-8").read())
    except (OSError, ValueError):
        return ""
    try:
        os.kill(pid, 15)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 2:
            os.kill(pid, 0)
            try:
                os.waitpid(pid, os.WNOHANG)   # our child when up() ran in this process
            except ChildProcessError:
                pass
            time.sleep(0.002)
        os.kill(pid, 9)
    except ProcessLookupError:
        pass
    try:
        os.unlink(LINK_PID)
        return open(LINK_LOG, encoding="utf-8").read()
    except OSError:
        return ""


def link_counters() -> str:
    """The relay's counters so far (it prints them to its log on SIGUSR1)."""
    try:
        pid = int(open(LINK_PID, encoding="utf-8").read())
        os.kill(pid, 10)
        time.sleep(0.05)
        return open(LINK_LOG, encoding="utf-8").read()
    except (OSError, ValueError):
        return ""


def link_lateness() -> tuple[int, float] | None:
    """Packets the relay has delivered since it started, both directions, and how late it
    delivered them on average (us), from its newest counters; None without a relay."""
    lines = [ln for ln in link_counters().splitlines() if ln.startswith("versus-link:")][-2:]
    got = [re.search(r" (\d+) packets .* late by ([\d.]+) us on average", ln) for ln in lines]
    if len(got) != 2 or not all(got):
        return None
    n = sum(int(m.group(1)) for m in got)
    return n, sum(int(m.group(1)) * float(m.group(2)) for m in got) / max(1, n)


def _wait_carrier(boxes: tuple[Box, ...], timeout: float = 5.0) -> None:
    """Every box's end LOWER_UP (some libraries skip an interface that is not running)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if all("LOWER_UP" in _ip("-n", x.netns, "link", "show", IFACE).stdout for x in boxes):
            return
        time.sleep(0.005)
    raise InputError(f"the link {IFACE} did not come up within {timeout:g} s")


def _write_agent(boxes: tuple[Box, ...]) -> None:
    """A remote-shell stand-in for MPI launchers (Open MPI's plm_rsh_agent, Hydra's
    -launcher-exec): `agent [ssh options] HOST COMMAND...` runs COMMAND on that box."""
    os.makedirs(RUN_DIR, exist_ok=True)
    cases = "".join(f'    {b.name}|{b.addr}) ns={b.netns} ;;\n' for b in boxes)
    script = f"""#!/bin/sh
# versus lab: run a command "on" a box, as ssh would on a cluster (made by versus lab up)
while [ $# -gt 0 ]; do
  case "$1" in
    -[bcDeFiIJlLmoOpRSwWEQ]) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
host="$1"; shift
case "$host" in
{cases}    *) echo "versus lab agent: no box '$host' (the boxes: {', '.join(b.name for b in boxes)})" >&2; exit 255 ;;
esac
exec ip netns exec "$ns" unshare --uts sh -c 'hostname "$0" && exec sh -c "$*"' "$host" "$@"
"""
    with open(AGENT, "w", encoding="utf-8") as f:
        f.write(script)
    os.chmod(AGENT, 0o755)
    with open(f"{RUN_DIR}/hosts", "w", encoding="utf-8") as f:
        f.write("".join(f"{b.name} slots=1\n" for b in boxes))


def launcher_args(kind: str) -> list[str]:
    """What an MPI launcher needs to start ranks on the boxes: the lab's agent in place of ssh and
    the link's interface for its own traffic and the messages (mpirun is Open MPI's, mpiexec
    MPICH's Hydra)."""
    if kind == "mpirun":
        return ["--mca", "plm_rsh_agent", AGENT, "--mca", "btl_tcp_if_include", IFACE,
                "--mca", "oob_tcp_if_include", IFACE]
    if kind == "mpiexec":
        return ["-launcher", "ssh", "-launcher-exec", AGENT, "-iface", IFACE]
    raise ValueError(f"the lab starts ranks on both boxes with mpirun or mpiexec, not {kind} "
                     "(for transports without an MPI launcher set launcher = \"mpirun\")")


def status() -> dict:
    """What is there now: per box its namespace, address, MTU, queueing discipline and TCP
    congestion control."""
    there = present()
    boxes = current()
    out = {"up": all(b.netns in there for b in boxes), "interface": IFACE, "boxes": []}
    try:
        out.update(json.load(open(STATE, encoding="utf-8")))
    except (OSError, ValueError):
        pass
    out["boxes"], out["count"] = [], len(boxes)
    for x in boxes:
        d = {"name": x.name, "netns": x.netns, "addr": x.addr, "present": x.netns in there}
        if d["present"]:
            link = _ip("-n", x.netns, "-j", "link", "show", IFACE, check=False).stdout
            try:
                info = json.loads(link)[0]
                d["mtu"] = info.get("mtu")
                d["state"] = info.get("operstate")
            except (ValueError, IndexError):
                pass
            q = subprocess.run(["tc", "-n", x.netns, "qdisc", "show", "dev", IFACE],
                               capture_output=True, text=True).stdout.strip()
            d["qdisc"] = q.splitlines()[0] if q else ""
            d["congestion"] = _box_congestion(x.netns)
        out["boxes"].append(d)
    return out


def command(which: str, argv: list[str]) -> list[str]:
    """argv run on a box: inside its network namespace (which also gives it the boxes' names in
    /etc/hosts) and a UTS namespace of its own with the box's host name."""
    b = box(which)
    return ["ip", "netns", "exec", b.netns, "unshare", "--uts", "sh", "-c",
            'hostname "$0" && exec "$@"', b.name, *argv]


# ---------------------------------------------------------------- CLI

def add_parser(sub) -> None:
    p = sub.add_parser("lab", help="two emulated hosts on this machine (network namespaces), to rehearse",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    lsub = p.add_subparsers(dest="lab_command", metavar="ACTION")
    u = lsub.add_parser("up", help="build the two boxes (removing an earlier set-up first)")
    u.add_argument("--rate", type=float, metavar="MBIT", help="limit the link to MBIT Mbit/s (kernel tbf)")
    u.add_argument("--mtu", type=int, default=1500, help="MTU of the link (default 1500)")
    u.add_argument("--delay", type=float, metavar="US",
                   help="one-way delay in microseconds (through the relay, versus-link)")
    u.add_argument("--link", choices=("veth", "relay"),
                   help="veth (default; rate by tbf) or relay (versus-link; default with --delay)")
    u.add_argument("--boxes", type=int, default=2, metavar="N",
                   help=f"how many boxes (2 to {MAX_BOXES}; more than two hang off one bridge)")
    u.add_argument("--slow", action="append", default=[], metavar="BOX:MBIT",
                   help="limit one box's link to MBIT Mbit/s both ways (more than two boxes), repeatable: "
                        "a slow host among fast ones")
    u.add_argument("--slow-link", action="append", default=[], metavar="BOX-BOX:MBIT",
                   help="limit the traffic between two boxes only to MBIT Mbit/s both ways (more than two "
                        "boxes), repeatable: one bad link among good ones")
    u.add_argument("--link-cpu", type=int, default=0, metavar="N",
                   help="the CPU the relay runs on, under SCHED_FIFO (default 0); keep busy-polling "
                        "ranks off it or give it the CPU they share")
    u.add_argument("--spin", type=float, metavar="US",
                   help="the relay polls instead of sleeping this close to a deadline (default 30): "
                        "raise it where wake-ups run later than that and a delay must be exact; it "
                        "takes the relay's CPU from ranks sharing it meanwhile")
    u.set_defaults(func=_cmd_up)
    d = lsub.add_parser("down", help="remove the boxes and everything still running in them")
    d.set_defaults(func=_cmd_down)
    s = lsub.add_parser("status", help="what is there (--json for scripts)")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=_cmd_status)
    r = lsub.add_parser("run", help="run a command on a box: versus lab run a -- versus-run ...")
    r.add_argument("box", help="a or b (box-a, box-b)")
    r.add_argument("argv", nargs="+", metavar="COMMAND")
    r.set_defaults(func=_cmd_run)

    def no_action(args) -> int:
        p.print_help(sys.stderr)
        return 2
    p.set_defaults(func=no_action)


def _print_status(st: dict) -> None:
    if not any(b["present"] for b in st["boxes"]):
        print("lab: down (no namespaces)")
        return
    for b in st["boxes"]:
        if b["present"]:
            print(f"{b['name']:6} {b['addr']:12} netns {b['netns']:14} {st['interface']} mtu {b.get('mtu')} "
                  f"{b.get('state', '?')}  tcp {b.get('congestion') or '?'}  {b.get('qdisc', '')}")
        else:
            print(f"{b['name']:6} missing (netns {b['netns']})")
    if st.get("link") == "relay":
        rate = f"{st['rate_mbit']:g} Mbit/s" if st.get("rate_mbit") else "no rate limit"
        alive = os.path.exists(LINK_PID)
        print(f"link: relay versus-link, one-way delay {st.get('delay_us') or 0:g} us, {rate}, on CPU "
              f"{st.get('link_cpu')}{'' if alive else ' (NOT RUNNING)'}")


def _cmd_up(args) -> int:
    t0 = time.monotonic()
    slow = {}
    for item in args.slow:
        name, _, rate = item.partition(":")
        try:
            slow[name] = float(rate)
        except ValueError:
            raise InputError(f"--slow {item!r}: give BOX:MBIT, e.g. --slow c:100") from None
    slow_links = {}
    for item in args.slow_link:
        pair, _, rate = item.partition(":")
        x, _, y = pair.partition("-")
        try:
            if not (x and y):
                raise ValueError
            slow_links[(x, y)] = float(rate)
        except ValueError:
            raise InputError(f"--slow-link {item!r}: give BOX-BOX:MBIT, e.g. --slow-link a-b:100") from None
    if args.spin is not None and not (0 <= args.spin <= 10000):
        raise InputError(f"--spin {args.spin:g}: give microseconds from 0 to 10000")
    if args.spin is not None and args.delay is None and args.link != "relay":
        raise InputError("--spin tunes the relay: give it with --delay or --link relay")
    st = up(args.rate, args.mtu, args.delay, args.link, args.link_cpu, args.boxes, slow, slow_links,
            args.spin)
    _print_status(st)
    print(f"lab: up in {time.monotonic() - t0:.2f} s; run on a box with: versus lab run a -- COMMAND")
    return 0


def _cmd_down(args) -> int:
    for ln in down().splitlines()[-2:]:
        if ln.startswith("versus-link:"):
            print(ln)
    print("lab: down")
    return 0


def _cmd_status(args) -> int:
    st = status()
    if args.json:
        print(json.dumps(st, indent=1))
    else:
        _print_status(st)
    return 0 if st["up"] else 1


def _cmd_run(args) -> int:
    _need_root()
    b = box(args.box)
    if b.netns not in present():
        raise InputError("the lab is down: start it with 'versus lab up'")
    argv = args.argv[1:] if args.argv and args.argv[0] == "--" else args.argv
    return subprocess.call(command(b.name, argv))
