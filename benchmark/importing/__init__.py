"""Import episodes from files: Parley JSON Lines (episodes, or a scenario library), Sotopia logs and profiles,
AgentSense scenes, SocialVeil scenario files, or a CSV of turns.

One call imports one file, all or nothing, inside one ``transaction.atomic()``. Bad input raises
:class:`ImportProblem`, whose message names the file, the place in it (line, record or row) and the
field, so a researcher can fix the file without reading our code. Every object carries an
external id; what is already present is skipped and counted as unchanged, so importing the same file
twice changes nothing.

The formats are described in ``docs/formats.md``. Each has its own module (``parley``, ``library_import``, ``sotopia``,
``castings``, ``agentsense``, ``turns_csv``) that turns a file into records (``records``); ``saving`` writes the drafts.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from importlib import import_module
from pathlib import Path

from django.db import DatabaseError, transaction

from ..models import Episode, Team


class ImportProblem(Exception):
    """Bad input, told as ``FILE, PLACE, field FIELD: what is wrong``.

    ``place`` is ``line 3`` (JSON Lines), ``record 2`` (a JSON file) or ``row 5`` (CSV, the header is
    row 1); ``field`` is a path into the record such as ``turns[2].action_type``.
    """

    def __init__(self, message: str, *, file: str, place: str | None = None, field: str | None = None) -> None:
        self.message = message
        self.file = file
        self.place = place
        self.field = field
        super().__init__(str(self))

    def __str__(self) -> str:
        where = [self.file]
        if self.place:
            where.append(self.place)
        if self.field:
            where.append(f"field {self.field}")
        return f"{', '.join(where)}: {self.message}"


@dataclass
class ImportResult:
    """What one file did, for the command's summary and the import page.

    ``created`` rows made; ``unchanged`` objects already present and left as they were; ``changed``
    objects already present that the file added to (an episode that got new scores); ``checked``
    records validated but with no place in Parley (Sotopia relationship profiles); ``skipped`` what
    a file holds but no one can read (an AgentSense reply that picks no option); ``ignored`` fields
    read but not kept, by field name, counted in records (never dropped silently); ``notes`` anything
    else a researcher must know (ids the file names that Parley does not have, values read as
    missing), one sentence each; ``details`` the long lists behind them (every id not in Parley), shown
    on request. Counter keys are singular nouns (``episode``, ``scenario``, ...).
    """

    file: str
    format: str
    dry_run: bool = False
    created: Counter[str] = field(default_factory=Counter)
    unchanged: Counter[str] = field(default_factory=Counter)
    changed: Counter[str] = field(default_factory=Counter)
    checked: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)  # read from the file but not storable, by kind
    ignored: Counter[str] = field(default_factory=Counter)  # field name -> records in which it was not kept
    notes: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)  # long lists behind the notes (--verbosity 2)
    episodes: list[int] = field(default_factory=list)  # pks of the episodes created or added to, to link to them

    def note(self, sentence: str) -> None:
        if sentence not in self.notes:
            self.notes.append(sentence)

    def summary(self) -> str:
        """One line, e.g. ``x.jsonl (sotopia): created 5 episodes, 56 turns; unchanged 5 scenarios``,
        then the notes, one per line."""
        parts = [f"{label} {what}" for label, what in self.parts()]
        line = f"{self.file} ({self.format}): {'; '.join(parts) or 'nothing to import'}"
        return "\n".join([line, *(f"  note: {note}" for note in self.notes)])

    def parts(self) -> list[tuple[str, str]]:
        """The summary's parts as (label, what), e.g. ``("would create", "5 episodes, 56 turns")``; the
        import page shows them as a list, the command joins them into one line."""
        parts = []
        for label, counts in (
            ("would create" if self.dry_run else "created", self.created),
            ("would add to" if self.dry_run else "added to", self.changed),
            ("unchanged", self.unchanged),
        ):
            listed = [_count(counts[kind], kind) for kind in _ordered(counts) if counts[kind]]
            if listed:
                parts.append((label, ", ".join(listed)))
        if self.checked:
            listed = [_count(number, f"{kind} profile") for kind, number in sorted(self.checked.items())]
            parts.append(("checked, not stored:", ", ".join(listed)))
        if self.skipped:
            parts.append(("skipped", ", ".join(_count(number, kind) for kind, number in sorted(self.skipped.items()))))
        if self.ignored:
            listed = [f"{name} (in {_count(number, 'record')})" for name, number in sorted(self.ignored.items())]
            parts.append(("ignored:", ", ".join(listed)))
        return parts


_KINDS = ("episode", "scenario", "character", "turn", "answer")


def _ordered(counts: Counter[str]) -> list[str]:
    """The usual kinds in their usual order, then any other kind in alphabetical order."""
    return [kind for kind in _KINDS if kind in counts] + sorted(set(counts) - set(_KINDS))


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def read_text(path: Path) -> str:
    """The file as text (UTF-8, a byte-order mark is ignored)."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ImportProblem("no such file", file=path.name) from None
    except UnicodeDecodeError as error:
        raise ImportProblem(f"not UTF-8 text (byte {error.start})", file=path.name) from None
    except OSError as error:
        raise ImportProblem(f"cannot read the file: {error.strerror}", file=path.name) from None


