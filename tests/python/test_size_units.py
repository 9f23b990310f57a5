"""Every size option of `versus` reads sizes as versus-run does (8, 1K, 64KiB, 1M, 1G; binary):
the grammar is the table tests/core/byte-sizes.txt that the runner's own test reads too; each
option found in the parser uses it; `versus history show --bytes 1M` (as docs/history.md writes
it) works; a bad size exits 2 naming the option and what is accepted."""
import argparse
import os

import pytest
import synth

from versus.argtypes import message_size, parse_bytes, size_list
from versus.baseline import parse_rule
from versus.cli import build_parser, main
from versus.load import InputError

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "..", "core", "byte-sizes.txt")
SIZES = [8, 1024, 65536, 1 << 20]


def table():
    out = []
    with open(TABLE, encoding="utf-8") as f:
        for ln in f.read().split("\n"):
            if ln.startswith("#") or "|" not in ln:
                continue
            text, want = ln.split("|", 1)
            out.append((text, None if want == "error" else int(want)))
    return out


def test_the_grammar_is_the_runners_table():
    cases = table()
    assert len(cases) >= 30
    for text, want in cases:
        if want is None:
            with pytest.raises(ValueError, match="not a message size|too large"):
                parse_bytes(text)
        else:
            assert parse_bytes(text) == want, text


def size_options(parser, path=()):
    """(command path, option, action) of every option of every subcommand."""
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items():
                yield from size_options(sub, path + (name,))
        elif a.option_strings:
            yield path, a.option_strings[-1], a


def test_every_size_option_uses_the_one_parser():
    found = {(" ".join(p), o): a for p, o, a in size_options(build_parser())
             if any(w in a.dest for w in ("bytes", "size"))}
    assert set(found) >= {("summary", "--min-bytes"), ("tables", "--bytes"), ("import", "--sizes"),
                          ("history show", "--bytes")}, sorted(found)
    for key, a in found.items():
        assert a.type in (message_size, size_list), f"{key}: type {a.type}"


@pytest.fixture
def runs(tmp_path):
    out = []
    for k in range(3):
        p = tmp_path / f"r{k}.jsonl"
        synth.write_run(p, synth.hockney(2000.0, 0.1), SIZES, count=50, seed=k, launch_id=k,
                        run_id=f"units-{k}")
        out.append(str(p))
    return out


def test_history_show_bytes_1M_as_the_docs_write_it(tmp_path, runs, capsys):
    db = str(tmp_path / "h.sqlite")
    assert main(["history", "add", *runs, "--db", db]) == 0
    capsys.readouterr()
    assert main(["history", "show", "--db", db, "--bytes", "1M", "--json"]) == 0
    one_m = capsys.readouterr().out
    assert main(["history", "show", "--db", db, "--bytes", "1048576", "--json"]) == 0
    assert capsys.readouterr().out == one_m and '"bytes": 1048576' in one_m


def test_tables_and_summary_take_units(runs, capsys):
    assert main(["tables", *runs, "--bytes", "1K", "--json"]) == 0
    a = capsys.readouterr().out
    assert main(["tables", *runs, "--bytes", "1024", "--json"]) == 0
    assert capsys.readouterr().out == a
    assert main(["summary", runs[0], "--min-bytes", "64KiB", "--json"]) == 0
    a = capsys.readouterr().out
    assert main(["summary", runs[0], "--min-bytes", "65536", "--json"]) == 0
    assert capsys.readouterr().out == a


def test_import_sizes_take_units():
    assert size_list("8,4K,1MiB") == [8, 4096, 1 << 20]


def test_tolerance_ranges_take_the_same_units():
    r = parse_rule("latency@1KiB-64KiB:-5%,+5%")
    assert (r.lo_bytes, r.hi_bytes) == (1024, 65536)
    assert parse_rule("bandwidth@1m-:-10%,+inf").lo_bytes == 1 << 20
    with pytest.raises(InputError, match="'1KB' is not a message size"):
        parse_rule("latency@1KB-:-5%,+5%")


@pytest.mark.parametrize("argv, option", [
    (["history", "show", "--bytes", "1X"], "--bytes"),
    (["history", "show", "--bytes", "-8"], "--bytes"),
    (["tables", "r.jsonl", "--bytes", "1.5K"], "--bytes"),
    (["summary", "r.jsonl", "--min-bytes", "1KB"], "--min-bytes"),
    (["import", "f.txt", "--sizes", "8,1Q"], "--sizes"),
    (["history", "show", "--bytes", "18446744073709551616"], "--bytes"),
])
def test_a_bad_size_exits_2_naming_the_option(argv, option, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and option in err and ("message size" in err), err
    assert "Traceback" not in err


def test_a_bad_tolerance_range_exits_2(runs, tmp_path, capsys):
    b = tmp_path / "b.json"
    assert main(["baseline", "save", *runs, "-o", str(b)]) == 0
    capsys.readouterr()
    assert main(["check", *runs, "--baseline", str(b), "--tolerance", "latency@1KB-:-5%,+5%"]) == 2
    assert "'1KB' is not a message size" in capsys.readouterr().err
