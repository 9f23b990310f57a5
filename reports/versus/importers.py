"""Other tools' text output as versus records: `versus import FILE --format F`.

Each tool prints one statistic per size (OSU's mean, IMB's t, NetPIPE's best trial,
ucx_perftest's percentile and means, fi_pingpong's mean) and keeps no samples.  An
imported file is a versus JSONL file whose run record carries `imported` (the tool,
its version, the command line when the file has it, the statistic it printed, the
unit conversions made and what is not known) and whose figures are `summary`
records: one per size, the one-way time in ns and the bandwidth in MB/s (10^6 bytes
per second) as the tool printed them, converted.  No confidence interval can be
computed from them; docs/history.md says what can and cannot be inferred.

Conversions made here, each recorded in the run record:
  OSU          latency in us, one way (half the mean round trip); MB/s = 10^6 B/s
  IMB          t[usec] one way (half the round trip) for PingPong; Mbytes/sec =
               10^6 B/s from IMB 2018 on, 2^20 B/s before (by the version in the header)
  NetPIPE      time one way (half the round trip) of the best of its trials; Mbps =
               2^20 bit/s
  ucx_perftest overhead in us, one way for *_lat tests; bandwidth in MiB/s (2^20 B/s)
  fi_pingpong  usec/xfer one way (a round trip is two transfers); MB/sec = 10^6 B/s;
               sizes printed with k/m/g suffixes in powers of 1024, counts in powers of 1000
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from .load import SEAL_KEY, InputError, read_input, seal_line, write_atomically

FORMATS = ("osu", "imb", "netpipe", "ucx_perftest", "fi_pingpong")
MIB = 1048576.0


@dataclass
class Imported:
    """One imported run: a tool's table for one test."""
    fmt: str
    tool: str
    test: str                       # the tool's name of the test (osu_latency, PingPong, tag_lat, ...)
    pattern: str                    # the versus pattern it corresponds to: pingpong or stream
    statistic: str                  # what the tool's primary figure is
    version: str | None = None
    command: str | None = None
    conversions: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    rows: list[dict] = field(default_factory=list)   # bytes, one_way_ns and/or bandwidth_MBps, extras
    library: str | None = None


def _command(lines: list[str]) -> str | None:
    """The command line a user kept above the output ('$ cmd ...'), if any."""
    return next((ln.strip()[2:].strip() for ln in lines if ln.strip().startswith("$ ")), None)


NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _num(s: str, where: str) -> float:
    """A finite decimal number as the tools print them; 'inf', 'nan', hex and the like refused."""
    if not NUMBER.fullmatch(s):
        raise InputError(f"{where}: {s!r} is not a number")
    v = float(s)
    if not math.isfinite(v):
        raise InputError(f"{where}: {s!r} is out of range")
    return v


def _size(s: str, where: str) -> int:
    """A message size: a whole number of bytes, 0 or more."""
    if not re.fullmatch(r"\d{1,15}", s):
        raise InputError(f"{where}: {s!r} is not a message size (a whole number of bytes)")
    return int(s)


# the unit in a column header's parentheses, to ns (times) or to MB/s = 10^6 B/s (rates)
TIME_UNITS = {"ns": 1.0, "us": 1e3, "usec": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "msec": 1e6, "s": 1e9, "sec": 1e9}
# bytes whatever the case of the prefix ("MB/s", "mb/s"); a lower-case b after an upper-case or k prefix
# is bits (OSU's --units, iperf: "Mb/s"), matched first and case-sensitively
RATE_BITS = {"Mb/s": 0.125, "Gb/s": 125.0, "kb/s": 1.25e-4, "Kb/s": 1.25e-4, "Mbit/s": 0.125, "Gbit/s": 125.0}
RATE_UNITS = {"mb/s": 1.0, "mbytes/sec": 1.0, "mb/sec": 1.0, "gb/s": 1e3, "kb/s": 1e-3, "b/s": 1e-6,
              "mib/s": 1.048576, "gib/s": 1073.741824, "kib/s": 1.024e-3}


def _unit(header: str) -> str | None:
    m = re.search(r"\(([^()]*)\)\s*$", header)
    return m.group(1).strip() if m else None


