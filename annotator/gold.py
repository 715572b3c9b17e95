"""A study's gold: the adjudicated answers of its items, read by reports, exports, the ratings import and quality.

Each study has one gold respondent (``Respondent`` of kind ``gold``, labelled ``gold``; its prompt version
names the study, since the respondent rows of people and models are shared across studies and the gold of
two studies must not be). An item's gold answers are the ``Answer`` rows of one ``Response`` of that
respondent about the item's episode, linked from the item's ``Curation``; while the curation is a draft
the response is a draft too, so nothing that reads submitted responses (reports, the comparison with other
respondents) counts it until it is final. Gold is never an ``Annotation``, so no inter-annotator
statistic ever sees it as one more annotator.

``annotator.adjudication`` writes gold; everything else reads it through ``gold_answers`` or ``gold_values``.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmark.instruments.respondents import find_respondent
from benchmark.instruments.targets import COLUMNS, Target
from benchmark.models import Answer, Respondent, Response

from .models import Curation, Study

GOLD = "gold"  # the gold respondent's label: its name in reports and exports, and in a ratings file's annotator_id


def gold_respondent(study: Study) -> Respondent:
    """The study's one gold respondent, made on first use (two requests making it at once get the same row)."""
    return find_respondent(Respondent, {
        "kind": Respondent.Kind.GOLD, "user": None, "model": "", "label": GOLD, "prompt_version": f"study {study.pk}",
    })


@dataclass(frozen=True)
class GoldAnswer:
    """One gold answer of one item (a multi-label answer: one per label, as ``Answer`` rows are)."""

    item_id: int
    item_position: int  # from 0; the item's number in exports is position + 1
    episode_id: int
    question_id: int
    question_key: str
    target: Target
    value: str
    number: float | None


def gold_answers(study: Study, *, final_only: bool = True) -> list[GoldAnswer]:
    """Every gold answer of ``study`` in item and question order, in one query; only final curations unless
    ``final_only`` is False (a draft is the curator's work in progress, not gold yet)."""
    answers = Answer.objects.filter(response__curation__item__study=study)
    if final_only:
        answers = answers.filter(response__curation__status=Curation.Status.FINAL,
                                 response__status=Response.Status.SUBMITTED)
    rows = answers.order_by("response__curation__item__position", "question__position", "pk").values_list(
        "response__curation__item_id", "response__curation__item__position", "response__episode_id",
        "question_id", "question__key", "value", "number", *COLUMNS,
    )
    return [
        GoldAnswer(item_id, position, episode_id, question_id, key, Target.from_columns(*target), value, number)
        for item_id, position, episode_id, question_id, key, value, number, *target in rows
    ]


def gold_values(study: Study) -> dict[tuple[int, str, Target], list[str]]:
    """(item pk, question key, target) -> the final gold value(s), sorted (several only for a multi-label answer)."""
    found: dict[tuple[int, str, Target], list[str]] = {}
    for answer in gold_answers(study):
        found.setdefault((answer.item_id, answer.question_key, answer.target), []).append(answer.value)
    return {key: sorted(values) for key, values in found.items()}
