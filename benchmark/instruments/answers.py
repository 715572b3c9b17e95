"""Every respondent's answers about a set of episodes, read through one path whatever their kind.

A human study's question is compared with other respondents' answers to the same construct: the
same question, or any question that measures the same ``dimension`` (Sotopia's ``goal``, the
``mutual_understanding`` of SocialVeil, ...), whichever instrument asked it. ``respondent_answers``
reads them, filtered by respondent kind (judges, interviewed agents, participants, annotators),
from submitted responses only (drafts and superseded versions never count), as plain rows.
Imported ``human mean`` scores are an annotator respondent labelled so
(``benchmark.instruments.respondents``), never a judge.

Each answer carries its target (``benchmark.instruments.targets.Target``: the episode, a seat, a
goal, a turn or a span). An answer about a goal also carries its ``perspective`` after AgentSense:
**self** when the respondent answered from the seat whose role holds the goal (an interviewed
agent's ``Response.seat_position``, a participant's own seat), **other** when it answered from
another seat, **external** when it answered from no seat (a judge, an annotator).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from django.db.models import OuterRef, Q, QuerySet, Subquery

from benchmark.instruments.respondents import HUMAN_MEAN
from benchmark.models import Answer, Episode, Question, Respondent, Response, Seat

from .targets import COLUMNS, Target

__all__ = ["EXTERNAL", "HUMAN_MEAN", "OTHER", "SELF", "RespondentAnswer", "respondent_answers"]

SELF, OTHER, EXTERNAL = "self", "other", "external"


@dataclass(frozen=True)
class RespondentAnswer:
    """One answer about one episode's target (the episode, a seat, a goal, a turn, a span), with who gave it and
    what it measures."""

    episode_id: int
    target: Target
    respondent_kind: str
    respondent: str  # a model's name, a label, or ``user:<pk>`` for a person (callers choose how to show people)
    prompt_version: str
    question_id: int
    dimension: str
    value: str
    number: float | None
    response_seat: int | None = None  # the seat that answered, for an interviewed agent or a participant
    perspective: str = ""  # for an answer about a goal: SELF, OTHER or EXTERNAL (see the module's docstring)

    @property
    def respondent_key(self) -> tuple[str, str, str]:
        """Who answered, as a key: (kind, name, prompt version)."""
        return self.respondent_kind, self.respondent, self.prompt_version


def respondent_answers(
    episodes: QuerySet[Episode] | Iterable[int],
    questions: Collection[Question],
    *,
    kinds: Collection[str] = (Respondent.Kind.JUDGE,),
    exclude_responses: QuerySet[Response] | None = None,
) -> list[RespondentAnswer]:
    """Submitted answers about ``episodes`` to ``questions`` or to any question measuring one of their dimensions.

    ``kinds`` are the respondent kinds to read (``Respondent.Kind`` values); ``exclude_responses``
    leaves some responses out (a study's own annotations, when comparing it with other annotators).
    """
    kinds = [str(kind) for kind in kinds]
    unknown = sorted(set(kinds) - set(Respondent.Kind.values))
    if unknown:
        raise ValueError(f"unknown respondent kind {', '.join(unknown)}; use {', '.join(Respondent.Kind.values)}")
    dimensions = {question.dimension for question in questions if question.dimension}
    question_ids = {question.pk for question in questions if question.pk is not None}
    if not (dimensions or question_ids) or not kinds:
        return []
    episode_ids = episodes.values("pk") if isinstance(episodes, QuerySet) else list(episodes)
    matches = Q(question_id__in=question_ids) | Q(question__dimension__in=dimensions)
    answers = Answer.objects.filter(
        matches,
        response__episode_id__in=episode_ids,
        response__status=Response.Status.SUBMITTED,
        response__respondent__kind__in=kinds,
    )
    if exclude_responses is not None:
        answers = answers.exclude(response__in=exclude_responses.values("pk"))
    answering_role = Seat.objects.filter(
        episode_id=OuterRef("response__episode_id"), position=OuterRef("response__seat_position")
    ).values("role_id")[:1]
    rows = [
        RespondentAnswer(
            episode_id=episode_id, target=Target.from_columns(*target),
            respondent_kind=kind, respondent=model or label or f"user:{user_id}", prompt_version=prompt_version,
            question_id=question_id, dimension=dimension, value=value, number=number,
            response_seat=response_seat, perspective=_perspective(goal_role, response_seat, seat_role),
        )
        for (episode_id, kind, model, label, user_id, prompt_version, question_id, dimension, value,
             number, goal_role, response_seat, seat_role, *target) in answers.annotate(
            answering_role=Subquery(answering_role)
        ).values_list(
            "response__episode_id", "response__respondent__kind",
            "response__respondent__model", "response__respondent__label", "response__respondent__user_id",
            "response__respondent__prompt_version", "question_id", "question__dimension", "value", "number",
            "goal__role_id", "response__seat_position", "answering_role", *COLUMNS,
        ).order_by("pk")
    ]
    return rows


def _perspective(goal_role: int | None, response_seat: int | None, seat_role: int | None) -> str:
    """``goal_role``: the role of the goal the answer is about, None for an answer about no goal."""
    if goal_role is None:
        return ""
    if response_seat is None:
        return EXTERNAL
    return SELF if seat_role == goal_role else OTHER
