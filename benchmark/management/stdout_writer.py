"""Lets an exporter write a file through a command's standard output (``--out -``)."""

from typing import Any


class StdoutWriter:
    """Writes each text as given, without the line ending a command's stdout adds to every call."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> None:
        self.stream.write(text, ending="")
