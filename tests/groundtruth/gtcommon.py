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

from judged import Budget, Verdict, until_judged  # noqa: E402
from launchload import launch_load  # noqa: E402  (after the check: it needs the analysis package)

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


# A switch this large at the set threshold can be asked of the detector.  The gate's figure is a
# difference of the medians of five sizes a side (lower quartiles); the detector's jump is its
# model's step in the one gap: they differ (a CI launch: -0.328 us here, -0.250 us in the model).
# Gating at the check's own 0.3 us made a borderline launch a coin toss; half again above it
# (0.45) launches again instead (UCX over sm at 20000 B is ~0.9 us in most launches).
VISIBLE_US = 0.45
VISIBLE_P = 0.02       # ... when the sizes on its two sides differ this surely (5 against 5: one overlap at most)
VISIBLE_NEAR = 5       # sizes each side that decide it
LAUNCHES = 5           # quiet launches tried before the host is declared unable to show the switch
BUDGET_S = 150         # seconds for the launches (meson timeout 240: the summary and checks follow)


def switch_in_data(path, threshold, near=VISIBLE_NEAR):
    """What the data say of the switch when one knows where it is (the detector does not):
    the lower quartiles of the `near` sizes up to the set threshold against the `near` sizes
    above it (one-way us), their difference of medians and a Mann-Whitney p.  On this kind
    of host a launch now and then runs with eager as dear as rendezvous (both ~4 us at 12 KB
    where eager is ~1 us in most launches): the switch is then not in the data, and no
    detector can be asked to find it.  Returns (difference, p)."""
    import numpy as np
    from scipy import stats
    from versus import load, samples
    (run,) = load.load_file(path)
    q = {b: float(np.percentile(x, 25)) / 1e3 for b, x in samples.reported(run).items()}
    below = [q[b] for b in sorted(q) if b <= threshold][-near:]
    above = [q[b] for b in sorted(q) if b > threshold][:near]
    diff = float(np.median(above) - np.median(below))
    return diff, float(stats.mannwhitneyu(above, below).pvalue)


def run_visible_sweep(tag, transport_args, threshold, env, launcher=None, launches=LAUNCHES, budget_s=BUDGET_S):
    """run_sweep until a launch on a quiet host shows the switch (switch_in_data: at least
    VISIBLE_US either way with p <= VISIBLE_P), at most `launches` quiet launches; fails when
    none does.  The detector is then checked on that launch with every check, none relaxed.
    A launch versus-run recorded as loaded is not judged and does not count: beside a CPU-bound
    process one UCX launch showed the switch (p = 0.008) and the detector then placed it 5.5 %
    off, the host's waits moving the sizes around it.  Loaded launches are replaced until the
    budget (budget_s seconds, tests/lib/judged.py) cannot hold another; then the test exits 77
    with every launch's figures and loads."""
    found = []

    def launch(i):
        out = run_sweep(f"{tag}-{i + 1}", transport_args, threshold, env, launcher=launcher)
        diff, p = switch_in_data(out, threshold)
        shows = abs(diff) >= VISIBLE_US and p <= VISIBLE_P
        return (out, diff, p, shows), launch_load(out)

    def judge(quiet):
        shown = [q for q in quiet if q[3]]
        words = (f"{len(shown)} of {len(quiet)} quiet launches show the switch at {threshold} B (the {VISIBLE_NEAR} "
                 f"sizes above it against the {VISIBLE_NEAR} up to it: at least {VISIBLE_US} us with p <= {VISIBLE_P})")
        if shown:
            found.append(shown[0][0])
            return Verdict("pass", words)
        if len(quiet) >= launches:
            return Verdict("fail", words)
        return Verdict("undecided", words, f"a quiet launch that shows it, of {launches} at most")

    def show(v):
        return (f"{v[1]:+.3f} us, p = {v[2]:.4f} "
                f"({'the switch is in the data' if v[3] else 'not a visible switch'})")

    o = until_judged(f"the switch at {threshold} B in the data", launch, judge, Budget(budget_s), 1, show)
    if o.state == "skip":
        print(f"SKIP: the host stayed loaded, so the detection of the switch at {threshold} B cannot be "
              f"judged: {o.text()}", flush=True)
        sys.exit(vt.SKIP)
    if o.state == "fail":
        vt.fail(f"the switch at {threshold} B did not show in the data of {launches} launches on a quiet host "
                f"(at least {VISIBLE_US} us with p <= {VISIBLE_P}): this host cannot test its detection now; "
                + o.text())
    return found[0]


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
