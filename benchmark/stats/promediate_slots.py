"""Upstream's pair slots, replayed: how ProMediate's public pipeline files a rescored pair's score.

``scripts/consensus_agreement_pipeline.py`` lists a topic's pair scores in the ``names`` order of the parties
(slot j = the j-th pair of that order) but writes a rescored pair into the slot of its index in the
``config`` order. Where the two orders differ (hmo, flagship, river) a slot can hold another pair's score
until every pair has been rescored, and upstream's topic means are sums over slots. Parley stores each score
under the pair it scored; :func:`upstream_slot_readings` re-keys those readings to the pair whose slot upstream
wrote them into, so :func:`benchmark.stats.promediate.consensus_series` over the result gives upstream's series
exactly (PM-A13). Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from itertools import combinations

from .consensus import PairReading


def upstream_slot_readings(
    readings: Sequence[PairReading], names_order: Sequence[str], config_order: Sequence[str]
) -> list[PairReading]:
    """The readings re-keyed as upstream's slots hold them: a point-0 reading stays (the initial list is
    in ``names`` order); a later one moves to the ``names``-order pair whose slot the ``config`` order
    gives its pair. With equal orders nothing moves."""
    if sorted(names_order) != sorted(config_order):
        raise ValueError(
            f"the names order ({', '.join(names_order)}) and the config order ({', '.join(config_order)}) "
            "must list the same parties"
        )
    by_names = list(combinations(names_order, 2))
    slot = {frozenset(pair): number for number, pair in enumerate(combinations(config_order, 2))}
    moved = []
    for reading in readings:
        if reading.point == 0:
            moved.append(reading)
            continue
        key = frozenset(reading.pair)
        if key not in slot:
            raise ValueError(f"pair reading at point {reading.point}: {reading.a} and {reading.b} are not two parties")
        holder = by_names[slot[key]]
        moved.append(replace(reading, a=holder[0], b=holder[1]))
    return moved