def _time_factor(header: str, default: str, where: str) -> tuple[float, str]:
    u = _unit(header) or default
    f = TIME_UNITS.get(u if u in TIME_UNITS else u.lower())
    if f is None:
        raise InputError(f"{where}: column {header!r}: unit {u!r} is not a time versus knows "
                         f"({', '.join(TIME_UNITS)})")
    return f, u


def _rate_factor(header: str, default: str, where: str) -> tuple[float, str]:
    u = _unit(header) or default
    f = RATE_BITS.get(u) or RATE_UNITS.get(u.lower())
    if f is None:
        raise InputError(f"{where}: column {header!r}: unit {u!r} is not a rate versus knows "
                         f"(MB/s, Mb/s, GB/s, MiB/s, ...)")
    return f, u


def _bytes_with_suffix(s: str, where: str, base: int = 1024) -> int:
    """fi_pingpong's sizes: 64, 1k, 1.5k, 4m (powers of 1024); its counts (base 1000): 1k = 1000."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgG]?)", s)
    if not m:
        raise InputError(f"{where}: {s!r} is not a size")
    mult = {"": 1, "k": base, "m": base ** 2, "g": base ** 3}[m.group(2).lower()]
    return int(round(float(m.group(1)) * mult))


# --- OSU -------------------------------------------------------------------------------

OSU_TITLE = re.compile(r"^#\s*OSU MPI(?:-\w+)?\s+(.+?)\s+Test(?:\s+v?([\d.]+))?\s*$", re.I)
OSU_TESTS = {   # title -> (test, pattern, statistic of the primary column)
    "latency": ("osu_latency", "pingpong", "mean"),
    "bandwidth": ("osu_bw", "stream", "rate over the timed loop"),
    "bi-directional bandwidth": ("osu_bibw", "bistream", "rate over the timed loop"),
}


def parse_osu(text: str, name: str) -> list[Imported]:
    lines = text.splitlines()
    title = next(((i, OSU_TITLE.match(ln)) for i, ln in enumerate(lines) if OSU_TITLE.match(ln)), None)
    if title is None:
        raise InputError(f"{name}: no '# OSU MPI ... Test vX' title line: not an OSU benchmark's output")
    i0, m = title
    what, version = m.group(1).strip().lower(), m.group(2)
    if what not in OSU_TESTS:
        raise InputError(f"{name}:{i0 + 1}: OSU's {m.group(1)!r} test has no versus pattern; "
                         f"importable: {', '.join(t for t, _, _ in OSU_TESTS.values())}")
    test, pattern, stat = OSU_TESTS[what]
    imp = Imported("osu", "OSU Micro-Benchmarks", test, pattern, stat, version, _command(lines))
    header = None
    for j, ln in enumerate(lines[i0 + 1:], i0 + 2):
        s = ln.strip()
        if not s:
            continue
        if s.startswith("#"):
            body = s.lstrip("#").strip()
            if OSU_TITLE.match(s) or (body.lower().startswith("size") and imp.rows):
                raise InputError(f"{name}:{j}: a second OSU table in one file: import each table from its own file")
            if body.lower().startswith("size"):
                raw = [h.strip() for h in re.split(r"\s{2,}", body)]
                header = [h.lower() for h in raw]
                factors = {}
                for h, r in zip(header[1:], raw[1:]):
                    if "lat" in h:
                        factors[h] = _time_factor(r, "us", f"{name}:{j}")
                    elif "/s" in h or "bandwidth" in h:
                        factors[h] = _rate_factor(r, "MB/s", f"{name}:{j}")
                units = sorted({f"{u}" for _, u in factors.values()})
                if any(u not in ("us", "MB/s") for u in units):
                    imp.conversions.append("units from the header: " + ", ".join(
                        f"{h} x{f:g}" for h, (f, u) in factors.items()))
            elif body.lower().startswith("datatype"):
                imp.conversions.append(f"datatype: {body.split(':', 1)[1].strip().rstrip('.')}")
            continue
        if header is None:
            raise InputError(f"{name}:{j}: a figure before the '# Size ...' header line")
        cols = s.split()
        if len(cols) != len(header):
            raise InputError(f"{name}:{j}: {len(cols)} columns where the header names {len(header)} "
                             f"({', '.join(header)})")
        row: dict = {"bytes": _size(cols[0], f"{name}:{j}")}
        for h, v in zip(header[1:], cols[1:]):
            if h == "validation":     # OSU 7's -c/--validation: the received data checked, per size
                if v.lower() not in ("pass", "fail"):
                    raise InputError(f"{name}:{j}: {v!r} in the Validation column: OSU prints Pass or Fail")
                row["valid"] = v.lower() == "pass"
                continue
            x = _num(v, f"{name}:{j}")
            if "lat" in h:     # Latency (us), Avg Latency(us), P50 Tail Lat(us), Min/Max Latency(us)
                if x <= 0:
                    raise InputError(f"{name}:{j}: a latency of {v!r}: a time must be above 0")
                key = ("one_way_ns" if h.startswith(("latency", "avg")) else
                       h.split()[0].replace("%", "") + "_one_way_ns")
                row[key] = x * factors[h][0]
            elif h in factors:
                if x < 0:
                    raise InputError(f"{name}:{j}: a bandwidth of {v!r}: a rate cannot be below 0")
                row["bandwidth_MBps"] = x * factors[h][0]
            elif h.startswith("iterations"):
                row["iterations"] = int(x)
            else:
                row[h] = x
        imp.rows.append(row)
    if header is None or not imp.rows:
        raise InputError(f"{name}: an OSU title but no table under it (cut short?)")
    if version is None:
        imp.unknown.append("the OSU version (the title line carries none: built without it)")
    if header and "validation" in header:
        bad = [r["bytes"] for r in imp.rows if r.get("valid") is False]
        imp.conversions.append("Validation column (OSU's -c/--validation, the received data checked): Pass/Fail "
                               "kept per size as valid true/false" + (f"; Fail at {', '.join(map(str, bad))} B"
                                                                      if bad else ""))
    if pattern == "pingpong":
        imp.conversions.append("latency: us, one way (OSU prints half the mean round trip)")
    else:
        imp.conversions.append("bandwidth: MB/s as 10^6 B/s (OSU divides by 1e6)")
        imp.unknown.append("the window size (64 messages unless the command line says otherwise)")
    if not any("iterations" in r for r in imp.rows):
        imp.unknown.append("iterations per size (OSU's defaults: 10,000 below 8 KiB, 1,000 from it; "
                           "the command line may have changed them)")
    imp.unknown += ["the library and its version", "the placement of the ranks", "the hosts"]
    return [imp]


# --- IMB -------------------------------------------------------------------------------

IMB_VERSION = re.compile(r"Intel\s*\(R\)\s*MPI\s+Benchmarks\s+([\d.]+)", re.I)
IMB_BENCH = re.compile(r"^#\s*Benchmarking\s+(\S+)")
IMB_PATTERNS = {"PingPong": "pingpong"}


def _imb_mega(version: str | None) -> tuple[float, str]:
    """IMB's Mbytes/sec in B/s: 10^6 from IMB 2018 on, 2^20 before."""
    try:
        major = int(str(version).split(".")[0])
    except ValueError:
        major = 0
    if major >= 2018:
        return 1e6, "Mbytes/sec as 10^6 B/s (IMB 2018 and later)"
    if version:
        return MIB, f"Mbytes/sec as 2^20 B/s (IMB {version}, before 2018)"
    return 1e6, "Mbytes/sec taken as 10^6 B/s (no version in the file; IMB before 2018 meant 2^20)"


