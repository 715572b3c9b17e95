"""Ratings made outside Parley, imported into a study as if its annotators had rated there.

A researcher who ran part of a study elsewhere (a Prolific form, a spreadsheet, Sotopia's own
rating interface) brings those ratings into the study, so its agreement report covers the outside
raters together with Parley's annotators and compares them all with the judge. Two file shapes are
read (``docs/formats.md``, "Ratings files"):

- **long** (CSV or JSON Lines): one answer per row, ``episode_id, annotator_id, question, value``,
  optionally ``rationale``, ``seat`` (the character's seat position from 0, for a question asked per
  character) and ``goal`` (``<role position>.<goal position>``, both from 0, for a question asked per
  goal). A multi-label answer is one row per label;
- **wide** (CSV): one rating per row, ``episode_id, annotator_id`` (and optionally ``seat``), then
  one column per question named by its key: ``key`` for a question asked once per episode (or for
  the row's ``seat``), ``key:<seat>`` for one character, ``key:g<role>.<goal>`` for one goal, and
  ``<key>_rationale`` (with the same suffix) for its rationale. Labels of a multi-label answer are
  joined by ``;``.

The rules, and why:

- **Who rated**: each annotator id of the file becomes an ``ExternalAnnotator`` of the study, named
  ``external N`` on pages, with an account that cannot sign in and is never in the study's pool,
  so it is never given work. The same id in a later file finds the same annotator. The id itself is
  not stored (see ``ExternalAnnotator``).
- **What was rated**: an episode is named by its external id (or ``parley-episode-<pk>``, as exports
  name one without) and must be an item of the study; one of the team's episodes that is not, or an
  id the team does not have, is refused with the row named.
- **What counts as a rating**: each (annotator, episode) pair is one submitted annotation, read by
  the item page's own rules (``ItemPage.parse`` with ``complete=True``): every value checked against
  the instrument (range, step, choices), every required question answered and every required
  rationale written. A problem names the row and the column (the field, in JSON Lines).
  Span questions cannot be carried by these files; a file that names one is refused.
- **Stored as if rated in Parley**: the annotation is written by ``annotator.drafts.submit``, so the
  exports, the dashboard and every statistic of the report read it unchanged. Its time on the page
  is unknown, so it is recorded as zero (the dashboard shows no time and no fast-submission flag).
- **Nothing is overwritten**: a rating already in the study with the same answers is unchanged; one
  whose answers differ is refused, so re-importing a file changes nothing and a corrected file
  cannot silently replace what reports were built on.
- **All or nothing**: one transaction per file; a dry run checks and writes everything, then rolls
  back, so it reports exactly what the import would do.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import DatabaseError, transaction
from django.db.models import Max
from django.utils import timezone

from benchmark.csv_output import restore_cell
from benchmark.exporting import stable_id
from benchmark.importing import ImportProblem, ImportResult, read_text
from benchmark.importing.drafts import Origin, describe
from benchmark.importing.parley import json_lines
from benchmark.importing.reading import check_storable_text
from benchmark.importing.turns_csv import rows
from benchmark.models import Answer, Episode, Question

from . import drafts
from .answer_forms import ParsedForm, field_name
from .item_page import ItemPage
from .models import Annotation, Assignment, ExternalAnnotator, Study, StudyItem

LONG_COLUMNS = ("episode_id", "annotator_id", "question", "value")
LONG_OPTIONAL = ("rationale", "seat", "goal")
WIDE_COLUMNS = ("episode_id", "annotator_id")
RATIONALE_SUFFIX = "_rationale"
LABEL_SEPARATOR = ";"
MAX_ID_LENGTH = 200
_COLUMN = re.compile(r"^(?P<key>[-a-zA-Z0-9_]+?)(?::(?:(?P<seat>[0-9]+)|g(?P<goal>[0-9]+\.[0-9]+)))?$")
_SEAT = re.compile(r"^[0-9]+$")
_GOAL = re.compile(r"^[0-9]+\.[0-9]+$")


@dataclass
class Cell:
    """One answer (or rationale) read from the file, and where it was."""

    origin: Origin
    key: str
    seat: str  # as written in a long row's seat or a wide column's suffix, "" for none
    goal: str  # as written, "" for none
    value: str
    rationale: str | None = None  # None: this cell gives no rationale
    is_rationale: bool = False  # a wide file's ``<key>_rationale`` column: ``value`` is the rationale
    row_seat: str = ""  # a wide row's own seat: the seat of its per-character questions named without one
    wide: bool = False  # from a wide file, where a multi-label answer's labels are joined by ";"


@dataclass
class Rating:
    """Everything one annotator of the file said about one episode."""

    annotator_id: str
    episode_id: str
    origin: Origin  # the first row or line that gives it
    places: list[str] = field(default_factory=list)
    cells: list[Cell] = field(default_factory=list)


# Reading the file


def read_ratings(text: str, file: str, *, csv_file: bool) -> tuple[str, list[Rating]]:
    """("long" or "wide", the ratings in the order the file first names them)."""
    if csv_file:
        return _read_csv(text, file)
    return "long", _group(_read_jsonl(text, file))


def _read_csv(text: str, file: str) -> tuple[str, list[Rating]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    header_origin = Origin(file, "row 1")
    header = [column.strip() for column in next(reader, [])]
    lowered = [column.lower() for column in header]
    for column in sorted({column for column in lowered if lowered.count(column) > 1}):
        raise header_origin.at(column).problem("this column is named twice in the header")
    long = {"question", "value"} <= set(lowered)
    required = LONG_COLUMNS if long else WIDE_COLUMNS
    missing = [column for column in required if column not in lowered]
    if missing:
        raise header_origin.problem(
            f"the header lacks {', '.join(missing)}; a long file has the columns {', '.join(LONG_COLUMNS)} "
            f"(and may add {', '.join(LONG_OPTIONAL)}), a wide file {', '.join(WIDE_COLUMNS)} and one column per "
            "question key"
        )
    if long:
        unknown = [name for name, low in zip(header, lowered, strict=True) if low not in LONG_COLUMNS + LONG_OPTIONAL]
        if unknown:
            raise header_origin.at(unknown[0]).problem(
                f"a long ratings file has no such column (it has {', '.join(LONG_COLUMNS + LONG_OPTIONAL)})"
            )
    else:
        for name in header:
            if name.lower() not in (*WIDE_COLUMNS, "seat") and not _COLUMN.match(name):
                raise header_origin.at(name).problem(
                    "not a question column: name it by the question's key, key:<seat> (e.g. goal:0), "
                    "key:g<role>.<goal> (e.g. goal_achieved:g0.1), or <key>_rationale with the same suffix"
                )
    names = lowered if long else [low if low in (*WIDE_COLUMNS, "seat") else name for name, low in
                                  zip(header, lowered, strict=True)]
    cells_read: list[tuple[Origin, dict[str, str]]] = []
    for number, cells in enumerate(rows(reader, file), start=2):
        if not any(cell.strip() for cell in cells):
            continue
        origin = Origin(file, f"row {number}")
        if len(cells) != len(header):
            raise origin.problem(f"has {len(cells)} cells; the header has {len(header)}")
        values = dict(zip(names, (restore_cell(cell) for cell in cells), strict=True))
        for column, value in values.items():
            check_storable_text(value, origin.at(column))
        cells_read.append((origin, values))
    if long:
        return "long", _group(_long_cells(origin, values) for origin, values in cells_read)
    return "wide", _group(_wide_cells(origin, values) for origin, values in cells_read)


def _read_jsonl(text: str, file: str) -> list[tuple[str, str, list[Cell], Origin]]:
    read = []
    for origin, record in json_lines(text, file):
        if not isinstance(record, dict):
            raise origin.problem(f"expected an object, got {describe(record)}")
        unknown = [name for name in record if name not in LONG_COLUMNS + LONG_OPTIONAL]
        if unknown:
            raise origin.at(unknown[0]).problem(
                f"a ratings line has no such field (it has {', '.join(LONG_COLUMNS + LONG_OPTIONAL)})"
            )
        values = {}
        for name in LONG_COLUMNS + LONG_OPTIONAL:
            value = record.get(name)
            if value is None:
                values[name] = ""
            elif name == "value" and isinstance(value, list) and all(isinstance(label, str) for label in value):
                values[name] = value
            elif isinstance(value, str):
                values[name] = value
            elif isinstance(value, int | float) and not isinstance(value, bool) and name in ("value", "seat"):
                values[name] = str(value)
            else:
                raise origin.at(name).problem(f"expected text{' or a number' if name in ('value', 'seat') else ''}, "
                                              f"got {describe(value)}")
        labels = values["value"] if isinstance(values["value"], list) else [values["value"]]
        for label in labels:
            read.append(_long_cells(origin, {**values, "value": label}))
    return read


def _ids(values: dict[str, str], origin: Origin) -> tuple[str, str]:
    ids = []
    for column in ("annotator_id", "episode_id"):
        value = values.get(column, "").strip()
        if not value:
            raise origin.at(column).problem("must not be empty")
        if len(value) > MAX_ID_LENGTH:
            raise origin.at(column).problem(f"is {len(value)} characters long; at most {MAX_ID_LENGTH} fit")
        ids.append(value)
    return ids[0], ids[1]


def _long_cells(origin: Origin, values: dict[str, str]) -> tuple[str, str, list[Cell], Origin]:
    annotator_id, episode_id = _ids(values, origin)
    key = values["question"].strip()
    if not key:
        raise origin.at("question").problem("must not be empty: give the question's key")
    rationale = values.get("rationale", "")
    cell = Cell(origin.at("value"), key, values.get("seat", "").strip(), values.get("goal", "").strip(),
                values["value"], rationale if rationale.strip() else None)
    return annotator_id, episode_id, [cell], origin


def _wide_cells(origin: Origin, values: dict[str, str]) -> tuple[str, str, list[Cell], Origin]:
    annotator_id, episode_id = _ids(values, origin)
    row_seat = values.get("seat", "").strip()
    cells = []
    for column, value in values.items():
        if column in (*WIDE_COLUMNS, "seat"):
            continue
        match = _COLUMN.match(column)
        key, seat, goal = match["key"], match["seat"] or "", match["goal"] or ""
        is_rationale = key.endswith(RATIONALE_SUFFIX)
        if is_rationale:
            key = key[: -len(RATIONALE_SUFFIX)]
        cells.append(Cell(origin.at(column), key, seat, goal, value, is_rationale=is_rationale, row_seat=row_seat,
                          wide=True))
    return annotator_id, episode_id, cells, origin


def _group(rows: Any) -> list[Rating]:
    ratings: dict[tuple[str, str], Rating] = {}
    for annotator_id, episode_id, cells, origin in rows:
        rating = ratings.setdefault((annotator_id, episode_id), Rating(annotator_id, episode_id, origin))
        if origin.place not in rating.places:
            rating.places.append(origin.place)
        rating.cells.extend(cells)
    return list(ratings.values())


# Checking a rating against the study and storing it


class _Study:
    """What the import needs of the study, read once: its items by episode id, and the pages ratings are read by."""

    def __init__(self, study: Study) -> None:
        self.study = study
        self.items: dict[str, list[StudyItem]] = defaultdict(list)
        for item in study.items.select_related("episode").order_by("position"):
            self.items[stable_id(item.episode)].append(item)
        self.pages: dict[int, ItemPage] = {}  # a fresh rating's page, per item (the same for every annotator)

    def item(self, rating: Rating) -> StudyItem:
        items = self.items.get(rating.episode_id, [])
        origin = rating.origin.at("episode_id")
        if len(items) > 1:
            raise origin.problem(
                f"episode {rating.episode_id!r} is in {len(items)} items of study {self.study.slug!r} (pairwise "
                "comparisons); a ratings file cannot tell them apart"
            )
        if items:
            return items[0]
        if _team_episode(self.study, rating.episode_id):
            raise origin.problem(
                f"episode {rating.episode_id!r} is not in study {self.study.slug!r}: add it to the study first, or "
                "leave its ratings out"
            )
        raise origin.problem(f"the team {self.study.team.slug!r} has no episode with the id {rating.episode_id!r}")


def _team_episode(study: Study, episode_id: str) -> bool:
    episodes = Episode.objects.of_team(study.team)
    if episode_id.startswith("parley-episode-") and episode_id.removeprefix("parley-episode-").isdigit():
        return episodes.filter(pk=int(episode_id.removeprefix("parley-episode-")), external_id="").exists()
    return episodes.filter(external_id=episode_id).exists()


def source_key(study: Study, annotator_id: str) -> str:
    """The stored stand-in for a file's annotator id: SHA-256 of the study's pk and the id."""
    return hashlib.sha256(f"parley-external-annotator:{study.pk}:{annotator_id}".encode()).hexdigest()


def external_annotator(study: Study, annotator_id: str, result: ImportResult) -> ExternalAnnotator:
    """The study's external annotator for the file's ``annotator_id``, made (with its account) on first sight."""
    key = source_key(study, annotator_id)
    found = ExternalAnnotator.objects.filter(study=study, source_key=key).select_related("user").first()
    if found is not None:
        return found
    number = (ExternalAnnotator.objects.filter(study=study).aggregate(last=Max("number"))["last"] or 0) + 1
    User = get_user_model()
    username = f"external-{study.pk}-{number}"
    while User.objects.filter(username=username).exists():
        username += "x"
    user = User.objects.create_user(username=username, password=None, is_active=False)  # no usable password
    result.created["external annotator"] += 1
    return ExternalAnnotator.objects.create(study=study, number=number, source_key=key, user=user)


def _page(context: _Study, item: StudyItem, user: AbstractBaseUser) -> tuple[ItemPage, Assignment | None]:
    """The item page the rating is read by, and the annotator's assignment if they already have one."""
    existing = Assignment.objects.filter(item=item, annotator=user).first()
    if existing is not None:
        return ItemPage(existing), existing
    if item.pk not in context.pages:
        probe = Assignment(item=item, annotator=user)
        probe.pk = 0  # an id no assignment has: the page then reads no stored annotation
        context.pages[item.pk] = ItemPage(probe, with_answers=False)
    return context.pages[item.pk], None


