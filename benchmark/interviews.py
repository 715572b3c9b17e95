"""Interviews: after an episode, each agent is asked about the goals and about the others (AgentSense).

AgentSense asks, once a conversation is over, whether each goal was achieved: of the character
whose goal it is (the self perspective), of the other characters (the other perspective) and of
external judges; and it asks multiple-choice questions about what each character kept private.
Every agent seat of a finished episode can be interviewed the same way here:

- **Goals**: for every goal of every role, "was this goal achieved?" (yes / no), from the preset
  instrument *AgentSense goals* (one question, asked once per goal). Answers about the seat's own
  role are its self-assessment; those about the other roles are its view of them.
- **Probes**: the scenario's probes this seat may be asked (``Probe.asked_of``: the other roles,
  the role itself, or anyone), as multiple-choice questions with the probe's options, from an
  instrument built per scenario (:func:`probes_instrument`: one question per probe, frozen once
  built, and a new version only when the probes change).

The agent is told what it knew in the conversation (its own goals, reason, private knowledge and
profile; the others as the relationship shows them; the transcript) and the questions. A probe
never reveals its answer; the others' goals are shown, as in AgentSense, only to ask about them.

Answers are ``Response`` and ``Answer`` rows of a ``Respondent`` of kind ``agent`` (the seat's model
and :data:`PROMPT_VERSION`, or the scripted model and :data:`SCRIPTED_VERSION`), with
``Response.seat_position`` the seat interviewed. A model answers through the gateway
(``benchmark.llm``: one call per seat and instrument, at temperature 0, its JSON checked and
repaired once); the offline scripted model answers with transparent heuristics, its reasoning
opening with :data:`SCRIPTED_DISCLAIMER`. A stored interview is kept unless ``force``; a new one
replaces it whole.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.db import transaction
from django.utils import timezone

from . import llm
from .agents import AgentContext, describe_turn
from .batches import map_bounded
from .models import (
    PROFILE_LABELS,
    ActionType,
    Answer,
    Episode,
    Instrument,
    Probe,
    Question,
    Respondent,
    Response,
    Scenario,
    Seat,
)
from .scripted import AGREEMENT

PROMPT_VERSION = "interview-1"
SCRIPTED_VERSION = "scripted-interview-1"
SCRIPTED_DISCLAIMER = "Scripted heuristic, not a model's answer."
GOALS_PRESET = "agentsense-goals"
PROBES_PRESET = "scenario-probes"
INTERVIEWED, CACHED, FAILED = "interviewed", "cached", "failed"
YES, NO = "yes", "no"
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

# The preset as the migration that adds it writes it (0011); made again here only if it is missing,
# as in a test database emptied between tests.
GOALS_INSTRUMENT = {
    "name": "AgentSense goals",
    "description": (
        "Goal completion judged yes or no, one goal at a time (after AgentSense). Asked of every agent "
        "after its episode about its own goals and the other characters' goals, so its view of itself "
        "can be set against the others' view of it and against external judges."
    ),
}
GOALS_QUESTION = {
    "key": "goal_achieved",
    "kind": Question.Kind.YES_NO,
    "prompt": "By the end of the conversation, was this goal achieved?",
    "help_text": (
        "Answer for the goal shown, from what happened in the conversation: yes if it was reached, "
        "no if it was not or only in part."
    ),
    "scope": Question.Scope.GOAL,
    "rationale": "optional",
    "options": {"choices": [{"value": YES, "label": "Yes"}, {"value": NO, "label": "No"}]},
    "dimension": "goal_achieved",
}


# --- the instruments ----------------------------------------------------------------------------


def goals_instrument() -> Instrument:
    """The shared preset *AgentSense goals* (its latest version)."""
    found = Instrument.objects.filter(team=None, preset=GOALS_PRESET).order_by("-version").first()
    if found is not None:
        return found
    with transaction.atomic():
        instrument = Instrument.objects.create(team=None, preset=GOALS_PRESET, frozen_at=timezone.now(),
                                               **GOALS_INSTRUMENT)
        Question.objects.create(instrument=instrument, position=0, **GOALS_QUESTION)
    return instrument


def probe_question(probe: Probe, position: int) -> dict[str, Any]:
    """The multiple-choice question a probe becomes: its text and options, the correct one named."""
    return {
        "key": f"probe_{position + 1}",
        "position": position,
        "kind": Question.Kind.MULTIPLE_CHOICE,
        "prompt": probe.text,
        "scope": Question.Scope.EPISODE,
        "rationale": "optional",
        "options": {
            "choices": [{"value": str(index), "label": option} for index, option in enumerate(probe.options)],
            "correct": str(probe.correct),
        },
        "dimension": f"probe_{probe.topic}",
    }


def probes_instrument(scenario: Scenario) -> Instrument | None:
    """The instrument of the scenario's probes (None without probes), built on first use.

    It is frozen when built; when the probes have changed since, a new version is built, so
    answers already given keep the questions they answered.
    """
    probes = list(scenario.probes.order_by("position"))
    if not probes:
        return None
    wanted = [probe_question(probe, position) for position, probe in enumerate(probes)]
    latest = Instrument.objects.filter(scenario=scenario, preset=PROBES_PRESET).order_by("-version").first()
    if latest is not None:
        have = [
            {"key": q.key, "position": q.position, "kind": q.kind, "prompt": q.prompt, "scope": q.scope,
             "rationale": q.rationale, "options": q.options, "dimension": q.dimension}
            for q in latest.questions.order_by("position")
        ]
        if have == wanted:
            return latest
    with transaction.atomic():
        instrument = Instrument.objects.create(
            team=scenario.team,
            scenario=scenario,
            preset=PROBES_PRESET,
            name=f"Probes of {scenario} (scenario {scenario.pk})",
            version=latest.version + 1 if latest else 1,
            description="The scenario's probes as multiple-choice questions, asked of interviewed agents.",
            frozen_at=timezone.now(),
        )
        Question.objects.bulk_create(Question(instrument=instrument, **question) for question in wanted)
    return instrument


def may_be_asked(probe: Probe, role_position: int) -> bool:
    """Whether the seat playing ``role_position`` may be asked ``probe`` (``Probe.asked_of``)."""
    if probe.asked_of == Probe.AskedOf.SELF:
        return probe.about.position == role_position
    if probe.asked_of == Probe.AskedOf.OTHERS:
        return probe.about.position != role_position
    return True


# --- what one seat is asked ---------------------------------------------------------------------


@dataclass(frozen=True)
class GoalItem:
    key: str  # g1, g2, ... in the episode's order of roles and goals
    goal_id: int
    role_position: int
    owner: str  # the name of the character whose goal it is
    text: str
    own: bool


@dataclass(frozen=True)
class ProbeItem:
    key: str  # p1, p2, ...
    question_id: int
    about: str  # the name of the character it is about
    text: str
    options: tuple[str, ...]
    correct: int
    own: bool  # the probe is about this seat's own role


@dataclass(frozen=True)
class SeatInterview:
    """Everything one seat is asked, read from the database once, so no query runs mid-call."""

    episode_id: int
    episode_label: str
    seat_position: int
    model: str
    context: AgentContext
    goals: tuple[GoalItem, ...]
    probes: tuple[ProbeItem, ...]
    about_lines: dict[str, tuple[str, ...]] = field(default_factory=dict)  # name -> what they said


@dataclass(frozen=True)
class EpisodeInterviews:
    episode_id: int
    goals_instrument_id: int
    probes_instrument_id: int | None
    seats: tuple[SeatInterview, ...]
    has_turns: bool


def load_interviews(episode_id: int) -> EpisodeInterviews:
    """What every agent seat of the episode will be asked (probe instrument built or found first)."""
    episode = Episode.objects.select_related("scenario", "barrier").get(pk=episode_id)
    seats = list(
        episode.seats.select_related("role", "character").prefetch_related("role__goals").order_by("position")
    )
    turns = list(episode.turns.order_by("index"))
    cues = list(episode.barrier.cues.all())
    goals = goals_instrument()
    probes = probes_instrument(episode.scenario)
    probe_rows = list(episode.scenario.probes.select_related("about").order_by("position"))
    questions = list(probes.questions.order_by("position")) if probes else []
    names = {seat.role.position: seat.character.name for seat in seats}
    all_goals = [
        (seat.role.position, names[seat.role.position], goal)
        for seat in sorted(seats, key=lambda s: s.role.position)
        for goal in seat.role.goals.all()
    ]
    said: dict[str, list[str]] = {}
    by_id = {seat.pk: seat for seat in seats}
    for turn in turns:
        if turn.action_type != ActionType.LEAVE and turn.content:
            said.setdefault(by_id[turn.seat_id].character.name, []).append(turn.content)
    interviews = []
    for seat in seats:
        if seat.player != Seat.Player.AGENT or not seat.model:
            continue
        mine = seat.role.position
        interviews.append(
            SeatInterview(
                episode_id=episode.pk,
                episode_label=str(episode),
                seat_position=seat.position,
                model=seat.model,
                context=AgentContext.for_seat(episode, seat, turns, seats=seats, cues=cues),
                goals=tuple(
                    GoalItem(f"g{n}", goal.pk, position, owner, goal.text, position == mine)
                    for n, (position, owner, goal) in enumerate(all_goals, start=1)
                ),
                probes=tuple(
                    ProbeItem(
                        f"p{n}", question.pk, names.get(probe.about.position, f"role {probe.about.position}"),
                        probe.text, tuple(probe.options), probe.correct, probe.about.position == mine,
                    )
                    for n, (probe, question) in enumerate(
                        [(p, q) for p, q in zip(probe_rows, questions, strict=True) if may_be_asked(p, mine)],
                        start=1,
                    )
                ),
                about_lines={name: tuple(lines) for name, lines in said.items()},
            )
        )
    return EpisodeInterviews(episode.pk, goals.pk, probes.pk if probes else None, tuple(interviews), bool(turns))


# --- asking a model -----------------------------------------------------------------------------


def _preamble(interview: SeatInterview) -> list[str]:
    context = interview.context
    sections = [f"Scenario: {context.scenario_context}"]
    own = "\n".join(f"- {PROFILE_LABELS.get(k, k)}: {v}" for k, v in context.profile.items() if v and k != "name")
    sections.append(f"{context.name} (you):\n{own}" if own else f"{context.name} (you).")
    for other in context.others:
        seen = "\n".join(f"- {PROFILE_LABELS.get(k, k)}: {v}" for k, v in other.profile.items() if v and k != "name")
        sections.append(f"{other.name}:\n{seen}" if seen else f"{other.name}: you knew nothing about them beforehand.")
    goals = "\n".join(f"- {line}" for line in context.goal.splitlines() if line.strip())
    sections.append(f"Your goals were:\n{goals}")
    if context.reason:
        sections.append(f"Why they mattered to you: {context.reason}")
    if context.private_knowledge:
        sections.append(f"What only you knew: {context.private_knowledge}")
    lines = [describe_turn(entry) for entry in context.history] or ["(Nothing was said.)"]
    sections.append("The conversation, now over:\n" + "\n".join(lines))
    return sections


def _system(interview: SeatInterview) -> str:
    name = interview.context.name
    return (
        f"You are {name}. The conversation below is over, and you are asked about it. Answer as {name}, "
        f"honestly and from what was said and done in it. Answer with one JSON object and nothing else."
    )


def goal_messages(interview: SeatInterview) -> list[dict[str, str]]:
    """Ask, for every goal in the episode, whether it was achieved (yes or no, with a reason)."""
    listed = "\n".join(
        f"{item.key} ({'your goal' if item.own else f'the goal of {item.owner}'}): {item.text}"
        for item in interview.goals
    )
    shape = ",\n".join(f'  "{item.key}": {{"answer": "yes" or "no", "reasoning": "<why>"}}' for item in interview.goals)
    question = (
        "For each goal below, was it achieved by the end of the conversation? Say yes only if the "
        f"conversation reached it.\n{listed}\n\nReply with exactly this JSON shape, every key present:\n{{\n{shape}\n}}"
    )
    return [{"role": "system", "content": _system(interview)},
            {"role": "user", "content": "\n\n".join([*_preamble(interview), question])}]


def probe_messages(interview: SeatInterview) -> list[dict[str, str]]:
    """Ask the probes this seat may be asked, each with its options lettered A, B, ..."""
    blocks = []
    for item in interview.probes:
        options = "\n".join(f"  {LETTERS[n]}. {option}" for n, option in enumerate(item.options))
        blocks.append(f"{item.key}. {item.text}\n{options}")
    shape = ",\n".join(
        f'  "{item.key}": {{"answer": "<the letter of one option>", "reasoning": "<why>"}}' for item in interview.probes
    )
    question = (
        "Answer each question from what you saw and heard. If you cannot be sure, choose the most likely "
        f"option.\n\n{chr(10).join(blocks)}\n\nReply with exactly this JSON shape, every key present:\n{{\n{shape}\n}}"
    )
    return [{"role": "system", "content": _system(interview)},
            {"role": "user", "content": "\n\n".join([*_preamble(interview), question])}]


def validate_replies(data: Any, allowed: dict[str, Sequence[str]]) -> dict[str, tuple[str, str]]:
    """Check a model's answers: every key present, each ``answer`` one of its allowed values.

    Returns key -> (answer as allowed, reasoning). Raises ``ValueError`` naming every problem,
    written for the model (the gateway shows it in its repair request).
    """
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object with one entry per question")
    problems: list[str] = []
    answers: dict[str, tuple[str, str]] = {}
    for key, values in allowed.items():
        entry = data.get(key)
        if not isinstance(entry, dict):
            problems.append(f"'{key}' is missing or not an object with 'answer' and 'reasoning'")
            continue
        answer = entry.get("answer")
        text = answer.strip().rstrip(".").strip() if isinstance(answer, str) else None
        match = next((value for value in values if text is not None and value.lower() == text.lower()), None)
        if match is None:
            problems.append(f"'{key}': answer {answer!r} is not one of {', '.join(map(repr, values))}")
            continue
        reasoning = entry.get("reasoning", "")
        if not isinstance(reasoning, str):
            problems.append(f"'{key}': 'reasoning' must be a text")
            continue
        answers[key] = (match, reasoning.strip())
    if problems:
        raise ValueError("; ".join(problems))
    return answers


async def _ask(
    messages: list[dict[str, str]], model: str, allowed: dict[str, Sequence[str]]
) -> tuple[dict[str, tuple[str, str]], llm.Usage]:
    def validate(data: dict[str, Any]) -> dict[str, tuple[str, str]]:
        return validate_replies(data, allowed)

    data, usage = await llm.complete_json(messages, model=model, temperature=0, validate=validate)
    return validate(data), usage


# --- the scripted answers -----------------------------------------------------------------------

_STOPWORDS = frozenset(
    "about after again against because before being between could every other should their there these "
    "those through under until where which while would your yours yourself others".split()
)


def _words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z0-9]{4,}", text.lower()) if word not in _STOPWORDS}


def scripted_goal_answers(interview: SeatInterview) -> dict[str, tuple[str, str]]:
    """Yes when the talk closed on agreement and the goal's key words came up in its second half,
    where it settled; a seat is kinder to itself.

    The share of the goal's key words (four letters or more) said in the second half must reach
    0.2 for the seat's own goals and 0.3 for the others' (AgentSense finds self-assessments more
    generous).
    """
    history = interview.context.history
    spoken = [entry.content for entry in history if entry.action_type != ActionType.LEAVE and entry.content]
    settled = _words(" ".join(spoken[len(spoken) // 2 :]))
    left = any(entry.action_type == ActionType.LEAVE for entry in history)
    speech = [entry.content for entry in history if entry.action_type == ActionType.SPEAK]
    closed = left and any(word in " ".join(speech[-3:]).lower() for word in AGREEMENT)
    answers = {}
    for item in interview.goals:
        words = _words(item.text)
        heard = words & settled
        share = len(heard) / len(words) if words else 0.0
        needed = 0.2 if item.own else 0.3
        whose = "my own goal" if item.own else f"{item.owner}'s goal"
        answers[item.key] = (
            YES if closed and share >= needed else NO,
            f"{SCRIPTED_DISCLAIMER} For {whose}: {len(heard)} of {len(words)} key words came up in the second "
            f"half of the talk (needed {needed:.0%}); {'it closed on agreement' if closed else 'no agreed close'}.",
        )
    return answers


def scripted_probe_answers(interview: SeatInterview) -> dict[str, tuple[str, str]]:
    """About its own role a seat knows the answer; about another, it picks the option closest to what
    that person said (by shared words), and guesses, seeded, when nothing they said points anywhere."""
    answers = {}
    for item in interview.probes:
        if item.own:
            answers[item.key] = (LETTERS[item.correct], f"{SCRIPTED_DISCLAIMER} It is about me, so I know.")
            continue
        said = _words(" ".join(interview.about_lines.get(item.about, ())))
        overlaps = [len(_words(option) & said) for option in item.options]
        best = max(overlaps)
        if best > 0:
            choice = overlaps.index(best)
            why = f"the option shares {best} word(s) with what {item.about} said"
        else:
            rng = random.Random(f"parley-interview|{interview.episode_id}|{interview.seat_position}|{item.key}")
            choice = rng.randrange(len(item.options))
            why = f"nothing {item.about} said points to an option; a guess"
        answers[item.key] = (LETTERS[choice], f"{SCRIPTED_DISCLAIMER} {why[:1].upper()}{why[1:]}.")
    return answers


# --- storing ------------------------------------------------------------------------------------


def respondent_for(model: str) -> Respondent:
    scripted = llm.is_scripted(model)
    respondent, _ = Respondent.objects.get_or_create(
        kind=Respondent.Kind.AGENT, user=None, model=model, label="",
        prompt_version=SCRIPTED_VERSION if scripted else PROMPT_VERSION,
    )
    return respondent


def is_stored(episode_id: int, instrument_id: int, seat_position: int, model: str) -> bool:
    respondent = respondent_for(model)
    return Response.objects.filter(
        episode_id=episode_id, instrument_id=instrument_id, respondent=respondent, seat_position=seat_position
    ).exists()


def store(
    interview: SeatInterview,
    instrument_id: int,
    rows: Iterable[tuple[int, int | None, str, str]],
    usage: llm.Usage | None,
) -> Response:
    """Replace this seat's interview on ``instrument_id`` with ``rows`` of (question, goal, value, reasoning)."""
    respondent = respondent_for(interview.model)
    with transaction.atomic():
        Response.objects.filter(
            episode_id=interview.episode_id, instrument_id=instrument_id, respondent=respondent,
            seat_position=interview.seat_position,
        ).delete()
        response = Response.objects.create(
            episode_id=interview.episode_id, instrument_id=instrument_id, respondent=respondent,
            seat_position=interview.seat_position,
            latency_ms=usage.latency_ms if usage else None,
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
        )
        Answer.objects.bulk_create(
            Answer(response=response, question_id=question, goal_id=goal, value=value, reasoning=reasoning)
            for question, goal, value, reasoning in rows
        )
    return response


