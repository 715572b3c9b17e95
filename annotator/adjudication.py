"""Adjudication: a curator resolves an item's disagreements, question by question, into its gold answers.

Who curates: the study's team's researchers, and members of its pool marked ``Membership.is_curator``
(a trusted annotator, removed members excepted). **No one curates an item they rated**: gold is what the
others' answers are measured against (each annotator's agreement with gold, MACE), so a curator who judged
their own answer would be scoring themselves; they can still open the item to read it. Only regular items are
adjudicated: gold, attention, training and qualification items carry their known answers already.

How: for each cell of the item (``annotator.item_review``: one question about one target) the curator picks
one annotator's answer, or writes their own (checked by ``benchmark.instruments.values``, the rule every
answer follows), with an optional note. A save stores every decision made so far as a **draft**; **finalise**
needs a decision for every cell. Each save is all or nothing: the gold ``Response`` (``annotator.gold``) gets
exactly the decided answers, every ``CuratedDecision`` says where its answer came from, and the study's log
gets one event, in one transaction that first locks the item, so two curators saving at once are taken one
after the other. A final curation can be saved again: as a draft (reopened: no longer gold) or final.

The **queue** is the study's regular items whose latest submitted ratings disagree in at least one cell,
with how many are finalised.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from benchmark.instruments.kinds import get_kind
from benchmark.instruments.targets import COLUMNS, Target
from benchmark.instruments.values import check_labels, check_value, numeric_range
from benchmark.models import Answer, Question, Response

from . import study_log
from .gold import gold_respondent
from .item_review import Cell, ItemReview
from .models import Assignment, CuratedDecision, Curation, Membership, Study, StudyItem
from .reports import latest_submitted

OWN = "own"


class CurationRefused(Exception):
    """The decisions cannot be saved; ``errors`` names each form field and its problem."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(errors.values()))
        self.errors = errors


def is_curator(user: AbstractBaseUser, study: Study) -> bool:
    """A trusted annotator of the study's pool (researchers of its team curate anyway)."""
    return Membership.objects.filter(study=study, annotator=user, is_curator=True, removed_at__isnull=True).exists()


def rated_it(user: AbstractBaseUser, item: StudyItem) -> bool:
    """Whether ``user`` submitted a rating of ``item`` (and so may not curate it)."""
    return Assignment.objects.filter(item=item, annotator=user, status=Assignment.Status.SUBMITTED).exists()


@dataclass
class Decided:
    """One gold answer decided: to ``question`` about ``target``."""

    question: Question
    target: Target
    picked: int | None  # the annotation whose answer was taken; None: the curator's own (or imported)
    values: list[str]
    number: float | None
    reasoning: str
    note: str


@dataclass
class CellForm:
    """One cell of the adjudication form: the decision so far (posted, or stored) and the own-answer widget."""

    cell: Cell
    pick: str  # "" (undecided), OWN, or an annotation's pk
    own: list[str]
    note: str
    error: str = ""
    options: list[dict[str, Any]] = field(default_factory=list)
    several: bool = False
    low: float | None = None
    high: float | None = None
    step: float | None = None


def read_decisions(cells: list[Cell], data: Mapping[str, Any], *, final: bool) -> list[Decided]:
    """The decisions posted for ``cells``; raises ``CurationRefused`` naming every field with a problem."""
    decided, errors = [], {}
    for cell in cells:
        name = f"pick-{cell.suffix}"
        pick = str(data.get(name, "")).strip()
        note = str(data.get(f"note-{cell.suffix}", "")).strip()
        where = f"{cell.question.name} ({cell.target_label})"
        if not pick:
            if final:
                errors[name] = f"{where}: pick an annotator's answer or write your own before finalising."
            continue
        if pick == OWN:
            own = _own_values(data, f"own-{cell.suffix}")
            values, number, problem = _checked(cell, own)
            if problem:
                errors[f"own-{cell.suffix}"] = f"{where}: {problem}"
                continue
            decided.append(Decided(cell.question, cell.target, None, values, number, "", note))
            continue
        given = next((entry for entry in cell.given if str(entry.rater.annotation_id) == pick), None)
        if given is None:
            errors[name] = f"{where}: the answer picked is not one of this item's ratings; pick again."
            continue
        decided.append(Decided(cell.question, cell.target, given.rater.annotation_id, list(given.values),
                               given.number, given.reasoning, note))
    if errors:
        raise CurationRefused(errors)
    return decided


