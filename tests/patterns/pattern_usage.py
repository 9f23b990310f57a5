"""Pattern options that make no sense are refused with exit 2 and a message, before anything runs.

Claims: --window and --progress are refused for patterns that do not use them;
--window outside 1..4096 and --progress values other than none / poll=N (N >= 1)
are refused; --help lists every pattern; a valid combination gets past parsing
(it then exits 2 only for the missing launcher, with a different message).
"""
import vstest as vt

BAD = [
    (["--pattern", "pingpong", "--window", "8"], "--window applies to the stream and bistream"),
    (["--pattern", "stream", "--progress", "none"], "--progress applies to the doublebuffer"),
    (["--pattern", "stream", "--window", "0"], "--window expects an integer >= 1"),
    (["--pattern", "stream", "--window", "5000"], "more than 4096"),
    (["--pattern", "doublebuffer", "--progress", "poll=0"], "--progress expects"),
    (["--pattern", "doublebuffer", "--progress", "sometimes"], "--progress expects"),
    (["--pattern", "stream", "--variant", "blocking"], "has no variant"),
]

for args, words in BAD:
    p = vt.run(["--transport", "shm"] + args, timeout=20)
    vt.check(p.returncode == 2 and words in p.stderr, f"{' '.join(args)}: exit 2 saying '{words}'")

p = vt.run(["--help"], timeout=20)
for name in ("pingpong", "overhead", "stream", "bistream", "doublebuffer"):
    vt.check(f"  {name} " in p.stdout, f"--help lists {name}")

p = vt.run(["--transport", "shm", "--pattern", "doublebuffer", "--progress", "poll=64"], timeout=20)
vt.check(p.returncode == 2 and "--progress" not in p.stderr and "needs its peers" in p.stderr,
         "doublebuffer --progress poll=64 parses (refused only for the missing launcher)")