def parse_imb(text: str, name: str) -> list[Imported]:
    lines = text.splitlines()
    version = next((m.group(1) for ln in lines for m in [IMB_VERSION.search(ln)] if m), None)
    command = None
    for k, ln in enumerate(lines):    # "# Calling sequence was:", a blank "#", then "# IMB-MPI1 ..."
        if "calling sequence was" in ln.lower():
            command = next((x.lstrip("#").strip() for x in lines[k + 1:k + 4] if x.lstrip("#").strip()), None)
            break
    command = command or _command(lines)
    mega, mega_note = _imb_mega(version)
    out: list[Imported] = []
    skipped: list[str] = []
    i = 0
    while i < len(lines):
        m = IMB_BENCH.match(lines[i].strip())
        if not m:
            i += 1
            continue
        bench = m.group(1)
        i += 1
        # the table: a '#bytes' header, then numeric rows until a blank line or the next '#'
        while i < len(lines) and "#bytes" not in lines[i]:
            if IMB_BENCH.match(lines[i].strip()):
                break
            i += 1
        if i >= len(lines) or "#bytes" not in lines[i]:
            skipped.append(f"{bench} (no table)")
            continue
        header = lines[i].split()
        i += 1
        rows = []
        while i < len(lines) and lines[i].strip() and not lines[i].lstrip().startswith("#"):
            cols = lines[i].split()
            if len(cols) == len(header):
                rows.append(dict(zip(header, cols)))
            i += 1
        if bench not in IMB_PATTERNS:
            skipped.append(bench)
            continue
        imp = Imported("imb", "Intel MPI Benchmarks", bench, IMB_PATTERNS[bench], "mean", version, command)
        for k, r in enumerate(rows):
            where = f"{name}: {bench} row {k + 1}"
            row = {"bytes": int(_num(r["#bytes"], where)), "iterations": int(_num(r["#repetitions"], where))}
            t = r.get("t[usec]") or r.get("t_avg[usec]")
            if t is not None:
                row["one_way_ns"] = _num(t, where) * 1e3
            if "Mbytes/sec" in r:
                row["bandwidth_MBps"] = _num(r["Mbytes/sec"], where) * mega / 1e6
            imp.rows.append(row)
        if not rows:
            skipped.append(f"{bench} (empty table)")
            continue
        out.append(imp)
        imp.conversions += ["t[usec]: one way (IMB's PingPong prints half the mean round trip)", mega_note]
        imp.unknown += ["the library and its version", "the placement of the ranks", "the hosts"]
    if not out:
        what = f" (found: {', '.join(skipped)})" if skipped else ""
        raise InputError(f"{name}: no PingPong table in this IMB output{what}; versus imports IMB's PingPong, "
                         "the one test with a versus pattern")
    for imp in out:
        imp.unknown.append("tables not imported (no versus pattern): " + (", ".join(skipped) or "none"))
    return out


