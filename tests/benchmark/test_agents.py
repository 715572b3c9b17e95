"""What each seat is told: barrier and repair text only where they belong, profiles by relationship."""

import pytest

from benchmark.agents import llm
from benchmark.agents.acting import act
from benchmark.agents.prompt import (
    REPAIR_INSTRUCTION,
    Action,
    AgentContext,
    OtherParticipant,
    build_agent_messages,
    parse_action,
)
from benchmark.models import Barrier, Character, Relationship, Scenario, Seat, Turn
from benchmark.runs.simulation import create_episode
from tests.builders import default_team, make_role
from tests.fake_llm import FAKE_MODEL

pytestmark = pytest.mark.django_db

PARTNER_SECRET = "keeps a second passport in the freezer"


def make_scenario(relationship: int = Relationship.FRIEND) -> Scenario:
    scenario = Scenario.objects.create(team=default_team(),
        codename="spare-room", context="Two people talk in a hallway.", relationship=relationship
    )
    ana = Character.objects.create(team=default_team(),
        first_name="Ana", last_name="Reyes", age=40, pronouns="she/her", occupation="baker",
        personality="Cheerful and blunt.", public_info="Runs the corner bakery.",
        secret="has never learned to swim",
    )
    ben = Character.objects.create(team=default_team(),
        first_name="Ben", last_name="Okoro", age=35, pronouns="he/him", occupation="tram driver",
        big_five="Openness - Low; Conscientiousness - High", personality="Quiet and careful.",
        decision_style="Analytical", public_info="Drives the night tram.", secret=PARTNER_SECRET,
    )
    make_role(
        scenario, 0, character=ana, goal="Rent out the spare room for 400 a month.",
        reason="She needs the income.", private_knowledge="The boiler breaks every winter.",
    )
    make_role(
        scenario, 1, character=ben, goal="Find a room under 350 a month.",
        reason="He is saving for a van.", private_knowledge="He has a cat he has not mentioned.",
    )
    return scenario


def contexts(scenario: Scenario, barrier_key: str = "semantic", strategy: str = "default"):
    barrier = Barrier.objects.get(key=barrier_key)
    episode = create_episode(scenario, barrier, models={0: llm.SCRIPTED, 1: llm.SCRIPTED}, strategy=strategy)
    seats = list(episode.seats.order_by("position"))
    return [AgentContext.for_seat(episode, seat, []) for seat in seats]


def prompt(context: AgentContext) -> str:
    return "\n".join(message["content"] for message in build_agent_messages(context))


def test_barrier_text_appears_only_in_the_barrier_seats_prompt():
    barrier_seat, partner = contexts(make_scenario(), "semantic")
    semantic = Barrier.objects.get(key="semantic")
    cue = semantic.cues.first()
    assert semantic.style_directive in prompt(barrier_seat)
    assert cue.instruction in prompt(barrier_seat)
    assert semantic.style_directive not in prompt(partner)
    assert cue.instruction not in prompt(partner)
    assert semantic.name not in prompt(partner)


def test_barrier_templates_are_filled_for_the_barrier_seat():
    barrier_seat, _ = contexts(make_scenario(Relationship.FRIEND), "semantic")
    text = prompt(barrier_seat)
    assert "the whole spare room thing" in text.lower()
    assert "{topic}" not in text and "{partner}" not in text


def test_baseline_condition_adds_no_barrier_section():
    barrier_seat, _ = contexts(make_scenario(), "none")
    assert barrier_seat.barrier is None
    assert "Communication style" not in prompt(barrier_seat)


def test_repair_instruction_only_for_the_partner_with_repair_strategy():
    barrier_seat, partner = contexts(make_scenario(), "emotional", strategy=Seat.Strategy.REPAIR)
    assert REPAIR_INSTRUCTION in prompt(partner)
    assert REPAIR_INSTRUCTION not in prompt(barrier_seat)
    _, default_partner = contexts(make_scenario(), "emotional")
    assert REPAIR_INSTRUCTION not in prompt(default_partner)


def test_stranger_sees_nothing_of_the_partners_profile():
    context, _ = contexts(make_scenario(Relationship.STRANGER))
    assert context.partner_profile == {}
    text = prompt(context)
    for hidden in ("tram driver", "Drives the night tram", "Quiet and careful", "he/him"):
        assert hidden not in text
    assert "You know nothing about this person" in text


def test_acquaintance_sees_the_public_face_but_not_the_personality():
    context, _ = contexts(make_scenario(Relationship.ACQUAINTANCE))
    text = prompt(context)
    for visible in ("Ben Okoro", "tram driver", "he/him", "Drives the night tram"):
        assert visible in text
    for hidden in ("Quiet and careful", "Openness - Low", "Analytical"):
        assert hidden not in text


def test_family_sees_everything_but_the_secret():
    context, _ = contexts(make_scenario(Relationship.FAMILY))
    text = prompt(context)
    for visible in ("tram driver", "Quiet and careful", "Openness - Low", "Analytical", "35"):
        assert visible in text
    assert PARTNER_SECRET not in text


