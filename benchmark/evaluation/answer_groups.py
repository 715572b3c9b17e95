"""Every respondent's answers about one episode, grouped for the episode page.

A group is one respondent's answers to one instrument (a judge answering both judge presets
gives two groups), named by the respondent's kind, so a researcher sees at a glance which answers
are a model's, an interviewed agent's view of itself or of the others, or a person's.
Where two or more judges answered the same instrument, a group for their majority follows them
(``benchmark.evaluation.majority``: the median of numbers, the most common choice).

Answers by people (annotators, participants) are shown only once submitted; drafts are theirs.
Answers written for a person's respondent by a program (the demo's generated answers) are labelled
as generated, not as a person's: the app that writes them says which responses they are, through
``register_generated_responses`` (``benchmark`` cannot read the annotator app's rows itself).
The page that shows these groups is for the episode's team's researchers only: annotators never
see it, so they never see a judge's answers or each other's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Prefetch

from ..agents.llm import is_scripted
from ..instruments.kinds import get_kind
from ..instruments.targets import Target
from ..models import Answer, Episode, Question, Respondent, Response
from .majority import MajorityAnswer, majority_answers

# Each maps response ids to what generated those of them that no person gave (``register_generated_responses``).
GeneratedResponses = Callable[[Collection[int]], dict[int, str]]
_GENERATED_SOURCES: list[GeneratedResponses] = []


def register_generated_responses(source: GeneratedResponses) -> None:
    """Let an app say which of a page's responses were generated (the annotator app, from ``AppConfig.ready``)."""
    if source not in _GENERATED_SOURCES:
        _GENERATED_SOURCES.append(source)


KIND_ORDER = {kind: position for position, kind in enumerate(
    [Respondent.Kind.JUDGE, Respondent.Kind.AGENT, Respondent.Kind.ANNOTATOR, Respondent.Kind.PARTICIPANT]
)}


@dataclass
class AnswerRow:
    question: str
    prompt: str
    target: str
    value: str
    range: str
    reasoning: str


@dataclass
class AnswerGroup:
    kind: str
    kind_label: str
    respondent: str
    prompt_version: str
    instrument: str
    scripted: bool = False
    generated_by: str = ""  # what wrote these answers for a person's respondent, when no person gave them
    interviewed_seat: str = ""
    majority_of: int = 0
    created_at: Any = None
    latency_ms: int | None = None
    tokens: int | None = None
    rows: list[AnswerRow] = field(default_factory=list)


def _choice_labels(question: Question) -> dict[str, str]:
    options = question.options if isinstance(question.options, dict) else {}
    return {str(choice.get("value")): str(choice.get("label", choice.get("value")))
            for choice in options.get("choices", []) if isinstance(choice, dict)}


def _correctness(question: Question, members: Sequence[Any]) -> str:
    """For a multiple-choice question with a correct answer: whether this answer is it."""
    correct = get_kind(question.kind).correct(question.options)
    if correct is None:
        return ""
    return " (correct)" if [m.value for m in members] == [str(correct)] else " (wrong)"


def _value_text(question: Question, values: Sequence[str], number: float | None) -> str:
    if number is not None:
        return f"{number:g}"
    labels = _choice_labels(question)
    return ", ".join(labels.get(value, value) for value in values)


class _Targets:
    """Names of what an answer is about: the episode, a seat's character, a goal and whose it is, a turn, a span."""

    def __init__(self, episode: Episode) -> None:
        seats = list(episode.seats.select_related("character"))
        self.seats = {seat.position: seat.character.name for seat in seats}
        self.roles = {seat.role_id: seat.character.name for seat in seats}

    def seat(self, position: int | None) -> str:
        if position is None:
            return ""
        return self.seats.get(position, f"seat {position + 1}")

    def of(self, target: Target, goal: Any) -> str:
        """How the page names ``target``; ``goal`` is the target's ``Goal`` row when it is a goal."""
        if goal is not None:
            owner = self.roles.get(goal.role_id)
            return f"{owner}'s goal: {goal.text}" if owner else f"goal: {goal.text}"
        return self.seat(target.seat) or target.describe(self.seats)


