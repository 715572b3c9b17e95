"""One item's ratings side by side: what the per-item review page and adjudication read.

For an item of a study, every annotator's latest submitted version (as the report counts them) gives its
answers, cell by cell: a **cell** is one question about one target (the episode, a seat, a goal, a turn),
holding each annotator's answer and the cell's agreement (``benchmark.stats.item_agreement``: the share
agreeing with the plurality, Fleiss' pairwise agreement, and the spread of numeric answers). Span questions
are not cells: their spans are shown on the transcript, and are not adjudicated (gold holds answers).

Annotators are named by their pseudonym (``a<pk>``), as in exports and reports: a curator may be one of
them, and needs no one's username to weigh an answer. Other respondents (judges, interviewed agents,
participants, annotators of other studies) are read through ``benchmark.instruments.answers``, the path the
report compares with; when the study blinds its curators (``Study.curators_blinded``) they are named by
their kind and a number only, never by their model.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from benchmark.instruments.answers import respondent_answers
from benchmark.instruments.kinds import get_kind
from benchmark.instruments.respondents import pseudonym
from benchmark.instruments.targets import COLUMNS, Target
from benchmark.models import Answer, Question, Respondent, Response, Seat, Turn
from benchmark.stats.item_agreement import ItemAgreement, item_agreement

from .answer_forms import field_name
from .exports import span_text
from .models import Span, StudyItem
from .reports import latest_submitted

OTHER_KINDS = (Respondent.Kind.JUDGE, Respondent.Kind.AGENT, Respondent.Kind.PARTICIPANT, Respondent.Kind.ANNOTATOR)


@dataclass
class Rater:
    """One annotator's latest submitted version of the item."""

    annotation_id: int
    user_id: int
    name: str  # their pseudonym
    generated_by: str


@dataclass
class Given:
    """What one annotator answered in one cell (a multi-label answer's labels together)."""

    rater: Rater
    values: list[str]
    number: float | None
    reasoning: str

    @property
    def shown(self) -> str:
        return "; ".join(self.values)

    @property
    def comparable(self) -> Any:
        return tuple(self.values) if len(self.values) != 1 else self.values[0]


@dataclass
class Cell:
    question: Question
    target: Target
    target_label: str
    given: list[Given]
    agreement: ItemAgreement
    others: list[tuple[str, str]] = field(default_factory=list)  # (respondent shown, value) of other respondents

    @property
    def suffix(self) -> str:
        """The cell's part of its form fields' names, as the annotation form names them: ``<key>``,
        ``<key>-<seat>``, ``<key>-g<goal>``, ``<key>-t<turn>``."""
        return field_name(self.question, self.target).removeprefix("answer-")

    @property
    def disagrees(self) -> bool:
        return not self.agreement.agrees


@dataclass
class SpanMark:
    rater: str
    label: str
    text: str
    where: str


@dataclass
class TurnRow:
    number: int
    speaker: str
    content: str
    marks: list[SpanMark]


@dataclass
class ItemReview:
    item: StudyItem
    raters: list[Rater]
    cells: list[Cell]
    turns: list[TurnRow]
    spans: int

    @property
    def disagreements(self) -> int:
        return sum(cell.disagrees for cell in self.cells)


def raters(item: StudyItem) -> list[Rater]:
    """The item's latest submitted versions, one per annotator, in the order they were claimed."""
    rows = latest_submitted(item.study).filter(assignment__item=item).order_by("assignment__claimed_at", "pk")
    return [
        Rater(pk, user_id, pseudonym(user_id), generated_by)
        for pk, user_id, generated_by in rows.values_list("pk", "assignment__annotator_id", "generated_by")
    ]


def cells_of(questions: list[Question], given: list[tuple[Rater, int, Target, str, float | None, str]],
             labels: dict[Target, str]) -> list[Cell]:
    """Group answers (rater, question pk, target, value, number, reasoning) into cells, in question then
    target order; span questions have none."""
    by_cell: dict[tuple[int, Target], dict[int, Given]] = defaultdict(dict)
    for rater, question_id, target, value, number, reasoning in given:
        entry = by_cell[(question_id, target)].get(rater.annotation_id)
        if entry is None:
            by_cell[(question_id, target)][rater.annotation_id] = Given(rater, [value], number, reasoning)
        else:
            entry.values.append(value)
    cells = []
    for question in questions:
        if get_kind(question.kind).whole_transcript:
            continue
        numeric = get_kind(question.kind).numeric
        targets = sorted((target for question_id, target in by_cell if question_id == question.pk),
                         key=lambda target: target.sort_key)
        for target in targets:
            answers = list(by_cell[(question.pk, target)].values())
            for entry in answers:
                entry.values.sort()
            numbers = [entry.number for entry in answers if entry.number is not None] if numeric else None
            agreement = item_agreement([entry.comparable for entry in answers], numbers=numbers or None)
            cells.append(Cell(question, target, labels.get(target, target.describe()), answers, agreement))
    return cells


