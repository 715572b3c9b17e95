"""The correct answer each item stores, for accuracy: a per-item choice's (``QuestionKind.correct_for``).

A question scored against a truth that lives on the item rather than the question (an AgentSense probe's
correct option, later a SHREC task item's) is scored row by row against its own item's truth. The kind
says what that truth is; this module reads the items' episodes once for the whole table.
"""

from __future__ import annotations

import pandas as pd

from benchmark.instruments.kinds import get_kind
from benchmark.instruments.kinds.base import QuestionKind
from benchmark.models import Episode, Question


def scored_by_item(question: Question, table: pd.DataFrame) -> pd.DataFrame | None:
    """``table`` (with its ``_episode`` column) with ``truth`` set to each item's correct value, rows without
    one left out; None when the question's kind stores no correct answer per item (no query then)."""
    kind = get_kind(question.kind)
    if type(kind).correct_for is QuestionKind.correct_for or table.empty:
        return None
    episodes = Episode.objects.select_related("scenario").prefetch_related("scenario__probes").in_bulk(
        set(table["_episode"])
    )
    truths = {pk: kind.correct_for(question, episode) for pk, episode in episodes.items()}
    scored = table.assign(truth=[truths.get(pk) for pk in table["_episode"]]).dropna(subset=["truth"])
    return scored if len(scored) else None
