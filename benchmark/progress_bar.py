"""The one text progress bar of Parley's long commands (evaluate, neutralise, simulate).

On a terminal it redraws one line in place. Written to a file or a pipe (CI logs, a run's worker
log, tests) it prints a line at each tenth of the way, and at least every ``LOG_EVERY`` seconds
while work goes on, so logs stay short and a slow run still shows it is alive.
"""

from __future__ import annotations

import time
from typing import TextIO

from django.core.management.base import OutputWrapper

WIDTH = 30
LOG_EVERY = 10.0


class ProgressBar:
    """``bar.advance(note)`` after each item, or ``bar.show(done, note)`` when the count is read
    from elsewhere; ``bar.close()`` ends the line on a terminal.

    ``already_done`` items were done before this bar started (a resumed run's finished episodes):
    they count towards the bar but not towards the rate the time left is estimated from.
    """

    def __init__(
        self, stream: TextIO | OutputWrapper, total: int, label: str, *, unit: str = "", already_done: int = 0
    ) -> None:
        self.stream = stream
        self.total = total
        self.label = label
        self.unit = unit
        self.already_done = already_done
        self.done = already_done
        self.started = time.monotonic()
        self._tty = bool(getattr(stream, "isatty", lambda: False)())
        self._last_tenth = -1
        self._last_line_at = 0.0
        self._open_line = False

    def advance(self, note: str = "") -> None:
        self.show(self.done + 1, note)

    def show(self, done: int, note: str = "", *, final: bool = False) -> None:
        """Draw ``done`` of ``total``; off a terminal only at a new tenth, after ``LOG_EVERY`` s, or when final."""
        self.done = done
        now = time.monotonic()
        if self._tty:
            self._write("\r" + self._line(note, now), end="")
            self._open_line = True
            if final:
                self.close()
            return
        tenth = done * 10 // self.total if self.total else 10
        if final or tenth != self._last_tenth or done == self.total or now - self._last_line_at >= LOG_EVERY:
            self._last_tenth = tenth
            self._last_line_at = now
            self._write(self._line(note, now))

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def close(self) -> None:
        if self._tty and self._open_line:
            self._write("")
            self._open_line = False

    def _line(self, note: str, now: float) -> str:
        share = self.done / self.total if self.total else 1.0
        filled = round(share * WIDTH)
        bar = "#" * filled + "." * (WIDTH - filled)
        count = f"{self.done}/{self.total}" + (f" {self.unit}" if self.unit else "")
        elapsed = now - self.started
        newly_done, remaining = self.done - self.already_done, self.total - self.done
        eta = f" · ETA {clock(elapsed / newly_done * remaining)}" if newly_done > 0 and remaining > 0 else ""
        return f"{self.label} [{bar}] {count}" + (f" {note}" if note else "") + f" · {clock(elapsed)}{eta}"

    def _write(self, text: str, end: str = "\n") -> None:
        if isinstance(self.stream, OutputWrapper):  # it adds its own line ending unless told otherwise
            self.stream.write(text, ending=end)
        else:
            self.stream.write(text + end)
        self.stream.flush()


def clock(seconds: float) -> str:
    """``4m05s`` or ``7s``."""
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"