def review(item: StudyItem, *, blinded: bool) -> ItemReview:
    """Everything the review page shows of ``item``; ``blinded`` hides the models of other respondents."""
    study = item.study
    rated = raters(item)
    by_annotation = {rater.annotation_id: rater for rater in rated}
    questions = list(study.instrument.questions.order_by("position"))
    seats = list(Seat.objects.filter(episode_id=item.episode_id).select_related("character"))
    seat_names = {seat.position: seat.character.name for seat in seats}
    rows = Answer.objects.filter(response__annotation__in=list(by_annotation)).order_by("question__position", "pk")
    given, labels = [], {}
    for annotation_id, question_id, value, number, reasoning, goal_text, *columns in rows.values_list(
        "response__annotation", "question_id", "value", "number", "reasoning", "goal__text", *COLUMNS,
    ):
        target = Target.from_columns(*columns)
        labels[target] = target.describe(seat_names, {target.goal: goal_text} if target.goal else None)
        given.append((by_annotation[annotation_id], question_id, target, value, number, reasoning))
    cells = cells_of(questions, given, labels)
    _add_others(item, cells, questions, blinded=blinded)
    spans = list(Span.objects.filter(annotation_id__in=list(by_annotation)).order_by("start_turn", "pk"))
    return ItemReview(item, rated, cells, _turns(item, seats, spans, by_annotation), len(spans))


def _add_others(item: StudyItem, cells: list[Cell], questions: list[Question], *, blinded: bool) -> None:
    """Other respondents' submitted answers about the item's episode to the same questions (or questions
    measuring the same dimension), this study's annotations and gold left out."""
    asked = [question for question in questions if not get_kind(question.kind).whole_transcript]
    if not cells or not asked:
        return
    found = respondent_answers(
        [item.episode_id], asked, kinds=OTHER_KINDS,
        exclude_responses=Response.objects.filter(annotation__assignment__item__study=item.study),
    )
    names: dict[tuple[str, str, str], str] = {}
    for row in found:
        key = row.respondent_key
        if key not in names:
            names[key] = _respondent_label(row.respondent_kind, row.respondent, row.prompt_version, blinded,
                                           sum(1 for other in names if other[0] == row.respondent_kind) + 1)
    by_question = {question.pk: question for question in asked}
    for cell in cells:
        for row in found:
            same = row.question_id == cell.question.pk or (
                cell.question.dimension and row.dimension == cell.question.dimension
                and row.question_id not in by_question
            )
            if same and row.target == cell.target:
                cell.others.append((names[row.respondent_key], row.value))


def _respondent_label(kind: str, name: str, prompt_version: str, blinded: bool, number: int) -> str:
    """How the page names another respondent: by kind and number when blinded, else by model or pseudonym."""
    shown_kind = Respondent.Kind(kind).label
    if blinded:
        return f"{shown_kind} {number}"
    person, _, pk = name.partition(":")
    if person == "user" and pk.isdigit():
        return f"{shown_kind} {pseudonym(int(pk))}"
    return f"{shown_kind} {name}" + (f" ({prompt_version})" if prompt_version else "")


def _turns(item: StudyItem, seats: list[Seat], spans: list[Span], by_annotation: dict[int, Rater]) -> list[TurnRow]:
    """The transcript the item shows (its window, when it shows one), each turn with the spans that touch it."""
    turns = Turn.objects.filter(episode_id=item.episode_id).order_by("index")
    if item.windowed:
        turns = turns.filter(index__gte=item.first_turn, index__lte=max(last for _, last in item.windows()))
    turns = list(turns)
    contents = {turn.index: turn.content for turn in turns}
    names = {seat.pk: seat.character.name for seat in seats}
    rows = []
    for turn in turns:
        marks = [
            SpanMark(by_annotation[span.annotation_id].name, span.get_label_display(),
                     span_text(_within(span, turn.index), contents), _where(span))
            for span in spans if span.start_turn <= turn.index <= span.end_turn
        ]
        rows.append(TurnRow(turn.number, names.get(turn.seat_id, ""), turn.content, marks))
    return rows


def _within(span: Span, index: int) -> Span:
    """The part of ``span`` inside turn ``index``, as a span of that turn alone (for its text)."""
    return Span(
        start_turn=index, end_turn=index,
        start_char=span.start_char if index == span.start_turn else None,
        end_char=span.end_char if index == span.end_turn else None,
    )


def _where(span: Span) -> str:
    target = Target.of_span(span.start_turn, span.end_turn)
    return target.describe()