def _rows(answers: Iterable[Any], targets: _Targets) -> list[AnswerRow]:
    """One row per question and target; a multi-label answer's labels are joined in one row."""
    grouped: dict[tuple[int, Target], list[Any]] = defaultdict(list)
    for answer in answers:
        grouped[(answer.question_id, Target.of(answer))].append(answer)
    rows = []
    ordered = sorted(grouped.items(), key=lambda item: (item[1][0].question.position, item[0][1].sort_key))
    for (_, target), members in ordered:
        first = members[0]
        question = first.question
        rows.append(AnswerRow(
            question=question.label or question.key,
            prompt=question.prompt,
            target=targets.of(target, getattr(first, "goal", None)),
            value=_value_text(question, [m.value for m in members], first.number) + _correctness(question, members),
            range=question.range_text,
            reasoning="\n".join(m.reasoning for m in members if m.reasoning),
        ))
    return rows


def answer_groups(episode: Episode) -> list[AnswerGroup]:
    """The groups of the episode page, judges first, then interviewed agents, then people (a fixed
    number of queries)."""
    answers = Answer.objects.select_related("question", "goal")
    responses = list(
        Response.objects.filter(episode=episode)
        .select_related("respondent__user", "instrument")
        .prefetch_related(Prefetch("answers", queryset=answers))
    )
    targets = _Targets(episode)
    generated: dict[int, str] = {}
    for source in _GENERATED_SOURCES:
        generated.update(source([response.pk for response in responses]))
    groups: list[AnswerGroup] = []
    by_instrument: dict[int, list[Response]] = defaultdict(list)
    for response in sorted(responses, key=_response_order):
        respondent = response.respondent
        groups.append(AnswerGroup(
            kind=respondent.kind,
            kind_label="generated, not a person's" if response.pk in generated else respondent.get_kind_display(),
            generated_by=generated.get(response.pk, ""),
            respondent=respondent.name,
            prompt_version=respondent.prompt_version,
            instrument=str(response.instrument),
            scripted=is_scripted(respondent.model),
            interviewed_seat=targets.seat(response.seat_position),
            created_at=response.created_at,
            latency_ms=response.latency_ms,
            tokens=_tokens(response),
            rows=_rows(response.answers.all(), targets),
        ))
        if respondent.kind == Respondent.Kind.JUDGE:
            by_instrument[response.instrument_id].append(response)
    for judged in by_instrument.values():
        judges = {response.respondent_id for response in judged}
        if len(judges) < 2:
            continue
        pooled = [answer for response in judged for answer in response.answers.all()]
        questions = {answer.question_id: answer.question for answer in pooled}
        goals = {answer.goal_id: answer.goal for answer in pooled if answer.goal_id}
        index = 1 + max(i for i, g in enumerate(groups) if g.kind == Respondent.Kind.JUDGE
                        and g.instrument == str(judged[0].instrument))
        groups.insert(index, AnswerGroup(
            kind=Respondent.Kind.JUDGE, kind_label="majority of automated judges", respondent="majority",
            prompt_version="", instrument=str(judged[0].instrument), majority_of=len(judges),
            rows=_majority_rows(majority_answers(pooled), questions, goals, targets),
        ))
    return groups


def _majority_rows(
    majority: Sequence[MajorityAnswer], questions: dict[int, Question], goals: dict[int, Any], targets: _Targets
) -> list[AnswerRow]:
    grouped: dict[tuple[int, Target], list[MajorityAnswer]] = defaultdict(list)
    for answer in majority:
        grouped[(answer.question_id, answer.target)].append(answer)
    rows = []
    for (question_id, target), members in sorted(grouped.items(), key=lambda item: (
        questions[item[0][0]].position, item[0][1].sort_key
    )):
        question = questions[question_id]
        rows.append(AnswerRow(
            question=question.label or question.key,
            prompt=question.prompt,
            target=targets.of(target, goals.get(target.goal)),
            value=_value_text(question, [m.value for m in members], members[0].number),
            range=question.range_text,
            reasoning=f"{'median' if members[0].number is not None else 'most common answer'} of "
                      f"{members[0].respondents} judges",
        ))
    return rows


def _response_order(response: Response) -> tuple[Any, ...]:
    respondent = response.respondent
    return (
        KIND_ORDER.get(respondent.kind, len(KIND_ORDER)), response.instrument.name, response.instrument.version,
        respondent.name, respondent.prompt_version,
        -1 if response.seat_position is None else response.seat_position, response.pk,
    )


def _tokens(response: Response) -> int | None:
    if response.prompt_tokens is None and response.completion_tokens is None:
        return None
    return (response.prompt_tokens or 0) + (response.completion_tokens or 0)
