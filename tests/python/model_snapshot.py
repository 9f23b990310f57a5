#!/usr/bin/env python3
"""The report model of the example results as plain JSON, without what changes
from run to run (the time it was made, software versions) or is drawn (SVG, PDF
names): what test_model_snapshot.py compares against data/model-snapshot.json.

  python3 tests/python/model_snapshot.py [OUT.json]   # rewrite the snapshot
"""
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "reports"))

from versus.export import jsonable  # noqa: E402
from versus.report import build_model, collect  # noqa: E402

INPUTS = {
    "example campaign": [os.path.join(ROOT, "tests", "reports", "data", "example")],
    "example files": [os.path.join(HERE, "data", n) for n in
                      ("shm-pingpong.jsonl", "tcp-staircase.jsonl", "ucx-incomplete.jsonl")],
}
VOLATILE = {"generated", "svg", "pdf", "plot", "plots", "chart", "charts", "software", "source"}


def strip(obj):
    if isinstance(obj, dict):
        return {k: strip(v) for k, v in obj.items() if k not in VOLATILE}
    if isinstance(obj, list):
        return [strip(v) for v in obj]
    if isinstance(obj, str) and os.sep in obj and ROOT in obj:
        return os.path.relpath(obj, ROOT)
    return obj


def models() -> dict:
    out = {}
    for name, paths in INPUTS.items():
        runs, entries, manifests = collect(paths)
        with tempfile.TemporaryDirectory() as d:
            out[name] = strip(jsonable(build_model(runs, entries, manifests, Path(d))))
    return out


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "data", "model-snapshot.json")
    Path(path).write_text(json.dumps(models(), indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {path}")
