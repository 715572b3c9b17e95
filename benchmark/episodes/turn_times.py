"""Which turns a stretch of a recording covers, from the turns' times (``Turn.start_s``, ``end_s``).

A span marked on the recording's time keeps its seconds, and its turns are the turns those seconds
overlap (``turns_overlapping``): a turn from ``start_s`` to ``end_s`` overlaps the stretch from
``first_s`` to ``last_s`` when it starts before the stretch ends and ends after it starts. A turn
without an end lasts until the next timed turn starts (its own start, for the last). A stretch of
no length (a moment) overlaps the turn it falls in. A stretch in a pause between turns overlaps
none: it is given the turn spoken last before it (the one the pause follows), or the first turn
when it comes before any. The item page's player does the same in ``static/annotator/player.js``.
"""

from __future__ import annotations

from collections.abc import Sequence

TurnTime = tuple[int, float | None, float | None]  # (turn index, start_s, end_s)


def turns_overlapping(turns: Sequence[TurnTime], first_s: float, last_s: float) -> tuple[int, int] | None:
    """The (first, last) turn index the stretch ``first_s``–``last_s`` covers; None when no turn has a time."""
    timed = sorted((start, index, end) for index, start, end in turns if start is not None)
    if not timed:
        return None
    spans = []
    for position, (start, index, end) in enumerate(timed):
        following = timed[position + 1][0] if position + 1 < len(timed) else start
        spans.append((index, start, end if end is not None else max(start, following)))
    if last_s > first_s:
        hit = [index for index, start, end in spans if start < last_s and end > first_s]
    else:
        hit = [index for index, start, end in spans if start <= first_s <= end]
    if hit:
        return min(hit), max(hit)
    before = [index for index, start, _ in spans if start <= first_s]
    chosen = before[-1] if before else spans[0][0]
    return chosen, chosen
