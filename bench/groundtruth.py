#!/usr/bin/env python3
"""Ground truth table: thresholds set from outside vs what `versus summary`
detects, several runs each.

usage (from a configured build, with the analysis package's venv):
  VERSUS_RUN=BUILD/core/versus-run VERSUS_MODULE_PATH=BUILD/transports \\
  VERSUS_BUILT_MODULES=ucx,openmpi,ofi .venv/bin/python bench/groundtruth.py [--runs 3]

Each row: the library setting, the set value, and per run the detected
position (first size of the new regime), its distance from the set value and
its kind ("-" when no transition took the threshold's name), and how many
transitions of the run nothing explains ("u=N").  Sweeps are interleaved in 5
rounds of 6 samples per size (the ground-truth tests' shape); --sequential adds
Open MPI's limit as fine sequential sweeps (0.5 % steps, 100 samples, one visit).
"""
import argparse
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [os.path.join(ROOT, "tests", "lib"), os.path.join(ROOT, "tests", "groundtruth"),
                os.path.join(ROOT, "reports")]
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")

import gtcommon as gt  # noqa: E402

CASES = [
    ("UCX_RNDV_THRESH", "ucx", "rndv_thresh", 12000, None,
     ["--transport", "ucx", "--launch", "local", "-n", "2"],
     lambda t: {"UCX_RNDV_THRESH": str(t), "UCX_TLS": "sm", "UCX_WARN_UNUSED_ENV_VARS": "n"}, 30),
    ("UCX_RNDV_THRESH", "ucx", "rndv_thresh", 20000, None,
     ["--transport", "ucx", "--launch", "local", "-n", "2"],
     lambda t: {"UCX_RNDV_THRESH": str(t), "UCX_TLS": "sm", "UCX_WARN_UNUSED_ENV_VARS": "n"}, 30),
    ("btl_vader_eager_limit", "openmpi", "btl_vader_eager_limit", 6000,
     ["mpirun.openmpi", "--oversubscribe", "-np", "2"], ["--transport", "openmpi"],
     lambda t: {"OMPI_MCA_btl_vader_eager_limit": str(t), "OMPI_MCA_btl": "self,vader",
                "OMPI_MCA_pml": "ob1"}, 30),
    ("FI_OFI_RXM_BUFFER_SIZE", "ofi", "eager_limit", 10000, None,
     ["--transport", "ofi", "--transport-opt", "provider=tcp", "--launch", "local", "-n", "2"],
     lambda t: {"FI_OFI_RXM_BUFFER_SIZE": str(t), "FI_PROVIDER": "tcp;ofi_rxm"}, 20),
    ("UCX_RNDV_THRESH (MPICH)", "mpich", "UCX_RNDV_THRESH", 12000, ["mpiexec.mpich", "-n", "2"],
     ["--transport", "mpich"],
     lambda t: {"UCX_RNDV_THRESH": str(t), "UCX_TLS": "sm", "UCX_WARN_UNUSED_ENV_VARS": "n"}, 30),
]
SEQUENTIAL = ("btl_vader_eager_limit, sequential", "openmpi", "btl_vader_eager_limit", 6000,
              ["mpirun.openmpi", "--oversubscribe", "-np", "2"], ["--transport", "openmpi"],
              lambda t: {"OMPI_MCA_btl_vader_eager_limit": str(t), "OMPI_MCA_btl": "self,vader",
                         "OMPI_MCA_pml": "ob1"}, 100)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sequential", action="store_true", help="add fine sequential sweeps of Open MPI's limit")
    ap.add_argument("--keep", metavar="DIR", help="copy each sweep's JSONL into DIR to look at later")
    a = ap.parse_args()
    built = set(filter(None, os.environ.get("VERSUS_BUILT_MODULES", "").split(",")))
    rows = []
    named = total = unexplained = 0
    for case in CASES + ([SEQUENTIAL] if a.sequential else []):
        setting, module, name, value, launcher, args, env, iters = case
        seq = case is SEQUENTIAL
        if module not in built or (launcher and not shutil.which(launcher[0])):
            rows.append((setting, value, ["not built"]))
            continue
        cells = []
        for i in range(a.runs):
            path = gt.run_sweep(f"{module}-{value}-{i}", args, value, env(value), launcher=launcher,
                                iterations=iters, **({"rounds": 1, "order": "sequential", "dense_step": 0.005}
                                                     if seq else {}))
            run = gt.summary(path)
            mine = [t for t in run["transitions"] if name in (t.get("threshold_names") or [])]
            u = sum(t["label"].startswith("unexplained") for t in run["transitions"])
            total += 1
            unexplained += u
            if len(mine) == 1 and abs(mine[0]["bytes"] - value) <= gt.TOLERANCE * value:
                named += 1
            if mine:
                t = mine[0]
                cells.append(f"{t['bytes']} ({100 * (t['bytes'] - value) / value:+.1f} %, {t['kind']}) u={u}")
            else:
                cells.append("- (" + "; ".join(str(t["bytes"]) for t in run["transitions"]) + f") u={u}")
            if a.keep:
                os.makedirs(a.keep, exist_ok=True)
                shutil.copy(path, a.keep)
            shutil.rmtree(os.path.dirname(path), ignore_errors=True)
        rows.append((setting, value, cells))
    print(f"{'setting':24} {'set':>7}  detected per run (distance, kind)")
    for setting, value, cells in rows:
        print(f"{setting:24} {value:>7}  " + " | ".join(cells))
    print(f"found within {100 * gt.TOLERANCE:.0f} % and named in {named} of {total} runs; "
          f"{unexplained} unexplained transitions in all ({unexplained / max(total, 1):.1f} per run)")


if __name__ == "__main__":
    main()
