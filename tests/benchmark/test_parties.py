"""Episodes of N ≥ 2 seats: what each seat sees of the others, who carries the barrier, the scripted
model in a group, and two-party episodes exactly as they were before groups."""

import hashlib
import json

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command

from benchmark.agents import llm, scripted
from benchmark.agents.prompt import PRIVATE_INFORMATION_RULE, AgentContext, build_agent_messages
from benchmark.demo.content import GROUP_SCENARIOS
from benchmark.demo.install import beats_of, install_scenario
from benchmark.models import ActionType, Episode, Probe, Relationship, Turn, TurnTaking
from benchmark.runs.options import RunOptions
from benchmark.runs.planning import plan_run, prepare_episodes
from benchmark.runs.simulation import create_episode, run_episode
from benchmark.scenarios.turn_taking import speaking_order
from tests.builders import default_team, get_barrier, make_character, make_scenario
from tests.fake_llm import FAKE_MODEL

pytestmark = pytest.mark.django_db

# The demo's 48 two-party transcripts and every prompt an LLM would have been sent for them, as the
# code before N-party scenarios (commit df40544) produced them: two-party episodes must not change.
DEMO_TRANSCRIPTS_SHA256 = "560f79a1f4c573249c88d26013f07f0efbf46e09d3ecd58939eb32a4a7d3b73f"
DEMO_PROMPTS_SHA256 = "92c24ee26cf0c3b829b915406e12d699db53aff43a4ac8656cc45bbbe4000d7d"


@pytest.fixture(autouse=True)
def no_configured_models(settings):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}


def trio(relationship: int = Relationship.ACQUAINTANCE, **fields):
    """Three roles: Ana, Ben and Cleo, with secrets, goals and private knowledge of their own."""
    people = [
        make_character(first_name=name, last_name="Test", occupation=job, secret=f"{name}'s secret: {secret}",
                       personality=f"{name} is {mood}.")
        for name, job, secret, mood in [
            ("Ana", "baker", "owes the landlord rent", "cheerful"),
            ("Ben", "tram driver", "keeps a snake", "quiet"),
            ("Cleo", "nurse", "is moving abroad", "blunt"),
        ]
    ]
    return make_scenario(
        relationship=relationship,
        roles=[
            {"character": person, "goal": f"{person.first_name} wants the big room.\nAnd a cleaning rota.",
             "private_knowledge": f"Only {person.first_name} knows the boiler code."}
            for person in people
        ],
        **fields,
    )


def contexts(scenario, *, barrier="semantic", barrier_seats=(0,), history=0):
    episode = create_episode(scenario, get_barrier(barrier), barrier_seats=barrier_seats,
                             models=dict.fromkeys(range(3), llm.SCRIPTED))
    seats = list(episode.seats.select_related("role", "character").prefetch_related("role__goals")
                 .order_by("position"))
    turns = [Turn(episode=episode, index=n, seat=seats[n % 3], content=f"line {n}") for n in range(history)]
    return [AgentContext.for_seat(episode, seat, turns, seats=seats) for seat in seats]


def prompt(context: AgentContext) -> str:
    return "\n".join(message["content"] for message in build_agent_messages(context))


# --- what a seat sees ---------------------------------------------------------------------------


def test_each_seat_sees_every_other_seat_as_the_relationship_allows_and_nothing_private():
    ana, ben, cleo = contexts(trio(Relationship.ACQUAINTANCE))
    text = prompt(ana)
    assert "a conversation with 2 other people" in text
    assert "Another person, Ben Test" in text and "Another person, Cleo Test" in text
    assert "tram driver" in text and "nurse" in text  # acquaintances see occupations
    assert "is quiet" not in text and "is blunt" not in text  # ...but not personalities
    for other in ("Ben", "Cleo"):
        assert f"{other}'s secret" not in text
        assert f"{other} wants the big room" not in text
        assert f"Only {other} knows" not in text
        assert f"{other} Test's goal: unknown to you." in text
    assert "Ana wants the big room.\nAnd a cleaning rota." in text and "Only Ana knows the boiler code" in text
    assert [other.name for other in ana.others] == ["Ben Test", "Cleo Test"]
    assert [other.name for other in cleo.others] == ["Ana Test", "Ben Test"]