# --- running them -------------------------------------------------------------------------------


@dataclass
class InterviewResult:
    """One episode's interviews: how many seats answered how many instruments, or why not."""

    episode_id: int
    outcome: str = FAILED
    responses: int = 0
    cached: int = 0
    error: str = ""


async def interview_episode(episode_id: int, *, force: bool = False) -> InterviewResult:
    """Interview every agent seat of an episode on the goals and on the probes it may be asked."""
    result = InterviewResult(episode_id)
    try:
        plan = await sync_to_async(load_interviews)(episode_id)
    except Episode.DoesNotExist:
        result.error = f"episode {episode_id} does not exist"
        return result
    if not plan.has_turns:
        result.error = f"episode {episode_id} has no turns to ask about"
        return result
    goal_question = await sync_to_async(
        lambda: Question.objects.get(instrument_id=plan.goals_instrument_id, position=0).pk
    )()
    for interview in plan.seats:
        asks = [("goals", plan.goals_instrument_id, interview.goals)]
        if plan.probes_instrument_id is not None and interview.probes:
            asks.append(("probes", plan.probes_instrument_id, interview.probes))
        for kind, instrument_id, items in asks:
            if not items:
                continue
            if not force and await sync_to_async(is_stored)(
                episode_id, instrument_id, interview.seat_position, interview.model
            ):
                result.cached += 1
                continue
            try:
                answers, usage = await _answers(interview, kind)
            except llm.LLMError as error:
                result.error = f"seat {interview.seat_position + 1} ({interview.model}): {error}"
                return result
            if kind == "goals":
                rows = [(goal_question, item.goal_id, *answers[item.key]) for item in interview.goals]
            else:
                rows = [
                    (item.question_id, None, str(LETTERS.index(answers[item.key][0])), answers[item.key][1])
                    for item in interview.probes
                ]
            await sync_to_async(store)(interview, instrument_id, rows, usage)
            result.responses += 1
    result.outcome = INTERVIEWED if result.responses or not result.cached else CACHED
    return result