# --- NetPIPE ---------------------------------------------------------------------------

NP_MBIT = 1048576.0     # NetPIPE's "Mbps": bits / 1024 / 1024 per second
NP_LINE = re.compile(r"^\s*\d+:\s+(\d+)\s+bytes\s+(\d+)\s+times\s+-->\s+([\d.]+)\s+Mbps\s+in\s+([\d.]+)\s+usec")


def parse_netpipe(text: str, name: str) -> list[Imported]:
    command = _command(text.splitlines())
    test = Path(command.split()[0]).name if command else "NetPIPE"
    imp = Imported("netpipe", "NetPIPE", test, "pingpong", "best of the trials' mean round trip / 2",
                   command=command)
    for j, ln in enumerate(text.splitlines(), 1):
        s = ln.strip()
        if not s:
            continue
        m = NP_LINE.match(ln)
        if m:    # its terminal output: N: bytes times --> Mbps in usec
            imp.rows.append({"bytes": int(m.group(1)), "repeats": int(m.group(2)),
                             "one_way_ns": float(m.group(4)) * 1e3,
                             "bandwidth_MBps": float(m.group(3)) * NP_MBIT / 8 / 1e6})
            continue
        cols = s.split()
        if len(cols) in (3, 4) and re.fullmatch(r"\d+", cols[0]):   # its -o file: bytes Mbps seconds [var]
            imp.rows.append({"bytes": int(cols[0]),
                             "bandwidth_MBps": _num(cols[1], f"{name}:{j}") * NP_MBIT / 8 / 1e6,
                             "one_way_ns": _num(cols[2], f"{name}:{j}") * 1e9})
            continue
        if s.startswith(("Send and receive", "Now starting", "Latency", "Sync", "Send", "Receive", "(A bug",
                         "$ ")):
            continue
        raise InputError(f"{name}:{j}: not a NetPIPE line (neither 'N: bytes times --> Mbps in usec' nor "
                         f"the -o file's 'bytes Mbps seconds'): {s[:60]!r}")
    if not imp.rows:
        raise InputError(f"{name}: no NetPIPE figures in it")
    imp.conversions += ["time: one way (NetPIPE prints half the round trip), of the best of its trials",
                        "bandwidth: Mbps as 2^20 bit/s (NetPIPE divides bits by 1024 twice), "
                        "times 1048576 / 8 / 10^6 for MB/s"]
    imp.unknown += ["the version (NetPIPE prints none)"] + ([] if command else [
                    "the transport module (NPtcp, NPmpi, ...): not in the file"]) + [
                    "the placement of the ranks", "the hosts"]
    return [imp]


