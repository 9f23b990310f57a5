"""Checked number types for the command line: a value outside its range (or nan, or inf) is a
usage error (argparse: exit 2 naming the option), never a silently odd analysis."""
from __future__ import annotations

import argparse
import math
import re


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


# versus-run's grammar for a byte count (core/sizes.c, vs_bytes_parse): decimal digits, then
# nothing or one of these suffixes, any case; binary multiples.  Every size option of `versus`
# takes the same, so a size written for the runner is read the same way here.
BYTE_SUFFIXES = {"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20,
                 "g": 1 << 30, "gib": 1 << 30}
SIZE_WORDS = "bytes such as 8, 1K, 64KiB, 4M or 1G (K, M, G: 2^10, 2^20, 2^30)"
_BYTES = re.compile(r"([0-9]+)([A-Za-z]*)", re.ASCII)


def parse_bytes(text: str) -> int:
    """A message size as versus-run reads one: '8', '1K', '64KiB', '4m', '1G', '8B'.  ValueError
    for anything else (a sign, a decimal point, a space, another suffix, beyond 2^64 - 1)."""
    m = _BYTES.fullmatch(text) if isinstance(text, str) else None
    if not m or m.group(2).lower() not in BYTE_SUFFIXES:
        raise ValueError(f"{text!r} is not a message size: give {SIZE_WORDS}")
    v = int(m.group(1)) * BYTE_SUFFIXES[m.group(2).lower()]
    if v >= 1 << 64:
        raise ValueError(f"{text!r} is too large for a message size")
    return v


def message_size(text: str) -> int:
    """An argparse type: one message size (parse_bytes); a bad one is a usage error (exit 2)."""
    try:
        return parse_bytes(text)
    except ValueError as ex:
        raise argparse.ArgumentTypeError(str(ex)) from None


def size_list(text: str) -> list[int]:
    """An argparse type: N[,N...], message sizes as parse_bytes reads them (8,1K,64KiB)."""
    out = []
    for item in text.split(","):
        try:
            out.append(parse_bytes(item))
        except ValueError as ex:
            raise argparse.ArgumentTypeError(f"{text}: {ex}") from None
    return out