def _own_values(data: Mapping[str, Any], name: str) -> list[str]:
    values = data.getlist(name) if hasattr(data, "getlist") else [data.get(name, "")]
    return [str(value).strip() for value in values if str(value or "").strip()]


def _checked(cell: Cell, own: list[str]) -> tuple[list[str], float | None, str]:
    """The curator's own answer as stored (values, number) and a problem ("" when fine)."""
    if not own:
        return [], None, "write your own answer, or pick an annotator's."
    if get_kind(cell.question.kind).posts_several_values:
        labels, problem = check_labels(cell.question, own)
        return labels, None, problem
    if len(own) > 1:
        return [], None, "give one answer."
    value, number, problem = check_value(cell.question, own[0])
    return [value], number, problem


def save_curation(
    item: StudyItem, curator: AbstractBaseUser, decided: list[Decided], *, final: bool, note: str = "",
    cells: int | None = None, log: str = "",
) -> Curation:
    """Store ``decided`` as the item's gold, all or nothing, and log it (``log`` adds to the event's sentence);
    ``final`` makes it gold."""
    study = item.study
    if final and cells is not None and len(decided) < cells:
        raise CurationRefused({"": f"{cells - len(decided)} question(s) are still undecided; decide them first."})
    status = Curation.Status.FINAL if final else Curation.Status.DRAFT
    with transaction.atomic():
        StudyItem.objects.select_for_update().filter(pk=item.pk).first()  # one save of an item at a time
        curation = Curation.objects.filter(item=item).select_related("response").first()
        response_status = Response.Status.SUBMITTED if final else Response.Status.DRAFT
        if curation is None:
            response = Response.objects.create(
                instrument=study.instrument, episode_id=item.episode_id, respondent=gold_respondent(study),
                status=response_status,
            )
            curation = Curation.objects.create(item=item, response=response, curator=curator, status=status, note=note)
            was = ""
        else:
            was = curation.status
            curation.response.answers.all().delete()
            curation.decisions.all().delete()
            Response.objects.filter(pk=curation.response_id).update(status=response_status)
            curation.curator, curation.status, curation.note = curator, status, note
            curation.save(update_fields=["curator", "status", "note", "updated_at"])
        Answer.objects.bulk_create(
            Answer(response_id=curation.response_id, question=entry.question, value=value,
                   number=entry.number, reasoning=entry.reasoning, **entry.target.columns())
            for entry in decided for value in entry.values
        )
        CuratedDecision.objects.bulk_create(
            CuratedDecision(curation=curation, question=entry.question, seat_position=entry.target.seat,
                            goal_id=entry.target.goal, turn=entry.target.turn, picked_id=entry.picked, note=entry.note)
            for entry in decided
        )
        own = sum(entry.picked is None for entry in decided)
        log_note = f" ({log})" if log else ""
        action = "curation.final" if final else ("curation.reopened" if was == Curation.Status.FINAL else
                                                 "curation.draft")
        verb = {"curation.final": "finalised", "curation.reopened": "reopened as a draft",
                "curation.draft": "saved as a draft"}[action]
        study_log.record(
            study, action, f"Gold of item {item.position + 1} {verb}: {len(decided)} answer(s) decided, "
            f"{len(decided) - own} picked from an annotator, {own} written by the curator{log_note}.", actor=curator,
        )
    return curation


