"""Import episodes from files: Parley JSON Lines (episodes, or a scenario library), Sotopia logs and profiles,
AgentSense scenes, SocialVeil scenario files and run outputs, ProMediate cases and run folders, SHREC's videos with
their annotations (CSV or parquet), or a CSV of turns.

One call imports one file, all or nothing, inside one ``transaction.atomic()``. Bad input raises
:class:`ImportProblem`, whose message names the file, the place in it (line, record or row) and the
field, so a researcher can fix the file without reading our code. Every object carries an
external id; what is already present is skipped and counted as unchanged, so importing the same file
twice changes nothing.

The formats are described in ``docs/formats.md``. Each has its own module that turns a file into drafts
(``records``, ``responses``) and ends with its ``FORMAT`` (an ``ImportFormat``, ``format``): ``parley``,
``library_import``, ``agentsense``, ``socialveil``, ``socialveil_runs``, ``promediate``, ``promediate_runs``,
``shrec``, ``castings``, ``sotopia_scores``, ``scores``, ``sotopia`` and ``turns_csv``, listed in ``registry`` in the
order they are tried on a file (a directory: by the formats that read one, ``registry.detect_directory_format``).
``saving`` writes the drafts; bad input is a ``problems.ImportProblem``, what a file did an
``import_result.ImportResult``.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from django.db import DatabaseError, transaction

from ..models import Episode, Team
from .checks import check_unique_records
from .import_result import ImportResult, Progress
from .problems import ImportProblem
from .reading import read_text
from .records import EpisodeDraft, max_length
from .registry import (
    BINARY_SUFFIXES,
    CHOOSE_FORMAT,
    DIRECTORY_FORMATS,
    FORMATS,
    detect_directory_format,
    detect_format,
    first_record,
    get_format,
)


def import_file(
    path: str | Path, *, team: Team, format: str = "auto", dry_run: bool = False, progress: Progress | None = None,
    choose_format: str = CHOOSE_FORMAT,
    tag: str = "",
) -> ImportResult:
    """Import one file into ``team``, all or nothing; ``dry_run`` validates and writes, then rolls back.

    ``choose_format`` is how a problem tells the reader to name the format (``detect_format``). ``tag``,
    when given, is the experiment tag of every episode the file creates (instead of the file's own),
    so two runs of one model imported apart can be reported apart.
    """
    if len(tag) > (max_length(Episode, "tag") or 0):
        raise ImportProblem(f"the tag {tag[:40]!r}... is longer than {max_length(Episode, 'tag')} characters",
                            file=Path(path).name)

    path = Path(path)
    is_directory = path.is_dir()
    binary = BINARY_SUFFIXES.get(path.suffix.lower()) if not is_directory else None
    if binary and format not in ("auto", binary):
        binary = None  # another format named: the file is read as text, and that format says what is wrong
    text = "" if is_directory or binary else read_text(path)
    if format == "auto":
        if is_directory:
            format = detect_directory_format(path)
        elif binary:
            format = binary
        else:
            format = detect_format(path, text, choose_format=choose_format)
    if format not in FORMATS:
        raise ImportProblem(f"unknown format {format!r}; use one of {', '.join(FORMATS)}", file=path.name)
    reader = get_format(format)
    if is_directory and not reader.reads_directory:
        raise ImportProblem(
            f"is a directory; only {' or '.join(DIRECTORY_FORMATS)} read one (a run's results)", file=path.name
        )
    result = ImportResult(file=path.name, format=format, dry_run=dry_run)
    # Parsing reads no rows, so it runs before the transaction: on SQLite the transaction takes the
    # write lock as it begins, and other writers wait for it no longer than they must.
    drafts = reader.parse_file(path, text)
    if tag:
        for draft in drafts:
            if isinstance(draft, EpisodeDraft):
                draft.tag = tag
    if progress is not None:
        progress("parsed", len(drafts), len(drafts))
    try:
        with transaction.atomic():
            reader.resolve(drafts, team)
            check_unique_records(drafts)
            reader.save(drafts, result, team, partial(progress, "saved") if progress else None)
            if progress is not None:
                progress("saved", len(drafts), len(drafts))
            if dry_run:
                transaction.set_rollback(True)
    except DatabaseError as error:
        # Parsers check what the constraints check; this is the last line of defence, not the plan.
        # Any refusal counts (a trigger a site added raises a ProgrammingError on PostgreSQL): the
        # transaction has rolled back whole, and the database's own words say why.
        raise ImportProblem(f"the database refused the data: {error}".strip(), file=path.name) from error
    return result


def import_files(
    paths: list[str | Path], *, team: Team, format: str = "auto", dry_run: bool = False, tag: str = ""
) -> list[ImportResult]:
    """Import several files in order, each in its own transaction; stops at the first bad file."""
    return [import_file(path, team=team, format=format, dry_run=dry_run, tag=tag) for path in paths]


__all__ = [
    "FORMATS", "ImportProblem", "ImportResult", "detect_format", "first_record", "import_file", "import_files",
    "read_text",
]
