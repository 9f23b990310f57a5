#!/usr/bin/env python3
"""Ground truth table: thresholds set from outside vs what `versus summary`
detects, several runs each.

usage (from a configured build, with the analysis package's venv):
  VERSUS_RUN=BUILD/core/versus-run VERSUS_MODULE_PATH=BUILD/transports \\
  VERSUS_BUILT_MODULES=ucx,openmpi,ofi .venv/bin/python bench/groundtruth.py [--runs 3]

Each row: the library setting, the set value, and per run the detected
position (first size of the new regime), its distance from the set value and
the threshold it was attributed to ("-" when no transition was attributed).
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
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    built = set(filter(None, os.environ.get("VERSUS_BUILT_MODULES", "").split(",")))
    rows = []
    for setting, module, name, value, launcher, args, env, iters in CASES:
        if module not in built or (launcher and not shutil.which(launcher[0])):
            rows.append((setting, value, ["not built"]))
            continue
        cells = []
        for i in range(a.runs):
            path = gt.run_sweep(f"{module}-{value}-{i}", args, value, env(value), launcher=launcher,
                                iterations=iters)
            run = gt.summary(path)
            mine = [t for t in run["transitions"] if t.get("threshold") == name]
            if mine:
                t = mine[0]
                cells.append(f"{t['bytes']} ({100 * (t['bytes'] - value) / value:+.1f} %, {t['kind']})")
            else:
                cells.append("- (" + "; ".join(str(t["bytes"]) for t in run["transitions"]) + ")")
            shutil.rmtree(os.path.dirname(path), ignore_errors=True)
        rows.append((setting, value, cells))
    print(f"{'setting':24} {'set':>7}  detected per run (distance, kind)")
    for setting, value, cells in rows:
        print(f"{setting:24} {value:>7}  " + " | ".join(cells))


if __name__ == "__main__":
    main()