async def _answers(interview: SeatInterview, kind: str) -> tuple[dict[str, tuple[str, str]], llm.Usage | None]:
    if llm.is_scripted(interview.model):
        if kind == "goals":
            return scripted_goal_answers(interview), None
        return scripted_probe_answers(interview), None
    if kind == "goals":
        return await _ask(goal_messages(interview), interview.model, {item.key: (YES, NO) for item in interview.goals})
    allowed = {item.key: tuple(LETTERS[: len(item.options)]) for item in interview.probes}
    return await _ask(probe_messages(interview), interview.model, allowed)


async def interview_episodes(
    episode_ids: Iterable[int],
    *,
    concurrency: int = 4,
    force: bool = False,
    on_result: Callable[[InterviewResult], None] | None = None,
) -> list[InterviewResult]:
    """Interview many episodes, at most ``concurrency`` at a time; one failure never stops the others."""
    return await map_bounded(
        episode_ids, lambda pk: interview_episode(pk, force=force), concurrency=concurrency, on_result=on_result
    )


def interview_finished(
    episode_ids: Sequence[int], *, concurrency: int = 4, beat: Callable[[], None] | None = None
) -> str:
    """Interview the finished ones of ``episode_ids`` (a run's), in batches; a one-line outcome."""
    finished = list(
        Episode.objects.filter(pk__in=episode_ids, status=Episode.Status.FINISHED).order_by("pk")
        .values_list("pk", flat=True)
    )
    results: list[InterviewResult] = []
    batch = max(1, concurrency) * 2
    for start in range(0, len(finished), batch):
        results += async_to_sync(interview_episodes)(finished[start : start + batch], concurrency=concurrency)
        if beat is not None:
            beat()
    done = sum(1 for r in results if r.outcome == INTERVIEWED)
    kept = sum(1 for r in results if r.outcome == CACHED)
    failed = [r for r in results if r.outcome == FAILED]
    line = f"Interviews: {done} episode(s) interviewed, {kept} already interviewed, {len(failed)} failed."
    if failed:
        line += f" First interview error (episode {failed[0].episode_id}): {failed[0].error}"
    return line


