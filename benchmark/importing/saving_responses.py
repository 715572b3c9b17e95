"""Save the responses a file gives with its episodes: the instrument each names (a preset, the team's
own, or one the file defines in full), its respondent, and its answers, each checked against its
question as the database would (``check_answer``) before anything is inserted.

Functions of the file's :class:`saving.Saver`, which holds the lookups and the rows to create.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import models
from django.utils import timezone

from ..evaluation.interviews.instruments import PROBES_PRESET
from ..instruments.kinds import get_kind
from ..instruments.kinds.base import NOT_APPLICABLE
from ..instruments.respondents import find_respondent
from ..instruments.targets import EPISODE, SPAN, TURN
from ..models import Answer, Episode, Goal, Instrument, Question, Respondent, Response, Role, Scenario
from .responses import AnswerDraft, ResponseDraft

if TYPE_CHECKING:
    from .saving import Saver


def instrument_of(saver: Saver, draft: ResponseDraft, scenario: Scenario) -> tuple[Instrument, dict[str, Question]]:
    """The instrument a response names, with its questions by key: one of the team's or a preset; a
    team instrument the file gives in full is made for the team when it has none of that name."""
    key = (draft.instrument, draft.version)
    if key not in saver.instruments:
        instrument = (
            Instrument.objects.filter(name=draft.instrument, version=draft.version)
            .filter(models.Q(team__isnull=True) | models.Q(team=saver.team))
            .order_by("team")  # the team's own before a preset of the same name
            .first()
        )
        if instrument is None and draft.definition is not None:
            saver.instruments[key] = instrument_from(saver, draft, scenario)
            return saver.instruments[key]
        if instrument is None:
            raise draft.origin.at("instrument").problem(
                f"instrument {draft.instrument!r} version {draft.version} is neither a preset nor one of "
                "this team's instruments"
            )
        questions = {q.key: q for q in instrument.questions.all()}
        if draft.definition is not None and sorted(
            (q["key"], q["kind"], q["scope"]) for q in draft.definition.questions
        ) != sorted((q.key, q.kind, q.scope) for q in questions.values()):
            raise draft.origin.at("instrument").problem(
                f"the team's instrument {draft.instrument!r} version {draft.version} asks other questions "
                "than the file's; import it into another team, or rename one of them"
            )
        saver.instruments[key] = (instrument, questions)
    return saver.instruments[key]


def instrument_from(saver: Saver, draft: ResponseDraft, scenario: Scenario) -> tuple[Instrument, dict[str, Question]]:
    """A team instrument made from the file's definition, frozen, since answers come with it."""
    definition = draft.definition
    assert definition is not None
    instrument = Instrument(
        team=saver.team, name=draft.instrument, version=draft.version, preset=definition.preset,
        description=definition.description, frozen_at=timezone.now(),
        scenario=scenario if definition.preset == PROBES_PRESET else None,
    )
    questions = {q["key"]: Question(instrument=instrument, **q) for q in definition.questions}
    saver.new[Instrument].append(instrument)
    saver.new[Question].extend(questions.values())
    saver.result.created["instrument"] += 1
    return instrument, questions


def respondent_of(saver: Saver, draft: ResponseDraft) -> Respondent:
    key = tuple(sorted(draft.respondent.items()))
    if key not in saver.respondents:
        saver.respondents[key] = find_respondent(Respondent, {**draft.respondent, "user": None})
    return saver.respondents[key]


def save_response(
    saver: Saver, draft: ResponseDraft, episode: Episode, roles: dict[int, Role],
    answered: set[tuple[int, int, int | None]],
) -> None:
    """A response and its answers, each answer checked against its question as the database would."""
    instrument, questions = instrument_of(saver, draft, episode.scenario)
    respondent = respondent_of(saver, draft)
    once = (instrument.pk or id(instrument), respondent.pk, draft.seat_position)
    if respondent.kind == Respondent.Kind.JUDGE and once in answered:
        raise draft.origin.problem(
            f"{respondent} answers {instrument} about this episode twice; a judge answers once"
        )
    answered.add(once)
    response = Response(
        instrument=instrument, episode=episode, respondent=respondent, seat_position=draft.seat_position,
        latency_ms=draft.latency_ms, prompt_tokens=draft.prompt_tokens, completion_tokens=draft.completion_tokens,
    )
    if draft.created_at:
        response.created_at = draft.created_at
    saver.new[Response].append(response)
    saver.new[Answer].extend(answer_row(saver, answer, response, questions, roles) for answer in draft.answers)
    saver.result.created["answer"] += len(draft.answers)


