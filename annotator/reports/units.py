"""What a rated unit of the agreement report is: an item, or an item and the seat, goal or turn it is about.

An item is one episode of the study, named by its number (``"12"``, as in the exports). A question
asked per seat rates each character, so each (item, seat) is a unit, ``"12:0"``; one asked per turn
rates each agent turn, ``"12:t3"`` (turn indexes from 0, as in the exports); one asked per goal each
goal, ``"12:g7"`` (the goal's id). Other respondents' answers (a judge's) are matched to the same units.
"""

from __future__ import annotations

from benchmark.instruments.targets import GOAL, SEAT, TURN, Target
from benchmark.models import Question


def unit_target(question: Question, target: Target) -> Target:
    """What of an answer's target makes its rated unit for ``question``: the seat of a question asked per seat,
    the turn of one asked per turn, the goal of one asked per goal, else the episode (an item is its episode)."""
    if target.goal is not None:
        return Target.of_goal(target.goal)
    if question.scope == Question.Scope.TURN:
        return Target.of_turn(target.turn) if target.turn is not None else Target.episode()
    if question.per_seat and target.seat is not None:
        return Target.of_seat(target.seat)
    return Target.episode()


def unit_name(item: str, target: Target) -> str:
    """The name of the unit of ``item`` (its name) about ``target`` (a ``unit_target``)."""
    if target.kind == SEAT:
        return f"{item}:{target.seat}"
    if target.kind == GOAL:
        return f"{item}:g{target.goal}"
    if target.kind == TURN:
        return f"{item}:t{target.turn}"
    return item


def unit_kind(question: Question) -> str:
    """How the report names a question's unit: ``item``, ``item:seat`` or ``item:turn``."""
    if question.scope == Question.Scope.TURN:
        return "item:turn"
    return "item:seat" if question.per_seat else "item"