@pytest.mark.parametrize("relationship", list(Relationship))
def test_partners_secret_goal_and_private_knowledge_never_reach_the_prompt(relationship):
    context, _ = contexts(make_scenario(relationship))
    text = prompt(context)
    for private in (PARTNER_SECRET, "under 350", "saving for a van", "cat he has not mentioned"):
        assert private not in text


def test_own_goal_reason_private_knowledge_and_secret_are_in_the_prompt():
    context, _ = contexts(make_scenario())
    text = prompt(context)
    for own in ("Rent out the spare room for 400", "needs the income", "boiler breaks", "never learned to swim"):
        assert own in text


def test_history_turn_number_and_action_types_are_in_the_prompt():
    scenario = make_scenario()
    episode = create_episode(scenario, Barrier.objects.get(key="none"), models={0: "scripted", 1: "scripted"})
    ana, ben = episode.seats.order_by("position")
    turns = [
        Turn.objects.create(episode=episode, index=0, seat=ana, content="Hello, Ben."),
        Turn.objects.create(episode=episode, index=1, seat=ben, action_type="non-verbal", content="waves"),
    ]
    context = AgentContext.for_seat(episode, ana, turns)
    text = prompt(context)
    assert context.turn_index == 2
    assert 'Ana Reyes said: "Hello, Ben."' in text
    assert "Ben Okoro [non-verbal communication]: waves" in text
    assert "turn 3 of at most 20" in text
    assert '"leave"' in text and '"non-verbal"' in text


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"action_type": "speak", "argument": " Hi! "}, Action("speak", "Hi!")),
        ({"action_type": "non verbal communication", "argument": "smiles"}, Action("non-verbal", "smiles")),
        ({"action_type": "Non_Verbal", "argument": "nods"}, Action("non-verbal", "nods")),
        ({"action_type": "physical action", "argument": "opens the door"}, Action("action", "opens the door")),
        ({"action_type": "none", "argument": ""}, Action("none", "")),
        ({"action_type": "leave"}, Action("leave", "")),
        ({"action_type": "leave", "argument": None}, Action("leave", "")),
    ],
)
def test_parse_action_accepts_valid_actions_and_aliases(data, expected):
    assert parse_action(data) == expected


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"argument": "hi"}, "no 'action_type'"),
        ({"action_type": "dance", "argument": "tango"}, "unknown action_type"),
        ({"action_type": "speak", "argument": "  "}, "non-empty"),
        ({"action_type": "action"}, "non-empty"),
        ({"action_type": "speak", "argument": 42}, "must be a string"),
        ([], "JSON object"),
    ],
)
def test_parse_action_rejects_invalid_actions_with_a_clear_message(data, message):
    with pytest.raises(ValueError, match=message):
        parse_action(data)


def test_parse_action_rejects_an_action_type_not_allowed_now():
    with pytest.raises(ValueError, match="not allowed"):
        parse_action({"action_type": "leave"}, allowed=("speak", "none"))


async def test_act_with_the_scripted_model_needs_no_gateway():
    context = AgentContext(
        seat_position=0, name="Ana Reyes", first_name="Ana", profile={}, goal="Rent the room.", reason="",
        private_knowledge="", scenario_context="A hallway.", topic="spare room", relationship=3,
        others=(OtherParticipant("Ben Okoro", {}),), history=(), turn_index=0, turn_cap=20,
    )
    action, usage = await act(context, model=llm.SCRIPTED, beats=["Hello, Ben."])
    assert action == Action("speak", "Hello, Ben.")
    assert usage.model == "scripted" and usage.prompt_tokens is None


@pytest.fixture
def ana_context():
    context, _ = contexts(make_scenario(Relationship.ACQUAINTANCE), "semantic")
    return context


async def test_act_sends_the_prompt_to_the_llm_and_parses_its_json(fake_llm, ana_context):
    fake_llm.reply_when("role-playing Ana Reyes", '{"action_type": "non verbal communication", "argument": "smiles"}')
    action, usage = await act(ana_context, model=FAKE_MODEL, temperature=0.2)
    assert action == Action("non-verbal", "smiles")
    assert usage.model == FAKE_MODEL and usage.prompt_tokens
    request = fake_llm.requests[0]
    assert request["temperature"] == 0.2
    assert request["messages"][0]["role"] == "system"
    assert "Semantic vagueness" in fake_llm.prompts[0]


async def test_act_repairs_an_invalid_action_once(fake_llm, ana_context):
    fake_llm.enqueue(text='{"action_type": "speak", "argument": ""}')
    fake_llm.enqueue(text='{"action_type": "speak", "argument": "The room is 400."}')
    action, usage = await act(ana_context, model=FAKE_MODEL)
    assert action == Action("speak", "The room is 400.")
    assert len(fake_llm.requests) == 2 and usage.attempts == 2
    assert "non-empty" in fake_llm.prompts[1]


async def test_act_raises_when_the_llm_never_returns_a_valid_action(fake_llm, ana_context):
    fake_llm.reply_when("role-playing Ana Reyes", '{"action_type": "dance", "argument": "a tango"}')
    with pytest.raises(llm.LLMOutputError):
        await act(ana_context, model=FAKE_MODEL)
