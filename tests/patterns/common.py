"""How each backend is started for the pattern tests (as its module declares: tests/lib/backends.py),
and small checks shared by them."""
from backends import prepare  # noqa: F401  (the pattern scripts import it from here)


def positive_ints(values):
    return isinstance(values, list) and all(isinstance(v, int) and v > 0 for v in values)
