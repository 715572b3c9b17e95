"""How the savers look up what a file names: external ids in chunks of ``CHUNK``, one query per chunk.

A chunk keeps each ``IN (...)`` list under every database's limit on query parameters (SQLite's is
the lowest), however many ids the file names; ``CHUNK`` is also the batch size of the inserts.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

CHUNK = 500


def chunks(values: Iterable[str]) -> Iterator[list[str]]:
    """The distinct ``values``, sorted, in lists of at most ``CHUNK``."""
    values = sorted(set(values))
    for start in range(0, len(values), CHUNK):
        yield values[start : start + CHUNK]
