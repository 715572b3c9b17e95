"""The episode as the judge sees it: a plain snapshot, the messages it is sent, and the reply's shape.

The judge sees everything the characters could not see of each other (their goals, private
knowledge, secrets) but not the barrier condition nor which models played, so its answers stay
blind to the experiment's design. Seats are named ``seat_1``, ``seat_2``... in speaking order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..agents.prompt import HistoryEntry, describe_turn
from ..models import ActionType, Episode, Seat, relationship_label
from .judge_questions import JudgedQuestion, Questionnaire, answer_text, system_prompt

EPISODE_KEY = "episode"
SEATS_KEY = "seats"
TURNS_KEY = "turns"


@dataclass(frozen=True)
class JudgedSeat:
    """One seat with everything the judge is told about it; ``key`` names it in the reply."""

    key: str
    seat_id: int
    position: int
    name: str
    profile: dict[str, str]
    goal: str
    reason: str
    private_knowledge: str

    @property
    def label(self) -> str:
        return f"{self.key} ({self.name})"


@dataclass(frozen=True)
class EpisodeForJudge:
    """A plain snapshot of an episode, read from the database once, so no query runs mid-call."""

    episode_id: int
    original_context: str
    shared_context: str
    relationship: str
    seats: tuple[JudgedSeat, ...]
    transcript: tuple[HistoryEntry, ...]
    cut_at_cap: bool
    turn_cap: int
    # The language agents' turns a per-turn question is asked of: (Turn.index, its line in the transcript).
    agent_turns: tuple[tuple[int, int], ...] = ()


def turn_key(line: int) -> str:
    """The JSON key of the turn on the transcript's line ``line`` (from 1): ``turn_3``."""
    return f"turn_{line}"


def agent_turn_indexes(seats: Sequence[Seat], turns: Sequence) -> list[int]:
    """The turns a per-turn question is asked of: a language agent's turns that did something (not
    "did nothing", not leaving); the same turns an annotator rates (``annotator.answer_forms.agent_turns``)."""
    agents = {seat.pk for seat in seats if seat.player == Seat.Player.AGENT}
    return [turn.index for turn in turns
            if turn.seat_id in agents and turn.action_type not in (ActionType.NONE, ActionType.LEAVE)]


def relationship_sentence(relationship: str) -> str:
    """How the characters know each other, for a judge; a relationship no one recorded (an imported
    log) is said to be unknown rather than guessed."""
    if relationship == relationship_label(None):
        return "Relationship between the characters: not recorded; infer it from the situation and the conversation."
    return f"Relationship between the characters: {relationship}."


def seat_key(position_in_order: int) -> str:
    """The JSON key of the n-th seat (0-based) in speaking order: ``seat_1``, ``seat_2``, ..."""
    return f"seat_{position_in_order + 1}"


def load_episode_for_judge(episode_id: int) -> EpisodeForJudge:
    episode = Episode.objects.select_related("scenario").get(pk=episode_id)
    seats = list(
        episode.seats.select_related("role", "character").prefetch_related("role__goals").order_by("position")
    )
    turns = list(episode.turns.order_by("index"))
    by_id = {seat.pk: seat for seat in seats}
    scenario = episode.scenario
    transcript = tuple(
        HistoryEntry(by_id[t.seat_id].character.name, t.action_type, t.content, by_id[t.seat_id].position)
        for t in turns
    )
    left = bool(turns) and turns[-1].action_type == ActionType.LEAVE
    rated = set(agent_turn_indexes(seats, turns))
    return EpisodeForJudge(
        episode_id=episode.pk,
        original_context=scenario.original_context.strip(),
        shared_context=scenario.context.strip(),
        relationship=scenario.relationship_label,
        seats=tuple(_judged_seat(number, seat) for number, seat in enumerate(seats)),
        transcript=transcript,
        cut_at_cap=not left and len(turns) >= episode.turn_cap,
        turn_cap=episode.turn_cap,
        agent_turns=tuple((t.index, line) for line, t in enumerate(turns, start=1) if t.index in rated),
    )


