"""ProMediate episodes built by hand through the models, for the report's tests: no simulator, no judge.

A negotiation scenario has three parties (Alex, Jamie, Lee) and a Mediator, and two topics. An episode
has ``len(speakers)`` turns spoken by the given seat positions (3 is the Mediator; a NoAgent episode has
no Mediator seat), a consensus trace where every pair of every topic scores ``low`` from point 0 and
``high`` from point ``change`` on, optional topic tags and the MI judge's answers per intervention.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta

from django.utils import timezone

from benchmark.instruments.interventions import store_intervention_answers
from benchmark.models import (
    Episode,
    PairAgreement,
    Respondent,
    Scenario,
    Seat,
    Team,
    Topic,
    TopicTag,
    Turn,
)
from tests.builders import default_team, get_barrier, make_character, make_role

PARTIES = ("Alex", "Jamie", "Lee")
MEDIATOR = 3
MI_KEYS = ("perception_alignment", "emotional_dynamics", "cognitive_challenges", "communication_breakdowns")
# Twelve turns: the Mediator's welcome, then the parties in turn with interventions at 4 and 9.
WITH_MEDIATOR = (3, 0, 1, 2, 3, 0, 1, 2, 0, 3, 1, 2)
WITHOUT_MEDIATOR = (0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2)


def negotiation_scenario(
    team: Team | None = None, codename: str = "hmo-test", topics: Sequence[str] = ("Market share", "Contract term")
) -> Scenario:
    team = team or default_team()
    scenario = Scenario.objects.create(team=team, codename=codename, context="A committee negotiates a contract.")
    for position, name in enumerate((*PARTIES, "Mediator")):
        make_role(scenario, position, character=make_character(team=team, first_name=name, last_name=""))
    for position, title in enumerate(topics):
        Topic.objects.create(
            scenario=scenario,
            position=position,
            title=title,
            options=[{"key": "a", "text": "one"}, {"key": "b", "text": "two"}],
        )
    return scenario


def mi_answers(episode: Episode, scores: Mapping[int, Sequence[float | None]], judge: str = "scripted") -> None:
    """The MI judge's four scores per intervention turn (None: not applicable), stored as the evaluation pass does."""
    respondent, _ = Respondent.objects.get_or_create(kind=Respondent.Kind.JUDGE, model=judge, prompt_version="v1")
    for turn, values in scores.items():
        store_intervention_answers(episode, turn, respondent, dict(zip(MI_KEYS, values, strict=True)))


def negotiation_episode(
    scenario: Scenario,
    *,
    mode: str = "competing",
    condition: str = "social",
    model: str = "gpt-4.1",
    speakers: Sequence[int] | None = None,
    low: float = 0.2,
    high: float = 0.8,
    change: int = 7,
    judge: str = "scripted",
    prompt_version: str = "v1",
    mentions: Mapping[int, Sequence[int]] | None = None,
    addressed: Mapping[int, Sequence[int]] | None = None,
    scores: Sequence[tuple[int, float]] | None = None,
    seconds_apart: float | None = None,
    tag: str = "pm",
    run_id: int = 1,
) -> Episode:
    """An episode of ``scenario`` with its consensus trace (see the module docstring). ``scores`` replaces the
    low/high schedule with (point, score) steps; ``mentions`` and ``addressed`` tag turns with topic positions;
    ``seconds_apart`` spaces the turns' times."""
    mediated = condition != "none"
    speakers = speakers or (WITH_MEDIATOR if mediated else WITHOUT_MEDIATOR)
    settings = {"promediate": {"mediator": condition, "mediator_model": model if mediated else "", "run_id": run_id}}
    episode = Episode.objects.create(
        scenario=scenario,
        team=scenario.team,
        barrier=get_barrier(f"promediate-{mode}"),
        tag=tag,
        source=Episode.Source.SIMULATED,
        status=Episode.Status.FINISHED,
        settings=settings,
    )
    seats = {
        role.position: Seat.objects.create(
            episode=episode, position=role.position, role=role, character=role.character, model=model
        )
        for role in scenario.roles.select_related("character")
        if mediated or role.position != MEDIATOR
    }
    start = timezone.now()
    turns = Turn.objects.bulk_create(
        Turn(
            episode=episode,
            index=index,
            seat=seats[position],
            content=f"Turn {index}.",
            created_at=start + timedelta(seconds=index * seconds_apart) if seconds_apart is not None else start,
        )
        for index, position in enumerate(speakers)
    )
    topics = list(scenario.topics.all())
    party_seats = [seats[position] for position in range(len(PARTIES))]
    for point, score in scores or ((0, low), (change, high)):
        for topic in topics:
            for i, a in enumerate(party_seats):
                for b in party_seats[i + 1 :]:
                    PairAgreement.objects.create(
                        episode=episode,
                        point=point,
                        topic=topic,
                        seat_a=a,
                        seat_b=b,
                        overall=score,
                        **dict.fromkeys(PairAgreement.DIMENSIONS, score),
                        judge=judge,
                        prompt_version=prompt_version,
                    )
    for kind, tagged in ((TopicTag.Kind.MENTION, mentions), (TopicTag.Kind.ADDRESSED, addressed)):
        for index, topic_positions in (tagged or {}).items():
            for topic in topics:
                TopicTag.objects.create(
                    turn=turns[index],
                    topic=topic,
                    kind=kind,
                    value=topic.position in topic_positions,
                    judge=judge,
                    prompt_version=prompt_version,
                )
    return episode
