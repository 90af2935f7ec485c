"""A one-line progress bar on a text stream (stderr): redrawn in place on a terminal, a line now and
then otherwise, so a log file gets a few lines rather than thousands."""

from __future__ import annotations

import time
from typing import TextIO

WIDTH = 30


class ProgressBar:
    """Call with (done, total) as work advances; finish() ends the line."""

    def __init__(self, out: TextIO, label: str, min_interval: float = 0.1) -> None:
        self._out = out
        self._label = label
        self._interactive = out.isatty()
        # Not a terminal: at most one line per 10 % (and the last one).
        self._min_interval = min_interval
        self._started = time.monotonic()
        self._last_draw = float("-inf")
        self._last_tenth = -1
        self._last = (0, 0)

    def __call__(self, done: int, total: int) -> None:
        self._last = (done, total)
        now = time.monotonic()
        if self._interactive:
            if done < total and now - self._last_draw < self._min_interval:
                return
            self._out.write("\r" + self.render(done, total, now))
        else:
            tenth = 10 * done // total if total else 10
            if tenth == self._last_tenth:
                return
            self._last_tenth = tenth
            self._out.write(self.render(done, total, now) + "\n")
        self._last_draw = now
        self._out.flush()

    def render(self, done: int, total: int, now: float) -> str:
        fraction = done / total if total else 1.0
        filled = int(round(WIDTH * fraction))
        elapsed = max(now - self._started, 1e-9)
        return (f"{self._label} [{'#' * filled}{'.' * (WIDTH - filled)}] {done}/{total} {fraction:4.0%}"
                f"  {done / elapsed:.0f}/s")

    def finish(self) -> None:
        if self._interactive:
            self._out.write("\r" + self.render(*self._last, time.monotonic()) + "\n")
            self._out.flush()