# --- ucx_perftest ----------------------------------------------------------------------

UCX_CMD = re.compile(r"ucx_perftest\b(.*)$")
UCX_FINAL = re.compile(r"^\s*Final:\s+(.*)$")


def _ucx_opts(cmd: str) -> dict[str, str]:
    toks = cmd.split()
    out = {}
    for k, t in enumerate(toks):
        if t.startswith("-") and len(t) == 2 and k + 1 < len(toks) and not toks[k + 1].startswith("-"):
            out[t[1]] = toks[k + 1]
    return out


def parse_ucx_perftest(text: str, name: str, sizes: list[int] | None = None) -> list[Imported]:
    """The table's `Final:` line (or the last CSV line of `-f`), one per run: iterations,
    50th percentile, average and overall overhead (us), average and overall bandwidth
    (MiB/s), message rates.  The size comes from the command line above the table
    (`$ ucx_perftest ... -s N`) or, in order, from `sizes`."""
    runs: list[Imported] = []
    cmd = None
    lines = text.splitlines()

    def add(fields: list[str], where: str):
        nonlocal cmd
        opts = _ucx_opts(cmd or "")
        test = opts.get("t")
        k = len(runs)
        if "s" in opts:
            size = int(_num(opts["s"].split(",")[0], where))
        elif sizes and k < len(sizes):
            size = sizes[k]
        else:
            raise InputError(f"{where}: ucx_perftest prints no message size: put its command line "
                             "('ucx_perftest ... -s N') above each table or give --sizes N[,N...] in the "
                             "order of the tables")
        if test is None:
            raise InputError(f"{where}: which test ran is not in the file: put its command line "
                             "('ucx_perftest ... -t tag_lat') above each table")
        lat = test.endswith("_lat")
        if not (lat or test.endswith("_bw")):
            raise InputError(f"{where}: ucx_perftest test {test!r} has no versus pattern (importable: *_lat, *_bw)")
        v = [_num(x, where) for x in fields]
        if len(v) != 8:
            raise InputError(f"{where}: {len(v)} figures where ucx_perftest prints 8")
        imp = Imported("ucx_perftest", "ucx_perftest", test, "pingpong" if lat else "stream",
                       "50th percentile" if lat else "overall rate", None, ("ucx_perftest" + cmd) if cmd else None)
        row = {"bytes": size, "iterations": int(v[0]), "p50_one_way_ns": v[1] * 1e3,
               "mean_one_way_ns": v[2] * 1e3, "overall_one_way_ns": v[3] * 1e3,
               "bandwidth_MBps": v[5] * MIB / 1e6, "mean_bandwidth_MBps": v[4] * MIB / 1e6,
               "message_rate": v[7]}
        if lat:
            row["one_way_ns"] = row["p50_one_way_ns"]
        imp.rows.append(row)
        imp.conversions += ["overhead: us, one way for latency tests (ucx_perftest halves the round trip)",
                            "bandwidth: MB/s printed as MiB/s (2^20 B/s), multiplied by 1.048576"]
        imp.unknown += ["the UCX version (not printed)", "the transports UCX chose", "the hosts"]
        runs.append(imp)
        cmd = None

    in_table = False
    for j, ln in enumerate(lines, 1):
        st = ln.strip()
        m = UCX_CMD.search(ln)
        if m and not st.startswith(("|", "+", "[")):
            cmd = m.group(1)
            in_table = False
            continue
        if st.startswith("|") and "iterations" in st:
            in_table = True          # the column header: result lines follow
            continue
        m = UCX_FINAL.match(ln)
        if m:
            add(m.group(1).split(), f"{name}:{j}")
            in_table = False
            continue
        # -f prints the final result alone: 8 figures, blank- or comma-separated
        fields = st.split(",") if "," in st else st.split()
        if in_table and len(fields) == 8 and all(re.fullmatch(r"[\d.]+", f) for f in fields):
            add(fields, f"{name}:{j}")
            in_table = False
    if not runs:
        raise InputError(f"{name}: no ucx_perftest result (a 'Final:' line, or the result line of -f under "
                         "the table's header)")
    # one run per test: sizes of one test together
    merged: dict[str, Imported] = {}
    for r in runs:
        if r.test in merged:
            merged[r.test].rows += r.rows
        else:
            merged[r.test] = r
    return list(merged.values())