def _form(
    rating: Rating, page: ItemPage, ignored: set[str]
) -> tuple[dict[str, list[str]], dict[str, Origin], dict[str, str]]:
    """The rating as the item page's form: field name → values, where each field was read, and the column a
    missing field would be read from. Rationales of questions that ask for none go into ``ignored``."""
    questions = {question.key: question for question in [*page.questions, *page.probe_questions]}
    seats = [seat.position for seat in page.main_seats]
    goals = {
        f"{seat.role.position}.{goal.position}": goal.pk for seat in page.main_seats for goal in seat.role.goals.all()
    }
    data: dict[str, list[str]] = {}
    origins: dict[str, Origin] = {}
    for cell in rating.cells:
        question = questions.get(cell.key)
        if question is None:
            where = cell.origin if cell.origin.field != "value" else Origin(cell.origin.file, cell.origin.place,
                                                                            "question")
            raise where.problem(
                f"the study's instrument has no question {cell.key!r} (its keys: {', '.join(questions)})"
            )
        if question.kind == Question.Kind.SPAN:
            raise cell.origin.problem(f"{cell.key!r} asks for spans, which a ratings file cannot carry")
        if cell.wide and not cell.value.strip():
            continue  # an empty cell of a wide file: no answer (a required one is missed below, by name)
        seat, goal = _slot(question, cell, seats, goals, rating)
        name = field_name(question, seat, "rationale" if cell.is_rationale else "answer", goal=goal)
        if question.rationale == "none" and (cell.is_rationale or cell.rationale is not None):
            ignored.add("rationale")  # the item page would not ask for it either
            if cell.is_rationale:
                continue
        multi = question.kind == Question.Kind.MULTI_LABEL and not cell.is_rationale
        values = [label.strip() for label in cell.value.split(LABEL_SEPARATOR)] if multi and cell.wide else [cell.value]
        _put(data, origins, name, values, cell, multi=multi)
        if cell.rationale is not None and question.rationale != "none":
            _put(data, origins, field_name(question, seat, "rationale", goal=goal), [cell.rationale], cell, multi=False,
                 column="rationale")
    expected = {}
    for question in questions.values():
        if question.scope == Question.Scope.GOAL:
            slots = [(None, pk, f"g{place}") for place, pk in goals.items()]
        elif question.per_seat:
            slots = [(seat, None, str(seat)) for seat in seats]
        else:
            slots = [(None, None, "")]
        for seat, goal, suffix in slots:
            expected[field_name(question, seat, goal=goal)] = f"{question.key}:{suffix}" if suffix else question.key
            expected[field_name(question, seat, "rationale", goal=goal)] = (
                f"{question.key}{RATIONALE_SUFFIX}" + (f":{suffix}" if suffix else "")
            )
    return data, origins, expected


