"""Command line: `versus SUBCOMMAND ...`.  A thin dispatcher: each subcommand
parses its options, calls the analysis API and prints text or JSON.
Exit status: 0 ok, 1 failure, 2 bad usage or input (or a needed package missing: deps.py).
Building the parser, and so every --help, imports nothing outside the standard library."""
from __future__ import annotations

import argparse
import sys

from .argtypes import COUNT, PERCENT, POSITIVE, PROBABILITY, message_size, number, size_list
from .load import InputError, load_files


def _cmd_summary(args) -> int:
    from .analysis import summary_document
    from .console import format_summary
    from .export import dumps
    from .importers import format_imported, imported_document
    runs = load_files(args.results)
    measured = [r for r in runs if r.imported is None]
    imported = [r for r in runs if r.imported is not None]
    doc = summary_document(measured, min_bytes=args.min_bytes, penalty=args.penalty,
                           include_invalid=args.include_invalid) if measured else {"runs": []}
    if imported:
        doc["imported"] = [imported_document(r) for r in imported]
    lg = _summary_loggp(measured)
    if lg:
        doc["loggp"] = lg
    if args.json:
        print(dumps(doc))
    else:
        if measured:
            print(format_summary(doc))
        if lg:
            from .loggp import format_loggp
            print()
            print(format_loggp(lg))
        for d in doc.get("imported", []):
            print(format_imported(d))
    return 0


def _summary_loggp(measured) -> dict | None:
    """The LogGP parameters of every stack whose pingpong, overhead (delayed) and stream runs are
    all among the files (docs/loggp.md); None when no stack has the three."""
    if not measured:
        return None
    from .loggp import loggp_document
    try:
        doc = loggp_document(measured, require_all=False)
    except InputError:
        return None
    if not doc["stacks"]:
        return None
    doc.pop("_objects", None)
    doc["incomplete"] = []  # a summary of any runs: stacks without the three patterns are not news
    return doc


def _cmd_import(args) -> int:
    from .importers import import_file, records, write_jsonl
    if args.output:
        from .load import check_output_path
        check_output_path(args.output, "-o", overwrite=args.overwrite, inputs=[args.file])
    runs, text = import_file(args.file, args.format, args.sizes)
    if args.output:
        write_jsonl(runs, args.file, text, args.output, overwrite=args.overwrite)
        for r in runs:
            print(f"versus import: {args.file}: {r.tool} {r.test}{' ' + r.version if r.version else ''}, "
                  f"{len(r.rows)} sizes ({r.statistic}) -> {args.output}", file=sys.stderr)
    else:
        from .load import seal_line
        for k, r in enumerate(runs):
            for rec in records(r, args.file, text, k):
                print(seal_line(rec))
    return 0


def _cmd_compare(args) -> int:
    from .compare import compare_runs
    from .console import format_comparison
    from .export import dumps, jsonable
    from .baseline import refuse_repeated_files, refuse_repeated_launches
    sides = {"A": args.a.split(","), "B": args.b.split(",")}
    for paths in sides.values():
        refuse_repeated_files(paths)        # a launch counts once, as in baseline save and check
    a, b = (load_files(paths) for paths in sides.values())
    for side, runs in zip(sides, (a, b)):
        refuse_repeated_launches(runs, f"side {side}")
    imported = [r for r in a + b if r.imported is not None]
    if imported:
        from .sidebyside import format_side_by_side, side_by_side
        if len(imported) != 1 or any(r.imported is not None for r in a) == any(r.imported is not None for r in b):
            raise InputError("compare an imported run (versus import) with measured runs: exactly one imported "
                             "run on one side and measured runs on the other (two summaries without samples "
                             "cannot be compared soundly)")
        measured = [r for r in a + b if r.imported is None]
        d = side_by_side(measured, imported[0])
        print(dumps(d) if args.json else format_side_by_side(d))
        return 0
    from .loggp import compare_sides, format_loggp_comparison, is_loggp_side
    if len({r.pattern for r in a + b}) > 1 and is_loggp_side(a) and is_loggp_side(b):
        # each side the LogGP patterns of one stack: which has the lower o_s, the lower G (docs/loggp.md)
        d = compare_sides(a, b, seed=args.seed, min_effect=args.min_effect / 100)
        print(dumps(d) if args.json else format_loggp_comparison(d))
        return 0
    c = compare_runs(a, b, alpha=args.alpha, adjust=args.adjust, seed=args.seed,
                     min_effect=args.min_effect / 100, include_invalid=args.include_invalid).to_dict()
    print(dumps(c) if args.json else format_comparison(jsonable(c)))
    return 0


def _cmd_loggp(args) -> int:
    from .export import dumps
    from .loggp import format_loggp, loggp_document
    runs = [r for r in load_files(args.results) if r.imported is None]
    if not runs:
        raise InputError("no measured runs in these files (imported runs carry no samples)")
    doc = loggp_document(runs, seed=args.seed, draws=args.draws, large_from=args.large_from)
    doc.pop("_objects", None)
    print(dumps(doc) if args.json else format_loggp(doc))
    return 0


def _cmd_tables(args) -> int:
    from .console import format_study
    from .export import dumps
    from .studies import study_tables
    doc = study_tables(load_files(args.results), args.bytes)
    print(dumps(doc) if args.json else format_study(doc))
    return 0


def add_include_invalid(p) -> None:
    p.add_argument("--include-invalid", action="store_true",
                   help="keep sizes whose payload check failed (valid: false) in fits and comparisons "
                        "(default: shown, marked, left out)")


