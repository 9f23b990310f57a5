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

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass

from .load import InputError
from .lab_link import (LINK_LOG, LINK_PID, RUN_DIR, find_link_tool, link_counters, link_lateness,  # noqa: F401
                       start_relay, stop_relay)

IFACE = "vslab0"
PREFIX = 24
AGENT = f"{RUN_DIR}/agent"
STATE = f"{RUN_DIR}/lab.json"              # how the link was made (status reads it)


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
    relay_log = stop_relay()
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
            start_relay(tool, a, b, IFACE, delay_us or 0.0, rate_mbit, mtu, link_cpu, spin_us)
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


class Boxes:
    """The lab as the place a campaign's ranks run (versus campaign --lab; where.py says what a
    place answers): every run starts on box-a; a run over more than one node gets one box per node
    through the lab's remote-shell agent, and, when it names no CPUs, CPUs spread over this
    machine's (the boxes share them: the first rank of each box would take CPU 0)."""
    nodes = len(BOXES)

    def ready(self) -> None:
        if not status()["up"]:
            raise InputError("--lab: the lab is down: start it with 'versus lab up' (see versus lab up --help)")

    def place(self, spec, kind: str) -> tuple[list, list, list]:
        if (spec.nodes or 1) <= 1:
            return spec.hosts, spec.launcher_args, []
        hosts = spec.hosts or [b.name for b in BOXES][:spec.nodes]
        largs = launcher_args(kind) + spec.launcher_args
        if spec.cpus is not None:
            return hosts, largs, []
        ncpu = os.cpu_count() or 1
        return hosts, largs, ["--cpus", ",".join(str(i % ncpu) for i in range(spec.np))]

    def command(self, argv: list[str]) -> list[str]:
        return command("a", argv)


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