def _slot(
    question: Question, cell: Cell, seats: list[int], goals: dict[str, int], rating: Rating
) -> tuple[int | None, int | None]:
    """The seat position and goal pk the cell answers about, checked against the question's scope."""
    at = Origin(cell.origin.file, cell.origin.place)
    seat_origin = cell.origin if cell.wide and cell.seat else at.at("seat")
    if question.scope == Question.Scope.GOAL:
        if not cell.goal:
            raise cell.origin.problem(
                f"{question.key!r} is asked once per goal: give the goal as <role position>.<goal position> "
                f"(this episode has {', '.join(goals) or 'no goals'})"
            )
        if not _GOAL.match(cell.goal) or cell.goal not in goals:
            raise at.at("goal").problem(
                f"episode {rating.episode_id!r} has no goal {cell.goal!r}; its goals are {', '.join(goals) or 'none'}"
            )
        return None, goals[cell.goal]
    if cell.goal:
        raise at.at("goal").problem(f"{question.key!r} is not asked per goal; leave the goal out")
    if question.per_seat:
        seat = cell.seat or cell.row_seat
        if not seat:
            raise cell.origin.problem(
                f"{question.key!r} is asked once per character: give the seat "
                f"({', '.join(str(seat) for seat in seats)}; 0 is the first character)"
            )
        if not _SEAT.match(seat) or int(seat) not in seats:
            raise (seat_origin if cell.seat else at.at("seat")).problem(
                f"episode {rating.episode_id!r} has no seat {seat!r}; its seats are "
                f"{', '.join(str(seat) for seat in seats)}"
            )
        return int(seat), None
    if cell.seat:  # a wide row's own seat (row_seat) does not concern questions asked once per episode
        raise seat_origin.problem(f"{question.key!r} is asked once per episode, not per character; leave the seat out")
    return None, None