def build_parser() -> argparse.ArgumentParser:
    from . import __version__
    p = argparse.ArgumentParser(prog="versus", description="Analyse versus benchmark results (JSON Lines).")
    p.add_argument("--version", action="version", version=f"versus {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    s = sub.add_parser("summary", help="statistics, fitted regimes and transitions of each run")
    s.add_argument("results", nargs="+", metavar="RESULTS.jsonl")
    s.add_argument("--json", action="store_true", help="print the analysis as JSON (docs/analysis.md)")
    s.add_argument("--min-bytes", type=message_size, default=0, metavar="SIZE",
                   help="fit only sizes >= this (8, 1K, 64KiB, 1M: as versus-run reads sizes)")
    s.add_argument("--penalty", type=POSITIVE, default=None, help="penalty per regime (default: BIC, 3 ln m)")
    add_include_invalid(s)
    s.set_defaults(func=_cmd_summary)
    c = sub.add_parser("compare", help="compare A against B size by size",
                       description="Compare A against B size by size.  With several launches a side "
                                   "(the launch is the unit; 3 or more, interleaved) the marks + - = are "
                                   "claims about the configurations; with one launch a side they are "
                                   "printed (+) (-) (=): the difference of those two launches only.")
    c.add_argument("a", metavar="A", help="result file of A (several launches: comma-separated; the pingpong, "
                                          "overhead/delayed and stream runs of one stack: its LogGP parameters "
                                          "are compared)")
    c.add_argument("b", metavar="B", help="result file of B (several launches: comma-separated)")
    c.add_argument("--json", action="store_true")
    c.add_argument("--alpha", type=PROBABILITY, default=0.05, help="1 - the confidence of the statements' intervals, simultaneous over their ranges "
                        "(default 0.05)")
    c.add_argument("--adjust", choices=["holm", "bh"], default="holm",
                   help="adjustment of the per-size p-values in the JSON (p_adjusted): Holm (default) or "
                        "Benjamini-Hochberg; the marks and statements do not use it (docs/analysis.md)")
    c.add_argument("--seed", type=COUNT, default=0, help="bootstrap seed")
    c.add_argument("--min-effect", type=PERCENT, default=2.0, metavar="PCT",
                   help="a significant difference smaller than this (%%, default 2) is marked '=', "
                        "no practical difference")
    add_include_invalid(c)
    c.set_defaults(func=_cmd_compare)
    t = sub.add_parser("tables", help="the seed-study tables (variants, run statistics, control limits)")
    t.add_argument("results", nargs="+", metavar="RESULTS.jsonl")
    t.add_argument("--bytes", type=message_size, default=None, metavar="SIZE",
                   help="size for the run-statistics table (8, 1K, 1M; default: smallest common size)")
    t.add_argument("--json", action="store_true")
    t.set_defaults(func=_cmd_tables)
    lg = sub.add_parser("loggp", help="LogGP parameters (L, o_s, o_r, g, G) of each stack, with intervals",
                        description="LogGP parameters of each stack (transport configuration) from its pingpong, "
                                    "overhead (variant delayed) and stream runs, with 95 % bootstrap intervals "
                                    "(docs/loggp.md).  L, o_s, o_r and g in microseconds, G in nanoseconds per byte. "
                                    "A stack without one of the three patterns: exit 2, naming what is missing.")
    lg.add_argument("results", nargs="+", metavar="RESULTS.jsonl")
    lg.add_argument("--json", action="store_true")
    lg.add_argument("--seed", type=COUNT, default=0, help="bootstrap seed")
    lg.add_argument("--draws", type=number(int, 100, None, what="a whole number, 100 or more"), default=2000, help="bootstrap draws (default 2000)")
    lg.add_argument("--large-from", type=message_size, default=65536, metavar="SIZE",
                    help="G is fitted over the stream sizes from this on (default 64K; the two largest when "
                         "fewer than two are)")
    lg.set_defaults(func=_cmd_loggp)
    i = sub.add_parser("import", help="another tool's text output (OSU, IMB, NetPIPE, ucx_perftest, "
                       "fi_pingpong) as versus records",
                       description="Read the text output of OSU, IMB, NetPIPE, ucx_perftest or fi_pingpong and "
                                   "write versus records: the tool's printed figure per size, converted to one-way "
                                   "ns and MB/s (10^6 B/s), with what is known and not known of the run. "
                                   "The records carry no samples: docs/history.md says what can be inferred.")
    i.add_argument("file", metavar="FILE", help="the tool's output as it printed it (or NetPIPE's -o file)")
    i.add_argument("--format", choices=["osu", "imb", "netpipe", "ucx_perftest", "fi_pingpong"],
                   help="the tool (default: guessed when only one tool's signature is in the file)")
    i.add_argument("--sizes", type=size_list, metavar="N[,N...]",
                   help="ucx_perftest only: the message size of each table in order, when the file does not "
                        "hold the command lines (8,1K,64KiB: as versus-run reads sizes)")
    i.add_argument("-o", "--output", metavar="OUT.jsonl", help="write here (default: standard output)")
    i.add_argument("--overwrite", action="store_true", help="replace a file already at OUT.jsonl")
    i.set_defaults(func=_cmd_import)
    from .baseline import add_parser as add_baseline
    from .history import add_parser as add_history
    add_baseline(sub)
    add_history(sub)
    from .campaign import add_parser as add_campaign
    from .report import add_parser as add_report
    from .lab_cli import add_parser as add_lab
    from .scan import add_parser as add_scan
    add_campaign(sub)
    add_report(sub)
    add_lab(sub)
    add_scan(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return args.func(args)
    except InputError as ex:
        print(f"versus {args.command}: {ex}", file=sys.stderr)
        return 2
    except ImportError as ex:
        from .deps import missing_needed
        line = missing_needed(ex)
        if line is None:
            raise
        print(f"versus {args.command}: {line}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print(f"versus {args.command}: interrupted", file=sys.stderr)
        return 130
