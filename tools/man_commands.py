"""help2man include file for versus(1): one section per subcommand, its --help as argparse
prints it (the same text; nothing written twice); the other sections are in versus.h2m.
usage: man_commands.py OUT.h2m"""
import argparse
import sys

from versus.cli import build_parser


def main():
    out = sys.argv[1]
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    lines = ["[COMMANDS]"]
    for name, p in sub.choices.items():
        text = p.format_help().replace("\\", "\\\\")
        lines.append(f".SS {name}")
        lines.append(".nf")
        lines += [("\\&" + ln) if ln.startswith((".", "'")) else ln for ln in text.splitlines()]
        lines.append(".fi")
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
