"""Helpers for versus integration tests: run versus-run, read its JSONL, check it.

A test script calls `need_module(name)` first: when that transport module was
not built it exits 77 (Meson's skip) and says why.
"""
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

SKIP = 77
RUNNER = os.environ.get("VERSUS_RUN", "versus-run")


def _terminated(signum, _frame):
    """meson test ends a test past its timeout with SIGTERM: unwind, so that the test's finally
    blocks stop the daemons and remove the namespaces it made."""
    raise SystemExit(128 + signum)


signal.signal(signal.SIGTERM, _terminated)
BUILT = [m for m in os.environ.get("VERSUS_BUILT_MODULES", "").split(",") if m]


def log(*a):
    print(*a, flush=True)


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    log("ok: " + msg)


def need_module(name):
    if name not in BUILT:
        print(f"SKIP: transport module '{name}' was not built in this build "
              f"(built: {', '.join(BUILT) or 'none'}); see the Transports section of 'meson setup'",
              flush=True)
        sys.exit(SKIP)


def need_program(prog):
    path = shutil.which(prog)
    if not path:
        print(f"SKIP: program '{prog}' not found on PATH", flush=True)
        sys.exit(SKIP)
    return path


def netns_missing():
    """Why this machine cannot make network namespaces (the lab's two boxes), or None."""
    if os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("unshare"):
        return "network namespaces need root, iproute2 and unshare"
    probe = subprocess.run(["ip", "netns", "add", "versus-probe"], capture_output=True, text=True)
    subprocess.run(["ip", "netns", "delete", "versus-probe"], capture_output=True)
    if probe.returncode:
        return f"this machine cannot make network namespaces: {probe.stderr.strip()}"
    return None


def tmpdir():
    return tempfile.mkdtemp(prefix="versus-test-")


def run(args, timeout=120, env=None, launcher=None, check_rc=None):
    """Run versus-run (optionally under a launcher command list).  Returns CompletedProcess."""
    return run_cmd((launcher or []) + [RUNNER] + list(args), timeout, env, check_rc)


def run_cmd(cmd, timeout=120, env=None, check_rc=None):
    """Run cmd with env added to ours, logging it and its output; fail on a hang
    or, when check_rc is given, on another exit code.  Returns CompletedProcess."""
    e = dict(os.environ)
    if env:
        e.update(env)
    if "ASAN_OPTIONS" in e and os.path.basename(cmd[0]).startswith(("mpirun", "mpiexec", "srun")):
        # meson test --setup asan: under an MPI launcher the MPI stacks load and unload their own
        # components (UCX's transports among them), whose leaks reach the check with no module to
        # name; leak detection is off there (memory errors are still caught), and the same core
        # code is leak-checked under the modules versus-run's own launcher starts (docs/hardening.md)
        e["ASAN_OPTIONS"] += ":detect_leaks=0"
    log("$ " + " ".join(cmd))
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=timeout, env=e, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as ex:
        fail(f"command did not finish within {timeout} s (hang): {' '.join(cmd)}\n{ex.stdout}\n{ex.stderr}")
    log(f"rc={p.returncode}\n--- stdout\n{p.stdout}--- stderr\n{p.stderr}---")
    if check_rc is not None and p.returncode != check_rc:
        fail(f"expected exit code {check_rc}, got {p.returncode}")
    return p


def read_jsonl(path):
    """Parse every line; fail on any malformed line.  Returns (run, sizes, end_or_None)."""
    with open(path, encoding="utf-8") as f:
        lines = [ln for ln in f.read().split("\n") if ln.strip()]
    recs = []
    for i, ln in enumerate(lines, 1):
        try:
            recs.append(json.loads(ln))
        except json.JSONDecodeError as ex:
            fail(f"{path}:{i}: not JSON: {ex}")
    check(len(recs) >= 1 and recs[0].get("record") == "run", f"{path}: first record is 'run'")
    run_rec = recs[0]
    check(run_rec.get("schema") == 1, "schema version is 1")
    sizes = [r for r in recs[1:] if r.get("record") == "size"]
    ends = [r for r in recs if r.get("record") == "end"]
    check(len(ends) <= 1, "at most one end record")
    if ends:
        check(recs[-1].get("record") == "end", "end record is last")
    return run_rec, sizes, (ends[0] if ends else None)


