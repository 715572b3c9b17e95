"""A ProMediate negotiation through the real litellm path, against the local fake OpenAI-compatible
server: prompts reach the model, replies become thoughts, ratings, turns and decisions, and a reply
that is not the JSON asked for is kept as a failed decision, never skipped."""

import json

import pytest
from asgiref.sync import async_to_sync

from benchmark.agents.negotiation import prompts
from benchmark.models import Episode, MediatorDecision, PartyThought
from benchmark.runs.simulation import create_episode, run_episode
from tests.benchmark.negotiation_data import PERSONA, competing, make_negotiation
from tests.fake_llm import FAKE_MODEL

pytestmark = pytest.mark.django_db

MEDIATOR = 3
TURN_CAP = 4

THOUGHTS = json.dumps(
    {
        "thoughts": [
            {"content": "On Contract Term, hold out for option (b).", "stimuli": "the opening"},
            {"content": "On Marketing Support, ask for option (a).", "stimuli": "the budget"},
        ]
    }
)


def negotiation(mediator: str) -> Episode:
    scenario = make_negotiation(turn_cap=TURN_CAP)
    settings = {
        "promediate": {
            "mediator": mediator,
            "mediator_model": FAKE_MODEL,
            "party_model": FAKE_MODEL,
            "run_id": 1,
            "mode": "competing",
            "mediator_position": MEDIATOR,
        }
    }
    return create_episode(
        scenario,
        competing(),
        barrier_seats=(0, 1, 2),
        models=dict.fromkeys(range(4), FAKE_MODEL),
        turn_cap=1 + TURN_CAP,
        settings=settings,
    )


@pytest.fixture
def parties_reply(fake_llm):
    fake_llm.reply_when("Form 2 different thoughts", THOUGHTS)
    fake_llm.reply_when("How likely are you to speak it now", '{"reasoning": "It matters to me.", "rating": 3.4}')
    fake_llm.reply_when("Say it as your next turn", '{"articulation": "On Contract Term, two years (b) suits us."}')
    fake_llm.reply_when("hand the floor to one participant", '{"next_speaker": "anyone"}')
    fake_llm.reply_when("Update the state", '{"Contract Term": {"label": "unresolved", "mind_state": {}}}')
    return fake_llm


def play(episode: Episode) -> Episode:
    return async_to_sync(run_episode)(episode, seed=3)


def test_a_reply_that_is_not_json_is_stored_as_a_failed_decision(parties_reply):
    parties_reply.reply_when("Look for four kinds of trouble", "I would rather wait and see.")
    episode = play(negotiation("social"))

    assert (episode.status, episode.end_reason) == ("finished", "turn_cap")
    turns = list(episode.turns.select_related("seat"))
    assert len(turns) == 1 + TURN_CAP
    assert [t.content for t in turns[1:]] == ["On Contract Term, two years (b) suits us."] * TURN_CAP
    assert all(t.model == FAKE_MODEL for t in turns)
    decisions = list(MediatorDecision.objects.filter(episode=episode))
    assert [d.after_index for d in decisions] == [1, 2, 3]  # after every party turn but the last, none skipped
    for decision in decisions:
        assert (decision.failed, decision.engaged, decision.raw) == (True, False, "I would rather wait and see.")
        assert (decision.by, decision.model, decision.policy) == ("agent", FAKE_MODEL, "social")
        assert decision.decided_ms is not None
    # the social mediator's tracker kept the state its model gave after the party turns, for a resume
    episode.refresh_from_db()
    assert episode.settings["promediate"]["consensus"] == {"Contract Term": {"label": "unresolved", "mind_state": {}}}
    # one request and one repair per decision
    when = [p for p in parties_reply.prompts if "Look for four kinds of trouble" in p]
    assert len(when) == 2 * len(decisions)


def test_party_prompts_carry_the_case_the_brief_and_the_persona(parties_reply):
    parties_reply.reply_when(
        "Look for four kinds of trouble", '{"should_engage": false, "rating": 2.0, "reason": "ok"}'
    )
    episode = play(negotiation("social"))

    systems = [r["messages"][0]["content"] for r in parties_reply.requests if "Form 2 different" in json.dumps(r)]
    assert systems and all("A supplier and a health plan negotiate a contract." in s for s in systems)
    assert all(PERSONA in s for s in systems)
    assert any("You are Alex" in s and "Alex's brief." in s for s in systems)
    thoughts = PartyThought.objects.filter(episode=episode)
    # after the mediator's opening all three parties think, after a party's turn the two others; two thoughts each
    assert thoughts.count() == 3 * 2 + (TURN_CAP - 1) * 2 * 2
    assert set(thoughts.values_list("raw_rating", flat=True)) == {3.4}
    assert thoughts.filter(spoken=True).count() == TURN_CAP
    decision = MediatorDecision.objects.filter(episode=episode).first()
    assert (decision.engaged, decision.rating, decision.reason, decision.failed) == (False, 2.0, "ok", False)


def test_the_social_mediator_rates_its_strategies_and_voices_the_best(parties_reply):
    parties_reply.reply_when(
        "Look for four kinds of trouble",
        '{"reason": {"perception": "Alex and Jamie differ"}, "stimuli": [], "should_engage": true, "rating": 4.2}',
    )
    parties_reply.reply_when(
        "Propose 3 different strategies",
        json.dumps(
            {
                "strategies": [
                    {"family": "facilitative", "content": "Let each restate their position."},
                    {"family": "evaluative", "content": "Weigh the contract terms."},
                    {"family": "problem-solving", "content": "Suggest a two-year term."},
                ]
            }
        ),
    )
    parties_reply.reply_when(
        'A candidate intervention: "Suggest a two-year term."', '{"reasoning": "concrete", "rating": 4.5}'
    )
    parties_reply.reply_when("A candidate intervention", '{"reasoning": "fine", "rating": 3.0}')
    parties_reply.reply_when("Say it to the parties as their mediator", '{"message": "Could a two-year term work?"}')
    episode = play(negotiation("social"))

    speakers = list(episode.turns.values_list("seat__position", flat=True))
    assert speakers[0] == MEDIATOR and all(a != b for a, b in zip(speakers, speakers[1:], strict=False))
    spoken = MediatorDecision.objects.filter(episode=episode, engaged=True).select_related("turn")
    assert spoken.exists()
    for decision in spoken:
        assert decision.turn.content == "Could a two-year term work?" and decision.rating == 4.2
        assert decision.chosen == "Suggest a two-year term."
        assert [c["rating"] for c in decision.candidates] == [3.0, 3.0, 4.5]


def test_the_generic_mediator_speaks_its_message_as_written(parties_reply):
    parties_reply.reply_when("Decide whether to speak now", '{"should_engage": true, "reason": "stalled"}')
    parties_reply.reply_when("You have decided to speak in this group conversation", '{"message": "Let us focus."}')
    episode = play(negotiation("generic"))

    contents = list(episode.turns.values_list("seat__position", "content"))
    assert contents[0] == (MEDIATOR, prompts.OPENING_LINE)
    assert (MEDIATOR, "Let us focus.") in contents
    assert all(a[0] != b[0] for a, b in zip(contents, contents[1:], strict=False))
    assert MediatorDecision.objects.filter(episode=episode, engaged=True, reason="stalled").exists()