def answer_row(
    saver: Saver, draft: AnswerDraft, response: Response, questions: dict[str, Question], roles: dict[int, Role]
) -> Answer:
    """The answer row of ``draft``, checked against its question as the database would."""
    question = questions.get(draft.question)
    if question is None:
        raise draft.origin.at("question").problem(
            f"{response.instrument} has no question {draft.question!r} (its questions: {', '.join(questions)})"
        )
    check_answer(draft, question)
    turns = {column: value for column, value in draft.turns.columns().items() if value is not None}
    return Answer(
        response=response, question=question, seat_position=draft.seat_position,
        goal=goal_of(saver, draft, roles), value=draft.value, number=draft.number, reasoning=draft.reasoning,
        **turns,  # a turn or span (only when the question is asked of one: ``check_answer``)
    )


def goal_of(saver: Saver, answer: AnswerDraft, roles: dict[int, Role]) -> Goal | None:
    if answer.goal is None:
        return None
    role_position, position = answer.goal
    role = roles.get(role_position)
    found = None
    if role is not None:  # a goal made from this file, else a stored one
        found = saver.new_goals.get((id(role), position)) or saver.stored_goals.get((role.pk, position))
        if found is None and role.pk is not None:
            found = Goal.objects.filter(role=role, position=position).first()
    if found is None:
        raise answer.origin.at("goal").problem(
            f"the scenario has no goal {position} of the role at position {role_position}"
        )
    return found


def check_answer(answer: AnswerDraft, question: Question) -> None:
    """Refuse what the database would refuse of this answer, naming the field: a seat or goal that does
    not match the question's scope, a number missing or out of range, a value that is not a choice.

    A value is checked by its kind (``imported_value_problem``: a choice as forms check it). A number
    is checked against the question's bounds only, as the database checks it: an import keeps a number
    between a scale's steps (a mean of several raters, which some files hold), which a form would refuse.
    """
    origin = answer.origin
    scope = question.scope
    if scope == Question.Scope.SEAT and answer.seat_position is None:
        raise origin.at("seat").problem(f"{question.key!r} is asked per seat; give the seat position")
    if scope == Question.Scope.GOAL and answer.goal is None:
        raise origin.at("goal").problem(f"{question.key!r} is asked per goal; give the goal")
    if scope == Question.Scope.EPISODE and (answer.seat_position is not None or answer.goal is not None):
        raise origin.at("seat").problem(f"{question.key!r} is asked once per episode; the seat and goal must be null")
    check_turns(answer, question)
    kind = get_kind(question.kind)
    if kind.numeric:
        if answer.number is None and kind.check_value(question, answer.value) != (NOT_APPLICABLE, None, ""):
            raise origin.at("number").problem(f"{question.key!r} takes a number")
        low, high = question.low, question.high
        if low is not None and high is not None and not low <= answer.number <= high:
            raise origin.at("number").problem(
                f"{answer.number:g} is outside [{question.low:g}, {question.high:g}] for {question.key}"
            )
    else:
        problem = kind.imported_value_problem(question, answer.value)
        if problem:
            raise origin.at("value").problem(f"{question.key!r}: {problem}")


def check_turns(answer: AnswerDraft, question: Question) -> None:
    """A question asked of turns (scope ``turn``) or spans (``span``) is answered about one; no other is."""
    scope, kind = str(question.scope), answer.turns.kind
    if scope in (TURN, SPAN) and kind == EPISODE:
        raise answer.origin.at("turn").problem(f"{question.key!r} is asked per {scope}; give the turn")
    if scope == TURN and kind == SPAN:
        raise answer.origin.at("end_turn").problem(f"{question.key!r} is asked of one turn; end_turn must be null")
    if scope == SPAN and kind == TURN:
        raise answer.origin.at("end_turn").problem(f"{question.key!r} is asked of spans; give end_turn")
    if scope not in (TURN, SPAN) and kind != EPISODE:
        raise answer.origin.at("turn").problem(f"{question.key!r} is not asked per turn; the turn must be null")
