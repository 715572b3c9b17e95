"""Items that show a window of an episode: ProMediate's per-intervention ratings and snippet comparisons.

ProMediate's people rate pieces of a negotiation rather than whole ones (spec §1.6, PM-16, PM-17):

- **Per intervention** (preset ``promediate-intervention``): one item per mediator intervention, i.e.
  every mediator turn after its welcome line (``benchmark.instruments.interventions``). The item shows
  the turns since the mediator last spoke, that earlier mediator turn included, then the intervention
  itself, which the questions are about (``StudyItem.target_turn``). This is exactly the context the
  J3 judge is given, so the human and the judge answer about the same thing. A study may instead show a
  fixed number of turns before each intervention (``context``), the spec's option.
- **Snippet comparison** (preset ``promediate-snippets``): two windows of ``length`` utterances of the
  same episode, the first before the second and not overlapping, drawn with the study's seed; the
  annotator says whether agreement increased or decreased from the first to the second.

The choice of windows is pure (``intervention_windows``, ``snippet_windows``) so it is tested without a
database; ``window_items`` reads the episodes and returns the items' column values.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from benchmark.instruments.interventions import intervention_turns, mediator_position
from benchmark.instruments.presets import PROMEDIATE_INTERVENTION_PRESET
from benchmark.models import Episode, Turn

INTERVENTION_PRESET = PROMEDIATE_INTERVENTION_PRESET
SNIPPETS_PRESET = "promediate-snippets"
DEFAULT_SNIPPET_LENGTH = 6


@dataclass(frozen=True)
class Window:
    """A stretch of turns, by index, both ends included."""

    first: int
    last: int

    def __post_init__(self) -> None:
        if self.last < self.first:
            raise ValueError(f"a window ends (turn {self.last}) before it starts (turn {self.first})")

    @property
    def length(self) -> int:
        return self.last - self.first + 1


@dataclass(frozen=True)
class InterventionWindow:
    """The turns an intervention is rated on: ``window`` ends with the intervention, ``target``."""

    window: Window
    target: int


def intervention_windows(
    indexes: Sequence[int], mediator_turns: Sequence[int], interventions: Sequence[int], *, context: int | None = None
) -> list[InterventionWindow]:
    """One window per intervention, in transcript order.

    ``indexes`` are the episode's turn indexes; ``mediator_turns`` all the mediator's (its welcome included);
    ``interventions`` those rated (``benchmark.instruments.interventions.intervention_turns``). With ``context``
    None a window starts at the mediator's previous turn (as the J3 judge reads it; the episode's first turn
    when there is none); with ``context`` N it holds the N turns before the intervention (fewer at the start).
    """
    if context is not None and context < 1:
        raise ValueError(f"the context must be at least one turn, not {context}")
    order = sorted(set(indexes))
    position = {index: place for place, index in enumerate(order)}
    unknown = sorted((set(mediator_turns) | set(interventions)) - position.keys())
    if unknown:
        raise ValueError(f"mediator turn {unknown[0]} is not a turn of the episode")
    windows = []
    for target in sorted(interventions):
        if context is None:
            first = max((index for index in mediator_turns if index < target), default=order[0])
        else:
            first = order[max(0, position[target] - context)]
        windows.append(InterventionWindow(Window(first, target), target))
    return windows


def snippet_windows(
    indexes: Sequence[int], *, length: int = DEFAULT_SNIPPET_LENGTH, count: int = 1, rng: random.Random
) -> list[tuple[Window, Window]]:
    """``count`` pairs of non-overlapping windows of ``length`` consecutive turns, the first before the second,
    drawn uniformly among all such pairs with ``rng`` (all of them when there are fewer; none when the
    episode is shorter than two windows). Pairs come back in transcript order."""
    if length < 1:
        raise ValueError(f"a snippet must hold at least one turn, not {length}")
    if count < 1:
        raise ValueError(f"ask for at least one pair of snippets, not {count}")
    order = sorted(set(indexes))
    starts = range(len(order) - length + 1)
    pairs = [(first, second) for first in starts for second in starts if second >= first + length]
    chosen = sorted(rng.sample(pairs, count)) if count < len(pairs) else pairs
    return [
        (Window(order[first], order[first + length - 1]), Window(order[second], order[second + length - 1]))
        for first, second in chosen
    ]


def window_items(
    preset: str,
    episodes: Iterable[Episode],
    *,
    context: int | None = None,
    snippet_length: int = DEFAULT_SNIPPET_LENGTH,
    snippets_per_episode: int = 1,
    rng: random.Random,
) -> list[dict[str, Any]] | None:
    """The ``StudyItem`` column values of the windows a ``preset`` study rates, episode by episode; None when the
    preset rates whole episodes. An episode with no intervention, or too short for two snippets, gives none."""
    if preset not in (INTERVENTION_PRESET, SNIPPETS_PRESET):
        return None
    items: list[dict[str, Any]] = []
    for episode in episodes:
        turns = list(Turn.objects.filter(episode=episode).order_by("index").values_list("index", "seat__position"))
        indexes = [index for index, _ in turns]
        if preset == INTERVENTION_PRESET:
            mediator = mediator_position(episode)
            spoken = [index for index, seat in turns if mediator is not None and seat == mediator]
            rated = [turn.index for turn in intervention_turns(episode)]
            items.extend(
                {
                    "episode_id": episode.pk,
                    "first_turn": shown.window.first,
                    "last_turn": shown.window.last,
                    "target_turn": shown.target,
                }
                for shown in intervention_windows(indexes, spoken, rated, context=context)
            )
        else:
            items.extend(
                {
                    "episode_id": episode.pk,
                    "first_turn": first.first,
                    "last_turn": first.last,
                    "second_first_turn": second.first,
                    "second_last_turn": second.last,
                }
                for first, second in snippet_windows(
                    indexes, length=snippet_length, count=snippets_per_episode, rng=rng
                )
            )
    return items
