"""Memory as a capability: a module that owns its buffers (fakemem: the address
core gets is PROT_NONE, the bytes live in a shadow only mem_fill and mem_compare
reach) runs every pattern that does not compute on host memory; core touches
none of its bytes directly (that would crash the run), validation fills and
compares through the module, and doublebuffer refuses it with exit 2."""
import vstest as vt

d = vt.tmpdir()
base = ["--launch", "local", "-n", "2", "-t", "fakemem", "-s", "0,8,4096,65536", "-i", "20", "-w", "2",
        "--verbose"]

for pattern in ("pingpong", "stream", "overhead"):
    out = f"{d}/{pattern}.jsonl"
    p = vt.run(base + ["-p", pattern, "-O", out], timeout=120)
    vt.check(p.returncode == 0, f"{pattern} over fakemem exits 0 (core never touched a PROT_NONE buffer)")
    run, sizes, end = vt.read_jsonl(out)
    vt.check(end and end["status"] == "ok" and len(sizes) == 4, f"{pattern}: 4 size records, status ok")
    counts = [ln for ln in p.stderr.splitlines() if "memory:" in ln]
    vt.check(len(counts) == 2, f"{pattern}: both ranks report their memory operations ({counts})")
    for ln in counts:
        allocs = int(ln.split("memory: ")[1].split()[0])
        frees = int(ln.split(" allocations, ")[1].split()[0])
        vt.check(allocs >= 2 and allocs == frees, f"{pattern}: buffers allocated by the module, all freed ({ln})")

# --validate: the payload goes in through mem_fill and is checked through mem_compare.
# The fake moves no data, so the receiver still holds its own stale fill: the check must
# say so, with the stale byte it wrote through mem_fill as the byte it got.
out = f"{d}/validate.jsonl"
p = vt.run(base + ["--validate", "-O", out], timeout=120)
vt.check(p.returncode == 1, "a fake that moves no data fails the payload check (exit 1)")
run, sizes, end = vt.read_jsonl(out)
vt.check(end["status"] == "invalid", "the run ends 'invalid'")
bad = [s for s in sizes if s["bytes"] > 0]
vt.check(all(s.get("valid") is False for s in bad), "every non-empty size is marked invalid")
got = {s["validation"]["got"] for s in bad}
vt.check(got <= {0x3c, 0xc3}, f"the byte compared is the stale fill written through mem_fill ({got})")
vt.check(all(s["validation"]["offset"] == 0 and s["validation"]["differing_bytes"] >= 1 for s in bad),
         "the module's compare gives the first differing offset and the count")
fills = [int(ln.split(" fills")[0].split()[-1]) for ln in p.stderr.splitlines() if "memory:" in ln]
compares = [int(ln.split(" compares")[0].split()[-1]) for ln in p.stderr.splitlines() if "memory:" in ln]
# (a failed run's ranks exit 1, and the local launcher ends the other one when the first
# exits: at least one of them gets to say what it did)
vt.check(len(fills) >= 1 and min(fills) > 0 and min(compares) > 0,
         f"the ranks filled and compared through the module (fills {fills}, compares {compares})")

p = vt.run(base + ["-p", "doublebuffer", "-O", f"{d}/db.jsonl"], timeout=120)
vt.check(p.returncode == 2 and "host memory" in p.stderr,
         "doublebuffer, which computes on its buffers, refuses a module that owns them (exit 2, says why)")
