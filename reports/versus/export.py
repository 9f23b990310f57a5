"""Plain-data export: JSON that never holds NaN, infinities or numpy types."""
from __future__ import annotations

import json
import math

import numpy as np


def jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [jsonable(v) for v in obj.tolist()]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        v = float(obj)
        return v if math.isfinite(v) else None
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj


def dumps(obj, indent: int | None = 1) -> str:
    return json.dumps(jsonable(obj), indent=indent, allow_nan=False)