def test_strangers_in_a_group_see_nothing_of_each_other():
    ana, _, _ = contexts(trio(Relationship.STRANGER))
    text = prompt(ana)
    assert "tram driver" not in text and "nurse" not in text
    assert text.count("You know nothing about this person beyond what they say and do.") == 2


def test_the_history_names_every_speaker():
    _, _, cleo = contexts(trio(), history=3)
    text = prompt(cleo)
    assert 'Ana Test said: "line 0"' in text and 'Ben Test said: "line 1"' in text
    assert 'Cleo Test said: "line 2"' in text


def test_a_seat_addresses_the_one_who_spoke_last():
    _, ben, cleo = contexts(trio(Relationship.FRIEND), history=2)
    assert cleo.partner_first_name == "Ben"  # Ben spoke last
    assert ben.partner_first_name == "Ana"
    assert set(cleo.other_first_names) == {"Ana", "Ben"}


def test_a_two_party_prompt_does_not_speak_of_a_group():
    scenario = make_scenario(roles=2)
    episode = create_episode(scenario, get_barrier("none"))
    context = AgentContext.for_seat(episode, episode.seats.get(position=0), [])
    assert "in a conversation with another person" in prompt(context)
    assert "other people" not in prompt(context)


def add_probe(scenario) -> Probe:
    return Probe.objects.create(
        scenario=scenario, about=scenario.roles.get(position=1), position=0, topic=Probe.Topic.PRIVATE_INFO,
        text="What does Ben keep at home?", options=["A snake", "A cat"], correct=0,
    )


def test_with_probes_every_seat_is_told_not_to_ask_for_private_information_outright():
    scenario = trio()
    assert not any("outright" in prompt(context) for context in contexts(scenario))
    add_probe(scenario)
    for context in contexts(scenario):
        system = build_agent_messages(context)[0]["content"]
        assert PRIVATE_INFORMATION_RULE.format(others="the others") in system
        assert "You may work it out from what they say and do." in system


def test_the_async_runner_tells_the_rule_as_the_prompt_does(fake_llm):
    fake_llm.reply_when("What does", '{"action_type": "speak", "argument": "Shall we split it?"}')
    scenario = trio()
    add_probe(scenario)
    episode = create_episode(scenario, get_barrier("none"), models=dict.fromkeys(range(3), FAKE_MODEL), turn_cap=3)
    async_to_sync(run_episode)(episode)
    assert all("outright for their private information" in p for p in fake_llm.prompts)


def test_the_scripted_model_never_asks_for_private_information():
    scenario = trio()
    add_probe(scenario)
    asked = []
    for condition in ("none", "semantic", "sociocultural", "emotional"):
        for seed in range(3):
            episode = create_episode(scenario, get_barrier(condition), models=dict.fromkeys(range(3), llm.SCRIPTED),
                                     strategy="repair", turn_cap=12)
            episode = async_to_sync(run_episode)(episode, seed=seed)
            asked += [t.content for t in episode.turns.all() if "?" in t.content]
    assert asked  # it does ask questions: what a line meant, or a proposal
    for line in asked:
        assert not any(word in line.lower() for word in ("secret", "private", "your goal", "hiding", "only you"))


def test_random_order_tells_the_opener_to_greet():
    ana, _, _ = contexts(trio(turn_taking=TurnTaking.RANDOM_AFTER_GREETING))
    assert "open it with a greeting" in prompt(ana)
    ana, _, _ = contexts(trio())
    assert "open it with a greeting" not in prompt(ana)


# --- barrier seats --------------------------------------------------------------------------------


def test_only_the_seats_the_condition_names_carry_the_barrier():
    ana, ben, cleo = contexts(trio(), barrier_seats=(0, 2))
    assert ana.barrier is not None and cleo.barrier is not None and ben.barrier is None
    assert "Communication style" in prompt(ana) and "Communication style" not in prompt(ben)


