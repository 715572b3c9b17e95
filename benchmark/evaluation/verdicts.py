"""The judge's reply: checked question by question, and stored as one response per instrument.

A verdict is stored whole or not at all. :func:`validate_verdict` names the seat and question of
every problem, so the gateway's repair request tells the model exactly what to fix. The judge is
a respondent of kind ``judge`` named by its model and prompt version, and answers an instrument
about an episode once (a database trigger refuses a second response): :func:`store_verdict`
replaces its earlier responses in the same transaction that writes the new ones, and
:func:`complete_episode_ids` finds the episodes it has answered completely (the cache).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from ..agents.llm import Usage
from ..models import Answer, Episode, Question, Respondent, Response
from .judge_briefing import EPISODE_KEY, SEATS_KEY, EpisodeForJudge
from .judge_questions import JudgedQuestion, Questionnaire


@dataclass(frozen=True)
class Score:
    seat_key: str | None  # None for a question asked once per episode
    key: str
    score: float
    reasoning: str


def validate_verdict(
    data: dict[str, Any], seat_keys: Sequence[str], questions: Questionnaire, names: dict[str, str] | None = None
) -> list[Score]:
    """Check a judge's reply and return its scores; raise ``ValueError`` naming every problem.

    The message is written for the model (it is shown to it in the repair request): each problem
    names the seat (with the character's name) or the episode, and the question's key.
    """
    names = names or {}
    problems: list[str] = []
    scores: list[Score] = []

    def section(value: Any, where: str) -> dict[str, Any] | None:
        if value is None:
            problems.append(f"{where} is missing")
            return None
        if not isinstance(value, dict):
            problems.append(f"{where} must be a JSON object")
            return None
        return value

    def check(block: dict[str, Any], question: JudgedQuestion, where: str, key: str | None) -> None:
        entry = block.get(question.key)
        if entry is None:
            problems.append(f"{where}: '{question.key}' is missing")
            return
        if not isinstance(entry, dict):
            problems.append(f"{where}: '{question.key}' must be an object with 'reasoning' and 'score'")
            return
        reasoning = entry.get("reasoning")
        if not isinstance(reasoning, str) or not reasoning.strip():
            problems.append(f"{where}: '{question.key}' needs a non-empty 'reasoning' text")
        score = entry.get("score")
        bounds = f"between {question.low:g} and {question.high:g}"
        if score is None:
            problems.append(f"{where}: '{question.key}' has no 'score'")
        elif isinstance(score, bool) or not isinstance(score, (int, float)):
            problems.append(f"{where}: '{question.key}' score must be a number, got {score!r}")
        elif not math.isfinite(score):
            # Python's JSON reader takes 1e999 for infinity, and NaN and Infinity for numbers.
            problems.append(
                f"{where}: '{question.key}' score is not a finite number (it reads as {score!r}); it must be {bounds}"
            )
        elif not question.contains(score):
            problems.append(f"{where}: '{question.key}' score {score:g} is out of range; it must be {bounds}")
        elif isinstance(reasoning, str) and reasoning.strip():
            scores.append(Score(key, question.key, float(score), reasoning.strip()))

    if not isinstance(data, dict):
        wanted = " and ".join(f"'{k}'" for k, asked in ((SEATS_KEY, questions.seat), (EPISODE_KEY, questions.episode))
                              if asked)
        raise ValueError(f"expected a JSON object with {wanted}")
    if questions.seat:
        seats = section(data.get(SEATS_KEY), f"'{SEATS_KEY}'")
        if seats is not None:
            for key in seat_keys:
                where = f"{key} ({names[key]})" if key in names else key
                block = section(seats.get(key), f"'{SEATS_KEY}' → {where}")
                if block is not None:
                    for question in questions.seat:
                        check(block, question, where, key)
    if questions.episode:
        episode = section(data.get(EPISODE_KEY), f"'{EPISODE_KEY}'")
        if episode is not None:
            for question in questions.episode:
                check(episode, question, EPISODE_KEY, None)
    if problems:
        raise ValueError("; ".join(problems))
    return scores


def complete_episode_ids(episode_ids: Iterable[int], *, respondent: Respondent, questions: Questionnaire) -> set[int]:
    """The episodes for which ``respondent`` has answered every question: the cache hits.

    A respondent answers each question once per seat (or once per episode), so a complete set is
    exactly the seat questions times the seats plus the episode questions.
    """
    ids = list(episode_ids)
    seats = dict(Episode.objects.filter(pk__in=ids).annotate(n=Count("seats")).values_list("pk", "n"))
    stored = dict(
        Answer.objects.filter(
            response__episode_id__in=ids, response__respondent=respondent,
            response__instrument_id__in=questions.instrument_ids,
        )
        .values("response__episode_id")
        .annotate(n=Count("pk"))
        .values_list("response__episode_id", "n")
    )
    expected = {pk: questions.expected_answers(n) for pk, n in seats.items() if n}
    return {pk for pk, n in expected.items() if stored.get(pk) == n}


def _number_text(number: float) -> str:
    """The answer's text: ``7`` rather than ``7.0``, otherwise the shortest exact form."""
    return str(int(number)) if float(number).is_integer() else repr(float(number))


def store_verdict(
    facts: EpisodeForJudge,
    scores: Sequence[Score],
    *,
    respondent: Respondent,
    questions: Questionnaire,
    usage: Usage | None,
) -> list[Answer]:
    """Replace ``respondent``'s responses to the instruments about the episode with ``scores``, all or nothing.

    One response per instrument; each carries the usage of the one call that produced the set.
    Returns the answers written, each with its ``response``.
    """
    expected = questions.expected_answers(len(facts.seats))
    if len(scores) != expected:
        raise ValueError(f"a verdict for episode {facts.episode_id} needs {expected} scores, got {len(scores)}")
    positions = {seat.key: seat.position for seat in facts.seats}
    asked = {(q.scope == Question.Scope.SEAT, q.key): q for q in (*questions.seat, *questions.episode)}
    for score in scores:
        question = asked[(score.seat_key is not None, score.key)]
        if not question.contains(score.score):  # validate_verdict let it by
            raise ValueError(f"{score.key} score {score.score} is out of range {question.range_text}")
    created = timezone.now()
    with transaction.atomic():
        Response.objects.filter(
            episode_id=facts.episode_id, respondent=respondent, instrument_id__in=questions.instrument_ids
        ).delete()
        responses = {
            instrument_id: Response.objects.create(
                instrument_id=instrument_id, episode_id=facts.episode_id, respondent=respondent, created_at=created,
                latency_ms=usage.latency_ms if usage else None,
                prompt_tokens=usage.prompt_tokens if usage else None,
                completion_tokens=usage.completion_tokens if usage else None,
            )
            for instrument_id in questions.instrument_ids
        }
        answers = []
        for score in scores:
            question = asked[(score.seat_key is not None, score.key)]
            answers.append(Answer(
                response=responses[question.instrument_id], question_id=question.question_id,
                seat_position=None if score.seat_key is None else positions[score.seat_key],
                value=_number_text(score.score), number=score.score, reasoning=score.reasoning,
            ))
        return Answer.objects.bulk_create(answers)