# --- fi_pingpong -----------------------------------------------------------------------

FI_HEADER = re.compile(r"^\s*bytes\s+.*\bMB/sec\s+usec/xfer\s+Mxfers/sec\s*$")


def parse_fi_pingpong(text: str, name: str) -> list[Imported]:
    """The table under the header: 'bytes iters total time MB/sec usec/xfer Mxfers/sec' in
    older fabtests, 'bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec' in newer;
    the columns are read by their names."""
    imp = Imported("fi_pingpong", "fi_pingpong (fabtests)", "fi_pingpong", "pingpong", "mean",
                   command=_command(text.splitlines()))
    header = None
    for j, ln in enumerate(text.splitlines(), 1):
        if FI_HEADER.match(ln):
            header = ln.split()
            continue
        cols = ln.split()
        if header is None or len(cols) != len(header):
            continue
        r = dict(zip(header, cols))
        where = f"{name}:{j}"
        try:
            b = _bytes_with_suffix(r["bytes"], where)
        except InputError:
            continue                 # not a row (a message between tables)
        iters = r.get("iters") or r.get("#sent")
        imp.rows.append({"bytes": b, "iterations": _bytes_with_suffix(iters.lstrip("="), where, 1000) if iters else None,
                         "one_way_ns": _num(r["usec/xfer"], where) * 1e3,
                         "bandwidth_MBps": _num(r["MB/sec"], where)})
        if imp.rows[-1]["iterations"] is None:
            del imp.rows[-1]["iterations"]
    if not imp.rows:
        raise InputError(f"{name}: no fi_pingpong table (a 'bytes ... MB/sec usec/xfer Mxfers/sec' header "
                         "and its rows)")
    if imp.command:
        opts = _ucx_opts(imp.command)
        if "p" in opts:
            imp.library = f"libfabric provider {opts['p']}"
    imp.conversions += ["usec/xfer: one way (a round trip is two transfers); the mean over the iterations",
                        "MB/sec as 10^6 B/s", "sizes with k/m/g suffixes read as powers of 1024 (1.5k = 1536 B), "
                        "counts as powers of 1000 (1k = 1000 iterations)"]
    imp.unknown += ["the libfabric version (not printed)", "warm-up (fi_pingpong does none)",
                    "the placement of the ranks", "the hosts"]
    return [imp]


PARSERS = {"osu": parse_osu, "imb": parse_imb, "netpipe": parse_netpipe,
           "ucx_perftest": parse_ucx_perftest, "fi_pingpong": parse_fi_pingpong}


NP_ROW = re.compile(r"\s*\d+\s+[\d.eE+-]+\s+[\d.eE+-]+(?:\s+[\d.eE+-]+)?\s*")


def _netpipe_table(text: str) -> bool:
    """Every non-empty line a NetPIPE .out row (size, then 2 or 3 numbers): checked line by line,
    in time linear in the text (one pattern over the whole text backtracked exponentially)."""
    rows = [ln for ln in text.split("\n") if ln.strip()]
    return bool(rows) and all(NP_ROW.fullmatch(ln) for ln in rows)


def guess_format(text: str, name: str) -> str:
    """The format when exactly one tool's signature is in the text."""
    found = []
    if OSU_TITLE.search(text) or re.search(r"^#\s*OSU MPI", text, re.M):
        found.append("osu")
    if IMB_VERSION.search(text) or re.search(r"^#\s*Benchmarking\s+\S+", text, re.M):
        found.append("imb")
    if re.search(NP_LINE.pattern, text, re.M) or _netpipe_table(text):
        found.append("netpipe")
    if "ucx_perftest" in text or re.search(r"^\s*Final:\s", text, re.M) or "overhead (usec)" in text:
        found.append("ucx_perftest")
    if re.search(FI_HEADER.pattern, text, re.M):
        found.append("fi_pingpong")
    if len(found) == 1:
        return found[0]
    if not found:
        raise InputError(f"{name}: not the output of any tool versus imports ({', '.join(FORMATS)}); "
                         "give --format if it is one of them")
    raise InputError(f"{name}: looks like {' and '.join(found)}; give --format")


