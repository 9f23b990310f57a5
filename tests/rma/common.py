"""Shared by the one-sided suites (the pattern suites' helpers)."""
from backends import prepare  # noqa: F401


def positive_ints(values):
    return isinstance(values, list) and all(isinstance(v, int) and v > 0 for v in values)
