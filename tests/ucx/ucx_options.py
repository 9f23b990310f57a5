#!/usr/bin/env python3
"""UCX module options: an unknown --transport-opt key or a bad value is a usage
error (exit 2, with a message naming it); err_mode=peer runs and is recorded;
the memory the buffers came from is in every record (attrs.memory: core by
default, ucx with memory=ucx) and --list --json says core may address it."""
import json
import os
import sys

import vstest


def main():
    vstest.need_module("ucx")
    d = vstest.tmpdir()
    base = ["--transport", "ucx", "--launch", "local", "-n", "2", "--sizes", "8",
            "--iterations", "20", "--warmup", "5", "--timeout", "30", "--quiet"]
    vstest.check_options_refused(base, (("no_such_key=1", "no_such_key"),
                                        ("err_mode=sometimes", "err_mode"),
                                        ("memory=device", "memory")), d)

    out = os.path.join(d, "c.jsonl")
    p = vstest.run(base + ["--transport-opt", "err_mode=peer", "--out", out], timeout=60)
    vstest.check(p.returncode == 0, f"err_mode=peer runs (got {p.returncode})")
    run, sizes, end = vstest.read_jsonl(out)
    vstest.check(end is not None and end["status"] == "ok", "end record says ok")
    vstest.check_size_records(sizes, [8], 20)
    tr = run["transport"]
    vstest.check(tr["options"] == {"err_mode": "peer"}, "option recorded")
    vstest.check(tr["attrs"].get("err_mode") == "peer", "attr err_mode=peer")
    vstest.check(tr["attrs"].get("memory") == "core", f"attr memory=core by default ({tr['attrs'].get('memory')})")

    out = os.path.join(d, "m.jsonl")
    p = vstest.run(base + ["--transport-opt", "memory=ucx", "--validate", "--out", out], timeout=60)
    vstest.check(p.returncode == 0, f"memory=ucx runs and validates (got {p.returncode}): {p.stderr[-300:]}")
    run, sizes, end = vstest.read_jsonl(out)
    vstest.check(end is not None and end["status"] == "ok", "memory=ucx: end record says ok")
    vstest.check(run["transport"]["attrs"].get("memory") == "ucx", "attr memory=ucx recorded")

    # mem_alloc and mem_free alone: the module allocates, core addresses the bytes
    p = vstest.run(["--list", "--json"], timeout=60)
    mods = {m.get("name"): m for m in json.loads(p.stdout)} if p.returncode == 0 else {}
    decl = mods.get("ucx", {})
    vstest.check((decl.get("memory"), decl.get("allocator")) == ("host", "module"),
                 f"--list --json: ucx's memory is host memory the module allocates ({decl.get('memory')}, "
                 f"{decl.get('allocator')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
