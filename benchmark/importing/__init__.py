"""Import episodes from files: Parley JSON Lines, Sotopia logs and profiles, AgentSense scenes, or a CSV of turns.

One call imports one file, all or nothing, inside one ``transaction.atomic()``. Bad input raises
:class:`ImportProblem`, whose message names the file, the place in it (line, record or row) and the
field, so a researcher can fix the file without reading our code. Every object carries an
external id; what is already present is skipped and counted as unchanged, so importing the same file
twice changes nothing.

The formats are described in ``docs/formats.md``. Each has its own module (``parley``, ``sotopia``,
``agentsense``, ``turns_csv``) that turns a file into drafts (``drafts``); ``saving`` writes the drafts.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from django.db import DatabaseError, transaction

from ..models import Team

FORMATS = ("parley", "sotopia", "agentsense", "csv")
# Keys by which a JSON Lines record shows itself as one of Sotopia's shapes (``sotopia.record``).
SOTOPIA_KEYS = frozenset({
    "raw_messages", "episode_id", "messages", "rewards_prompt", "first_name", "agent_goals", "background_story",
    "agent1_id", "agent_1_id", "pk", "agent_id", "env_id", "relationship_id",
})


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
    """What one file did: rows created, objects already present (unchanged), records only checked.

    Keys are ``episode``, ``scenario``, ``character``, ``turn`` and ``answer``; ``checked`` counts
    records that were validated but have no place in Parley (Sotopia relationship profiles);
    ``skipped`` what a file holds but no one can read (an AgentSense reply that picks no option).
    """

    file: str
    format: str
    dry_run: bool = False
    created: Counter[str] = field(default_factory=Counter)
    unchanged: Counter[str] = field(default_factory=Counter)
    checked: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)  # read from the file but not storable, by kind

    def summary(self) -> str:
        """One line, e.g. ``x.jsonl (sotopia): created 5 episodes, 56 turns; unchanged 5 scenarios``."""
        kinds = ("episode", "scenario", "character", "turn", "answer")
        parts = []
        for label, counts in (
            ("would create" if self.dry_run else "created", self.created),
            ("unchanged", self.unchanged),
        ):
            listed = [_count(counts[kind], kind) for kind in kinds if counts[kind]]
            if listed:
                parts.append(f"{label} {', '.join(listed)}")
        if self.checked:
            listed = [_count(number, f"{kind} profile") for kind, number in sorted(self.checked.items())]
            parts.append(f"checked, not stored: {', '.join(listed)}")
        if self.skipped:
            parts.append(f"skipped {', '.join(_count(number, kind) for kind, number in sorted(self.skipped.items()))}")
        return f"{self.file} ({self.format}): {'; '.join(parts) or 'nothing to import'}"


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


def looks_like_agentsense(record: object) -> bool:
    """An AgentSense scene line (``sample_idx`` and ``characters``) or a scene's output object."""
    return isinstance(record, dict) and (
        {"sample_idx", "characters"} <= record.keys() or {"chat_history", "goal_answer"} <= record.keys()
    )


def detect_format(path: Path, text: str) -> str:
    """``parley``, ``sotopia``, ``agentsense`` or ``csv``, from the extension and a look at the first record.

    ``.csv`` is the turns CSV. A ``.json`` file is Sotopia (Parley writes JSON Lines only), unless it
    is an AgentSense scene's output. In a JSON Lines file, a first record with ``seats`` and
    ``scenario`` is Parley, one with ``sample_idx`` and ``characters`` AgentSense, one with a key of
    Sotopia's shapes Sotopia; any other record is refused as not a known format.
    """
    suffix = path.suffix.lower()
    head = text.lstrip()
    if suffix == ".csv":
        return "csv"
    if suffix == ".json" or head.startswith(("[", '"')):
        if suffix == ".json" and head.startswith("{") and '"goal_answer"' in head:
            try:
                record = json.loads(head)
            except (ValueError, RecursionError):
                record = None
            if looks_like_agentsense(record):
                return "agentsense"
        return "sotopia"
    if head.startswith("{"):
        first_line = head.split("\n", 1)[0]
        try:
            record = json.loads(first_line)
        except (ValueError, RecursionError):  # the chosen parser names the problem
            return "parley" if '"seats"' in first_line else "agentsense" if '"sample_idx"' in first_line else "sotopia"
        if isinstance(record, dict) and ("format_version" in record or {"seats", "scenario"} <= record.keys()):
            return "parley"
        if looks_like_agentsense(record):
            return "agentsense"
        if isinstance(record, dict) and (SOTOPIA_KEYS & record.keys() or any(
            key.startswith(":sotopia.") for key in record
        )):
            return "sotopia"
        raise ImportProblem(
            "not a known format: the first record is neither a Parley episode (scenario, seats), an AgentSense "
            "scene (sample_idx, characters) nor a Sotopia log or profile; see docs/formats.md, or pass --format",
            file=path.name, place="line 1",
        )
    first_line = head.split("\n", 1)[0]
    if "episode_id" in first_line and "," in first_line:
        return "csv"
    raise ImportProblem("cannot tell the format from the name or the content; pass --format", file=path.name)


def import_file(path: str | Path, *, team: Team, format: str = "auto", dry_run: bool = False) -> ImportResult:
    """Import one file into ``team``, all or nothing; ``dry_run`` validates and writes, then rolls back."""
    from . import agentsense, parley, saving, sotopia, turns_csv
    from .checks import check_unique_records

    path = Path(path)
    text = read_text(path)
    if format == "auto":
        format = detect_format(path, text)
    parsers = {"parley": parley.parse, "sotopia": sotopia.parse, "agentsense": agentsense.parse, "csv": turns_csv.parse}
    if format not in parsers:
        raise ImportProblem(f"unknown format {format!r}; use one of {', '.join(FORMATS)}", file=path.name)
    result = ImportResult(file=path.name, format=format, dry_run=dry_run)
    try:
        with transaction.atomic():
            drafts = parsers[format](text, path.name)
            check_unique_records(drafts)
            saving.save(drafts, result, team)
            if dry_run:
                transaction.set_rollback(True)
    except DatabaseError as error:
        # Parsers check what the constraints check; this is the last line of defence, not the plan.
        # Any refusal counts (a trigger a site added raises a ProgrammingError on PostgreSQL): the
        # transaction has rolled back whole, and the database's own words say why.
        raise ImportProblem(f"the database refused the data: {error}".strip(), file=path.name) from error
    return result


def import_files(
    paths: list[str | Path], *, team: Team, format: str = "auto", dry_run: bool = False
) -> list[ImportResult]:
    """Import several files in order, each in its own transaction; stops at the first bad file."""
    return [import_file(path, team=team, format=format, dry_run=dry_run) for path in paths]


__all__ = ["FORMATS", "ImportProblem", "ImportResult", "detect_format", "import_file", "import_files"]