def check_size_records(sizes, expect_bytes, iterations):
    got = [s["bytes"] for s in sizes]
    check(got == list(expect_bytes), f"size records for {list(expect_bytes)} (got {got})")
    for s in sizes:
        n = len(s["samples_ns"])
        check(n == iterations and s["iterations"] == n,
              f"{s['bytes']} B: {iterations} samples (got {n})")
        check(all(isinstance(v, int) and v > 0 for v in s["samples_ns"]),
              f"{s['bytes']} B: every sample is a positive integer")
        check(isinstance(s["batch"], int) and s["batch"] >= 1, f"{s['bytes']} B: batch >= 1")


def check_options_refused(args, cases, outdir):
    """Each (KEY=VALUE, word) of `cases`, added to versus-run `args` as a transport
    option, is a usage error: exit 2 with a message that names `word`."""
    for opt, word in cases:
        p = run(args + ["--transport-opt", opt, "--out", os.path.join(outdir, "refused.jsonl")], timeout=60)
        check(p.returncode == 2, f"{opt} exits 2 (got {p.returncode})")
        check(word in p.stderr, f"the message names {word}")


def pingpong_args(transport, variant, spec, iterations, iterations_large, warmup, warmup_large, out):
    """versus-run arguments for a ping-pong over `transport` of the sizes in `spec`, written to `out`."""
    return ["--transport", transport, "--pattern", "pingpong", "--variant", variant,
            "--sizes", spec, "--iterations", str(iterations), "--iterations-large", str(iterations_large),
            "--warmup", str(warmup), "--warmup-large", str(warmup_large),
            "--out", out, "--timeout", "60", "--quiet"]


def check_pingpong_run(out, transport, library, variant, sizes, iterations, iterations_large,
                       launcher=None, faster=(8, 1 << 20)):
    """Check what every two-rank ping-pong run must show and return (run, size records, medians).

    The JSONL at `out` ends with status ok after every size; it names two ranks,
    the variant (and the launcher when given), and the transport as `transport`
    from `library`; there is a record per size of `sizes`, in order, holding
    `iterations` samples (`iterations_large` from the run's large_from_bytes on);
    and of the two sizes in `faster` the first has the shorter median round trip
    (the samples measure moving data).
    """
    run_rec, recs, end = read_jsonl(out)
    check(end is not None and end.get("status") == "ok", "end record says ok")
    check(end["sizes_completed"] == len(sizes), "every size completed")
    check(run_rec["ranks"] == 2, "two ranks")
    check(run_rec["variant"] == variant, f"variant recorded as {variant}")
    if launcher is not None:
        check(run_rec["launcher"]["name"] == launcher,
              f"launcher recorded as {launcher} (got {run_rec['launcher']['name']})")
    check([s["bytes"] for s in recs] == list(sizes), f"sizes {list(sizes)} in order")
    large_from = run_rec["iterations"]["large_from_bytes"]
    for s in recs:
        check_size_records([s], [s["bytes"]], iterations_large if s["bytes"] >= large_from else iterations)
    tr = run_rec["transport"]
    check(tr["name"] == transport and tr["library"] == library,
          f"transport is {transport} / {library} (got {tr['name']} / {tr['library']})")
    med = {s["bytes"]: statistics.median(s["samples_ns"]) for s in recs}
    small, large = faster
    check(med[small] < med[large],
          f"{small} B round trip ({med[small]:.0f} ns) is faster than {large} B ({med[large]:.0f} ns)")
    return run_rec, recs, med