def test_a_run_puts_the_seats_it_names_under_the_barrier_with_the_agent_model():
    trio(codename="trio")
    options = RunOptions(conditions=("semantic",), barrier_seats=("0", "2"), agent_model="openai/a",
                         partner_model="openai/b")
    prepare_episodes(plan_run(options, default_team(), "two-barriers"))
    seats = list(Episode.objects.get().seats.order_by("position").values_list("carries_barrier", "model"))
    assert seats == [(True, "openai/a"), (False, "openai/b"), (True, "openai/a")]


def test_run_options_stored_with_one_barrier_seat_still_read_and_keep_their_run_name():
    old = RunOptions.from_dict({"barrier_seat": 1, "conditions": ["none"]})
    assert old.barrier_seats == ("1",)
    assert old.default_tag() == RunOptions(barrier_seats=("1",), conditions=("none",)).default_tag()
    assert RunOptions(barrier_seats=("0", "1")).default_tag() != RunOptions().default_tag()


@pytest.mark.parametrize(("seats", "message"), [
    ((), "Name at least one barrier seat"),
    (("0", "x"), "got 'x'"),
    (("1", "1"), "listed twice"),
])
def test_bad_barrier_seats_are_refused_naming_the_option(seats, message):
    with pytest.raises(ValueError, match=message) as error:
        RunOptions(barrier_seats=seats).check()
    assert error.value.option == "barrier_seats"


# --- the scripted model in a group ------------------------------------------------------------------


def play_group(condition: str = "none", seed: int = 3) -> Episode:
    spec = GROUP_SCENARIOS[0]
    scenario = install_scenario(spec, default_team())
    episode = create_episode(scenario, get_barrier(condition), models=dict.fromkeys(range(3), llm.SCRIPTED),
                             turn_cap=scenario.turn_cap)
    return async_to_sync(run_episode)(episode, seed=seed, beats=beats_of(spec))


def test_the_three_party_demo_plays_every_beat_in_turn_and_ends_when_two_have_left():
    episode = play_group()
    turns = list(episode.turns.order_by("index").values_list("seat__position", "action_type", "content"))
    spec = GROUP_SCENARIOS[0]
    said = [content for _, kind, content in turns if kind != ActionType.LEAVE]
    for role in spec.roles:
        for beat in role.beats:
            text = beat.split("] ", 1)[-1].lower()  # a reply may open with a name: "Mei, mine goes..."
            assert any(text in line.lower() for line in said), beat
    assert [position for position, _, _ in turns[:6]] == [0, 1, 2, 0, 1, 2]
    assert [kind for _, kind, _ in turns[-2:]] == [ActionType.LEAVE, ActionType.LEAVE]
    assert episode.end_reason == Episode.EndReason.LEAVE


def test_in_a_group_the_scripted_model_addresses_others_by_name_and_answers_questions_about_its_own_line():
    episode = play_group("semantic", seed=0)
    lines = list(episode.turns.order_by("index").select_related("seat__character"))
    names = {"Mei", "Callum", "Ifeoma"}
    addressed = [t for t in lines if t.content.split(",")[0] in names - {t.seat.character.first_name}]
    assert addressed, "nobody in the group was addressed by name"
    # a clarifying question is answered by the one whose line it asked about, on that seat's next turn
    asked = [n for n, t in enumerate(lines) if scripted.is_clarification_request(t.content)]
    assert asked, "no clarifying question in this episode"
    for n in asked:
        about = lines[n - 1].seat_id
        answer = next(t for t in lines[n + 1 :] if t.seat_id == about)
        assert answer.content.startswith(("Sorry, I mean", "I mean...")), answer.content


def test_without_beats_a_group_opens_with_a_greeting_to_everyone_and_leaves_before_the_cap():
    scenario = trio(Relationship.FRIEND)
    episode = create_episode(scenario, get_barrier("none"), models=dict.fromkeys(range(3), llm.SCRIPTED),
                             turn_cap=9)
    episode = async_to_sync(run_episode)(episode, seed=2)
    turns = list(episode.turns.order_by("index"))
    assert turns[0].content.startswith(("Hi everyone", "Hello, all"))
    assert len(turns) <= 9
    assert any(turn.action_type == ActionType.LEAVE for turn in turns)


