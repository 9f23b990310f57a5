#!/usr/bin/env python3
"""The imposed-threshold sweeps of tests/groundtruth on a loaded host: is the threshold still
found and named, and how many transitions does the analysis report that nothing explains?

Each sweep is the ground-truth test's own (tests/groundtruth/gtcommon.py: 129 sizes from T/4 to
4T, interleaved, 5 rounds), run --launches times per configuration with --hogs CPU-bound
processes pinned on the ranks' CPUs (0 and 1).  Each file is analysed as `versus summary` does:
the threshold counts as found when a transition within 5 % of it is attributed to its name;
"unexplained" counts the reported transitions labelled so.  --keep DIR keeps the files, and
--analyse DIR re-analyses kept files only (to compare two versions of the analysis on the
same data).

usage: bench/loaded_transitions.py [--versus PATH] [--launches N] [--hogs N] [--keep DIR]
       bench/loaded_transitions.py --analyse DIR
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "groundtruth"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path.insert(0, os.path.join(ROOT, "reports"))
sys.path.insert(0, HERE)

from loaded_patterns import Hogs  # noqa: E402

LOCAL = ["--launch", "local", "-n", "2"]
# name: (threshold, the record's name for it, launcher, versus-run args, environment)
CONFIGS = {
    "ucx-tcp-12000": (12000, "rndv_thresh", [], ["--transport", "ucx"] + LOCAL,
                      {"UCX_RNDV_THRESH": "12000", "UCX_TLS": "tcp", "UCX_WARN_UNUSED_ENV_VARS": "n"}),
    "ucx-sm-20000": (20000, "rndv_thresh", [], ["--transport", "ucx"] + LOCAL,
                     {"UCX_RNDV_THRESH": "20000", "UCX_TLS": "sm", "UCX_WARN_UNUSED_ENV_VARS": "n"}),
    "openmpi-tcp-6000": (6000, "btl_tcp_eager_limit",
                         ["mpirun.openmpi", "--oversubscribe", "--bind-to", "none", "-np", "2"],
                         ["--transport", "openmpi"],
                         {"OMPI_MCA_btl_tcp_eager_limit": "6000", "OMPI_MCA_btl": "self,tcp", "OMPI_MCA_pml": "ob1"}),
    "ofi-rxm-10000": (10000, "rxm_buffer_size", [], ["--transport", "ofi", "--transport-opt", "provider=tcp"]
                      + LOCAL, {"FI_OFI_RXM_BUFFER_SIZE": "10000", "FI_PROVIDER": "tcp;ofi_rxm"}),
    "mpich-ucx-tcp-12000": (12000, "UCX_RNDV_THRESH", ["mpiexec.mpich", "-n", "2"], ["--transport", "mpich"],
                            {"UCX_RNDV_THRESH": "12000", "UCX_TLS": "tcp", "UCX_WARN_UNUSED_ENV_VARS": "n"}),
}


def sweep_args(threshold):
    import gtcommon
    sizes = gtcommon.sweep(threshold)
    return ["--sizes", ",".join(map(str, sizes)), "--iterations", "30", "--iterations-large", "30",
            "--warmup", "20", "--warmup-large", "20", "--order", "interleaved", "--rounds", "5",
            "--cpus", "0,1", "--timeout", "60", "--quiet"]


def run_one(versus, name, out):
    thr, _, launcher, base, env = CONFIGS[name]
    e = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **env)
    cmd = launcher + [versus] + base + sweep_args(thr) + ["--out", out]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=300, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return "timed out"
    return None if p.returncode == 0 else f"exit {p.returncode}: {p.stderr.strip()[-200:]}"


def analyse(path, name):
    from versus.analysis import summary_document
    from versus.load import load_file
    thr, key, *_ = CONFIGS[name]
    (run,) = load_file(path)
    d = summary_document([run])["runs"][0]
    found = any(key in (t.get("threshold_names") or [t.get("threshold")]) and abs(t["bytes"] - thr) <= 0.05 * thr
                for t in d["transitions"])
    une = [t for t in d["transitions"] if t["label"].startswith("unexplained")]
    return found, une, (d.get("host_load") or {}).get("waited")


def report(files):
    rows = {}
    for name, path in files:
        found, une, waited = analyse(path, name)
        rows.setdefault(name, []).append((found, len(une), waited))
        print(f"{name:22} {os.path.basename(path):28} found {'yes' if found else 'NO '}  unexplained {len(une)}"
              + (f"  (ranks waited {100 * waited:.0f} %)" if waited is not None else "")
              + "".join(f"\n    {t['label']} [{t['jump_us']:+.3f} us]" for t in une))
    total = sum(len(v) for v in rows.values())
    print(f"# {sum(f for v in rows.values() for f, _, _ in v)} of {total} sweeps found and named their threshold; "
          f"unexplained per sweep: " + ", ".join(f"{k}: {[u for _, u, _ in v]}" for k, v in rows.items())
          + f"; sweeps with more than one: {sum(u > 1 for v in rows.values() for _, u, _ in v)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--versus", default=shutil.which("versus-run") or "versus-run")
    ap.add_argument("--launches", type=int, default=4)
    ap.add_argument("--hogs", type=int, default=2)
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--keep", help="keep the sweeps' files here")
    ap.add_argument("--analyse", help="only analyse the files kept in this directory")
    a = ap.parse_args()
    if a.analyse:
        files = [(os.path.basename(f).rsplit("-", 1)[0], f) for f in sorted(glob.glob(os.path.join(a.analyse, "*.jsonl")))]
        report([(n, f) for n, f in files if n in CONFIGS])
        return 0
    names = [c for c in a.configs.split(",") if c]
    bad = [c for c in names if c not in CONFIGS]
    if bad:
        ap.error(f"unknown configuration(s) {bad}; known: {', '.join(CONFIGS)}")
    d = a.keep or tempfile.mkdtemp(prefix="versus-loaded-gt-")
    os.makedirs(d, exist_ok=True)
    files = []
    with Hogs(a.hogs):
        for i in range(a.launches):
            for name in names:
                out = os.path.join(d, f"{name}-{i}.jsonl")
                why = run_one(a.versus, name, out)
                if why:
                    print(f"{name} launch {i}: {why}")
                else:
                    files.append((name, out))
    print(f"# {len(files)} sweeps with {a.hogs} busy processes on CPUs 0,1; files in {d}")
    report(files)
    return 0


if __name__ == "__main__":
    sys.exit(main())
