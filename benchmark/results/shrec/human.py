"""The human baseline's answers, supplied by the app that holds the studies (the annotator app).

The benchmark app cannot read the annotator app's studies, so the annotator app registers a source
from its ``AppConfig.ready``: given a task set, it returns every submitted human answer to the set's
task items, each in the task's answer space (``benchmark.models.task_items``), scored like a model's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class HumanAnswer:
    """One person's answer to one task item. ``answer`` is None when they gave none that reads."""

    item_id: int
    person: str  # a pseudonym, never a name
    answer: Any
    generated_by: str = ""  # not empty for answers no person gave (the demo's), as pages must say


HumanBaseline = Callable[[int], list[HumanAnswer]]  # task set id -> its human answers
_SOURCES: list[HumanBaseline] = []


def register_human_baseline(source: HumanBaseline) -> None:
    """Let an app supply the human baseline's answers (the annotator app, from ``AppConfig.ready``)."""
    if source not in _SOURCES:
        _SOURCES.append(source)


def human_answers(task_set_id: int) -> list[HumanAnswer]:
    """Every registered source's human answers to the task set's items."""
    return [answer for source in _SOURCES for answer in source(task_set_id)]