def test_without_beats_a_seat_in_a_random_order_group_leaves_on_its_own_last_turn():
    """Not a round before the cap: under random order a seat's last turn is read from the drawn order."""
    for seed in range(6):
        scenario = trio(Relationship.FRIEND, turn_taking=TurnTaking.RANDOM_AFTER_GREETING, greeter_position=0)
        episode = create_episode(scenario, get_barrier("none"), models=dict.fromkeys(range(3), llm.SCRIPTED),
                                 turn_cap=12)
        episode = async_to_sync(run_episode)(episode, seed=seed)
        turns = list(episode.turns.order_by("index").values_list("seat__position", "action_type"))
        leaves: tuple[tuple[int, int], ...] = ()
        for index, (position, action) in enumerate(turns):
            later = speaking_order(TurnTaking.RANDOM_AFTER_GREETING, (0, 1, 2), 12, seed=seed, greeter=0,
                                   leaves=leaves)[index + 1 :]
            assert (action == ActionType.LEAVE) == (position not in later), (seed, index, turns)
            if action == ActionType.LEAVE:
                leaves += ((index, position),)
        assert len(turns) == 11  # the second to last seat leaves at turn 10: one seat cannot talk alone


@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # a run's chunk reads on a thread of its own
def test_simulate_plays_the_three_party_demo_offline(capsys):
    install_scenario(GROUP_SCENARIOS[0], default_team())
    call_command("simulate", "--scenarios", "heating-bill", "--conditions", "none,emotional", "--run-name", "trio")
    episodes = Episode.objects.filter(tag="trio")
    assert episodes.count() == 2 and all(e.status == Episode.Status.FINISHED for e in episodes)
    assert all(e.turn_cap == 24 for e in episodes)  # the scenario's own cap
    assert all(set(e.turns.values_list("seat__position", flat=True)) == {0, 1, 2} for e in episodes)


def test_an_llm_plays_a_three_party_episode_through_the_gateway(fake_llm):
    fake_llm.reply_when("What does", '{"action_type": "speak", "argument": "Let us decide together."}')
    scenario = trio()
    episode = create_episode(scenario, get_barrier("none"), models=dict.fromkeys(range(3), FAKE_MODEL), turn_cap=4)
    episode = async_to_sync(run_episode)(episode)
    assert list(episode.turns.values_list("seat__position", flat=True)) == [0, 1, 2, 0]
    assert "2 other people" in fake_llm.requests[2]["messages"][0]["content"]
    assert 'Ben Test said: "Let us decide together."' in fake_llm.requests[2]["messages"][1]["content"]


# --- two parties, exactly as before -----------------------------------------------------------------


def test_two_party_demo_transcripts_and_prompts_are_exactly_what_they_were_before_groups(worlds):
    worlds.lay("demo-episodes")  # load_demo --skip-accounts, built once per session (tests/worlds.py)
    transcripts, prompts = hashlib.sha256(), hashlib.sha256()
    for episode in Episode.objects.filter(tag="demo").select_related("scenario", "barrier").order_by("external_id"):
        seats = list(episode.seats.select_related("role", "character").prefetch_related("role__goals")
                     .order_by("position"))
        by_id = {seat.pk: seat for seat in seats}
        cues = list(episode.barrier.cues.all())
        turns = list(episode.turns.order_by("index"))
        for n, turn in enumerate(turns):
            seat = by_id[turn.seat_id]
            transcripts.update(
                f"{episode.external_id}|{turn.index}|{seat.position}|{turn.action_type}|{turn.content}\n".encode()
            )
            context = AgentContext.for_seat(episode, seat, turns[:n], seats=seats, cues=cues)
            record = [episode.external_id, n, build_agent_messages(context)]
            prompts.update((json.dumps(record, sort_keys=True) + "\n").encode())
    assert transcripts.hexdigest() == DEMO_TRANSCRIPTS_SHA256
    assert prompts.hexdigest() == DEMO_PROMPTS_SHA256
