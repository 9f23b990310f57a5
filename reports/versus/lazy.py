"""Modules imported on first use.  `versus --help`, every `versus COMMAND --help`, a bad
argument, `lab` and `import` need nothing but the standard library, and scipy.stats alone costs
most of a second to import: the analysis modules name numpy, scipy.stats, Jinja2 and
MarkupSafe through these stand-ins, which import the module when an attribute is first asked
for (a missing one then raises ModuleNotFoundError there, which the command line turns into
one line: deps.py)."""
from __future__ import annotations

import importlib
from types import ModuleType


class LazyModule:
    """Stands for a module and imports it when an attribute is first asked for.  Each
    attribute found is kept on the stand-in, so later look-ups cost what a module's do."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__") and attr not in ("__version__", "__file__"):
            raise AttributeError(attr)      # copy, pickle and inspect probe these: no import for them
        if self._module is None:
            self._module = importlib.import_module(self._name)
        value = getattr(self._module, attr)
        self.__dict__[attr] = value
        return value

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}{'' if self._module is None else ' (imported)'}>"


numpy = LazyModule("numpy")
scipy_stats = LazyModule("scipy.stats")
jinja2 = LazyModule("jinja2")
markupsafe = LazyModule("markupsafe")
