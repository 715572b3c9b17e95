"""What each agent seat is asked after its episode, and how a model is asked it (one call per instrument).

The prompts are built here; the questions are asked through ``benchmark.agents.respondent`` (the one
loop every model respondent answers through): :func:`goal_asked` and :func:`probe_asked` say what is
asked about which target, and :func:`answered` turns the scripted model's answers into the same
checked answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ...agents.prompt import AgentContext, describe_turn
from ...agents.respondent import Answered, Asked
from ...instruments.targets import Target
from ...models import PROFILE_LABELS, ActionType, Episode, Question, Seat
from .instruments import GOALS_QUESTION, NO, YES, goals_instrument, may_be_asked, probes_instrument

PROMPT_VERSION = "interview-1"
BLIND_PROMPT_VERSION = "blind-1"  # the probes asked before the conversation (the blind test)
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


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


def _preamble(interview: SeatInterview, *, transcript: bool = True) -> list[str]:
    context = interview.context
    were, knew = ("were", "knew") if transcript else ("are", "know")
    sections = [f"Scenario: {context.scenario_context}"]
    own = "\n".join(f"- {PROFILE_LABELS.get(k, k)}: {v}" for k, v in context.profile.items() if v and k != "name")
    sections.append(f"{context.name} (you):\n{own}" if own else f"{context.name} (you).")
    for other in context.others:
        seen = "\n".join(f"- {PROFILE_LABELS.get(k, k)}: {v}" for k, v in other.profile.items() if v and k != "name")
        unknown = "you knew nothing about them beforehand" if transcript else "you know nothing about them yet"
        sections.append(f"{other.name}:\n{seen}" if seen else f"{other.name}: {unknown}.")
    goals = "\n".join(f"- {line}" for line in context.goal.splitlines() if line.strip())
    sections.append(f"Your goals {were}:\n{goals}")
    if context.reason:
        sections.append(f"Why they matter{'ed' if transcript else ''} to you: {context.reason}")
    if context.private_knowledge:
        sections.append(f"What only you {knew}: {context.private_knowledge}")
    if not transcript:  # the blind test: asked before anyone has spoken
        sections.append("The conversation has not begun: you have heard nothing from the others yet.")
        return sections
    lines = [describe_turn(entry) for entry in context.history] or ["(Nothing was said.)"]
    sections.append("The conversation, now over:\n" + "\n".join(lines))
    return sections


def _system(interview: SeatInterview, *, blind: bool = False) -> str:
    name = interview.context.name
    if blind:
        return (
            f"You are {name}, about to join the conversation described below. Before it begins, you are asked "
            f"about the others. Answer as {name}, from what you know now. Answer with one JSON object and nothing else."
        )
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


def probe_messages(interview: SeatInterview, *, blind: bool = False) -> list[dict[str, str]]:
    """Ask the probes this seat may be asked, each with its options lettered A, B, ...; ``blind``: before
    the conversation, with no transcript (the blind test)."""
    blocks = []
    for item in interview.probes:
        options = "\n".join(f"  {LETTERS[n]}. {option}" for n, option in enumerate(item.options))
        blocks.append(f"{item.key}. {item.text}\n{options}")
    shape = ",\n".join(
        f'  "{item.key}": {{"answer": "<the letter of one option>", "reasoning": "<why>"}}' for item in interview.probes
    )
    source = "what you know before the conversation" if blind else "what you saw and heard"
    question = (
        f"Answer each question from {source}. If you cannot be sure, choose the most likely "
        f"option.\n\n{chr(10).join(blocks)}\n\nReply with exactly this JSON shape, every key present:\n{{\n{shape}\n}}"
    )
    return [{"role": "system", "content": _system(interview, blind=blind)},
            {"role": "user", "content": "\n\n".join([*_preamble(interview, transcript=not blind), question])}]


def goal_asked(key: str, goal_id: int, question_id: int, instrument_id: int, *, reasoning_required: bool) -> Asked:
    """The goals preset's yes/no question asked about one goal, its entry under ``key`` in the reply."""
    return Asked((key,), question_id, Target.of_goal(goal_id), GOALS_QUESTION["kind"], choices=((YES, YES), (NO, NO)),
                 reasoning_required=reasoning_required, instrument_id=instrument_id)


def goals_asked(interview: SeatInterview, question_id: int, instrument_id: int) -> list[Asked]:
    """What a seat is asked about the goals: each goal yes or no, a reason welcome but not required."""
    return [goal_asked(item.key, item.goal_id, question_id, instrument_id, reasoning_required=False)
            for item in interview.goals]


def probes_asked(interview: SeatInterview, instrument_id: int) -> list[Asked]:
    """What a seat is asked about the probes: each by the letter of one option, stored as the option's index."""
    return [
        Asked((item.key,), item.question_id, Target.episode(), Question.Kind.MULTIPLE_CHOICE,
              choices=tuple((LETTERS[n], str(n)) for n in range(len(item.options))), reasoning_required=False,
              instrument_id=instrument_id)
        for item in interview.probes
    ]


def answered(asked: Sequence[Asked], replies: Mapping[str, tuple[str, str]]) -> list[Answered]:
    """The scripted model's answers (key -> (choice as the prompt shows it, reasoning)) as checked answers."""
    return [Answered(item, dict(item.choices)[replies[item.key][0]], None, replies[item.key][1]) for item in asked]
