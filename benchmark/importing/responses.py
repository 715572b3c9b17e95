"""Responses in import files: each respondent's answers to an instrument about the episode.

A Parley line lists its ``responses`` (an instrument named by name and version, a respondent named
by kind, model, prompt version or label, and the answers, each to a question key for a seat or a
goal). Sotopia's rewards and the ``evaluations`` of Parley files written before instruments give
*scores* instead (an evaluator, one of the judge presets' dimensions, a seat, a number):
:func:`scores_to_responses` checks them and groups them into responses to the judge presets, the
evaluator becoming the respondent (``benchmark.instruments.respondents``). What needs no database
is checked here; each answer is checked against its question when it is saved
(``saving_responses.check_answer``), as the database would.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..instruments import rubrics
from ..instruments.respondents import respondent_fields
from ..instruments.targets import Target
from ..models import Respondent
from .records import EpisodeDraft, Origin, check_text, max_length


@dataclass
class ScoreDraft:
    """One score by a named evaluator on one of the judge presets' dimensions.

    The shape of Sotopia's rewards and of the ``evaluations`` of Parley files written before
    instruments: :func:`responses_from_scores` makes them responses to the judge presets.
    """

    evaluator: str
    dimension: str
    score: float
    origin: Origin
    seat_position: int | None = None
    prompt_version: str = ""
    reasoning: str = ""
    latency_ms: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    created_at: datetime | None = None


@dataclass
class AnswerDraft:
    """One answer of a response: to the question with key ``question``, for a seat, goal, turn or span if
    asked so. ``turns`` is the turn or span the answer is about (a ``Target`` with only its turn columns
    set; the episode's target when the answer is about no turn)."""

    question: str
    origin: Origin
    seat_position: int | None = None
    goal: tuple[int, int] | None = None  # (role position, goal position)
    value: str = ""
    number: float | None = None
    reasoning: str = ""
    turns: Target = field(default_factory=Target.episode)


@dataclass
class InstrumentDraft:
    """A team's own instrument as a file gives it in full: made for the importing team if it lacks it."""

    preset: str
    description: str
    questions: list[dict[str, Any]]  # Question fields, checked when read
    origin: Origin


@dataclass
class ResponseDraft:
    """One respondent's answers to one instrument (named by name and version) about the episode.

    ``definition`` is set when the file gives the instrument in full (a team's own instrument).
    """

    instrument: str
    version: int
    respondent: dict[str, Any]  # Respondent fields: kind, model, prompt_version, label (never a user)
    origin: Origin
    seat_position: int | None = None
    created_at: datetime | None = None
    latency_ms: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    answers: list[AnswerDraft] = field(default_factory=list)
    definition: InstrumentDraft | None = None


@dataclass
class EpisodeResponsesDraft:
    """Responses about an episode that must already be in Parley: what a scores file gives per episode.

    Saving adds them to the stored episode (``saving_stored.add_to_stored``). An episode the team lacks is
    refused (``REFUSE``, naming ``id_field``) or listed in a note and left out (``LIST``); ``scenario_id``,
    when given, must be the stored episode's scenario (its external id), else the file is refused.
    """

    REFUSE = "refuse"
    LIST = "list"

    episode_id: str
    origin: Origin
    responses: list[ResponseDraft]
    id_field: str = "episode_id"
    scenario_id: str | None = None
    scenario_field: str = "scenario"
    when_missing: str = REFUSE


# The judge presets' questions by dimension, for scores in the older shape (plain data, no query).
JUDGE_QUESTIONS = rubrics.JUDGE_DIMENSIONS


def check_scores(scores: Sequence[ScoreDraft], seats: Iterable[int]) -> None:
    """Each score names a dimension of the judge presets, lies in its range, is given for a seat exactly
    when the dimension is scored per seat, and comes once per evaluator, prompt version, seat and dimension."""
    seats = set(seats)
    positions = ", ".join(str(position) for position in sorted(seats)) or "none"
    scored: set[tuple[str, str, int | None, str]] = set()
    for score in scores:
        found = JUDGE_QUESTIONS.get(score.dimension)
        if found is None:
            raise score.origin.at("dimension").problem(
                f"{score.dimension!r} is not one of {', '.join(JUDGE_QUESTIONS)}"
            )
        question = found[1]
        if not question.low <= score.score <= question.high:
            raise score.origin.at("score").problem(
                f"{score.score:g} is outside [{question.low}, {question.high}] for {question.key}"
            )
        per_seat = question.scope == rubrics.SEAT
        if per_seat and score.seat_position is None:
            raise score.origin.at("seat").problem(f"{question.key} is scored per seat; give the seat position")
        if not per_seat and score.seat_position is not None:
            raise score.origin.at("seat").problem(f"{question.key} is scored per episode; the seat must be null")
        if score.seat_position is not None and score.seat_position not in seats:
            raise score.origin.at("seat").problem(f"no seat at position {score.seat_position} (seats: {positions})")
        key = (score.evaluator, score.prompt_version, score.seat_position, score.dimension)
        if key in scored:
            raise score.origin.at("dimension").problem(
                f"{score.evaluator} scored {score.dimension} twice for the same seat"
            )
        scored.add(key)
        name = respondent_fields(score.evaluator)
        field_name = "model" if name["model"] else "label"
        check_text(score.evaluator, score.origin.at("evaluator"), blank=False,
                   max_length=max_length(Respondent, field_name))
        check_text(score.prompt_version, score.origin.at("prompt_version"),
                   max_length=max_length(Respondent, "prompt_version"))


def check_responses(draft: EpisodeDraft) -> None:
    """What the episode's responses need without the database: known seats, one answer per question, seat,
    goal, turn or span and value, and a respondent named as its kind requires. Their questions are checked on saving."""
    seats = {seat.position for seat in draft.seats}
    positions = ", ".join(str(position) for position in sorted(seats)) or "none"
    for response in draft.responses:
        respondent = response.respondent
        if respondent["kind"] in (Respondent.Kind.JUDGE, Respondent.Kind.AGENT) and not respondent["model"]:
            raise response.origin.at("respondent").at("model").problem(
                f"a respondent of kind {respondent['kind']!r} needs its model's name"
            )
        if not respondent["model"] and not respondent["label"]:
            raise response.origin.at("respondent").problem("a respondent needs a model or a label")
        for name in ("model", "prompt_version", "label"):
            check_text(respondent[name], response.origin.at("respondent").at(name),
                       max_length=max_length(Respondent, name))
        if response.seat_position is not None and response.seat_position not in seats:
            raise response.origin.at("seat").problem(
                f"no seat at position {response.seat_position} (seats: {positions})"
            )
        given: set[tuple[str, int | None, tuple[int, int] | None, Target, str]] = set()
        for answer in response.answers:
            if answer.seat_position is not None and answer.seat_position not in seats:
                raise answer.origin.at("seat").problem(
                    f"no seat at position {answer.seat_position} (seats: {positions})"
                )
            key = (answer.question, answer.seat_position, answer.goal, answer.turns, answer.value)
            if key in given:
                raise answer.origin.at("question").problem(
                    f"{answer.question!r} is answered twice with the same value for the same "
                    + ("seat and goal" if answer.turns.turn is None else answer.turns.describe())
                )
            given.add(key)


def _number_text(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else repr(float(number))


def scores_to_responses(scores: Sequence[ScoreDraft], seats: Iterable[int]) -> list[ResponseDraft]:
    """Scores checked (:func:`check_scores`) and grouped into responses: one per (evaluator, prompt version,
    judge preset), in first-seen order.

    The evaluator becomes the respondent (``benchmark.instruments.respondents``); the response takes the
    earliest time of its scores and the usage of its first score that has one (a judge call writes the
    same usage on every score).
    """
    check_scores(scores, seats)
    grouped: dict[tuple[str, str, str], list[ScoreDraft]] = {}
    for score in scores:
        rubric, _ = JUDGE_QUESTIONS[score.dimension]
        grouped.setdefault((score.evaluator, score.prompt_version, rubric.preset), []).append(score)
    responses = []
    for (evaluator, prompt_version, preset), members in grouped.items():
        rubric = next(r for r in rubrics.JUDGE_RUBRICS if r.preset == preset)
        fields = respondent_fields(evaluator, prompt_version)
        fields.pop("user")
        times = [score.created_at for score in members if score.created_at is not None]
        usage = next((s for s in members if (s.latency_ms, s.prompt_tokens, s.completion_tokens) != (None,) * 3),
                     members[0])
        responses.append(ResponseDraft(
            instrument=rubric.name, version=rubric.version, respondent=fields, origin=members[0].origin,
            created_at=min(times) if times else None, latency_ms=usage.latency_ms,
            prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
            answers=[
                AnswerDraft(score.dimension, score.origin, seat_position=score.seat_position,
                            value=_number_text(score.score), number=score.score, reasoning=score.reasoning)
                for score in members
            ],
        ))
    return responses
