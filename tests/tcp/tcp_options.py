#!/usr/bin/env python3
"""tcp options: unknown keys and bad values are usage errors (exit 2) naming
the option; sockbuf= reaches the sockets (the kernel reports at least what was
asked) and addr= is the address the ranks meet on."""
import os
import sys

import vstest


def main():
    vstest.need_module("tcp")
    d = vstest.tmpdir()
    base = ["--transport", "tcp", "--launch", "local", "-n", "2", "--sizes", "8,100000",
            "--iterations", "20", "--warmup", "5", "--timeout", "30", "--quiet"]
    vstest.check_options_refused(base, (("no_such_key=1", "no_such_key"), ("mode=sometimes", "mode"),
                                        ("sockbuf=lots", "sockbuf"), ("addr=not-an-ip", "addr")), d)
    out = os.path.join(d, "ok.jsonl")
    vstest.run(base + ["--transport-opt", "sockbuf=256K", "--transport-opt", "addr=127.0.0.1",
                       "--transport-opt", "mode=block", "--out", out], timeout=60, check_rc=0)
    run, sizes, end = vstest.read_jsonl(out)
    vstest.check(end is not None and end["status"] == "ok", "end record says ok")
    tr = run["transport"]
    vstest.check(tr["options"] == {"sockbuf": "256K", "addr": "127.0.0.1", "mode": "block"},
                 "options recorded")
    vstest.check(tr["attrs"].get("sockbuf") == str(256 * 1024), "attr sockbuf=262144")
    vstest.check(tr["thresholds"].get("so_sndbuf", 0) >= 256 * 1024 and
                 tr["thresholds"].get("so_rcvbuf", 0) >= 256 * 1024,
                 f"the kernel holds at least 256 KiB per socket buffer ({tr['thresholds']})")
    vstest.check(tr["provider"] == "tcp/block", "provider tcp/block")
    return 0


if __name__ == "__main__":
    sys.exit(main())
