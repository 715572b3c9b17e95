"""The import formats, in the order they are tried on a file, and how a file's format is told.

A new format is one module of this package ending with ``FORMAT = FileFormat(...)`` (``format``)
and one line in :data:`REGISTRY`; the command's ``--format`` list, the import page's Format list and
the "not a known format" message all read this registry.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from . import (
    agentsense,
    castings,
    library_import,
    parley,
    promediate,
    promediate_runs,
    scores,
    shrec,
    socialveil,
    socialveil_runs,
    sotopia,
    sotopia_scores,
    turns_csv,
)
from .format import ImportFormat
from .problems import ImportProblem
from .reading import decode_json
from .records import Origin

# In the order formats are tried on a file's first record (the first that recognises it wins): a library
# record (a ``kind``) before an episode line, judge scores before Sotopia's logs, a CSV of turns last.
REGISTRY: tuple[ImportFormat, ...] = (
    library_import.FORMAT,
    parley.FORMAT,
    agentsense.FORMAT,
    socialveil.FORMAT,
    socialveil_runs.FORMAT,
    promediate.FORMAT,
    promediate_runs.FORMAT,
    shrec.FORMAT,
    castings.FORMAT,
    sotopia_scores.FORMAT,
    scores.FORMAT,
    sotopia.FORMAT,
    turns_csv.FORMAT,
)
BY_NAME: dict[str, ImportFormat] = {found.name: found for found in REGISTRY}
FORMATS = tuple(BY_NAME)
# The formats that read a directory (a run's output folders); ``auto`` asks each whether a directory is its.
DIRECTORY_FORMATS = tuple(found.name for found in REGISTRY if found.reads_directory)
# File name endings a format reads itself, as bytes (SHREC's parquet): told by the name alone.
BINARY_SUFFIXES: dict[str, str] = {suffix: found.name for found in REGISTRY for suffix in found.binary_suffixes}
# Named in the "not a known format" message: each format's shape in a few words.
KNOWN_SHAPES = ", ".join(found.shape for found in REGISTRY)


def get_format(name: str) -> ImportFormat:
    """The format called ``name``; an unknown name is a ``KeyError`` (``import_file`` names the known ones)."""
    return BY_NAME[name]


def first_record(path: Path, text: str) -> object:
    """What the formats look at to recognise a file: a CSV's header (column names, trimmed and in lower
    case), else the first JSON record: the first line of JSON Lines, the first item of a JSON array,
    the value of a double-encoded string, or the file's one JSON value. ``None`` when nothing reads."""
    head = text.lstrip()
    first_line = head.split("\n", 1)[0]
    if path.suffix.lower() == ".csv" or (not head.startswith(("{", "[", '"')) and "," in first_line):
        return [column.strip().lower() for column in next(csv.reader([first_line]), [])]
    for candidate in (head, first_line) if path.suffix.lower() != ".jsonl" else (first_line,):
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except (ValueError, RecursionError):
                return None
        if isinstance(value, list):
            return value[0] if value else None
        return value
    return None


# How a problem tells the reader to name the format: the command's words; the import page passes its own.
CHOOSE_FORMAT = "pass --format"


def detect_directory_format(path: Path) -> str:
    """The format of a directory: the first that reads directories and finds its outputs in it."""
    for found in REGISTRY:
        if found.reads_directory and found.claims_directory(path):
            return found.name
    raise ImportProblem(
        f"holds no run outputs Parley reads ({', '.join(DIRECTORY_FORMATS)}: see docs/formats.md)", file=path.name
    )


def detect_format(path: Path, text: str, *, choose_format: str = CHOOSE_FORMAT) -> str:
    """The format of a file, from its first record (``first_record``), asking each format in turn.

    A record no format recognises is refused as not a known format, with the shapes Parley reads
    listed, instead of being read as one format and refused for a field of that format; ``choose_format``
    says how the reader names the format instead (a flag of the command, a field of the page).
    """
    first = first_record(path, text)
    for found in REGISTRY:
        if found.recognises(first):
            return found.name
    if first is None and text.lstrip().startswith(("{", "[", '"')):
        jsonl = path.suffix.lower() == ".jsonl"
        decode_json(text.lstrip().split("\n", 1)[0] if jsonl else text, Origin(path.name, "line 1" if jsonl else None))
    if first is None:
        raise ImportProblem(f"cannot tell the format from the name or the content; {choose_format}", file=path.name)
    place = "row 1" if isinstance(first, list) else "line 1" if path.suffix.lower() == ".jsonl" else "record 1"
    raise ImportProblem(
        f"not a known format: the first record is none of the shapes Parley reads ({KNOWN_SHAPES}); "
        f"see docs/formats.md, or {choose_format}",
        file=path.name, place=place,
    )