def import_text(text: str, name: str, fmt: str | None = None, sizes: list[int] | None = None) -> list[Imported]:
    fmt = fmt or guess_format(text, name)
    if fmt not in PARSERS:
        raise InputError(f"--format {fmt}: unknown; one of {', '.join(FORMATS)}")
    if fmt == "ucx_perftest":
        runs = parse_ucx_perftest(text, name, sizes)
    else:
        if sizes:
            raise InputError(f"--sizes is for ucx_perftest only ({fmt} prints its sizes)")
        runs = PARSERS[fmt](text, name)
    for r in runs:
        seen = set()
        for row in r.rows:
            if row["bytes"] in seen:
                raise InputError(f"{name}: {r.test} lists {row['bytes']} B twice; import one table at a time")
            seen.add(row["bytes"])
            for k, v in row.items():
                if k != "bytes" and isinstance(v, float) and (v != v or v < 0):
                    raise InputError(f"{name}: {r.test} at {row['bytes']} B: {k} = {v}")
    return runs


def records(imp: Imported, source: str, text: str, index: int = 0) -> list[dict]:
    """The versus records of one imported run: run, one summary per size, end."""
    digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()
    run = {"record": "run", "schema": 1, "integrity": SEAL_KEY, "run_id": f"import-{digest[:12]}-{index}", "launch_id": 0,
           "pattern": imp.pattern, "variant": "",
           "transport": {"name": imp.tool, "provider": imp.test, "library": imp.library or "",
                         "thresholds": {}},
           "hosts": [],
           "imported": {"format": imp.fmt, "tool": imp.tool, "test": imp.test, "version": imp.version,
                        "command": imp.command, "statistic": imp.statistic,
                        "time": "one way" if imp.pattern == "pingpong" else None,
                        "bandwidth_unit": "MB/s = 10^6 B/s",
                        "conversions": imp.conversions, "unknown": imp.unknown,
                        "source_file": Path(source).name, "source_sha256": digest}}
    out = [run]
    for row in sorted(imp.rows, key=lambda r: r["bytes"]):
        out.append({"record": "summary", "statistic": imp.statistic, **row})
    out.append({"record": "end", "status": "ok", "message": "", "sizes_completed": len(imp.rows)})
    return out


def import_file(path: str, fmt: str | None = None, sizes: list[int] | None = None) -> tuple[list[Imported], str]:
    text = read_input(path, limit=64 << 20, errors="replace")   # a tool's text output: a few MB at most
    return import_text(text, path, fmt, sizes), text


def write_jsonl(runs: list[Imported], source: str, text: str, out: str, overwrite: bool = False) -> None:
    """The records as sealed lines at out: never over the source, over what is not a regular file, or
    over an existing file without overwrite."""
    lines = [seal_line(rec) for k, imp in enumerate(runs) for rec in records(imp, source, text, k)]
    write_atomically(out, "\n".join(lines) + "\n", "-o", overwrite=overwrite, inputs=[source])


def imported_document(run) -> dict:
    """The plain-data view of an imported run for `versus summary --json`."""
    return {"source": run.source, **(run.imported or {}), "pattern": run.pattern,
            "sizes": sorted(run.summaries, key=lambda s: s["bytes"])}


def format_imported(d: dict) -> str:
    from .console import table
    checked = any("valid" in s for s in d["sizes"])
    rows = [[str(s["bytes"]), f"{s['one_way_ns'] / 1e3:.3f}" if "one_way_ns" in s else "-",
             f"{s['bandwidth_MBps']:.2f}" if "bandwidth_MBps" in s else "-"]
            + ([{True: "Pass", False: "FAIL"}.get(s.get("valid"), "-")] if checked else []) for s in d["sizes"]]
    head = (f"{d['source']}: imported from {d.get('tool')} {d.get('test')}"
            f"{' ' + d['version'] if d.get('version') else ''} ({d.get('statistic')}); "
            "a summary without samples: no interval, no fit\n")
    out = head + table(["bytes", "one-way us", "MB/s"] + (["validation"] if checked else []), rows) + "\n"
    bad = [s["bytes"] for s in d["sizes"] if s.get("valid") is False]
    if bad:
        out += (f"invalid: {len(bad)} size(s) failed {d.get('tool')}'s validation (the data received was not "
                f"what was sent): {', '.join(map(str, bad))} B; their figures are not measurements of a "
                "correct transfer\n")
    return out
