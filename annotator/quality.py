"""Quality control for a study: accuracy on gold items, attention checks, and too-fast submissions.

Gold and attention items carry known answers (``ItemKey``). Each annotator's latest submitted
version of such an item is compared with its keys:

- **gold accuracy** is the share of known answers an annotator matched, over all gold items they
  submitted (a question left unanswered counts as a miss);
- an **attention check** is passed when every known answer of the item is matched, failed
  otherwise;
- a submission is **fast** when the time spent on the item page (``Assignment.seconds_spent``,
  summed over visits) is below the study's ``min_seconds_per_item``.

Numbers match when they differ by at most the key's tolerance; other answers match when the text
is equal after trimming surrounding space. Everything is computed in four queries, whatever the
size of the study. Training and qualification items have known answers too, but they are
scored apart (``annotator.qualification``) and never count here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count

from benchmark.instruments.targets import COLUMNS, Target
from benchmark.models import Answer

from .models import Annotation, Assignment, ItemKey, Study, StudyItem


@dataclass
class AnnotatorQuality:
    """One annotator's quality figures in one study."""

    gold_checked: int = 0
    gold_correct: int = 0
    attention_passed: int = 0
    attention_failed: int = 0
    fast_submissions: int = 0

    @property
    def gold_accuracy(self) -> float | None:
        """Share of known answers on gold items that were matched; None before any gold item."""
        return self.gold_correct / self.gold_checked if self.gold_checked else None

    @property
    def attention_checks(self) -> int:
        return self.attention_passed + self.attention_failed


@dataclass(frozen=True)
class KnownAnswer:
    value: str
    tolerance: float


def matches(key: KnownAnswer, value: str, number: float | None) -> bool:
    """Whether an answer (its text and, for numeric kinds, its number) matches a known answer."""
    if number is not None:
        try:
            return abs(number - float(key.value)) <= key.tolerance
        except ValueError:
            pass
    return value.strip() == key.value.strip()


CHECK_KINDS = (StudyItem.Kind.GOLD, StudyItem.Kind.ATTENTION)


@dataclass(frozen=True)
class KeyedResult:
    """One annotator's latest submitted version of one item with known answers, scored against them."""

    annotator_id: int
    item_id: int
    kind: str
    matched: int
    checked: int
    submitted_at: datetime | None  # when the assignment was first submitted

    @property
    def passed(self) -> bool:
        """Every known answer matched: an attention check passed, a gold check or a qualification item right."""
        return self.matched == self.checked


def keyed_results(
    study: Study, kinds: Sequence[str] = CHECK_KINDS, *, annotator_id: int | None = None
) -> list[KeyedResult]:
    """Each assignment's latest submitted version of a keyed item of ``kinds`` (one annotator's, or everyone's),
    scored against the item's keys, in three queries.

    Gold and attention items are the checks of regular work; training and qualification items are scored
    apart (``annotator.qualification``) and never mixed into these figures.
    """
    # An item's keys by (question, target); a key is about the episode or a seat (``ItemKey.seat_position``).
    keys: dict[int, dict[tuple[int, Target], KnownAnswer]] = defaultdict(dict)
    item_kinds: dict[int, str] = {}
    for row in ItemKey.objects.filter(item__study=study, item__kind__in=kinds).values(
        "item_id", "item__kind", "question_id", "seat_position", "value", "tolerance"
    ):
        target = Target.from_columns(seat_position=row["seat_position"])
        keys[row["item_id"]][(row["question_id"], target)] = KnownAnswer(row["value"], row["tolerance"])
        item_kinds[row["item_id"]] = row["item__kind"]
    if not keys:
        return []

    # Each assignment's latest submitted version of a keyed item, then that version's answers.
    mine = {} if annotator_id is None else {"assignment__annotator_id": annotator_id}
    latest: dict[int, tuple[int, int, int, int, datetime | None]] = {}  # assignment -> (version, annotation, ...)
    for annotation_id, assignment_id, annotator, item_id, version, submitted_at in Annotation.objects.filter(
        status=Annotation.Status.SUBMITTED, assignment__item_id__in=list(keys), **mine
    ).values_list("pk", "assignment_id", "assignment__annotator_id", "assignment__item_id", "version",
                  "assignment__submitted_at"):
        if version > latest.get(assignment_id, (0,))[0]:
            latest[assignment_id] = (version, annotation_id, annotator, item_id, submitted_at)
    given: dict[int, dict[tuple[int, Target], tuple[str, float | None]]] = defaultdict(dict)
    counted = {row[1] for row in latest.values()}
    answers = Answer.objects.filter(
        response__annotation__status=Annotation.Status.SUBMITTED,
        response__annotation__assignment__item_id__in=list(keys),
        **({} if annotator_id is None else {"response__annotation__assignment__annotator_id": annotator_id}),
    ).values_list("response__annotation__id", "question_id", "value", "number", *COLUMNS)
    for annotation_id, question_id, value, number, *target in answers:
        if annotation_id in counted:
            given[annotation_id][(question_id, Target.from_columns(*target))] = (value, number)

    results = []
    for _version, annotation_id, annotator, item_id, submitted_at in latest.values():
        answered = given[annotation_id]
        matched = [
            question_target in answered and matches(key, *answered[question_target])
            for question_target, key in keys[item_id].items()
        ]
        results.append(KeyedResult(annotator, item_id, item_kinds[item_id], sum(matched), len(matched), submitted_at))
    return results


def study_quality(study: Study, results: list[KeyedResult] | None = None) -> dict[int, AnnotatorQuality]:
    """Quality figures per annotator id, for every annotator with a checked or fast submission; ``results``:
    the study's ``keyed_results`` when the caller has read them already."""
    quality: dict[int, AnnotatorQuality] = defaultdict(AnnotatorQuality)
    for result in keyed_results(study) if results is None else results:
        figures = quality[result.annotator_id]
        if result.kind == StudyItem.Kind.ATTENTION:
            if result.passed:
                figures.attention_passed += 1
            else:
                figures.attention_failed += 1
        else:
            figures.gold_checked += result.checked
            figures.gold_correct += result.matched

    fast = (
        Assignment.objects.filter(
            item__study=study, status=Assignment.Status.SUBMITTED, seconds_spent__lt=study.min_seconds_per_item
        )
        .exclude(item__kind__in=(StudyItem.Kind.TRAINING, StudyItem.Kind.QUALIFICATION))
        .values_list("annotator_id")
        .annotate(count=Count("pk"))
        .order_by()
    )
    for annotator_id, count in fast:
        quality[annotator_id].fast_submissions = count
    return dict(quality)
