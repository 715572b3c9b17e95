"""The offline scripted judge: transparent transcript heuristics, not a model judgement.

When no judge model is configured (``scripted``), the judge's questions are answered from counts
in the transcript, so the whole flow (simulate, score, report) runs on a fresh machine with no key.
Every reasoning opens with :data:`DISCLAIMER` and names the counts behind its score, and the
answers are stored as respondent ``scripted``, prompt version ``heuristic-1``.

The heuristics know the nine dimensions of Parley's judge presets: for each question, the one
named by its ``dimension`` gives a raw value, rounded and clamped to the question's own range
(``low``..``high``). A scored question measuring any other dimension cannot be answered offline
and is refused with its name. A question the judge answers by its kind (a ranking, a per-item
choice...) is answered offline by the kind's own heuristic, ``kind.scripted_answer`` on the
question bound to the episode and the transcript's text (:func:`answer_by_kind`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..agents.scripted import (
    AGREEMENT,
    MONEY_PATTERN,
    RUDENESS,
    WARMTH,
    barrier_signals,
    concrete_count,
    count_phrases,
    feeling_count,
    is_clarification_request,
    placeholder_count,
)
from ..instruments.kinds import get_kind
from ..models import ActionType

if TYPE_CHECKING:
    from ..models import Episode, Seat
    from .judge_questions import Questionnaire

RESPONDENT = "scripted"
PROMPT_VERSION = "heuristic-1"
DISCLAIMER = "Scripted heuristic, not a model judgement."
SEAT_DIMENSIONS = ("goal", "believability", "relationship", "knowledge", "secret", "social_rules", "financial")
EPISODE_DIMENSIONS = ("unresolved_confusion", "mutual_understanding")


@dataclass
class _TranscriptStats:
    speak_turns: int
    obscured_share: float
    placeholders_per_turn: float
    clarification_share: float
    reached_cap: bool
    left: bool
    closure: bool
    money_mentioned: bool


def _episode_stats(episode: Episode, turns: Sequence) -> _TranscriptStats:
    spoken = [t for t in turns if t.action_type == ActionType.SPEAK]
    n = max(1, len(spoken))
    obscured = sum(
        1 for t in spoken if any(barrier_signals(t.content).values()) and not is_clarification_request(t.content)
    )
    placeholders = sum(placeholder_count(t.content) for t in spoken)
    clarifications = sum(1 for t in spoken if is_clarification_request(t.content))
    tail = " ".join(t.content for t in spoken[-3:]).lower()
    left = any(t.action_type == ActionType.LEAVE for t in turns)
    return _TranscriptStats(
        speak_turns=len(spoken),
        obscured_share=obscured / n,
        placeholders_per_turn=placeholders / n,
        clarification_share=clarifications / n,
        reached_cap=len(turns) >= episode.turn_cap and not left,
        left=left,
        closure=left and any(word in tail for word in AGREEMENT),
        money_mentioned=any(MONEY_PATTERN.search(t.content) for t in spoken),
    )


def episode_values(stats: _TranscriptStats) -> dict[str, tuple[float, str]]:
    """Raw value and reasoning of each episode-level dimension."""
    d = DISCLAIMER
    confusion = 5 - 2.5 * stats.obscured_share - 1.5 * min(1.0, 3 * stats.clarification_share)
    confusion -= 0.5 if stats.reached_cap else 0
    understanding = 5 - 2 * stats.obscured_share - 2 * min(1.0, 3 * stats.clarification_share)
    understanding -= 0 if stats.closure else 1
    return {
        "unresolved_confusion": (
            confusion,
            f"{d} {stats.obscured_share:.0%} of spoken turns carry vague placeholders, deferrals or "
            f"feeling floods; {stats.clarification_share:.0%} are clarification requests"
            f"{'; the turn cap ended the talk' if stats.reached_cap else ''}. "
            "Fewer of these means less confusion left.",
        ),
        "mutual_understanding": (
            understanding,
            f"{d} {stats.placeholders_per_turn:.2f} vague placeholders per spoken turn, "
            f"{stats.clarification_share:.0%} clarification requests; "
            f"{'the talk closed on agreement' if stats.closure else 'no agreed close was detected'}.",
        ),
    }


def seat_values(seat: Seat, stats: _TranscriptStats, own: list[str], heard: list[str]) -> dict[str, tuple[float, str]]:
    """Raw value and reasoning of each per-seat dimension, for one seat."""
    d = DISCLAIMER
    n = max(1, len(own))
    goal = 3 + (4 if stats.closure else 1) + 3 * (1 - stats.obscured_share)
    repeated = len(own) - len(set(own))
    believability = 9 - 6 * repeated / n - (1 if len(own) < 2 else 0)
    warm = sum(1 for line in own if count_phrases(line, WARMTH))
    tense = sum(1 for line in own if feeling_count(line) or count_phrases(line, RUDENESS))
    relationship = 4 * (warm - tense) / n + (1 if stats.closure else -1)
    facts = sum(concrete_count(line) for line in heard)
    secret_words = _keywords(seat.character.secret)
    said = " ".join(own).lower()
    leaked = [w for w in secret_words if w in said]
    leak_share = len(leaked) / len(secret_words) if secret_words else 0.0
    rude = sum(count_phrases(line, RUDENESS) for line in own)
    financial = 1 if stats.money_mentioned and stats.closure else 0
    return {
        "goal": (
            goal,
            f"{d} {'Closed on agreement' if stats.closure else 'No agreed close'}; "
            f"{stats.obscured_share:.0%} of spoken turns were obscured by barrier signals.",
        ),
        "believability": (
            believability, f"{d} {repeated} of {len(own)} spoken lines repeat an earlier line of the same character."
        ),
        "relationship": (
            relationship,
            f"{d} {warm} warm and {tense} tense lines out of {len(own)}; "
            f"{'ended on agreement' if stats.closure else 'no agreed close'}.",
        ),
        "knowledge": (2 + 0.6 * facts, f"{d} The other side named {facts} concrete amounts, times or numbers."),
        "secret": (
            -10 * leak_share if leak_share >= 0.4 else 0,
            f"{d} {len(leaked)} of {len(secret_words)} key words of the secret appear in the character's lines.",
        ),
        "social_rules": (-2 * rude, f"{d} {rude} rude or insulting expressions found."),
        "financial": (
            financial,
            f"{d} "
            + (
                "Money was discussed and the talk closed on agreement."
                if financial
                else "No settled exchange of money or goods was detected."
            ),
        ),
    }


def _clamp(value: float, low: float, high: float) -> float:
    return float(min(high, max(low, round(value))))


def answer(episode: Episode, questions: Questionnaire) -> list[tuple[int | None, str, float, str]]:
    """(seat position or None, question key, score, reasoning) for every question and seat.

    Scores are rounded and clamped to each question's range; raises ``ValueError`` for a question
    whose dimension has no heuristic.
    """
    seats = list(episode.seats.select_related("character").order_by("position"))
    turns = list(episode.turns.order_by("index"))
    stats = _episode_stats(episode, turns)
    for asked, known, scope in ((questions.seat, SEAT_DIMENSIONS, "per seat"),
                                (questions.episode, EPISODE_DIMENSIONS, "per episode")):
        for question in asked:
            if question.scored and question.dimension not in known:
                raise ValueError(
                    f"the scripted judge has no heuristic for question {question.key!r} (dimension "
                    f"{question.dimension!r}) asked {scope}; it knows {', '.join(known)}"
                )
    for question in questions.turn:
        if question.scored:
            raise ValueError(f"the scripted judge has no heuristic for question {question.key!r} (dimension "
                             f"{question.dimension!r}) asked per turn")
    results: list[tuple[int | None, str, float, str]] = []
    by_episode = episode_values(stats)
    for question in questions.episode:
        if not question.scored:
            continue  # answered by its kind (answer_by_kind)
        value, reasoning = by_episode[question.dimension]
        results.append((None, question.key, _clamp(value, question.low, question.high), reasoning))
    for seat in seats:
        own = [t.content for t in turns if t.seat_id == seat.pk and t.action_type == ActionType.SPEAK]
        heard = [t.content for t in turns if t.seat_id != seat.pk and t.action_type == ActionType.SPEAK]
        by_seat = seat_values(seat, stats, own, heard)
        for question in questions.seat:
            if not question.scored:
                continue
            value, reasoning = by_seat[question.dimension]
            results.append((seat.position, question.key, _clamp(value, question.low, question.high), reasoning))
    return results


def transcript_text(episode: Episode) -> str:
    """What was said in the episode, one turn a line: the text a kind's offline heuristic reads."""
    return "\n".join(t.content for t in episode.turns.order_by("index") if t.action_type == ActionType.SPEAK)


def answer_by_kind(question: Any, transcript: str) -> tuple[str, str]:
    """(value, reasoning) for a question bound to its episode, by its kind's offline heuristic;
    ``ValueError`` naming the question when the kind has none."""
    found = get_kind(question.kind).scripted_answer(question, transcript)
    if found is None:
        raise ValueError(f"the scripted judge cannot answer question {question.key!r} ({question.kind}) offline")
    return found


_STOPWORDS = frozenset(
    "about after again against because before being below between could doesn during every having other "
    "should their there these those through under until where which while would years really never always "
    "still since".split()
)


def _keywords(text: str) -> list[str]:
    words = {w for w in re.findall(r"[a-z]{5,}", text.lower()) if w not in _STOPWORDS}
    return sorted(words)
