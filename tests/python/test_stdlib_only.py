"""`versus --help` and every `versus COMMAND --help` need nothing but the standard library: an
interpreter started with -I -S (no site-packages, no PYTHONPATH) answers each one with exit 0
and has imported none of the analysis packages; a command that needs one says which in one line
and exits 2 (deps.py)."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPORTS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "reports")
THIRD_PARTY = ("numpy", "scipy", "jinja2", "markupsafe", "matplotlib", "plotly", "pyarrow", "ruptures")

# run by `python -I -S`: the package from the source tree, nothing from site-packages
WALK = r"""
import argparse, contextlib, io, json, sys
sys.path.insert(0, sys.argv[1])
from versus import cli

def paths(p, path):
    yield path
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sp in a.choices.items():
                yield from paths(sp, path + [name])

out = {}
for path in paths(cli.build_parser(), []):
    text = io.StringIO()
    try:
        with contextlib.redirect_stdout(text):
            cli.main(path + ["--help"])
        code = "no exit"
    except SystemExit as ex:
        code = ex.code
    out[" ".join(path)] = [code, text.getvalue()[:40]]
mods = sorted({m.split(".")[0] for m in sys.modules})
print(json.dumps({"help": out, "modules": mods}))
"""


def _isolated(*args, code=None):
    cmd = [sys.executable, "-I", "-S"] + (["-c", code] if code else []) + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=HERE)


def test_isolation_hides_the_analysis_packages():
    """The check below means something only if -I -S hides numpy from this interpreter."""
    p = _isolated(code="import numpy")
    assert p.returncode != 0 and "No module named 'numpy'" in p.stderr


def test_every_help_with_the_standard_library_alone():
    p = _isolated(REPORTS, code=WALK)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    helps = doc["help"]
    assert len(helps) > 10 and "" in helps and "report" in helps and "history show" in helps
    for path, (code, text) in helps.items():
        assert code == 0, f"versus {path} --help: exit {code}"
        assert text.startswith("usage: versus"), f"versus {path} --help printed {text!r}"
    assert not set(THIRD_PARTY) & set(doc["modules"]), doc["modules"]


def test_a_command_without_numpy_says_so_in_one_line(data_dir):
    run = os.path.join(data_dir, "shm-pingpong.jsonl")
    code = "import sys; sys.path.insert(0, sys.argv[1]); from versus.cli import main; sys.exit(main(sys.argv[2:]))"
    for args in (["summary", run], ["report", run, "-o", os.path.join(os.path.dirname(run), "never")]):
        p = _isolated(REPORTS, *args, code=code)
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2, (args, p.stderr)
        assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
        assert lines[0].startswith(f"versus {args[0]}: numpy cannot be imported") and "pip install numpy" in lines[0]
    assert not os.path.exists(os.path.join(os.path.dirname(run), "never"))
