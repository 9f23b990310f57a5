#!/usr/bin/env python3
"""The shape of the source at a git revision: lines per module, the longest functions, and how
many places spell each of versus-run's options.

  python3 bench/source_shape.py REV [REV ...]     # e.g. a revision before a change and HEAD

Lines: every C file under core/ and transports/ and every Python module of the analysis
package (reports/versus/), those over LONG_FILE lines listed.  Functions: Python functions
from the syntax tree (end line - first line + 1); C functions from a definition at column 0
to the first "}" at column 0 after it.  Options: each long option of versus-run that both the first and the last revision given
have (from core/options.c: the getopt array before the option table, the table's rows after),
counted as the word "--NAME" in the product's code (core/, transports/, reports/versus/,
tools/ but not the man pages' prose): the usage text, a campaign's or the completion's own list,
a message that names it; in the option table it appears once, as "NAME" (not counted).
Tests and docs are not counted: they use an option, they do not define it.
"""
import ast
import re
import subprocess
import sys

LONG_FILE = 500
TOP = 8
CODE = ("core/", "transports/", "reports/versus/", "tools/")


def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def files(rev):
    return [p for p in git("ls-tree", "-r", "--name-only", rev).split("\n") if p]


def show(rev, path):
    return git("show", f"{rev}:{path}")


def c_functions(path, text):
    out = []
    lines = text.split("\n")
    start = None
    for i, ln in enumerate(lines):
        if start is None and re.match(r"^[A-Za-z_][\w \*]*\b(\w+)\s*\([^;]*$", ln) and not ln.startswith(
                ("static const", "const", "typedef", "struct", "enum", "#")):
            name = re.match(r"^[A-Za-z_][\w \*]*\b(\w+)\s*\(", ln)
            if name:
                start, fname = i, name.group(1)
        elif start is not None and ln.startswith("}"):
            out.append((i - start + 1, f"{path}:{start + 1} {fname}"))
            start = None
        elif start is not None and ln.endswith(";") and i == start:
            start = None
    return out


def py_functions(path, text):
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append((node.end_lineno - node.lineno + 1, f"{path}:{node.lineno} {node.name}"))
    return out


def options(rev):
    """The long options of versus-run at the revision: from its option table (a row begins
    {"name", ...) or, before the table, from the getopt array ({"name", ..._argument)."""
    names = set()
    for path in ("core/options.c",):
        text = show(rev, path)
        names |= set(re.findall(r'^\s*\{"([a-z][a-z0-9-]+)",\s*(?:\'.\'|0|\w+_argument)', text, re.M))
    return sorted(names)


def shape(rev):
    paths = files(rev)
    c = [p for p in paths if p.endswith((".c", ".h")) and p.startswith(("core/", "transports/"))]
    py = [p for p in paths if p.startswith("reports/versus/") and p.endswith(".py")]
    sizes, funcs = [], []
    for p in c + py:
        text = show(rev, p)
        sizes.append((text.count("\n"), p))
        funcs += c_functions(p, text) if p.endswith((".c", ".h")) else py_functions(p, text)
    code = {p: show(rev, p) for p in paths if p.startswith(CODE) and p.endswith((".c", ".h", ".py", ".in", ".bash"))
            or p.startswith("tools/") and not p.endswith(".h2m")}
    return sizes, funcs, code


def spelled_in(code, names):
    out = {}
    for o in names:
        dashed = re.compile(r"(?<![\w-])--" + re.escape(o) + r"(?![\w-])")
        out[o] = sum(len(dashed.findall(t)) for t in code.values())
    return out


def spelled_in_lines(code, names):
    out = {}
    for o in names:
        pat = re.compile(r"(?<![\w-])--" + re.escape(o) + r"(?![\w-])|\"" + re.escape(o) + r"\"")
        out[o] = sum(1 for t in code.values() for ln in t.split("\n") if pat.search(ln))
    return out


def main():
    revs = sys.argv[1:] or ["HEAD"]
    common = sorted(set(options(revs[0])) & set(options(revs[-1])))
    for rev in revs:
        sizes, funcs, code = shape(rev)
        spelled = spelled_in(code, common)
        short = git("rev-parse", "--short", rev).strip()
        c_lines = sum(n for n, p in sizes if p.endswith((".c", ".h")))
        py_lines = sum(n for n, p in sizes if p.endswith(".py"))
        print(f"== {rev} ({short}): C {c_lines} lines in {sum(p.endswith(('.c', '.h')) for _, p in sizes)} files, "
              f"analysis {py_lines} lines in {sum(p.endswith('.py') for _, p in sizes)} modules")
        print(f"  over {LONG_FILE} lines: " + ", ".join(f"{p} {n}" for n, p in sorted(sizes, reverse=True)
                                                      if n > LONG_FILE))
        print(f"  longest functions: " + "; ".join(f"{w} {n}" for n, w in sorted(funcs, reverse=True)[:TOP]))
        total = sum(spelled.values())
        core_opts = {p: t for p, t in code.items() if p.startswith("core/options")}
        per = spelled_in_lines(core_opts, common)
        print(f"  in core/options*.c: lines naming an option ('--NAME' or '\"NAME\"'): {sum(per.values())} "
              f"for {len(per)} options (mean {sum(per.values()) / max(1, len(per)):.1f}; " +
              ", ".join(f"--{o} {per[o]}" for o in ("iterations", "warmup-large", "timeout", "sizes") if o in per) + ")")
        print(f"  versus-run options (of both revisions): {len(spelled)}, '--NAME' written in {total} places in the product's code "
              f"(mean {total / max(1, len(spelled)):.1f}, most: " +
              ", ".join(f"--{o} {n}" for o, n in sorted(spelled.items(), key=lambda kv: -kv[1])[:6]) + ")")


if __name__ == "__main__":
    main()
