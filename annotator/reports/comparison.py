"""Whom a study's human answers are compared with, and the points of that comparison.

The candidates are other respondents' answers about the study's episodes, read through
``benchmark.instruments.answers`` whatever their kind (a judge, an interviewed agent, a
participant, another study's annotator): the one with the most numeric answers to the question,
or to a question measuring the same dimension, is the report's "judge".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import pandas as pd

from benchmark.instruments.answers import HUMAN_MEAN, RespondentAnswer
from benchmark.instruments.respondents import pseudonym
from benchmark.instruments.targets import Target
from benchmark.models import Question

from .units import unit_target


def judge_of(question: Question, automated: Sequence[RespondentAnswer]) -> dict[str, Any] | None:
    """The respondent (and prompt version) with the most numeric answers matching the question, and its scores.

    An answer matches when it answers the question itself or a question measuring the same
    dimension. Imported ``human mean`` scores are never the judge (they are listed among the
    others when annotators are compared with). The offline ``scripted`` heuristics lose a tie:
    the demo scores every episode with them, so a real judge run over the same episodes would
    otherwise lose to them on alphabetical order. People are named by their pseudonym, as everywhere in reports.
    """
    rows = [
        row for row in automated
        if row.number is not None
        and (row.question_id == question.pk or (question.dimension and row.dimension == question.dimension))
        and _comparable(question, row.target)
    ]
    counts = Counter(row.respondent_key for row in rows)
    candidates = [(key, n) for key, n in counts.items() if key[1].lower() != HUMAN_MEAN]
    if not candidates:
        return None
    # Most scores wins; on a tie a model judge beats the offline heuristics ("scripted").
    (kind, respondent, prompt), n = min(candidates, key=lambda pair: (-pair[1], pair[0][1] == "scripted", pair[0]))
    scores = {
        (row.episode_id, unit_target(question, row.target)): row.number
        for row in rows
        if row.respondent_key == (kind, respondent, prompt)
    }
    others = [
        {
            "evaluator": respondent_name(name), "respondent_kind": other_kind, "prompt_version": version,
            "scores": count,
        }
        for (other_kind, name, version), count in sorted(counts.items())
        if (other_kind, name, version) != (kind, respondent, prompt)
    ]
    return {
        "evaluator": respondent_name(respondent),
        "respondent_kind": kind,
        "prompt_version": prompt,
        "dimension": question.dimension or None,
        "scores": n,
        "other_evaluators": others,
        "_scores": scores,
    }


def _comparable(question: Question, target: Target) -> bool:
    """Whether another respondent's answer about ``target`` rates the same kind of unit as ``question``: a turn
    for a per-turn question, a seat for a per-seat one, no seat (and no turn) otherwise."""
    if question.scope == Question.Scope.TURN:
        return target.turn is not None and target.end_turn is None
    return target.turn is None and (target.seat is not None) == question.per_seat


def respondent_name(name: str) -> str:
    """A model's name or a label as it is; a person (``user:<pk>``) by their pseudonym."""
    kind, _, pk = name.partition(":")
    return pseudonym(int(pk)) if kind == "user" and pk.isdigit() else name


def judge_scores(table: pd.DataFrame) -> dict[str, list[Any]]:
    """Per rated unit with a judge score: the human mean, the number of ratings and the judge's score."""
    rated = table.dropna(subset=["value", "judge"])
    grouped = rated.groupby("item", sort=False)
    frame = pd.DataFrame({
        "human_mean": grouped["value"].mean(), "ratings": grouped["value"].size(), "judge": grouped["judge"].first()
    })
    return {
        "units": [str(unit) for unit in frame.index],
        "human_mean": [float(value) for value in frame["human_mean"]],
        "ratings": [int(value) for value in frame["ratings"]],
        "judge": [float(value) for value in frame["judge"]],
    }
