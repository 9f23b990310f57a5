"""versus lab's command line: up, down, status and run (lab.py does the work)."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from .lab import MAX_BOXES, box, command, down, present, status, up, _need_root
from .lab import __doc__ as LAB_DOC
from .lab_link import LINK_PID
from .load import InputError


def add_parser(sub) -> None:
    p = sub.add_parser("lab", help="two emulated hosts on this machine (network namespaces), to rehearse",
                       description=LAB_DOC, formatter_class=argparse.RawDescriptionHelpFormatter)
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
