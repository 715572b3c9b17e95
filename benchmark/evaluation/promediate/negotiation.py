"""A negotiation as the ProMediate judges read it: a plain snapshot of one episode, read once.

The judges (J1–J5) and the scripted stand-ins work on plain values, so no query runs while a model is
being asked and the bookkeeping (who holds which attitude after which turn) is testable without a
database. Parties are the seats other than the mediator's (``benchmark.instruments.interventions``);
topics and starting preferences are the scenario's ``Topic`` and ``Preference`` rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...instruments.interventions import intervention_turns, mediator_position
from ...models import Episode, Preference, Seat, Topic, Turn


class NegotiationProblem(ValueError):
    """The episode cannot be evaluated as a negotiation; the message names the episode and what is missing."""


@dataclass(frozen=True)
class TopicInfo:
    id: int
    key: str  # how prompts and replies name it: T1, T2, ...
    title: str
    question: str
    options: tuple[tuple[str, str], ...]  # (option key, text), in the scenario's order

    def option_text(self, key: str) -> str:
        return dict(self.options).get(key, "")


@dataclass(frozen=True)
class Party:
    seat_id: int
    position: int
    name: str


@dataclass(frozen=True)
class Stance:
    """What a party's brief says it wants on one topic: a ranking of option keys, refusals, its own words."""

    ranking: tuple[str, ...]
    unacceptable: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class Utterance:
    index: int
    seat_position: int
    speaker: str
    text: str
    by_mediator: bool


@dataclass(frozen=True)
class Negotiation:
    episode_id: int
    context: str
    parties: tuple[Party, ...]
    mediator: int | None  # the mediator's seat position
    topics: tuple[TopicInfo, ...]
    stances: dict[tuple[int, int], Stance]  # (seat position, topic id) -> the brief's stance
    utterances: tuple[Utterance, ...]
    interventions: tuple[int, ...]  # turn indexes of the mediator's turns after its welcome

    def party(self, position: int) -> Party | None:
        return next((party for party in self.parties if party.position == position), None)

    def topic(self, key: str) -> TopicInfo:
        return next(topic for topic in self.topics if topic.key == key)

    def pairs(self) -> list[tuple[Party, Party]]:
        """Every unordered pair of parties, the lower seat first."""
        return [(a, b) for number, a in enumerate(self.parties) for b in self.parties[number + 1 :]]

    def since_mediator(self, index: int) -> tuple[Utterance, ...]:
        """What a rater of intervention ``index`` reads first: the turns from the mediator's previous turn
        (included) up to the intervention, as ``instruments.interventions.intervention_context`` gives them."""
        earlier = [utterance for utterance in self.utterances if utterance.index < index]
        starts = [number for number, utterance in enumerate(earlier) if utterance.by_mediator]
        return tuple(earlier[starts[-1] if starts else 0 :])

    def context_before(self, index: int, turns: int) -> tuple[Utterance, ...]:
        """The ``turns`` utterances just before turn ``index``."""
        earlier = [utterance for utterance in self.utterances if utterance.index < index]
        return tuple(earlier[-turns:]) if turns else ()


def load_negotiation(episode_id: int) -> Negotiation:
    """The episode's snapshot; ``NegotiationProblem`` when it is not a negotiation the judges can read."""
    try:
        episode = Episode.objects.select_related("scenario").get(pk=episode_id)
    except Episode.DoesNotExist:
        raise NegotiationProblem(f"episode {episode_id} does not exist") from None
    rows = list(Topic.objects.filter(scenario=episode.scenario_id).order_by("position"))
    if not rows:
        raise NegotiationProblem(
            f"episode {episode_id}: its scenario {episode.scenario} has no topics (import the ProMediate case "
            "again so its topics and preferences are kept)"
        )
    topics = tuple(
        TopicInfo(
            topic.pk,
            f"T{number}",
            topic.title,
            topic.question,
            tuple((str(option.get("key")), str(option.get("text", ""))) for option in topic.options),
        )
        for number, topic in enumerate(rows, start=1)
    )
    mediator = mediator_position(episode)
    seats = list(Seat.objects.filter(episode=episode).select_related("character").order_by("position"))
    parties = tuple(Party(seat.pk, seat.position, seat.character.name) for seat in seats if seat.position != mediator)
    if len(parties) < 2:
        raise NegotiationProblem(f"episode {episode_id}: a negotiation needs at least two parties besides the mediator")
    roles = {seat.role_id: seat.position for seat in seats}
    stances = {
        (roles[preference.role_id], preference.topic_id): Stance(
            tuple(map(str, preference.ranking or ())), tuple(map(str, preference.unacceptable or ())), preference.text
        )
        for preference in Preference.objects.filter(topic__scenario=episode.scenario_id, role_id__in=roles)
    }
    names = {seat.position: seat.character.name for seat in seats}
    turns = Turn.objects.filter(episode=episode).select_related("seat").order_by("index")
    utterances = tuple(
        Utterance(
            turn.index, turn.seat.position, names[turn.seat.position], turn.content, turn.seat.position == mediator
        )
        for turn in turns
    )
    if not utterances:
        raise NegotiationProblem(f"episode {episode_id} has no turns to evaluate")
    gaps = [u.index for number, u in enumerate(utterances) if u.index != number]
    if gaps:
        raise NegotiationProblem(
            f"episode {episode_id}: turn indexes must run 0, 1, 2, ... without gaps (the consensus series has "
            f"one point after each turn); turn {gaps[0]} is out of place"
        )
    return Negotiation(
        episode_id,
        episode.scenario.context,
        parties,
        mediator,
        topics,
        stances,
        utterances,
        tuple(turn.index for turn in intervention_turns(episode)),
    )
