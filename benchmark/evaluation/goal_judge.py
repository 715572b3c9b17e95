"""External judges of the goals: AgentSense's third perspective, next to the agents' own (self, other).

After an episode, AgentSense asks judge models, which took no part in it, whether each goal of each
character was achieved. Here a judge model reads what the whole cast knew (the situation as written,
each character's profile, goals, reason and private knowledge) and the transcript, and answers the
shared *AgentSense goals* instrument (``interviews.instruments.goals_instrument``: one yes/no
question asked per goal) with its reasoning, one goal at a time, all in one call.

How it is kept honest and cheap, as the rubric judge (``judge.py``) is:

- Temperature 0, asked through ``benchmark.agents.respondent.ask_instrument`` as every model
  respondent is: the reply is checked (every goal answered yes or no, with a reason) and repaired
  once by the gateway; a reply still unusable is asked for again, up to ``retries`` more times
  (``PARLEY_JUDGE_RETRIES``), then the episode is reported failed with nothing stored.
- Each judge model is a respondent of kind ``judge`` under prompt version :data:`PROMPT_VERSION`;
  its answers are one ``Response`` per episode with ``seat_position`` empty and one ``Answer`` per
  goal. A complete stored set is kept (a cache hit, no call) unless ``force``; a new set replaces
  it in one transaction.
- Several judges answer independently, a bounded number of calls in flight
  (``agents.batches.map_bounded``); reports show each, their mean and their majority.
- The offline ``scripted`` model answers with a transparent heuristic, labelled as such
  (:data:`SCRIPTED_VERSION`): yes when the talk closed on agreement and enough of the goal's key
  words came up in its second half, the same rule the interviewed scripted agents apply to the
  others' goals (``interviews.scripted.goal_reached``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from asgiref.sync import sync_to_async
from django.db import transaction

from ..agents import llm
from ..agents.batches import map_bounded
from ..agents.prompt import HistoryEntry
from ..agents.respondent import Answered, Asked, ask_instrument
from ..instruments.respondents import judge_respondent
from ..models import Answer, Episode, Goal, Question, Response
from . import scripted_judge
from .interviews.asking import answered, goal_asked
from .interviews.instruments import goals_instrument
from .interviews.scripted import goal_reached
from .judge import judge_models
from .judge_briefing import EpisodeForJudge, load_episode_for_judge, relationship_sentence, transcript_section

PROMPT_VERSION = "goals-judge-1"
SCRIPTED_VERSION = "scripted-goals-judge-1"
SCRIPTED_NEEDED = 0.3  # share of a goal's key words an outside reader needs to hear (as for the others' goals)
JUDGED, CACHED, FAILED = "judged", "cached", "failed"


@dataclass(frozen=True)
class JudgedGoal:
    key: str  # g1, g2, ... in the order of roles and their goals
    goal_id: int
    owner: str
    text: str


@dataclass(frozen=True)
class GoalsToJudge:
    """An episode as a goal judge sees it, read from the database once, so no query runs mid-call."""

    facts: EpisodeForJudge
    goals: tuple[JudgedGoal, ...]
    instrument_id: int
    question_id: int


@dataclass
class GoalJudgement:
    """One judge model on one episode: judged, taken from the cache, or failed (nothing stored)."""

    episode_id: int
    model: str
    prompt_version: str
    outcome: str = FAILED
    answers: int = 0
    error: str = ""
    attempts: int = 0
    usage: llm.Usage | None = None

    @property
    def ok(self) -> bool:
        return self.outcome != FAILED


def respondent_name(model: str) -> tuple[str, str]:
    """The (model, prompt version) a goal judge answers as: the scripted one as ``scripted``."""
    if llm.is_scripted(model):
        return scripted_judge.RESPONDENT, SCRIPTED_VERSION
    return model, PROMPT_VERSION


def load_goals(episode_id: int) -> GoalsToJudge:
    facts = load_episode_for_judge(episode_id)
    names = {seat.position: seat.name for seat in facts.seats}  # a seat plays the role at its position
    rows = Goal.objects.filter(role__seats__episode_id=episode_id).order_by("role__position", "position")
    goals = tuple(
        JudgedGoal(f"g{n}", pk, names.get(role, f"role {role}"), text)
        for n, (pk, role, text) in enumerate(rows.values_list("pk", "role__position", "text"), start=1)
    )
    instrument = goals_instrument()
    question = Question.objects.get(instrument=instrument, position=0)
    return GoalsToJudge(facts, goals, instrument.pk, question.pk)


def goal_judge_messages(subject: GoalsToJudge) -> list[dict[str, str]]:
    """The system instructions, then the situation, the characters, their goals and the transcript."""
    facts = subject.facts
    system = (
        "You judge a finished conversation between characters, from outside it: you took no part. For each "
        "goal listed, decide whether the character who held it achieved it by the end of the conversation. "
        "Say yes only if what was said and done shows the goal reached; say no if it was missed, left open or "
        "reached only in part. Judge each goal on its own, from the transcript, not from what the character "
        "hoped. Answer with one JSON object and nothing else."
    )
    sections = [f"SITUATION:\n{facts.original_context or facts.shared_context}"]
    if facts.original_context and facts.shared_context != facts.original_context:
        sections.append(f"What the characters were all told of the situation:\n{facts.shared_context}")
    sections.append(relationship_sentence(facts.relationship))
    for seat in facts.seats:
        lines = [f"CHARACTER {seat.name}"]
        lines.extend(f"- {key.replace('_', ' ')}: {value}" for key, value in seat.profile.items())
        if seat.reason:
            lines.append(f"Why their goals mattered to them: {seat.reason}")
        if seat.private_knowledge:
            lines.append(f"What only they knew: {seat.private_knowledge}")
        sections.append("\n".join(lines))
    sections.append(transcript_section(facts))
    listed = "\n".join(f"{goal.key} (goal of {goal.owner}): {goal.text}" for goal in subject.goals)
    shape = ",\n".join(
        f'  "{goal.key}": {{"reasoning": "<what in the conversation decides it>", "answer": "yes" or "no"}}'
        for goal in subject.goals
    )
    sections.append(
        f"GOALS:\n{listed}\n\nFor each goal, was it achieved? Reply with exactly this JSON shape, every key "
        f"present:\n{{\n{shape}\n}}"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(sections)}]


def goals_asked(subject: GoalsToJudge) -> list[Asked]:
    """What a goal judge is asked: every goal, yes or no, with a non-empty reason."""
    return [goal_asked(goal.key, goal.goal_id, subject.question_id, subject.instrument_id, reasoning_required=True)
            for goal in subject.goals]


def scripted_answers(subject: GoalsToJudge) -> list[Answered]:
    """The offline heuristic's answer for every goal, each reason opening with the disclaimer."""
    history: Sequence[HistoryEntry] = subject.facts.transcript
    replies = {}
    for goal in subject.goals:
        value, why = goal_reached(history, goal.text, SCRIPTED_NEEDED)
        replies[goal.key] = (value, f"{scripted_judge.DISCLAIMER} For {goal.owner}'s goal: {why}")
    return answered(goals_asked(subject), replies)


