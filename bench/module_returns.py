#!/usr/bin/env python3
"""How often following the report's model back and forth between the analysis
modules returns to a file it has already left.

The model of the example results (tests/reports/data/example) is built with
`build_model`, each configuration given four times (copies of its file with
another run_id and its samples scaled: more launches, so that launch spreads,
speed classes and between-launch comparisons are followed too), in one process, under
sys.setprofile.  Every first call of a function of the `versus` package is
noted with the file it lives in; the files are listed in that order with
consecutive repeats merged, and a "return" is a file that appears again after
the path has left it.  Loops do not count (a function is noted once, on its
first call); only the order in which the code path visits the modules does.
Two counts: every function, and the functions a run is handed to (an argument
that is a Run, a list or tuple of them, or an object holding them in `runs`
or `pooled`): following a run.

    .venv/bin/python bench/module_returns.py [-v]
"""
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "reports"))

import versus  # noqa: E402
from versus import report  # noqa: E402
from versus.load import Run  # noqa: E402

PKG = os.path.dirname(os.path.abspath(versus.__file__)) + os.sep
EXAMPLE = os.path.join(ROOT, "tests", "reports", "data", "example")


def more_launches(src: str, dst: str, factors=(1.03, 2.4, 2.5)) -> None:
    """Copies of every result file of src, each another launch (run_id and launch_id
    changed) with its samples scaled by one of `factors`."""
    for k, f in enumerate(factors, 1):
        for name in sorted(os.listdir(src)):
            if not name.endswith(".jsonl"):
                continue
            lines = []
            for line in Path(src, name).read_text(encoding="utf-8").splitlines():
                rec = json.loads(line)
                if rec.get("record") == "run" and isinstance(rec.get("run_id"), str):
                    rec["run_id"] += f"-{k}"
                    rec["launch_id"] = k
                if rec.get("record") == "size":
                    rec["samples_ns"] = [int(round(v * f)) for v in rec["samples_ns"]]
                lines.append(json.dumps(rec))
            Path(dst, name.replace(".jsonl", f"-{k}.jsonl")).write_text("\n".join(lines) + "\n", encoding="utf-8")


def _runs(v) -> bool:
    return isinstance(v, Run) or (isinstance(v, (list, tuple)) and bool(v) and isinstance(v[0], Run))


def holds_run(v) -> bool:
    if _runs(v):
        return True
    held = getattr(type(v), "__dataclass_fields__", {})
    return ("pooled" in held and _runs(v.pooled)) or ("runs" in held and _runs(v.runs))


def trace(paths: list[str]) -> list[tuple[str, str, bool]]:
    """(file, function, handed a run) of every first call into the package while the model is built."""
    runs, entries, manifests = report.collect(paths)
    report.fork_map = lambda fn, n: [fn(i) for i in range(n)]     # one process: every call is seen
    seen, order = set(), []

    def prof(frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        if code in seen or not code.co_filename.startswith(PKG):
            return
        seen.add(code)
        names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        run = any(holds_run(frame.f_locals.get(n)) for n in names)
        order.append((code.co_filename[len(PKG):], code.co_name, run))

    with tempfile.TemporaryDirectory() as d:
        sys.setprofile(prof)
        try:
            report.build_model(runs, entries, manifests, Path(d))
        finally:
            sys.setprofile(None)
    return order


def returns(order: list[tuple[str, str, bool]]) -> tuple[list[str], list[str]]:
    path = []
    for f, _, _ in order:
        if not path or path[-1] != f:
            path.append(f)
    back, left = [], set()
    for i, f in enumerate(path):
        if f in left:
            back.append(f"{path[i - 1]} -> {f}")
        if i:
            left.add(path[i - 1])
    return path, back


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        more_launches(EXAMPLE, d)
        order = trace([EXAMPLE, d])
    for what, calls in (("every function", order), ("handed a run", [c for c in order if c[2]])):
        path, back = returns(calls)
        if "-v" in sys.argv[1:]:
            print(f"{what}: " + " -> ".join(path))
            for b in back:
                print("  return:", b)
        print(f"{what}: {len(calls)} functions, {len(set(c[0] for c in calls))} files, {len(path)} stretches, "
              f"{len(back)} returns to a file already left")


if __name__ == "__main__":
    main()
