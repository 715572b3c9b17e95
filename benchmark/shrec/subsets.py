"""Drawing each task's items into the subsets models are scored on (spec SH-7).

SHREC scores every model on three separately sampled subsets per task and reports mean ± standard
deviation across them (≈ 200 items each for detection, ≈ 70 for the others; 300 Empathic + 300
Wellness). Here subset ``r`` of a task takes its items in ascending
``sha256("<seed>|<task>|<r>|<item_key>")``, so the draw depends on the seed and the keys only.

- **Stratified** by source (default): the subset's size is split evenly between the sources present
  (the remainder to the sources first in name order); a source with fewer items gives what it has.
- **Disjoint** when the pool allows (each stratum holds at least ``subsets × its share``): a later
  subset skips the items earlier ones took. Otherwise the subsets are drawn independently and may
  overlap, and ``SubsetReport.overlapping`` names the tasks where that happened.
- Without a size, the ``subsets`` subsets split each stratum evenly (disjoint), each taking at least
  one of its items (so a stratum with fewer items than subsets is shared); one subset with no size
  holds every item.

Each item's ``subsets`` lists the subsets (from 0) it was drawn into; an item drawn into none stays
in the task set, outside every subset.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from .builders import ItemRecord


@dataclass
class SubsetReport:
    """How each task's subsets came out: their sizes, and the tasks whose subsets overlap."""

    sizes: dict[str, list[int]] = field(default_factory=dict)
    overlapping: list[str] = field(default_factory=list)


def _order(seed: int, task: str, draw: int, key: str) -> str:
    return hashlib.sha256(f"{seed}|{task}|{draw}|{key}".encode()).hexdigest()


def _shares(size: int, sources: list[str]) -> dict[str, int]:
    base, extra = divmod(size, len(sources))
    return {source: base + (1 if position < extra else 0) for position, source in enumerate(sources)}


def assign_subsets(
    items: Sequence[ItemRecord], subsets: int = 1, size: int | None = None, seed: int = 0, stratify: bool = True
) -> SubsetReport:
    """Set every item's ``subsets`` (see the module docstring); returns the sizes drawn per task."""
    if subsets < 1:
        raise ValueError("--subsets must be at least 1")
    if size is not None and size < 1:
        raise ValueError("--subset-size must be at least 1")
    report = SubsetReport()
    by_task: dict[str, list[ItemRecord]] = defaultdict(list)
    for item in items:
        item.subsets = []
        by_task[item.task].append(item)
    for task, pool in by_task.items():
        strata: dict[str, list[ItemRecord]] = defaultdict(list)
        for item in pool:
            strata[item.source if stratify else ""].append(item)
        if size is None:  # split each stratum evenly, or take it whole into one subset
            shares = {source: max(1, len(members) // subsets) for source, members in strata.items()}
        else:
            shares = _shares(size, sorted(strata))
        overlapping = False
        for source, members in strata.items():
            share = shares[source]
            disjoint = len(members) >= subsets * share
            overlapping |= not disjoint
            taken: set[str] = set()
            for draw in range(subsets):
                ordered = sorted(members, key=lambda item, draw=draw: _order(seed, task, draw, item.item_key))
                if disjoint:
                    ordered = [item for item in ordered if item.item_key not in taken]
                for item in ordered[:share]:
                    item.subsets.append(draw)
                    taken.add(item.item_key)
        report.sizes[task] = [sum(draw in item.subsets for item in pool) for draw in range(subsets)]
        if overlapping and subsets > 1:
            report.overlapping.append(task)
    return report
