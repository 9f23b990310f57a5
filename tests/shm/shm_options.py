#!/usr/bin/env python3
"""shm options: an unknown key or a malformed value is a usage error (exit 2)
naming the option; a custom eager limit is the threshold recorded, and the
single-copy threshold is never below the eager limit."""
import os
import sys

import vstest


def main():
    vstest.need_module("shm")
    d = vstest.tmpdir()
    base = ["--transport", "shm", "--launch", "local", "-n", "2", "--sizes", "8,20000",
            "--iterations", "20", "--warmup", "5", "--timeout", "30", "--quiet"]
    vstest.check_options_refused(base, (("no_such_key=1", "no_such_key"), ("chunk=12abc", "chunk"),
                                        ("ring=1000", "ring"), ("single=lots", "single")), d)
    out = os.path.join(d, "ok.jsonl")
    vstest.run(base + ["--transport-opt", "eager_limit=16K", "--out", out], timeout=60, check_rc=0)
    run, sizes, end = vstest.read_jsonl(out)
    vstest.check(end is not None and end["status"] == "ok", "end record says ok")
    vstest.check(run["transport"]["options"] == {"eager_limit": "16K"}, "option recorded")
    vstest.check(run["transport"]["thresholds"].get("eager_limit") == 16384,
                 "eager_limit=16K is the recorded threshold")
    # single copy starts above the eager limit whatever `single` says
    out = os.path.join(d, "single.jsonl")
    vstest.run(base + ["--transport-opt", "single=1K", "--out", out], timeout=60, check_rc=0)
    run, _, _ = vstest.read_jsonl(out)
    vstest.check(run["transport"]["thresholds"].get("single_copy") == 8193,
                 f"single=1K under an 8 KiB eager limit records single copy from 8193 B "
                 f"({run['transport']['thresholds']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
