#!/usr/bin/env python3
"""UCX module options: an unknown --transport-opt key or a bad value is a usage
error (exit 2, with a message naming it); err_mode=peer runs and is recorded."""
import os
import sys

import vstest


def main():
    vstest.need_module("ucx")
    d = vstest.tmpdir()
    base = ["--transport", "ucx", "--launch", "local", "-n", "2", "--sizes", "8",
            "--iterations", "20", "--warmup", "5", "--timeout", "30", "--quiet"]
    vstest.check_options_refused(base, (("no_such_key=1", "no_such_key"),
                                        ("err_mode=sometimes", "err_mode")), d)

    out = os.path.join(d, "c.jsonl")
    p = vstest.run(base + ["--transport-opt", "err_mode=peer", "--out", out], timeout=60)
    vstest.check(p.returncode == 0, f"err_mode=peer runs (got {p.returncode})")
    run, sizes, end = vstest.read_jsonl(out)
    vstest.check(end is not None and end["status"] == "ok", "end record says ok")
    vstest.check_size_records(sizes, [8], 20)
    tr = run["transport"]
    vstest.check(tr["options"] == {"err_mode": "peer"}, "option recorded")
    vstest.check(tr["attrs"].get("err_mode") == "peer", "attr err_mode=peer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
