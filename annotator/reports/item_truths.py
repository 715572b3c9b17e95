"""The correct answer each item stores, for accuracy: a per-item choice's (``QuestionKind.correct_for``).

A question scored against a truth that lives on the item rather than the question (an AgentSense probe's
correct option, a SHREC task item's in a human-baseline study) is scored row by row against its own item's truth.
The kind says what that truth is; this module reads the items' episodes and task items once for the whole table.
"""

from __future__ import annotations

import pandas as pd

from benchmark.instruments.kinds import get_kind
from benchmark.instruments.kinds.base import QuestionKind
from benchmark.models import Episode, Question, TaskItem


def scored_by_item(question: Question, table: pd.DataFrame) -> pd.DataFrame | None:
    """``table`` (with its ``_episode`` and ``_task_item`` columns) with ``truth`` set to each item's correct value,
    rows without one left out; None when the question's kind stores no correct answer per item (no query then)."""
    kind = get_kind(question.kind)
    if type(kind).correct_for is QuestionKind.correct_for or table.empty:
        return None
    episodes = Episode.objects.select_related("scenario").prefetch_related("scenario__probes").in_bulk(
        set(table["_episode"])
    )
    task_ids = [None if pd.isna(pk) else int(pk) for pk in table["_task_item"]]
    task_items = TaskItem.objects.in_bulk({pk for pk in task_ids if pk is not None})
    keys = list(zip(table["_episode"], task_ids, strict=True))
    truths = {key: kind.correct_for(question, episodes[key[0]], task_items.get(key[1])) for key in set(keys)}
    scored = table.assign(truth=[truths.get(key) for key in keys]).dropna(subset=["truth"])
    return scored if len(scored) else None
