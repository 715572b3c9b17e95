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
size of the study.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

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


def study_quality(study: Study) -> dict[int, AnnotatorQuality]:
    """Quality figures per annotator id, for every annotator with a checked or fast submission."""
    # An item's keys by (question, target); a key is about the episode or a seat (``ItemKey.seat_position``).
    keys: dict[int, dict[tuple[int, Target], KnownAnswer]] = defaultdict(dict)
    item_kinds: dict[int, str] = {}
    for row in ItemKey.objects.filter(item__study=study).values(
        "item_id", "item__kind", "question_id", "seat_position", "value", "tolerance"
    ):
        target = Target.from_columns(seat_position=row["seat_position"])
        keys[row["item_id"]][(row["question_id"], target)] = KnownAnswer(row["value"], row["tolerance"])
        item_kinds[row["item_id"]] = row["item__kind"]

    # Each assignment's latest submitted version of a keyed item, then that version's answers.
    latest: dict[int, tuple[int, int, int, int]] = {}  # assignment -> (version, annotation, annotator, item)
    for annotation_id, assignment_id, annotator_id, item_id, version in Annotation.objects.filter(
        status=Annotation.Status.SUBMITTED, assignment__item_id__in=list(keys)
    ).values_list("pk", "assignment_id", "assignment__annotator_id", "assignment__item_id", "version"):
        if version > latest.get(assignment_id, (0,))[0]:
            latest[assignment_id] = (version, annotation_id, annotator_id, item_id)
    given: dict[int, dict[tuple[int, Target], tuple[str, float | None]]] = defaultdict(dict)
    counted = {row[1] for row in latest.values()}
    answers = Answer.objects.filter(
        response__annotation__status=Annotation.Status.SUBMITTED,
        response__annotation__assignment__item_id__in=list(keys),
    ).values_list("response__annotation__id", "question_id", "value", "number", *COLUMNS)
    for annotation_id, question_id, value, number, *target in answers:
        if annotation_id in counted:
            given[annotation_id][(question_id, Target.from_columns(*target))] = (value, number)

    quality: dict[int, AnnotatorQuality] = defaultdict(AnnotatorQuality)
    for _version, annotation_id, annotator_id, item_id in latest.values():
        answered = given[annotation_id]
        results = [
            (question_seat in answered and matches(key, *answered[question_seat]))
            for question_seat, key in keys[item_id].items()
        ]
        figures = quality[annotator_id]
        if item_kinds[item_id] == StudyItem.Kind.ATTENTION:
            if all(results):
                figures.attention_passed += 1
            else:
                figures.attention_failed += 1
        else:
            figures.gold_checked += len(results)
            figures.gold_correct += sum(results)

    fast = (
        Assignment.objects.filter(
            item__study=study, status=Assignment.Status.SUBMITTED, seconds_spent__lt=study.min_seconds_per_item
        )
        .values_list("annotator_id")
        .annotate(count=Count("pk"))
        .order_by()
    )
    for annotator_id, count in fast:
        quality[annotator_id].fast_submissions = count
    return dict(quality)
