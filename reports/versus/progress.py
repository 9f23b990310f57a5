"""A progress line with an ETA on stderr: redrawn in place on a terminal,
one plain line per finished step otherwise (logs, CI)."""
from __future__ import annotations

import time


def _fmt_s(s: float) -> str:
    s = int(round(s))
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


class Progress:
    def __init__(self, total: int, stream, width: int = 24, estimate=None):
        """estimate(done): the seconds the steps after the first `done` take, or None when
        it cannot say (then the mean time of the steps executed so far stands in)."""
        self.total, self.stream, self.width = total, stream, width
        self.estimate = estimate
        self.done = 0
        self.run_time = 0.0        # seconds spent in runs actually executed
        self.executed = 0
        self.t0 = time.monotonic()
        self.tty = bool(getattr(stream, "isatty", lambda: False)())

    def eta(self) -> float | None:
        if self.estimate is not None:
            v = self.estimate(self.done)
            if v is not None:
                return v
        if not self.executed:
            return None
        return self.run_time / self.executed * (self.total - self.done)

    def _bar(self, label: str) -> str:
        frac = self.done / self.total if self.total else 1.0
        fill = int(round(frac * self.width))
        eta = self.eta()
        return (f"[{'#' * fill}{'.' * (self.width - fill)}] {self.done}/{self.total} "
                f"elapsed {_fmt_s(time.monotonic() - self.t0)}"
                + (f" ETA {_fmt_s(eta)}" if eta is not None else "") + f"  {label}")

    def start(self, name: str) -> None:
        if self.tty:
            self.stream.write("\r\033[K" + self._bar(f"running {name}"))
            self.stream.flush()

    def step(self, name: str, status: str, seconds: float) -> None:
        self.done += 1
        if status not in ("skipped", "done before"):
            self.executed += 1
            self.run_time += seconds
        label = f"{name}: {status}" + (f" ({seconds:.1f} s)" if seconds else "")
        if self.tty:
            self.stream.write("\r\033[K" + self._bar(label))
            if status not in ("ok", "done before"):
                self.stream.write("\n")
        else:
            eta = self.eta()
            self.stream.write(f"[{self.done}/{self.total}] {label}"
                              + (f"; ETA {_fmt_s(eta)}" if eta is not None else "") + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
