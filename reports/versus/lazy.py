"""Modules imported on first use: scipy.stats costs most of a second to import, and most
commands (--help, a bad argument, lab, import) never touch it."""
from __future__ import annotations

import importlib
from types import ModuleType


class LazyModule:
    """Stands for a module and imports it when an attribute is first asked for."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str):
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)


scipy_stats = LazyModule("scipy.stats")