# --- showing them -------------------------------------------------------------------------------


@dataclass
class InterviewRow:
    question: str  # the goal or the probe
    subject: str  # whose goal / whom the probe is about
    perspective: str  # "self" or "other"
    answer: str
    correct: bool | None  # for a probe: was the answer right
    reasoning: str


@dataclass
class InterviewTable:
    seat_position: int
    seat_name: str
    respondent: Respondent
    instrument: Instrument
    rows: list[InterviewRow] = field(default_factory=list)

    @property
    def is_scripted(self) -> bool:
        return llm.is_scripted(self.respondent.model)


def episode_interviews(episode: Episode) -> list[InterviewTable]:
    """The agents' interview answers about ``episode``, one table per seat and instrument (a fixed
    number of queries)."""
    responses = (
        Response.objects.filter(episode=episode, respondent__kind=Respondent.Kind.AGENT)
        .select_related("respondent", "instrument")
        .prefetch_related("answers__question", "answers__goal__role")
        .order_by("seat_position", "instrument__preset", "instrument__version", "pk")
    )
    responses = list(responses)
    if not responses:
        return []
    seats = {seat.position: seat for seat in episode.seats.select_related("role", "character")}
    by_role = {seat.role.position: seat.character.name for seat in seats.values()}
    scenario_probes = list(episode.scenario.probes.select_related("about").order_by("position"))
    tables = []
    for response in responses:
        seat = seats.get(response.seat_position)
        mine = seat.role.position if seat else None
        table = InterviewTable(
            response.seat_position if response.seat_position is not None else -1,
            seat.character.name if seat else "an unknown seat", response.respondent, response.instrument,
        )
        for answer in sorted(response.answers.all(), key=lambda a: (a.question.position, a.goal_id or 0)):
            question = answer.question
            if answer.goal_id is not None:
                role = answer.goal.role.position
                table.rows.append(InterviewRow(
                    answer.goal.text, by_role.get(role, f"role {role + 1}"), "self" if role == mine else "other",
                    answer.value, None, answer.reasoning,
                ))
                continue
            choices = {c["value"]: c["label"] for c in question.options.get("choices", [])}
            # the probe asked, if the scenario still has it as it was asked
            probe = next((p for p in scenario_probes if p.text == question.prompt), None)
            about = probe.about.position if probe else None
            table.rows.append(InterviewRow(
                question.prompt,
                by_role.get(about, "") if about is not None else "",
                "self" if about is not None and about == mine else "other",
                choices.get(answer.value, answer.value),
                answer.value == question.options.get("correct") if "correct" in question.options else None,
                answer.reasoning,
            ))
        tables.append(table)
    return tables