def cell_forms(review: ItemReview, curation: Curation | None, posted: Mapping[str, Any] | None = None,
               errors: Mapping[str, str] | None = None) -> list[CellForm]:
    """The form's cells: what was posted (after a refused save), else the stored decisions, else for a cell
    where every annotator agrees their answer picked, and nothing for one where they disagree."""
    stored: dict[str, tuple[str, list[str], str]] = {}
    if curation is not None and posted is None:
        answers: dict[tuple[int, Target], list[str]] = defaultdict(list)
        for question_id, value, *columns in curation.response.answers.values_list("question_id", "value", *COLUMNS):
            answers[(question_id, Target.from_columns(*columns))].append(value)
        for decision in curation.decisions.all():
            target = Target(seat=decision.seat_position, goal=decision.goal_id, turn=decision.turn)
            cell = next((c for c in review.cells if c.question.pk == decision.question_id and c.target == target),
                        None)
            if cell is not None:
                pick = OWN if decision.picked_id is None else str(decision.picked_id)
                stored[cell.suffix] = (pick, answers.get((decision.question_id, target), []), decision.note)
    errors = errors or {}
    forms = []
    for cell in review.cells:
        if posted is not None:
            pick, own, note = (str(posted.get(f"pick-{cell.suffix}", "")), _own_values(posted, f"own-{cell.suffix}"),
                               str(posted.get(f"note-{cell.suffix}", "")))
        elif cell.suffix in stored:
            pick, own, note = stored[cell.suffix]
        elif curation is None and cell.agreement.agrees and cell.given:
            pick, own, note = str(cell.given[0].rater.annotation_id), [], ""
        else:
            pick, own, note = "", [], ""
        kind = get_kind(cell.question.kind)
        form = CellForm(cell, pick, own if pick == OWN else [], note,
                        error=errors.get(f"pick-{cell.suffix}") or errors.get(f"own-{cell.suffix}", ""),
                        options=kind.widget_options(cell.question), several=kind.posts_several_values)
        if kind.numeric and not form.options:
            form.low, form.high, form.step = numeric_range(cell.question)
        forms.append(form)
    return forms


@dataclass
class QueueRow:
    item: StudyItem
    ratings: int
    cells: int
    disagreements: int
    curation: Curation | None


def adjudication_queue(study: Study) -> list[QueueRow]:
    """The study's regular items whose ratings disagree somewhere, and any item already curated, in item order;
    a fixed number of queries however large the study."""
    regular = latest_submitted(study).filter(assignment__item__kind=StudyItem.Kind.REGULAR)
    whole = [q.pk for q in study.instrument.questions.all() if get_kind(q.kind).whole_transcript]
    answers: dict[int, dict[tuple[int, Target], dict[int, list[str]]]] = defaultdict(lambda: defaultdict(dict))
    ratings: dict[int, set[int]] = defaultdict(set)
    rows = Answer.objects.filter(response__annotation__in=regular.values("pk")).exclude(question_id__in=whole)
    for item_id, annotation_id, question_id, value, *columns in rows.values_list(
        "response__annotation__assignment__item_id", "response__annotation", "question_id", "value", *COLUMNS,
    ):
        answers[item_id][(question_id, Target.from_columns(*columns))].setdefault(annotation_id, []).append(value)
    for item_id, annotation_id in regular.values_list("assignment__item_id", "pk"):
        ratings[item_id].add(annotation_id)
    curations = {c.item_id: c for c in Curation.objects.filter(item__study=study).select_related("curator")}
    queue = []
    for item in study.items.filter(kind=StudyItem.Kind.REGULAR).select_related("episode").order_by("position"):
        cells = answers.get(item.pk, {})
        split = sum(len({tuple(sorted(values)) for values in given.values()}) > 1 for given in cells.values())
        if split or item.pk in curations:
            queue.append(QueueRow(item, len(ratings.get(item.pk, ())), len(cells), split, curations.get(item.pk)))
    return queue
