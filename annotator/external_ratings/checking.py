"""Checking one rating against the study: its cells made into the item page's form and read by the page's rules.

Each (annotator, episode) pair is one submitted annotation, read by ``ItemPage.parse`` with
``complete=True``: every value checked against the instrument (range, step, choices), every
required question answered and every required rationale written. A question the file never names
(a wide file without its column, a long file without a row for it) is not rated, rather than
missing; a question it names must be answered in each of its ratings as the item page asks. Each
problem is located by row and column (the field, in JSON Lines) and gathered, not raised.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from benchmark.importing import ImportProblem
from benchmark.importing.records import Origin
from benchmark.instruments.kinds import get_kind
from benchmark.instruments.targets import Target
from benchmark.models import Question

from ..answer_forms import ParsedForm, field_name
from ..item_page import ItemPage
from .problems import Problems
from .reading import RATIONALE_SUFFIX, Cell, Rating

LABEL_SEPARATOR = ";"
_SEAT = re.compile(r"^[0-9]+$")
_GOAL = re.compile(r"^[0-9]+\.[0-9]+$")


@dataclass
class _Form:
    """A rating as the item page's form: field name → values, where each was read, and for each field of the
    page the column it would be read from and its question's key."""

    data: dict[str, list[str]] = field(default_factory=dict)
    origins: dict[str, Origin] = field(default_factory=dict)
    columns: dict[str, str] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)


def check(rating: Rating, page: ItemPage, named: set[str], problems: Problems, ignored: set[str]) -> ParsedForm | None:
    """The rating read as the item page reads a submission, or None with its problems added to ``problems``.

    ``named`` are the question keys the file names anywhere; rationales of questions that ask for none
    go into ``ignored``."""
    before = problems.total
    form = _form(rating, page, problems, ignored)
    if problems.total > before:
        return None  # the page's own messages would only repeat these
    parsed = page.parse(form.data, complete=True)
    parsed.errors = {name: message for name, message in parsed.errors.items() if form.keys.get(name) in named}
    for name, message in parsed.errors.items():
        if name in form.origins:
            problems.add(form.origins[name].problem(message))
        else:
            problems.add(rating.origin.at(form.columns.get(name, name)).problem(
                f"{message} (this annotator's rating of episode {rating.episode_id!r}, "
                f"{_places(rating)}, gives no such answer)"
            ))
    return None if parsed.errors else parsed


def _form(rating: Rating, page: ItemPage, problems: Problems, ignored: set[str]) -> _Form:
    questions = {question.key: question for question in [*page.questions, *page.probe_questions]}
    seats = [seat.position for seat in page.main_seats]
    goals = {
        f"{seat.role.position}.{goal.position}": goal.pk for seat in page.main_seats for goal in seat.role.goals.all()
    }
    form = _Form()
    for cell in rating.cells:
        try:
            _add_cell(form, cell, questions, seats, goals, rating, ignored)
        except ImportProblem as problem:
            problems.add(problem)
    for question in questions.values():
        if question.scope == Question.Scope.GOAL:
            slots = [(Target.of_goal(pk), f"g{place}") for place, pk in goals.items()]
        elif question.per_seat:
            slots = [(Target.of_seat(seat), str(seat)) for seat in seats]
        else:
            slots = [(Target.episode(), "")]
        for target, suffix in slots:
            answer = field_name(question, target)
            rationale = field_name(question, target, "rationale")
            form.columns[answer] = f"{question.key}:{suffix}" if suffix else question.key
            form.columns[rationale] = f"{question.key}{RATIONALE_SUFFIX}" + (f":{suffix}" if suffix else "")
            form.keys[answer] = form.keys[rationale] = question.key
    return form


def _add_cell(
    form: _Form, cell: Cell, questions: dict[str, Question], seats: list[int], goals: dict[str, int],
    rating: Rating, ignored: set[str],
) -> None:
    question = questions.get(cell.key)
    if question is None:
        where = cell.origin if cell.origin.field != "value" else Origin(cell.origin.file, cell.origin.place, "question")
        raise where.problem(f"the study's instrument has no question {cell.key!r} (its keys: {', '.join(questions)})")
    if get_kind(question.kind).whole_transcript:
        raise cell.origin.problem(f"{cell.key!r} asks for spans, which a ratings file cannot carry")
    if cell.wide and not cell.value.strip():
        return  # an empty cell of a wide file: no answer (a required one is missed by name)
    target = _slot(question, cell, seats, goals, rating)
    name = field_name(question, target, "rationale" if cell.is_rationale else "answer")
    if question.rationale == "none" and (cell.is_rationale or cell.rationale is not None):
        ignored.add("rationale")  # the item page would not ask for it either
        if cell.is_rationale:
            return
    multi = get_kind(question.kind).multi_valued and not cell.is_rationale
    values = [label.strip() for label in cell.value.split(LABEL_SEPARATOR)] if multi and cell.wide else [cell.value]
    _put(form, name, values, cell, multi=multi)
    if cell.rationale is not None and question.rationale != "none":
        _put(form, field_name(question, target, "rationale"), [cell.rationale], cell, multi=False,
             column="rationale")


def _slot(
    question: Question, cell: Cell, seats: list[int], goals: dict[str, int], rating: Rating
) -> Target:
    """The target (a seat, a goal, the episode) the cell answers about, checked against the question's scope."""
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
        return Target.of_goal(goals[cell.goal])
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
        return Target.of_seat(int(seat))
    if cell.seat:  # a wide row's own seat (row_seat) does not concern questions asked once per episode
        raise seat_origin.problem(f"{question.key!r} is asked once per episode, not per character; leave the seat out")
    return Target.episode()


def _put(form: _Form, name: str, values: list[str], cell: Cell, *, multi: bool, column: str | None = None) -> None:
    """Add values to a form field; a single-valued field given twice must say the same thing both times."""
    origin = Origin(cell.origin.file, cell.origin.place, column) if column else cell.origin
    data, origins = form.data, form.origins
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


def _places(rating: Rating) -> str:
    """The rows (or lines) that give the rating: ``row 4``, ``rows 2, 3, 4, …``."""
    if len(rating.places) == 1:
        return rating.places[0]
    kind = rating.places[0].split()[0]
    numbers = [place.split()[-1] for place in rating.places[:3]] + (["…"] if len(rating.places) > 3 else [])
    return f"{kind}s {', '.join(numbers)}"


Answers = set[tuple[str, Target, str, str]]


def answers(parsed: ParsedForm) -> Answers:
    """What a rating says, comparable with what is stored (``stored``)."""
    return {(a.question.key, a.target, a.value, a.rationale) for a in parsed.answers}