def is_stored(episode_id: int, model: str, goal_count: int, instrument_id: int) -> bool:
    """Whether this judge has answered every goal of the episode (the cache)."""
    respondent = judge_respondent(*respondent_name(model))
    return (
        Answer.objects.filter(
            response__episode_id=episode_id, response__respondent=respondent, response__instrument_id=instrument_id,
            response__seat_position__isnull=True,
        ).count()
        == goal_count
    )


def store(subject: GoalsToJudge, model: str, answers: Sequence[Answered], usage: llm.Usage | None) -> int:
    """Replace this judge's answers about the episode's goals with ``answers``, all or nothing."""
    respondent = judge_respondent(*respondent_name(model))
    episode_id = subject.facts.episode_id
    with transaction.atomic():
        Response.objects.filter(
            episode_id=episode_id, respondent=respondent, instrument_id=subject.instrument_id, seat_position=None
        ).delete()
        response = Response.objects.create(
            episode_id=episode_id, instrument_id=subject.instrument_id, respondent=respondent,
            latency_ms=usage.latency_ms if usage else None,
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
        )
        rows = Answer.objects.bulk_create(
            Answer(response=response, question_id=answer.asked.question_id, **answer.target_columns,
                   value=answer.value, reasoning=answer.reasoning)
            for answer in answers
        )
    return len(rows)


async def judge_episode_goals(
    episode_id: int, *, model: str, force: bool = False, retries: int | None = None
) -> GoalJudgement:
    """Have ``model`` answer every goal of one episode yes or no, with reasons; stored whole or not at all."""
    result = GoalJudgement(episode_id, *respondent_name(model))
    try:
        subject = await sync_to_async(load_goals)(episode_id)
    except Episode.DoesNotExist:
        result.error = f"episode {episode_id} does not exist"
        return result
    if not subject.facts.transcript:
        result.error = f"episode {episode_id} has no turns to judge"
        return result
    if not subject.goals:
        result.error = f"episode {episode_id} has no goals to judge"
        return result
    if not force and await sync_to_async(is_stored)(episode_id, model, len(subject.goals), subject.instrument_id):
        result.outcome = CACHED
        return result
    if llm.is_scripted(model):
        result.answers = await sync_to_async(store)(subject, model, scripted_answers(subject), None)
        result.outcome, result.attempts = JUDGED, 1
        return result

    try:
        reply = await ask_instrument(goal_judge_messages(subject), goals_asked(subject), model=model, retries=retries)
    except llm.LLMOutputError as error:
        result.attempts, result.error = error.attempts, str(error)
        return result
    except llm.LLMError as error:
        result.error = str(error)
        return result
    result.usage, result.attempts = reply.usage, reply.attempts
    result.answers = await sync_to_async(store)(subject, model, reply.answers, reply.usage)
    result.outcome = JUDGED
    return result


async def judge_goals(
    episode_ids: Iterable[int],
    models: str | Sequence[str],
    *,
    concurrency: int = 4,
    force: bool = False,
    retries: int | None = None,
    on_result: Callable[[GoalJudgement], None] | None = None,
) -> list[GoalJudgement]:
    """Have each judge model answer every goal of every episode, at most ``concurrency`` calls at a time.

    Results come model by model, episodes in the given order; one failure never stops the others.
    """
    names = judge_models(models)
    pairs = [(model, episode_id) for model in names for episode_id in episode_ids]

    async def one(pair: tuple[str, int]) -> GoalJudgement:
        model, episode_id = pair
        return await judge_episode_goals(episode_id, model=model, force=force, retries=retries)

    return await map_bounded(pairs, one, concurrency=concurrency, on_result=on_result)