def _judged_seat(number: int, seat: Seat) -> JudgedSeat:
    return JudgedSeat(
        key=seat_key(number),
        seat_id=seat.pk,
        position=seat.position,
        name=seat.character.name,
        profile={k: v for k, v in seat.character.profile().items() if v and k != "name"},
        goal=seat.role.goal_text.strip(),
        reason=seat.role.reason.strip(),
        private_knowledge=seat.role.private_knowledge.strip(),
    )


def build_judge_messages(
    facts: EpisodeForJudge, questions: Questionnaire, bound: Mapping[int, Any] | None = None
) -> list[dict[str, str]]:
    """The system rubric and one user message with the situation, the characters and the transcript.

    ``bound`` holds the unscored questions bound to this episode (``judge_questions.bind``); one
    bound to None is not asked.
    """
    return [
        {"role": "system", "content": system_prompt(questions)},
        {"role": "user", "content": _episode_prompt(facts, questions, bound or {})},
    ]


def _episode_prompt(facts: EpisodeForJudge, questions: Questionnaire, bound: Mapping[int, Any]) -> str:
    sections = []
    if facts.original_context:
        sections.append(f"SITUATION (as originally written):\n{facts.original_context}")
    else:
        sections.append(f"SITUATION:\n{facts.shared_context}")
    if facts.original_context and facts.shared_context != facts.original_context:
        sections.append(f"What both characters were told of the situation:\n{facts.shared_context}")
    sections.append(relationship_sentence(facts.relationship))
    for seat in facts.seats:
        lines = [f"CHARACTER {seat.label}"]
        lines.extend(f"- {key.replace('_', ' ')}: {value}" for key, value in seat.profile.items())
        lines.append(f"Goal: {seat.goal}")
        if seat.reason:
            lines.append(f"Reason: {seat.reason}")
        if seat.private_knowledge:
            lines.append(f"Private knowledge: {seat.private_knowledge}")
        sections.append("\n".join(lines))
    sections.append(transcript_section(facts))
    sections.append(_reply_format(facts, questions, bound))
    return "\n\n".join(sections)


def _reply_format(facts: EpisodeForJudge, questions: Questionnaire, bound: Mapping[int, Any]) -> str:
    def entry(q: JudgedQuestion) -> str:
        if q.scored:
            return f'"{q.key}": {{"reasoning": "<why>", "score": <{q.range_text}>}}'
        return f'"{q.key}": {{"reasoning": "<why>", "answer": <{answer_text(bound[q.question_id])}>}}'

    def entries(items: Sequence[JudgedQuestion], indent: str) -> str:
        return ",\n".join(f"{indent}{entry(q)}" for q in items if q.scored or bound.get(q.question_id) is not None)

    blocks = []
    if questions.seat:
        seats = ",\n".join(
            f'    "{seat.key}": {{\n{entries(questions.seat, "      ")}\n    }}' for seat in facts.seats
        )
        blocks.append(f'  "{SEATS_KEY}": {{\n{seats}\n  }}')
    if questions.episode:
        blocks.append(f'  "{EPISODE_KEY}": {{\n{entries(questions.episode, "    ")}\n  }}')
    if questions.turn and facts.agent_turns:
        turns = ",\n".join(
            f'    "{turn_key(line)}": {{\n{entries(questions.turn, "      ")}\n    }}' for _, line in facts.agent_turns
        )
        blocks.append(f'  "{TURNS_KEY}": {{\n{turns}\n  }}')
    names = "; ".join(f"{seat.key} is {seat.name}" for seat in facts.seats)
    return (
        f"Judge this conversation and score every dimension ({names}). Reply with exactly this JSON "
        "shape, every key present:\n"
        "{\n" + ",\n".join(blocks) + "\n}"
    )


def transcript_section(facts: EpisodeForJudge) -> str:
    """The numbered transcript every judge reads (the scores judge and the goal judges alike), and where a
    turn cap stopped it."""
    transcript = "\n".join(f"{n}. {describe_turn(entry)}" for n, entry in enumerate(facts.transcript, start=1))
    if facts.cut_at_cap:
        transcript += f"\n(The conversation was stopped at its limit of {facts.turn_cap} turns.)"
    return f"TRANSCRIPT:\n{transcript}"