def _put(
    data: dict[str, list[str]], origins: dict[str, Origin], name: str, values: list[str], cell: Cell, *,
    multi: bool, column: str | None = None,
) -> None:
    """Add values to a form field; a single-valued field given twice must say the same thing both times."""
    origin = Origin(cell.origin.file, cell.origin.place, column) if column else cell.origin
    if name not in data:
        data[name] = list(values)
        origins[name] = origin
        return
    if multi:
        data[name].extend(value for value in values if value not in data[name])
        return
    if [value.strip() for value in data[name]] != [value.strip() for value in values]:
        first = origins[name]
        raise origin.problem(
            f"gives {values[0].strip()!r}, but {first.place}{f' ({first.field})' if first.field else ''} already gave "
            f"{data[name][0].strip()!r} for the same answer of this annotator about this episode"
        )


def _check(rating: Rating, page: ItemPage, ignored: set[str]) -> ParsedForm:
    """The rating read as the item page reads a submission, or the first problem, named by row and column."""
    data, origins, expected = _form(rating, page, ignored)
    parsed = page.parse(data, complete=True)
    for name, message in parsed.errors.items():
        if name in origins:
            raise origins[name].problem(message)
        raise rating.origin.at(expected.get(name, name)).problem(
            f"{message} (this annotator's rating of episode {rating.episode_id!r}, "
            f"{_places(rating)}, gives no such answer)"
        )
    return parsed


