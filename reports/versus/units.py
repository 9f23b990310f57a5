"""What one sample of each pattern means, so that every pattern's samples turn
into comparable times and rates.

A sample is always the time of one timed unit (a batch mean where batch > 1).
`divisor` turns it into the time the statistics report; `bytes_factor` times the
message size is what moves during that reported time:

| pattern      | one sample is                         | reported time            | divisor | bytes_factor |
|--------------|---------------------------------------|--------------------------|---------|--------------|
| pingpong     | one round trip                        | one-way latency          | 2       | 1            |
| overhead     | one send call + one receive call      | half an iteration        | 2       | 1            |
| (delayed)    | send, a delay, receive                | half an iteration        | 2       | 1            |
| stream       | a window of W messages and its ack    | time per message         | W       | 1            |
| bistream     | W messages each way at once           | time per message pair    | W       | 2            |
| doublebuffer | receiving and summing two buffers     | time per buffer          | 2       | 1            |
| put, get     | one operation, completed (latency)    | latency of one operation | 1       | 1            |
| put, get     | a window of W operations (bandwidth)  | time per operation       | W       | 1            |
| atomic       | one 64-bit atomic, old value back     | latency of one atomic    | 1       | 1            |
| putnotify    | one round trip of two notified puts   | one-way latency          | 2       | 1            |

put and get tell their variants apart by `pattern_params`: the bandwidth variant
records its window, the latency variant none.

Across the transport interface: the two-sided ping-pong and the one-sided
put-with-notification report the same quantity, one-way latency (round trip / 2)
at each size, so a comparison may set one against the other (crossing()).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SampleMeaning:
    pattern: str
    divisor: float        # sample / divisor = the reported time
    bytes_factor: float   # bytes moved in one reported time = bytes_factor * message size
    time_label: str       # what the reported time is, for tables and plots
    sample_label: str     # what one raw sample is
    short_label: str = "one-way latency"    # the same in a few words (axis titles, column heads)


def sample_meaning(pattern: str, params: dict | None = None, variant: str = "") -> SampleMeaning:
    """The meaning of a sample of `pattern` run with `params` (the run record's
    `pattern_params`: the window for stream and bistream) and `variant`."""
    params = params or {}
    if pattern == "overhead" and variant == "delayed":
        return SampleMeaning(pattern, 2.0, 1.0, "half an iteration (send call + delay + receive call)",
                             "one send call, a delay past the round trip and one receive call", "half an iteration")
    if pattern in ("stream", "bistream"):
        w = float(params.get("window") or 64)
        if pattern == "stream":
            return SampleMeaning(pattern, w, 1.0, "time per message", f"a window of {w:g} messages",
                                 "time per message")
        return SampleMeaning(pattern, w, 2.0, "time per message pair (both directions)",
                             f"a window of {w:g} messages each way", "time per message pair")
    if pattern in ("put", "get"):
        if params.get("window"):
            w = float(params["window"])
            return SampleMeaning(pattern, w, 1.0, f"time per {pattern}", f"a window of {w:g} {pattern}s",
                                 f"time per {pattern}")
        return SampleMeaning(pattern, 1.0, 1.0, f"{pattern} latency (one {pattern}, completed at the target)",
                             f"one {pattern}, completed", f"{pattern} latency")
    if pattern == "atomic":
        return SampleMeaning(pattern, 1.0, 1.0, "atomic latency (one 64-bit atomic, old value back)",
                             "one atomic, completed", "atomic latency")
    if pattern == "putnotify":
        return SampleMeaning(pattern, 2.0, 1.0, "one-way latency (round trip of notified puts / 2)",
                             "one round trip of two notified puts", "one-way latency")
    if pattern == "doublebuffer":
        return SampleMeaning(pattern, 2.0, 1.0, "time per buffer (received and summed)",
                             "two buffers received and summed", "time per buffer")
    if pattern == "overhead":
        return SampleMeaning(pattern, 2.0, 1.0, "half an iteration (send call + receive call)",
                             "one send call and one receive call", "half an iteration")
    return SampleMeaning(pattern or "pingpong", 2.0, 1.0, "one-way latency (round trip / 2)", "one round trip",
                         "one-way latency")


def run_meaning(run) -> SampleMeaning:
    """The meaning of the samples of a loaded run (versus.load.Run)."""
    rec = getattr(run, "record", {}) or {}
    return sample_meaning(run.pattern, rec.get("pattern_params"), getattr(run, "variant", ""))


# patterns of the two sides of the transport interface whose reported times are one quantity
INTERFACE = {"pingpong": "two-sided", "putnotify": "one-sided"}
SAME_QUANTITY = ({"pingpong", "putnotify"}, "one-way latency (round trip / 2)")
PATTERN_WORDS = {"pingpong": "the two-sided ping-pong", "putnotify": "the one-sided put-with-notification"}


def crossing(pattern_a: str, pattern_b: str) -> str | None:
    """The quantity two different patterns both report when they sit on the two sides of the
    transport interface (the ping-pong and the put-with-notification: one-way latency), else None."""
    pats, quantity = SAME_QUANTITY
    if pattern_a != pattern_b and {pattern_a, pattern_b} == pats:
        return quantity
    return None
