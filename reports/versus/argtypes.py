"""Checked number types for the command line: a value outside its range (or nan, or inf) is a
usage error (argparse: exit 2 naming the option), never a silently odd analysis."""
from __future__ import annotations

import argparse
import math


def number(kind=float, lo: float | None = None, hi: float | None = None, lo_open: bool = False,
           hi_open: bool = False, what: str = "a number"):
    """An argparse type: kind(text) within [lo, hi] (open ends as asked), finite."""
    def check(text: str):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        bad = not math.isfinite(v)
        if lo is not None:
            bad = bad or v < lo or (lo_open and v == lo)
        if hi is not None:
            bad = bad or v > hi or (hi_open and v == hi)
        if bad:
            raise argparse.ArgumentTypeError(f"{text!r}: give {what}")
        return v
    return check


PROBABILITY = number(float, 0, 1, lo_open=True, hi_open=True, what="a level between 0 and 1, e.g. 0.05")
PERCENT = number(float, 0, 100, hi_open=True, what="a percentage from 0 to below 100")
POSITIVE = number(float, 0, None, lo_open=True, what="a number above 0")
COUNT = number(int, 0, None, what="a whole number, 0 or more")


def size_list(text: str) -> list[int]:
    """N[,N...]: message sizes in bytes, whole numbers 0 or more."""
    from .load import InputError
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item.isdigit():
            raise InputError(f"--sizes {text}: {item!r} is not a size in bytes (a whole number, 0 or more)")
        out.append(int(item))
    return out
