"""A text progress bar for management commands that work through many items.

On a terminal it redraws one line in place; written to a file or a pipe (CI logs, tests) it
prints a line at each tenth of the way instead, so logs stay short and readable.
"""

from __future__ import annotations

from typing import TextIO

from django.core.management.base import OutputWrapper

_WIDTH = 30


class ProgressBar:
    """``bar.advance(note)`` after each item; ``bar.close()`` ends the line on a terminal."""

    def __init__(self, stream: TextIO | OutputWrapper, total: int, label: str) -> None:
        self.stream = stream
        self.total = total
        self.label = label
        self.done = 0
        self._tty = bool(getattr(stream, "isatty", lambda: False)())
        self._last_tenth = -1

    def advance(self, note: str = "") -> None:
        self.done += 1
        if self._tty:
            self._write("\r" + self._line(note), end="")
            return
        tenth = self.done * 10 // self.total if self.total else 10
        if tenth != self._last_tenth or self.done == self.total:
            self._last_tenth = tenth
            self._write(self._line(note))

    def close(self) -> None:
        if self._tty and self.done:
            self._write("")

    def _line(self, note: str) -> str:
        share = self.done / self.total if self.total else 1.0
        filled = round(share * _WIDTH)
        bar = "#" * filled + "." * (_WIDTH - filled)
        return f"{self.label} [{bar}] {self.done}/{self.total}" + (f" {note}" if note else "")

    def _write(self, text: str, end: str = "\n") -> None:
        if isinstance(self.stream, OutputWrapper):  # it adds its own line ending unless told otherwise
            self.stream.write(text, ending=end)
        else:
            self.stream.write(text + end)
        self.stream.flush()
