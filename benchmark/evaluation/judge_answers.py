"""The judge's answers: what one call asks, checked question by question, stored as one response per instrument.

The judge's answers are stored whole or not at all. :func:`judge_asked` lists what one call asks
(every seat question about every seat, then every episode question), each with its target, and
``benchmark.agents.respondent`` checks the reply against it, naming the seat and question of every
problem so the gateway's repair request tells the model exactly what to fix. The judge is a
respondent of kind ``judge`` named by its model and prompt version, and answers an instrument
about an episode once (a database trigger refuses a second response): :func:`store_answers`
replaces its earlier responses in the same transaction that writes the new ones, and
:func:`complete_episode_ids` finds the episodes it has answered completely (the cache).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from ..agents.llm import Usage
from ..agents.respondent import Answered, Asked
from ..instruments.targets import Target
from ..models import Answer, Episode, Respondent, Response
from .judge_briefing import EPISODE_KEY, SEATS_KEY, TURNS_KEY, EpisodeForJudge, agent_turn_indexes, turn_key
from .judge_questions import JudgedQuestion, Questionnaire, bind


def judge_asked(
    seats: Mapping[str, int], questions: Questionnaire, bound: Mapping[int, Any] | None = None,
    turns: Sequence[tuple[int, int]] = (),
) -> list[Asked]:
    """What one judge call asks, in the reply's order: each seat (its key → its position) on every
    seat question, then the episode on every episode question.

    A scored question is checked by its range (entry ``score``); any other by its kind, bound to the
    episode (``bound``, from ``judge_questions.bind``; entry ``answer``), and not asked when the
    episode has nothing for it (bound to None). Per-turn questions are asked of each of ``turns``
    ((Turn.index, transcript line), ``EpisodeForJudge.agent_turns``), last."""
    bound = bound or {}

    def asked(path: tuple[str, ...], question: JudgedQuestion, target: Target) -> Asked:
        if not question.scored:
            return Asked(path, question.question_id, target, question.kind, field="answer",
                         instrument_id=question.instrument_id, question=bound[question.question_id])
        return Asked(path, question.question_id, target, question.kind, low=question.low, high=question.high,
                     field="score", instrument_id=question.instrument_id)

    items = [asked((SEATS_KEY, key, q.key), q, Target.of_seat(position))
             for key, position in seats.items() for q in questions.seat if _wanted(q, bound)]
    items += [asked((EPISODE_KEY, q.key), q, Target.episode()) for q in questions.episode if _wanted(q, bound)]
    items += [asked((TURNS_KEY, turn_key(line), q.key), q, Target.of_turn(index))
              for index, line in turns for q in questions.turn if _wanted(q, bound)]
    return items


def _wanted(question: JudgedQuestion, bound: Mapping[int, Any]) -> bool:
    """Whether the question is asked about the episode ``bound`` was bound to."""
    return question.scored or bound.get(question.question_id) is not None


def seats_of(facts: EpisodeForJudge) -> dict[str, int]:
    """Each judged seat's key in the reply → its position in the episode."""
    return {seat.key: seat.position for seat in facts.seats}


def complete_episode_ids(episode_ids: Iterable[int], *, respondent: Respondent, questions: Questionnaire) -> set[int]:
    """The episodes for which ``respondent`` has answered every question: the cache hits.

    A respondent answers each question once per seat (or once per episode, or once per agent turn), so a
    complete set is exactly the seat questions times the seats plus the episode questions plus the turn
    questions times the agents' turns (less the questions an episode's item has nothing for).
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
    if questions.turn or not all(q.scored for q in questions.all):
        # Per turn: one answer per language agent's turn. A question bound to nothing for an episode (a
        # per-item choice its item has none for) is not asked about it.
        episodes = Episode.objects.filter(pk__in=list(expected)).select_related("scenario")
        for episode in episodes.prefetch_related("scenario__probes", "seats", "turns"):
            bound = bind(questions, episode)
            turns = len(agent_turn_indexes(list(episode.seats.all()), list(episode.turns.all())))
            expected[episode.pk] = (seats[episode.pk] * sum(1 for q in questions.seat if _wanted(q, bound))
                                    + sum(1 for q in questions.episode if _wanted(q, bound))
                                    + turns * sum(1 for q in questions.turn if _wanted(q, bound)))
    return {pk for pk, n in expected.items() if stored.get(pk) == n}


def store_answers(
    facts: EpisodeForJudge,
    answers: Sequence[Answered],
    *,
    respondent: Respondent,
    questions: Questionnaire,
    usage: Usage | None,
    expected: int | None = None,
) -> list[Answer]:
    """Replace ``respondent``'s responses to the instruments about the episode with ``answers``, all or nothing.

    One response per instrument; each carries the usage of the one call that produced the set.
    Returns the answers written, each with its ``response``. ``expected`` is how many were asked
    (default: every question, for an episode whose items skip none).
    """
    if expected is None:
        expected = questions.expected_answers(len(facts.seats), len(facts.agent_turns))
    if len(answers) != expected:
        raise ValueError(
            f"storing the judge's answers about episode {facts.episode_id} needs {expected} scores, got {len(answers)}"
        )
    for answer in answers:
        asked = answer.asked
        if asked.question is not None:
            continue  # checked by its kind (``respondent.read_value``)
        if answer.number is None or not asked.low <= answer.number <= asked.high:  # type: ignore[operator]
            raise ValueError(f"{asked.key} answer {answer.value} is out of range {asked.low:g} to {asked.high:g}")
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
        return Answer.objects.bulk_create(
            Answer(
                response=responses[answer.asked.instrument_id], question_id=answer.asked.question_id,
                **answer.target_columns, value=answer.value, number=answer.number, reasoning=answer.reasoning,
            )
            for answer in answers
        )