# Format name -> module of this package, in the order formats are tried on a file's first record.
# Each module has ``recognises(first)`` (the first record, or a CSV's header as a list of column
# names) and ``parse(text, file) -> list[Draft]``, and may have its own ``save(drafts, result, team)``
# when its records need more than ``saving.save`` (the library's barriers). A new format adds one line here.
# A format that reads files beside the one named, or a directory, also has ``parse_path(path)``; one that
# must look things up in the team's data before saving (a scenario named by its content) has
# ``resolve(drafts, team)``.
FORMAT_MODULES = {
    "library": "library_import",
    "parley": "parley",
    "agentsense": "agentsense",
    "socialveil": "socialveil",
    "socialveil-run": "socialveil_runs",
    "promediate": "promediate",
    "castings": "castings",
    "sotopia-scores": "sotopia_scores",
    "scores": "scores",
    "sotopia": "sotopia",
    "csv": "turns_csv",
}
FORMATS = tuple(FORMAT_MODULES)
DIRECTORY_FORMAT = "socialveil-run"  # the one format imported from a directory (a run's scenario folders)


def format_module(name: str):  # noqa: ANN201 - a module
    return import_module(f".{FORMAT_MODULES[name]}", __name__)


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


def detect_format(path: Path, text: str, *, choose_format: str = CHOOSE_FORMAT) -> str:
    """The format of a file, from its first record (``first_record``), asking each format in turn.

    A record no format recognises is refused as not a known format, with the shapes Parley reads
    listed, instead of being read as one format and refused for a field of that format; ``choose_format``
    says how the reader names the format instead (a flag of the command, a field of the page).
    """
    first = first_record(path, text)
    for name in FORMATS:
        if format_module(name).recognises(first):
            return name
    if first is None and text.lstrip().startswith(("{", "[", '"')):
        from .reading import decode_json
        from .records import Origin

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


# Named in the "not a known format" message; each format adds its shape in a few words.
KNOWN_SHAPES = (
    "a Parley episode (scenario, seats), a Parley library record (kind), an AgentSense scene (sample_idx, "
    "characters), a Sotopia log or profile, a Sotopia casting (combo_id, env_id), a CSV of turns (episode_id, "
    "turn_index, speaker, action_type, text), a SocialVeil scenario (episode_id, agent_profiles, agent_goals), a "
    "SocialVeil run's conversation_log.json (experimental_context, conversation_log), a ProMediate case "
    "(instruction, issues, options, names), "
    "Sotopia judge scores keyed by episode pk (env_pk, agent1, agent2), a scores file (episode_id, respondent, "
    "question, value)"
)


# Told how far a file has got: ``progress("parsed", records, records)`` once the file is read, then
# ``progress("saved", done, records)`` as records are saved (done may repeat; the listener throttles).
Progress = Callable[[str, int, int], None]


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
    from . import saving
    from .checks import check_unique_records
    from .records import EpisodeDraft, max_length

    if len(tag) > (max_length(Episode, "tag") or 0):
        raise ImportProblem(f"the tag {tag[:40]!r}... is longer than {max_length(Episode, 'tag')} characters",
                            file=Path(path).name)

    path = Path(path)
    is_directory = path.is_dir()
    text = "" if is_directory else read_text(path)
    if format == "auto":
        format = DIRECTORY_FORMAT if is_directory else detect_format(path, text, choose_format=choose_format)
    if format not in FORMAT_MODULES:
        raise ImportProblem(f"unknown format {format!r}; use one of {', '.join(FORMATS)}", file=path.name)
    module = format_module(format)
    if is_directory and not hasattr(module, "parse_path"):
        raise ImportProblem(f"is a directory; only {DIRECTORY_FORMAT} reads one (a run's results)", file=path.name)
    result = ImportResult(file=path.name, format=format, dry_run=dry_run)
    # Parsing reads no rows, so it runs before the transaction: on SQLite the transaction takes the
    # write lock as it begins, and other writers wait for it no longer than they must.
    drafts = module.parse_path(path) if hasattr(module, "parse_path") else module.parse(text, path.name)
    if tag:
        for draft in drafts:
            if isinstance(draft, EpisodeDraft):
                draft.tag = tag
    if progress is not None:
        progress("parsed", len(drafts), len(drafts))
    try:
        with transaction.atomic():
            if hasattr(module, "resolve"):
                module.resolve(drafts, team)
            check_unique_records(drafts)
            if hasattr(module, "save"):
                module.save(drafts, result, team)
            else:
                saving.save(drafts, result, team, progress=partial(progress, "saved") if progress else None)
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


__all__ = ["FORMATS", "ImportProblem", "ImportResult", "detect_format", "import_file", "import_files"]
