"""Every subcommand's --help prints (argparse formats help strings with %: a literal % must be
doubled, or --help raises instead of answering)."""
import argparse

from versus import cli


def parsers(p, path):
    yield path, p
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sp in a.choices.items():
                yield from parsers(sp, path + [name])


def test_every_help_prints():
    seen = 0
    for path, p in parsers(cli.build_parser(), ["versus"]):
        text = p.format_help()
        assert "usage:" in text, path
        seen += 1
    assert seen > 10
