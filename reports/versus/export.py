"""Plain-data export: JSON that never holds NaN, infinities or numpy types, and
every raw sample as one table (samples.parquet; samples.csv on request)."""
from __future__ import annotations

import json
import math

from .lazy import numpy as np


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


SAMPLE_COLUMNS = ["run_id", "config", "source", "transport", "provider", "options", "pattern", "variant",
                  "launch_id", "bytes", "batch", "sample_index", "sample_ns", "reported_ns", "reported_as"]


def _sample_table(run, config: str, source: str):
    """One run's samples as an Arrow table: a row per sample, the run's labels as
    dictionary columns (one value each), built from numpy arrays without a Python
    loop over samples."""
    import pyarrow as pa

    from .units import run_meaning
    sizes = run.sizes
    counts = np.array([s.samples_ns.size for s in sizes], dtype=np.int64)
    n = int(counts.sum())
    t, m = run.transport, run_meaning(run)

    def const(value):
        return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([str(value)]))
    ns = np.concatenate([s.samples_ns.astype(np.int64) for s in sizes]) if sizes else np.empty(0, np.int64)
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    cols = {
        "run_id": const(run.record.get("run_id", "")), "config": const(config), "source": const(source),
        "transport": const(t.get("name", "")), "provider": const(t.get("provider", "")),
        "options": const(";".join(f"{k}={v}" for k, v in (t.get("options") or {}).items())),
        "pattern": const(run.pattern), "variant": const(run.variant),
        "launch_id": pa.array(np.full(n, int(run.launch_id or 0), dtype=np.int64)),
        "bytes": pa.array(np.repeat([s.bytes for s in sizes], counts).astype(np.int64)),
        "batch": pa.array(np.repeat([s.batch for s in sizes], counts).astype(np.int64)),
        "sample_index": pa.array(np.arange(n, dtype=np.int64) - starts),
        "sample_ns": pa.array(ns), "reported_ns": pa.array(ns / m.divisor),
        "reported_as": const(m.time_label)}
    return pa.table({c: cols[c] for c in SAMPLE_COLUMNS})       # the documented order, one list of names


def write_samples(runs: list, configs: list[str], parquet_path, csv_path=None) -> int:
    """Every raw sample of `runs` (configs[i] names run i's configuration) to a Parquet file
    (zstd, one row group per run) and, when csv_path is given, a CSV file of the same rows.
    Returns the number of samples written."""
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq
    from pathlib import Path
    total = 0
    pw = cw = None
    schema = None
    try:
        for run, config in zip(runs, configs):
            tab = _sample_table(run, config, Path(run.source).name)
            total += tab.num_rows
            schema = tab.schema
            if pw is None:      # the label columns stay dictionary-encoded: written without a copy
                pw = pq.ParquetWriter(str(parquet_path), tab.schema, compression="zstd")
            pw.write_table(tab)
            if csv_path is not None:
                if cw is None:
                    cw = pacsv.CSVWriter(str(csv_path), tab.schema,
                                         write_options=pacsv.WriteOptions(quoting_style="needed"))
                cw.write_table(tab)
    finally:
        for w in (cw, pw):
            if w is not None:
                w.close()
    if schema is None:          # no runs: the columns alone
        import pyarrow as pa
        empty = pa.table({c: pa.array([], pa.string()) for c in SAMPLE_COLUMNS})
        pq.write_table(empty, str(parquet_path), compression="zstd")
        if csv_path is not None:
            Path(csv_path).write_text(",".join(f'"{c}"' for c in SAMPLE_COLUMNS) + "\n", encoding="utf-8")
    return total
