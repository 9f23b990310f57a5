"""What the analysis package needs besides the standard library, and the one line a command
prints when something is missing.

Needed (pyproject.toml's dependencies): numpy, SciPy, Jinja2 (with MarkupSafe), Matplotlib and
Plotly.  A command that reaches one that is not installed stops with one line naming it and
exit status 2.  Optional (the extras): pyarrow writes the report's raw samples (samples.parquet,
samples.csv); ruptures finds the change points of `versus history show` and of the report's
history page.  Without one, the command does the rest of its work and says once, on standard
error, what was left out and how to install it.  `versus --help` and every `versus COMMAND
--help` need none of them (lazy.py)."""
from __future__ import annotations

import importlib
import sys

# import name -> the distribution to install
NEEDED = {"numpy": "numpy", "scipy": "scipy", "jinja2": "jinja2", "markupsafe": "jinja2",
          "matplotlib": "matplotlib", "plotly": "plotly"}
# import name -> (extra, what is left out without it)
OPTIONAL = {"pyarrow": ("parquet", "the raw samples (samples.parquet, samples.csv) are not written"),
            "ruptures": ("changepoints", "change points are not looked for")}

_said: set[str] = set()


def optional(name: str, command: str):
    """The module `name` (one of OPTIONAL), or None after saying once on standard error what
    `command` leaves out without it and how to install it."""
    try:
        return importlib.import_module(name)
    except ImportError:
        if name not in _said:
            _said.add(name)
            extra, cost = OPTIONAL[name]
            print(f"versus {command}: {name} is not installed, so {cost}; to have them: "
                  f"pip install 'versus[{extra}]' (or pip install {name})", file=sys.stderr)
        return None


def missing_needed(ex: ImportError) -> str | None:
    """The line to print when ex is a needed dependency that cannot be imported (None when ex is
    something else: a bug, shown as one)."""
    name = (getattr(ex, "name", None) or "").split(".")[0]
    if name not in NEEDED:
        return None
    return (f"{name} cannot be imported by {sys.executable} ({ex}); the analysis needs numpy, scipy, jinja2, "
            f"matplotlib and plotly: pip install {NEEDED[name]} for that interpreter, or run versus with one "
            "that has them (docs/install.md)")
