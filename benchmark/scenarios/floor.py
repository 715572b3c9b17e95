"""Who takes the floor in a ProMediate negotiation (turn-taking policy ``promediate``).

After every utterance the mediator decides first; if it wants to speak it does, and the parties do
not think on that utterance. It never speaks twice in a row (it does not react to its own words).
Otherwise each party that did not just speak has new thoughts, each rated for how much the party
wants to voice it (motivation 1–5), raised by a bonus for staying silent. A party's best thought
passes when:

- the floor is open to anyone (the predicted turn allocation is ``"anyone"``): it reaches the
  intrinsic-motivation threshold (3.0);
- the floor was handed to this party: always;
- the floor was handed to someone else: it reaches the interruption threshold (2.5).

The highest passing thought wins the floor (the first in seat order on ties). When none passes,
each eligible party's most salient stored thought competes with no threshold (the reservoir
fallback); when there is nothing at all, nobody speaks and the conversation ends.

This is the InnerThought selection as the ProMediate code runs it (spec §1.2, PM-4). Everything here
is a pure function of plain values, so the loop, the live chat and the tests share it.
"""

from __future__ import annotations

from collections.abc import Mapping

IM_THRESHOLD = 3.0
INTERRUPT_THRESHOLD = 2.5
ANYONE = "anyone"
SILENCE_FACTOR = 1.01
LOWEST, HIGHEST = 1.0, 5.0


def silence_bonus(rating: float, gap: int) -> float:
    """The motivation after ``gap`` turns of silence: ``round(clip(rating × 1.01^gap, 1, 5), 1)``.

    ``gap`` is the number of turns since the party last spoke (the turn number if it never has).
    """
    raised = rating * SILENCE_FACTOR ** max(0, gap)
    return round(min(HIGHEST, max(LOWEST, raised)), 1)


def passes(
    rating: float,
    party: str,
    allocation: str,
    *,
    im_threshold: float = IM_THRESHOLD,
    interrupt_threshold: float = INTERRUPT_THRESHOLD,
) -> bool:
    """Whether ``party``'s best thought, rated ``rating``, may claim the floor under ``allocation``."""
    if allocation == party:
        return True
    if allocation == ANYONE:
        return rating >= im_threshold
    return rating >= interrupt_threshold


def choose_speaker(
    best: Mapping[str, float | None],
    allocation: str,
    last_speaker: str | None,
    *,
    fallback: Mapping[str, float] | None = None,
    im_threshold: float = IM_THRESHOLD,
    interrupt_threshold: float = INTERRUPT_THRESHOLD,
    thresholds: Mapping[str, tuple[float, float]] | None = None,
) -> str | None:
    """The party that speaks next, or None when no party has anything to say.

    ``best`` maps each party, in seat order, to the rating of its best new thought (after the silence
    bonus), or None when it had none. ``fallback`` maps parties to the rating of their most salient
    stored thought, used only when no new thought passes. The last speaker is never chosen.
    ``thresholds`` gives a party its own (motivation, interruption) thresholds, as a case's ``config`` does.
    """
    own = thresholds or {}
    passing = {
        party: rating
        for party, rating in best.items()
        if party != last_speaker
        and rating is not None
        and passes(
            rating,
            party,
            allocation,
            im_threshold=own.get(party, (im_threshold, interrupt_threshold))[0],
            interrupt_threshold=own.get(party, (im_threshold, interrupt_threshold))[1],
        )
    }
    if passing:
        return _highest(passing)
    reservoir = {party: rating for party, rating in (fallback or {}).items() if party != last_speaker}
    return _highest(reservoir) if reservoir else None


def mediator_takes_floor(pending: bool, last_speaker_is_mediator: bool) -> bool:
    """A pending decision to intervene gives the mediator the floor, unless it has just spoken."""
    return pending and not last_speaker_is_mediator


def _highest(ratings: Mapping[str, float]) -> str:
    """The party with the highest rating; the first listed on ties."""
    top = max(ratings.values())
    return next(party for party, rating in ratings.items() if rating == top)
