"""The offline scripted model's interview answers: transparent heuristics, labelled as such."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from ...agents.prompt import HistoryEntry
from ...agents.scripted import AGREEMENT
from ...models import ActionType
from .asking import LETTERS, SeatInterview
from .instruments import NO, YES

VERSION = "scripted-interview-1"
BLIND_VERSION = "scripted-blind-1"
DISCLAIMER = "Scripted heuristic, not a model's answer."

_STOPWORDS = frozenset(
    "about after again against because before being between could every other should their there these "
    "those through under until where which while would your yours yourself others".split()
)


def _words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z0-9]{4,}", text.lower()) if word not in _STOPWORDS}


def goal_answers(interview: SeatInterview) -> dict[str, tuple[str, str]]:
    """Yes when the talk closed on agreement and the goal's key words came up in its second half,
    where it settled; a seat is kinder to itself.

    The share of the goal's key words (four letters or more) said in the second half must reach
    0.2 for the seat's own goals and 0.3 for the others' (AgentSense finds self-assessments more
    generous).
    """
    answers = {}
    for item in interview.goals:
        needed = 0.2 if item.own else 0.3
        whose = "my own goal" if item.own else f"{item.owner}'s goal"
        value, why = goal_reached(interview.context.history, item.text, needed)
        answers[item.key] = (value, f"{DISCLAIMER} For {whose}: {why}")
    return answers


def goal_reached(history: Sequence[HistoryEntry], goal: str, needed: float) -> tuple[str, str]:
    """Yes or no for one goal, and why: the talk closed on agreement (someone left just after words
    of agreement) and at least ``needed`` of the goal's key words were said in its second half."""
    spoken = [entry.content for entry in history if entry.action_type != ActionType.LEAVE and entry.content]
    settled = _words(" ".join(spoken[len(spoken) // 2 :]))
    left = any(entry.action_type == ActionType.LEAVE for entry in history)
    speech = [entry.content for entry in history if entry.action_type == ActionType.SPEAK]
    closed = left and any(word in " ".join(speech[-3:]).lower() for word in AGREEMENT)
    words = _words(goal)
    heard = words & settled
    share = len(heard) / len(words) if words else 0.0
    return (
        YES if closed and share >= needed else NO,
        f"{len(heard)} of {len(words)} key words came up in the second half of the talk (needed {needed:.0%}); "
        f"{'it closed on agreement' if closed else 'no agreed close'}.",
    )


def probe_answers(interview: SeatInterview) -> dict[str, tuple[str, str]]:
    """About its own role a seat knows the answer; about another, it picks the option closest to what
    that person said (by shared words), and guesses, seeded, when nothing they said points anywhere."""
    answers = {}
    for item in interview.probes:
        if item.own:
            answers[item.key] = (LETTERS[item.correct], f"{DISCLAIMER} It is about me, so I know.")
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
        answers[item.key] = (LETTERS[choice], f"{DISCLAIMER} {why[:1].upper()}{why[1:]}.")
    return answers


def blind_probe_answers(interview: SeatInterview) -> dict[str, tuple[str, str]]:
    """The blind test offline: before anyone speaks, a seat picks the option sharing most words with
    what it can see (the scenario, its own profile, goals, reason and private knowledge, and what the
    relationship shows of the one asked about), and guesses, seeded, when no one option stands out.
    It never reads the probe's answer: about itself it is right only when its own words say so."""
    context = interview.context
    own = [context.scenario_context, context.goal, context.reason, context.private_knowledge, *context.profile.values()]
    answers = {}
    for item in interview.probes:
        other = next((o for o in context.others if o.name == item.about), None)
        seen = " ".join([*own, *(other.profile.values() if other else ())])
        known = _words(seen)
        overlaps = [len(_words(option) & known) for option in item.options]
        best = max(overlaps)
        if best > 0 and overlaps.count(best) == 1:
            choice = overlaps.index(best)
            why = f"the option shares {best} word(s) with what I knew before we spoke"
        else:
            rng = random.Random(f"parley-blind|{interview.episode_id}|{interview.seat_position}|{item.key}")
            choice = rng.randrange(len(item.options))
            why = "nothing I knew before we spoke singles out an option; a guess"
        answers[item.key] = (LETTERS[choice], f"{DISCLAIMER} {why[:1].upper()}{why[1:]}.")
    return answers
