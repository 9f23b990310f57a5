"""Shared steps of the ground-truth tests: a size sweep around a threshold set
from outside, one run of versus-run, `versus summary --json` on its output,
and the check that the transition was found near the set value and attributed
to the threshold the run record carries.
"""
import json
import os
import subprocess
import sys

import vstest as vt

try:
    import numpy  # noqa: F401  (the analysis package needs them)
    import scipy  # noqa: F401
except ImportError as ex:
    print(f"SKIP: the analysis package's dependencies are missing ({ex}); "
          "install them with: python3 -m venv .venv && .venv/bin/pip install -e 'reports[test]'", flush=True)
    sys.exit(vt.SKIP)

TOLERANCE = 0.05       # detected position within 5 % of the set threshold


def sweep(threshold, dense_step=0.015, sparse_step=0.10):
    """Sizes for a threshold T: a few small sizes, sparse from T/4 to T/2, dense
    (dense_step * T apart) from T/2 to 2T, sparse again up to 4T.  The dense part
    is wide so that the regimes on both sides are well fitted, not only the gap."""
    def stepped(lo, hi, step):
        step = max(int(round(step * threshold)), 1)
        return list(range(int(lo), int(hi), step))
    sizes = [8, 64, 512]
    sizes += stepped(threshold / 4, threshold / 2, sparse_step / 2)
    sizes += stepped(threshold / 2, 2 * threshold, dense_step)
    sizes += stepped(2 * threshold, 4 * threshold + 1, sparse_step)
    return sorted(set(sizes))


def run_sweep(tag, transport_args, threshold, env, launcher=None, iterations=30, rounds=5,
              timeout=150, order="interleaved", dense_step=0.015):
    """Run a ping-pong sweep around threshold, interleaved in rounds so that a
    burst of foreign load lands on every size a little, never on a block of
    neighbouring sizes (which would look like a step).  Returns the JSONL path."""
    d = vt.tmpdir()
    out = os.path.join(d, f"{tag}.jsonl")
    sizes = sweep(threshold, dense_step)
    args = list(transport_args) + [
        "--sizes", ",".join(str(s) for s in sizes),
        "--iterations", str(iterations), "--iterations-large", str(iterations),
        "--warmup", "20", "--warmup-large", "20",
        "--order", order, *(["--rounds", str(rounds)] if rounds > 1 else []),
        "--out", out, "--timeout", "60", "--quiet"]
    p = vt.run(args, env=env, launcher=launcher, timeout=timeout)
    vt.check(p.returncode == 0, f"{tag}: the sweep of {len(sizes)} sizes exits 0")
    return out


def summary(path):
    """`versus summary --json` of one file, through the command line."""
    cmd = [sys.executable, "-m", "versus", "summary", path, "--json"]
    vt.log("$ " + " ".join(cmd))
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=120, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        vt.fail("versus summary did not finish within 120 s")
    if p.returncode != 0:
        vt.fail(f"versus summary exits {p.returncode}: {p.stderr}")
    (run,) = json.loads(p.stdout)["runs"]
    return run


def show(run):
    for t in run["transitions"]:
        vt.log(f"  transition: {t['label']} [{t['kind']}, jump {t['jump_us']:+.3f} us]")
    for u in run["unmatched_thresholds"]:
        vt.log(f"  unmatched threshold: {u['name']} = {u['configured_bytes']}")


def check_detected(run, name, threshold, tolerance=TOLERANCE):
    """The run record carries threshold `name` = threshold, and a transition
    attributed to it lies within tolerance of it.  Returns that transition."""
    recorded = run["transport"]["thresholds"]
    vt.check(recorded.get(name) == threshold,
             f"the run record carries {name} = {threshold} (recorded {recorded})")
    show(run)
    mine = [t for t in run["transitions"] if name in (t.get("threshold_names") or [t.get("threshold")])]
    vt.check(len(mine) == 1, f"one transition is attributed to {name}")
    t = mine[0]
    vt.check(t["configured_bytes"] == threshold, f"it names the configured {threshold} B")
    err = abs(t["bytes"] - threshold) / threshold
    vt.check(err <= tolerance,
             f"{name}: detected at {t['bytes']} B, {100 * err:.1f} % from the set {threshold} B "
             f"(tolerance {100 * tolerance:.0f} %)")
    return t


def check_switch_shows(t, min_jump_us=0.3, min_slope_change=0.25):
    """The attributed switch changes the curve: as a step, by at least min_jump_us at the
    threshold (either way: UCX's rendezvous is dearer than eager there in most launches, cheaper
    in some); as a slope change (the lines meet inside the gap, so the jump there is ~0 by
    construction), by changing the time per byte by at least min_slope_change."""
    if t["kind"] == "step":
        vt.check(abs(t["jump_us"]) >= min_jump_us,
                 f"the switch moves the time at the threshold by at least {min_jump_us} us (jump "
                 f"{t['jump_us']:+.3f} us, {'dearer' if t['jump_us'] > 0 else 'cheaper'} above)")
    else:
        r = t.get("slope_ratio")
        vt.check(r is not None and (r <= 1 - min_slope_change or r >= 1 / (1 - min_slope_change)),
                 f"the switch changes the time per byte by at least {100 * min_slope_change:.0f} % "
                 f"(slope x{r})")
