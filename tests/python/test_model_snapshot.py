"""The report model of the example results is the same as the snapshot taken
before the sample view (samples.py) and the vectorised exports replaced the
per-consumer pooling: every number within 1e-9 relative, every text equal.
Regenerate with tests/python/model_snapshot.py only when a change of the
report is meant, and say so in the commit."""
import json
import math
import os

from model_snapshot import HERE, models


def differences(a, b, path="", out=None):
    out = [] if out is None else out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}/{k}: only in {'snapshot' if k in a else 'model'}")
            else:
                differences(a[k], b[k], f"{path}/{k}", out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items in the snapshot, {len(b)} now")
        for i, (x, y) in enumerate(zip(a, b)):
            differences(x, y, f"{path}[{i}]", out)
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        if not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12):
            out.append(f"{path}: {a} in the snapshot, {b} now")
    elif a != b:
        out.append(f"{path}: {a!r} in the snapshot, {b!r} now")
    return out


def test_the_report_model_of_the_examples_is_unchanged():
    with open(os.path.join(HERE, "data", "model-snapshot.json"), encoding="utf-8") as f:
        snap = json.load(f)
    now = json.loads(json.dumps(models()))
    diff = differences(snap, now)
    assert not diff, f"{len(diff)} differences, first: " + "\n".join(diff[:15])
