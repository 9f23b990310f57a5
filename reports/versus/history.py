"""The results store: every run indexed by date, hosts, transport, library version and
configuration in an SQLite database, and a metric over time per configuration with its
change points.

JSONL stays the raw truth: the store keeps per run and size only the median and the
sample count, and `versus history rebuild` makes it again from the files.  A
configuration over time is the configuration of load.configuration_key plus the host
names (the same setting on another system is another history); the library version is
not part of it, so that an upgrade shows as a point on the series, not a new series.

Change points: ruptures' PELT on the log of the per-run medians with the absolute-deviation
cost (l1: one run slowed by a noisy host does not pay for a segment of its own, as it does
with least squares), each segment at least MIN_SEGMENT runs, and a penalty of
PENALTY_FACTOR sigma ln n per change, sigma the noise of the series estimated robustly from
its successive differences.  bench/history_false_alarms.py measures how often a series
without a step gets one marked, and how often a step is found (docs/history.md).
"""
from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import numpy as np

from . import samples
from .argtypes import message_size
from .load import InputError, Run, configuration_key, load_file

DEFAULT_DB = "versus-history.sqlite"
MIN_SEGMENT = 3
PENALTY_FACTOR = 4.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL,
  launch_id INTEGER NOT NULL,
  source TEXT NOT NULL,
  start_time TEXT NOT NULL,
  hosts TEXT NOT NULL,
  transport TEXT NOT NULL,
  provider TEXT NOT NULL,
  library TEXT NOT NULL,
  library_version TEXT NOT NULL,
  pattern TEXT NOT NULL,
  label TEXT NOT NULL,
  config TEXT NOT NULL,
  status TEXT NOT NULL,
  UNIQUE (run_id, launch_id, label)
);
CREATE TABLE IF NOT EXISTS sizes (
  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  bytes INTEGER NOT NULL,
  median_ns REAL NOT NULL,
  samples INTEGER NOT NULL,
  PRIMARY KEY (run, bytes)
);
CREATE INDEX IF NOT EXISTS runs_config ON runs(config, start_time);
"""


def store_error(db: str, ex: sqlite3.Error) -> InputError:
    """One line for an SQLite error on the store: busy (another process holds its lock),
    damaged (rebuild it from the JSONL files), or not a store."""
    words = " ".join(str(ex).split())
    if "locked" in words or "busy" in words:
        return InputError(f"--db {db}: the history store is in use by another process ({words}); try again "
                          "when it is done")
    if isinstance(ex, sqlite3.DatabaseError) and ("malformed" in words or "corrupt" in words):
        return InputError(f"--db {db}: the history store is damaged ({words}); make it again from the JSONL "
                          f"files: versus history rebuild RESULTS_DIR --db {db}")
    return InputError(f"--db {db}: cannot open it as a history store ({words}); give a writable path "
                      "for a new one or an existing store")


def connect(db: str) -> sqlite3.Connection:
    """The store, its tables made if missing; a damaged one is refused (quick_check reads every
    page, a few ms for a store of thousands of runs)."""
    con = None
    try:
        con = sqlite3.connect(db)
        con.executescript(SCHEMA)
        problems = [" ".join(str(r[0]).split()) for r in con.execute("PRAGMA quick_check").fetchmany(3)]
        if problems != ["ok"]:
            con.close()
            raise InputError(f"--db {db}: the history store is damaged ({'; '.join(problems)[:200]}); make it "
                             f"again from the JSONL files: versus history rebuild RESULTS_DIR --db {db}")
    except sqlite3.Error as ex:
        if con is not None:
            con.close()
        raise store_error(db, ex) from None
    return con


def history_key(run: Run) -> str:
    hosts = sorted({str(h) for h in run.record.get("hosts") or []})
    return json.dumps([list(map(lambda v: v if isinstance(v, (str, int, type(None))) else str(v),
                                configuration_key(run))), hosts])


def add_run(con: sqlite3.Connection, run: Run) -> bool:
    """Index one run; False when it is already there (same run, launch and label)."""
    if run.imported is not None:
        raise InputError(f"{run.source}: an imported run has no samples; the history keeps measured runs")
    rec, t = run.record, run.transport
    start = rec.get("start_time")
    if not isinstance(start, str) or not start:
        raise InputError(f"{run.source}: the run record has no start_time; the history orders runs by it")
    cur = con.execute(
        "INSERT OR IGNORE INTO runs (run_id, launch_id, source, start_time, hosts, transport, provider, library, "
        "library_version, pattern, label, config, status) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (str(rec.get("run_id", "")), run.launch_id, str(Path(run.source).resolve()), start,
         json.dumps(sorted({str(h) for h in rec.get("hosts") or []})), str(t.get("name", "")),
         str(t.get("provider") or ""), str(t.get("library") or ""), str(t.get("version") or ""),
         run.pattern, run.label, history_key(run), run.status))
    if cur.rowcount == 0:
        return False
    rid = cur.lastrowid
    con.executemany("INSERT INTO sizes (run, bytes, median_ns, samples) VALUES (?,?,?,?)",
                    [(rid, int(b), float(np.median(x)), int(x.size)) for b, x in samples.reported(run).items()])
    return True


def add_files(db: str, paths: list[str]) -> tuple[int, int]:
    runs = [r for p in paths for r in load_file(p)]
    con = connect(db)
    try:
        with con:
            added = sum(add_run(con, r) for r in runs)
    except sqlite3.Error as ex:
        raise store_error(db, ex) from None
    finally:
        con.close()
    return added, len(runs)


def rebuild(db: str, paths: list[str]) -> tuple[int, int]:
    """A new store from the JSONL files (the raw truth): files given or found under directories."""
    files: list[str] = []
    for p in paths:
        q = Path(p)
        if q.is_dir():
            files += sorted(str(f) for f in q.rglob("*.jsonl"))
        else:
            files.append(p)
    if not files:
        raise InputError(f"no .jsonl files in {', '.join(paths)}")
    target = Path(db)
    tmp = target.with_name(target.name + ".rebuild")
    tmp.unlink(missing_ok=True)
    con = connect(str(tmp))
    added = total = 0
    skipped = []
    try:
        with con:
            for f in files:
                try:
                    runs = load_file(f)
                except InputError as ex:
                    skipped.append(str(ex))
                    continue
                for r in runs:
                    if r.imported is None:
                        total += 1
                        added += add_run(con, r)
    except sqlite3.Error as ex:
        con.close()
        tmp.unlink(missing_ok=True)
        raise store_error(str(tmp), ex) from None
    con.close()
    for s in skipped:
        print(f"versus history rebuild: skipped {s}")
    if total == 0 and target.exists():
        # nothing usable read: keep the store as it is rather than replace it with an empty one
        tmp.unlink(missing_ok=True)
        raise InputError(f"no usable run in {', '.join(paths)} ({len(skipped)} file(s) skipped): "
                         f"{db} left as it was")
    tmp.replace(target)
    return added, total


def change_points(values: list[float]) -> list[int]:
    """Indexes where a new segment starts (ruptures PELT, see the module's docstring)."""
    import ruptures
    y = np.log(np.asarray(values, dtype=np.float64))
    n = y.size
    if n < 2 * MIN_SEGMENT:
        return []
    d = np.diff(y)
    sigma = 1.4826 * float(np.median(np.abs(d - np.median(d)))) / math.sqrt(2)
    sigma = max(sigma, 1e-4)
    pen = PENALTY_FACTOR * sigma * math.log(n)
    bkps = ruptures.Pelt(model="l1", min_size=MIN_SEGMENT, jump=1).fit(y.reshape(-1, 1)).predict(pen=pen)
    return [b for b in bkps if b < n]


def series(db: str, nbytes: int | None = None, metric: str = "latency") -> list[dict]:
    """Per configuration: its runs in time order with the metric at one size (default: the
    smallest size every run has), the library versions, and the change points."""
    if not Path(db).exists():
        raise InputError(f"--db {db}: no history store there; add runs with versus history add RESULTS --db {db}")
    con = connect(db)
    try:
        return _series(con, nbytes, metric)
    except sqlite3.Error as ex:
        raise store_error(db, ex) from None
    except (ValueError, TypeError) as ex:     # a row versus did not write (edited by hand)
        raise InputError(f"--db {db}: the history store holds a value versus did not write ({ex}); make it again "
                         f"from the JSONL files: versus history rebuild RESULTS_DIR --db {db}") from None
    finally:
        con.close()


def _series(con: sqlite3.Connection, nbytes: int | None, metric: str) -> list[dict]:
    out = []
    for (config,) in con.execute("SELECT DISTINCT config FROM runs ORDER BY config").fetchall():
        rows = con.execute("SELECT id, start_time, label, hosts, library, library_version, source, status "
                           "FROM runs WHERE config = ? AND status = 'ok' ORDER BY start_time, id",
                           (config,)).fetchall()
        if not rows:
            continue
        sizes = [set(b for (b,) in con.execute("SELECT bytes FROM sizes WHERE run = ?", (r[0],))) for r in rows]
        common = set.intersection(*sizes) if sizes else set()
        b = nbytes if nbytes is not None else (min(common) if common else None)
        if b is None or b not in common:
            continue
        pts = []
        for r in rows:
            (med,) = con.execute("SELECT median_ns FROM sizes WHERE run = ? AND bytes = ?", (r[0], b)).fetchone()
            value = med / 1e3 if metric == "latency" else (b / med * 1e3 if med > 0 else float("nan"))
            pts.append({"date": r[1], "value": value, "library": r[4], "version": r[5], "source": r[6]})
        cps = change_points([p["value"] for p in pts]) if all(p["value"] > 0 for p in pts) else []
        changes = []
        for c in cps:
            before = np.median([p["value"] for p in pts[max(0, c - MIN_SEGMENT):c]])
            after = np.median([p["value"] for p in pts[c:c + MIN_SEGMENT]])
            changes.append({"index": c, "date": pts[c]["date"], "before": float(before), "after": float(after),
                            "change_pct": float((after / before - 1) * 100),
                            "version_changed": pts[c]["version"] != pts[c - 1]["version"]})
        out.append({"label": rows[0][2], "hosts": json.loads(rows[0][3]), "bytes": b, "metric": metric,
                    "unit": "us" if metric == "latency" else "MB/s", "points": pts, "changes": changes})
    return out


def format_series(doc: list[dict]) -> str:
    if not doc:
        return "no configuration with complete runs at that size in the store"
    out = []
    for s in doc:
        out.append(f"{s['label']} on {', '.join(s['hosts']) or '?'}: {s['metric']} at {s['bytes']} B "
                   f"({s['unit']}), {len(s['points'])} runs")
        marks = {c["index"]: c for c in s["changes"]}
        for k, p in enumerate(s["points"]):
            c = marks.get(k)
            note = (f"  <- change point: {c['change_pct']:+.1f}% (median of {MIN_SEGMENT} runs each side)"
                    + (", library version changed" if c["version_changed"] else "")) if c else ""
            out.append(f"  {p['date']}  {p['value']:10.3f}  {p['library']} {p['version']}{note}")
        if not s["changes"]:
            out.append("  no change point")
    return "\n".join(out)


def add_parser(sub) -> None:
    h = sub.add_parser("history", help="a results store over time: add runs, show a metric with change points",
                       description="Index runs in an SQLite store (JSONL stays the raw truth) and show a metric "
                                   "over time per configuration, with change points (ruptures, PELT).")
    hs = h.add_subparsers(dest="history_command", metavar="ACTION")
    a = hs.add_parser("add", help="index result files")
    a.add_argument("results", nargs="+", metavar="RESULTS.jsonl")
    a.add_argument("--db", default=DEFAULT_DB, help=f"the store (default {DEFAULT_DB})")
    a.set_defaults(func=_cmd_add)
    r = hs.add_parser("rebuild", help="make the store again from JSONL files or directories")
    r.add_argument("paths", nargs="+", metavar="FILE|DIR")
    r.add_argument("--db", default=DEFAULT_DB)
    r.set_defaults(func=_cmd_rebuild)
    s = hs.add_parser("show", help="a metric over time per configuration, with change points")
    s.add_argument("--db", default=DEFAULT_DB)
    s.add_argument("--bytes", type=message_size, default=None, metavar="SIZE",
                   help="message size: 8, 1K, 64KiB, 1M (as versus-run reads sizes; default: the smallest "
                        "every run has)")
    s.add_argument("--metric", choices=["latency", "bandwidth"], default="latency")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=_cmd_show)
    h.set_defaults(func=lambda a: (h.print_help(), 2)[1])


def _cmd_add(args) -> int:
    added, total = add_files(args.db, args.results)
    print(f"versus history: {added} of {total} run(s) added to {args.db}"
          + (f" ({total - added} already there)" if added < total else ""))
    return 0


def _cmd_rebuild(args) -> int:
    added, total = rebuild(args.db, args.paths)
    print(f"versus history: {args.db} rebuilt from {total} run(s) ({added} indexed)")
    return 0


def _cmd_show(args) -> int:
    from .export import dumps
    doc = series(args.db, args.bytes, args.metric)
    print(dumps(doc) if args.json else format_series(doc))
    return 0
