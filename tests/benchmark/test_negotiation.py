"""A scripted ProMediate negotiation played to its end: the floor rules hold, every decision and thought
is stored, and a resumed episode continues exactly as an uninterrupted one."""

import pytest
from asgiref.sync import async_to_sync

from benchmark.agents.negotiation.prompts import OPENING_LINE
from benchmark.models import Episode, MediatorDecision, PartyThought, Turn
from benchmark.runs.simulation import create_episode, run_episode
from tests.benchmark.negotiation_data import PARTIES, competing, make_negotiation

pytestmark = pytest.mark.django_db

MEDIATOR = 3


def negotiation(mediator: str, *, turn_cap: int = 12, seed: int = 7) -> Episode:
    scenario = make_negotiation(turn_cap=turn_cap)
    settings = {
        "seed": seed,
        "promediate": {
            "mediator": mediator,
            "mediator_model": "scripted",
            "party_model": "scripted",
            "run_id": 0,
            "mode": "competing",
            "mediator_position": None if mediator == "none" else MEDIATOR,
        },
    }
    return create_episode(
        scenario,
        competing(),
        barrier_seats=(0, 1, 2),
        models=dict.fromkeys(range(4), "scripted"),
        turn_cap=1 + turn_cap,
        settings=settings,
        empty_roles=(MEDIATOR,) if mediator == "none" else (),
    )


def play(episode: Episode, seed: int = 7) -> Episode:
    return async_to_sync(run_episode)(episode, seed=seed)


def transcript(episode: Episode) -> list[tuple[str, str]]:
    return [(t.seat.character.first_name, t.content) for t in episode.turns.select_related("seat__character")]


def decisions(episode: Episode) -> list[tuple]:
    return list(
        MediatorDecision.objects.filter(episode=episode).values_list(
            "after_index", "engaged", "rating", "reason", "candidates", "chosen", "turn__index"
        )
    )


def thoughts(episode: Episode) -> list[tuple]:
    return list(
        PartyThought.objects.filter(episode=episode).values_list(
            "after_index", "seat__position", "content", "raw_rating", "rating", "selected", "spoken"
        )
    )


@pytest.mark.parametrize("mediator", ["social", "generic"])
def test_a_scripted_negotiation_keeps_the_floor_rules_and_stores_every_decision(mediator):
    episode = play(negotiation(mediator, turn_cap=24))

    assert (episode.status, episode.end_reason) == ("finished", "turn_cap")
    turns = list(episode.turns.select_related("seat"))
    speakers = [t.seat.position for t in turns]
    assert len(turns) == 1 + 24
    assert (speakers[0], turns[0].content) == (MEDIATOR, OPENING_LINE)
    for before, after in zip(speakers, speakers[1:], strict=False):
        assert before != after  # neither the mediator nor a party twice in a row
    chances = [t.index for t in turns[:-1] if t.seat.position != MEDIATOR]
    stored = MediatorDecision.objects.filter(episode=episode)
    assert sorted(stored.values_list("after_index", flat=True)) == chances  # one per chance, none after its own
    for decision in stored.select_related("turn__seat"):
        assert decision.policy == mediator and decision.by == "scripted" and decision.decided_at is not None
        if decision.engaged:
            assert (decision.turn.index, decision.turn.seat.position) == (decision.after_index + 1, MEDIATOR)
            assert decision.turn.content
        else:
            assert decision.turn is None
    assert stored.filter(engaged=True).count() == speakers[1:].count(MEDIATOR)


def test_the_social_mediator_weighs_three_strategies_and_speaks_the_best():
    episode = play(negotiation("social", turn_cap=60, seed=0), seed=0)
    spoken = list(MediatorDecision.objects.filter(episode=episode, engaged=True))
    assert len(spoken) == 5
    for decision in spoken:
        assert len(decision.candidates) == 3 and decision.rating > 3.5
        best = max(decision.candidates, key=lambda c: c["rating"])
        assert decision.chosen == best["text"]
        assert decision.turn.content.startswith(best["text"])


def test_parties_think_twice_each_except_the_last_speaker_and_one_thought_is_spoken():
    episode = play(negotiation("none", turn_cap=10))
    turns = list(episode.turns.select_related("seat"))
    assert {t.seat.position for t in turns} <= {0, 1, 2}  # no mediator seat at all
    assert not MediatorDecision.objects.filter(episode=episode).exists()
    for turn in turns[1:]:
        rows = PartyThought.objects.filter(episode=episode, after_index=turn.index - 1)
        last = turns[turn.index - 1].seat.position
        assert {r.seat.position for r in rows} == {0, 1, 2} - {last}
        assert all(rows.filter(seat__position=p).count() == 2 for p in {0, 1, 2} - {last})
        spoken = rows.get(spoken=True)
        assert spoken.seat_id == turn.seat_id
        assert 1.0 <= spoken.rating <= 5.0


def test_scripted_utterances_name_topics_and_option_letters():
    episode = play(negotiation("none", turn_cap=8))
    for _, text in transcript(episode)[1:]:
        assert text.startswith("On ") and "(" in text


def test_with_no_mediator_a_seeded_party_opens():
    openers = {transcript(play(negotiation("none", turn_cap=2, seed=seed), seed=seed))[0] for seed in range(6)}
    assert {name for name, _ in openers} <= set(PARTIES) and len(openers) > 1
    assert {text for _, text in openers} == {OPENING_LINE}


def test_the_same_seed_gives_the_same_negotiation():
    first, second = play(negotiation("social")), play(negotiation("social"))
    assert transcript(first) == transcript(second)
    assert decisions(first) == [(*row[:-1], row[-1]) for row in decisions(second)]
    assert [row[2:] for row in thoughts(first)] == [row[2:] for row in thoughts(second)]


def test_a_resumed_negotiation_continues_as_an_uninterrupted_one():
    whole = play(negotiation("social", turn_cap=16))
    cut = play(negotiation("social", turn_cap=16))
    # lose the tail, as a consumer that died mid-step would: the last turns and a half-done step's rows
    Turn.objects.filter(episode=cut, index__gte=9).delete()
    Episode.objects.filter(pk=cut.pk).update(status="running", end_reason="")
    resumed = play(cut)
    assert transcript(resumed) == transcript(whole)
    assert [row[:-1] for row in decisions(resumed)] == [row[:-1] for row in decisions(whole)]
    assert [row[2:] for row in thoughts(resumed)] == [row[2:] for row in thoughts(whole)]


def test_the_cases_own_thresholds_decide_which_thoughts_pass():
    episode = negotiation("none", turn_cap=6)
    unreachable = {"im_threshold": 5.5, "interrupt_threshold": 5.5}
    episode.scenario.settings = {"promediate": {"config": {name.lower(): unreachable for name in PARTIES}}}
    episode.scenario.save()
    played = play(episode)
    assert played.turns.count() == 7
    assert not PartyThought.objects.filter(episode=played, selected=True).exists()  # every turn fell back
    assert PartyThought.objects.filter(episode=played, spoken=True).count() == 6