def _places(rating: Rating) -> str:
    """The rows (or lines) that give the rating: ``row 4``, ``rows 2, 3, 4, …``."""
    if len(rating.places) == 1:
        return rating.places[0]
    kind = rating.places[0].split()[0]
    numbers = [place.split()[-1] for place in rating.places[:3]] + (["…"] if len(rating.places) > 3 else [])
    return f"{kind}s {', '.join(numbers)}"


def _answers(parsed: ParsedForm) -> set[tuple[str, int | None, int | None, str, str]]:
    return {(a.question.key, a.seat, a.goal, a.value, a.rationale) for a in parsed.answers}


def _stored(assignment: Assignment) -> set[tuple[str, int | None, int | None, str, str]]:
    submitted = Annotation.objects.filter(assignment=assignment, status=Annotation.Status.SUBMITTED)
    annotation = submitted.order_by("-version").first()
    if annotation is None:
        return set()
    responses = [annotation.response_id] + ([annotation.probes_response_id] if annotation.probes_response_id else [])
    return {
        (key, seat, goal, value, reasoning)
        for key, seat, goal, value, reasoning in Answer.objects.filter(response_id__in=responses).values_list(
            "question__key", "seat_position", "goal_id", "value", "reasoning"
        )
    }


def _store(context: _Study, rating: Rating, result: ImportResult, touched: set[int]) -> None:
    """Check one rating and store it as a submitted annotation of its external annotator (or find it unchanged)."""
    item = context.item(rating)
    annotator = external_annotator(context.study, rating.annotator_id, result)
    page, existing = _page(context, item, annotator.user)
    ignored: set[str] = set()
    parsed = _check(rating, page, ignored)
    result.ignored.update(ignored)
    if existing is not None:
        stored, given = _stored(existing), _answers(parsed)
        if stored != given:
            differs = sorted({key for key, *_ in stored ^ given})
            raise rating.origin.problem(
                f"this annotator's rating of episode {rating.episode_id!r} is already in the study with other answers "
                f"(to {', '.join(differs)}); imported ratings are never overwritten: fix the file or leave this "
                "rating out"
            )
        result.unchanged["rating"] += 1
        return
    now = timezone.now()
    assignment = Assignment.objects.create(
        item=item, annotator=annotator.user, status=Assignment.Status.SUBMITTED, claimed_at=now, lease_expires_at=now,
        submitted_at=now,
    )
    drafts.submit(assignment, parsed, revision=0, seconds=0)
    result.created["rating"] += 1
    result.created["answer"] += len(parsed.answers)
    if item.kind == StudyItem.Kind.REGULAR:
        touched.add(item.pk)


def import_ratings(path: str | Path, *, study: Study, dry_run: bool = False) -> ImportResult:
    """Import one ratings file into ``study``, all or nothing; ``dry_run`` checks and writes, then rolls back.

    Raises ``ImportProblem`` naming the row (or line) and column (or field) of the first problem.
    """
    path = Path(path)
    return import_ratings_text(read_text(path), file=path.name, study=study, dry_run=dry_run)


def import_ratings_text(text: str, *, file: str, study: Study, dry_run: bool = False) -> ImportResult:
    """``import_ratings`` for a file already read (an upload): ``file`` is its name, for messages and to tell
    a CSV (``.csv``, or a first line with commas that is not JSON) from JSON Lines."""
    first_line = text.lstrip().split("\n", 1)[0]
    csv_file = file.lower().endswith(".csv") or (not first_line.startswith("{") and "," in first_line)
    shape, ratings = read_ratings(text, file, csv_file=csv_file)
    if not ratings:
        raise ImportProblem("holds no ratings", file=file)
    result = ImportResult(file=file, format=f"{shape} ratings", dry_run=dry_run)
    try:
        with transaction.atomic():
            context = _Study(study)
            for rating in ratings:  # every episode first: a stray id would otherwise show as an incomplete rating
                context.item(rating)
            touched: set[int] = set()
            for rating in ratings:
                _store(context, rating, result, touched)
            _note_overlap(study, touched, result)
            if dry_run:
                transaction.set_rollback(True)
    except DatabaseError as error:
        raise ImportProblem(f"the database refused the data: {error}".strip(), file=file) from error
    return result


def _note_overlap(study: Study, items: set[int], result: ImportResult) -> None:
    """Say when ratings took an item past k: they count, and Parley's annotators get no more of it."""
    if not items:
        return
    submitted = Assignment.objects.filter(item_id__in=items, status=Assignment.Status.SUBMITTED)
    counts = Counter(submitted.values_list("item_id", flat=True))
    over = sum(count > study.overlap for count in counts.values())
    if over:
        result.note(
            f"{over} item(s) now have more than k = {study.overlap} submitted ratings; they count in the report like "
            "any other."
        )
    full = sum(count >= study.overlap for count in counts.values())
    if full:
        result.note(f"{full} item(s) now have k ratings or more, so the study's annotators are not offered them again.")
