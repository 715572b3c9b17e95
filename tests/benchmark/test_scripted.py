"""The offline scripted model: deterministic, barrier-styled, honest about being scripted."""

import random

import pytest

from benchmark.agents import scripted
from benchmark.agents.prompt import Action, AgentContext, BarrierBrief, Cue, HistoryEntry, OtherParticipant
from benchmark.demo.content import SCENARIOS
from benchmark.models import Barrier

BEATS = [beat for spec in SCENARIOS for role in spec.roles for beat in role.beats if not beat.startswith("[")]


def context(
    *,
    barrier: BarrierBrief | None = None,
    position: int = 0,
    history: tuple[HistoryEntry, ...] = (),
    strategy: str = "default",
    turn_cap: int = 20,
) -> AgentContext:
    return AgentContext(
        seat_position=position,
        name=["Ana Reyes", "Ben Okoro"][position],
        first_name=["Ana", "Ben"][position],
        profile={},
        goal="Agree on who keeps the car on weekends.",
        reason="",
        private_knowledge="",
        scenario_context="Two siblings talk in a kitchen.",
        topic="shared car",
        relationship=5,
        others=(OtherParticipant(["Ben Okoro", "Ana Reyes"][position], {}),),
        history=history,
        turn_index=len(history),
        turn_cap=turn_cap,
        barrier=barrier,
        strategy=strategy,
        partner_first_name=["Ben", "Ana"][position],
    )


@pytest.fixture
def briefs(db) -> dict[str, BarrierBrief]:
    return {b.key: BarrierBrief.from_barrier(b, b.cues.all()) for b in Barrier.objects.exclude(key="none")}


def styled(brief: BarrierBrief | None, beat: str, seed: int) -> Action:
    return scripted.scripted_action(context(barrier=brief), seed=seed, beats=[beat])


def test_same_seed_gives_the_same_reply(briefs):
    for key, brief in briefs.items():
        first = [styled(brief, beat, seed=7) for beat in BEATS[:20]]
        again = [styled(brief, beat, seed=7) for beat in BEATS[:20]]
        assert first == again, key


def test_different_seeds_give_different_replies(briefs):
    replies = {seed: [styled(briefs["semantic"], beat, seed).content for beat in BEATS[:20]] for seed in range(3)}
    assert replies[0] != replies[1] != replies[2]


def test_without_a_barrier_the_beat_is_said_plainly():
    for beat in BEATS[:20]:
        assert styled(None, beat, seed=1) == Action("speak", beat)


def test_semantic_replies_use_placeholders_and_name_fewer_concrete_things(briefs):
    semantic = [styled(briefs["semantic"], beat, seed).content for seed in range(3) for beat in BEATS]
    plain = BEATS * 3
    with_placeholders = sum(1 for line in semantic if scripted.placeholder_count(line))
    assert with_placeholders > len(semantic) / 2
    assert sum(map(scripted.concrete_count, semantic)) < 0.6 * sum(map(scripted.concrete_count, plain))


def test_semantic_vagueness_follows_the_cue_rate(briefs):
    brief = briefs["semantic"]
    rng = random.Random(0)
    line = "I pay 500 on Friday and you pay 220 on Monday, with the keys in the blue bowl."
    never = scripted.make_vague(line, rng, referent_rate=0.0, hedge_rate=0.0, trail_rate=0.0)
    always = scripted.make_vague(line, rng, referent_rate=1.0, hedge_rate=0.0, trail_rate=0.0)
    assert never == line
    assert scripted.concrete_count(always) == 0 and scripted.placeholder_count(always) >= 3
    assert scripted.cue_rate(brief, ("referent",), 0.0) == pytest.approx(0.6)


def test_emotional_replies_put_feelings_first(briefs):
    emotional = [styled(briefs["emotional"], beat, seed=3).content for beat in BEATS]
    with_feelings = sum(1 for line in emotional if scripted.feeling_count(line))
    assert with_feelings > 0.6 * len(emotional)
    assert sum(line.count("!") for line in emotional) > sum(beat.count("!") for beat in BEATS)


def test_sociocultural_replies_defer_instead_of_refusing(briefs):
    replies = [
        styled(briefs["sociocultural"], "No, I can't pay more than 40 euros.", seed).content for seed in range(10)
    ]
    assert sum(1 for line in replies if scripted.deferral_count(line)) >= 8
    assert sum(1 for line in replies if "can't pay" in line) <= 3


def test_a_researcher_defined_barrier_uses_its_own_templates():
    brief = BarrierBrief(
        key="jargon",
        name="Jargon",
        style_directive="Speak in management jargon.",
        narrative_stance="",
        interaction_tactics="",
        confusion_mechanisms="",
        templates=("Let's take the {topic} offline and circle back, {partner}.",),
        cues=(Cue("interaction_tactics", "Use a buzzword", 1.0, "of sentences"),),
    )
    replies = [styled(brief, "I can take the car on Tuesday.", seed).content for seed in range(6)]
    assert all("Let's take the shared car offline and circle back, Ben." in line for line in replies)


def test_partner_asks_for_clarification_and_the_barrier_seat_answers(briefs):
    vague = HistoryEntry("Ana Reyes", "speak", "So, um, the thing... you know?", 0)
    asked = [
        scripted.scripted_action(context(position=1, history=(vague,)), seed=s, beats=["Fine."]) for s in range(20)
    ]
    questions = [a.content for a in asked if a.content in scripted.clarification_lines("shared car")]
    assert questions and len(questions) < 20

    history = (
        HistoryEntry("Ana Reyes", "speak", "I need the car on Tuesday.", 0),
        HistoryEntry("Ben Okoro", "speak", questions[0], 1),
    )
    answer = scripted.scripted_action(
        context(position=0, history=history), seed=0, beats=["I need the car on Tuesday.", "Bye."]
    )
    assert answer.content != "Bye."  # an inserted answer, not the next beat


def test_repair_partner_asks_more_often_than_default_partner():
    vague = HistoryEntry("Ana Reyes", "speak", "It's the stuff, whenever... you know?", 0)

    def questions(strategy: str) -> int:
        return sum(
            scripted.is_clarification_request(
                scripted.scripted_action(
                    context(position=1, history=(vague,), strategy=strategy), seed=s, beats=["Ok."]
                ).content
            )
            for s in range(60)
        )

    assert questions("repair") > questions("default") + 10


def play(beats=None, turn_cap: int = 20, seed: int = 0) -> list[HistoryEntry]:
    """Two scripted seats in memory, round-robin, until one leaves or the cap is reached."""
    history: list[HistoryEntry] = []
    while len(history) < turn_cap:
        position = len(history) % 2
        action = scripted.scripted_action(
            context(position=position, history=tuple(history), turn_cap=turn_cap),
            seed=seed,
            beats=beats[position] if beats else None,
        )
        history.append(HistoryEntry(["Ana Reyes", "Ben Okoro"][position], action.action_type, action.content, position))
        if action.action_type == "leave":
            break
    return history


def test_leaves_when_its_beats_are_used_up():
    history = play({0: ["Hi.", "[non-verbal] waves", "Bye."], 1: ["Hello.", "Hm.", "Bye then."]})
    assert [entry.action_type for entry in history] == [
        "speak",
        "speak",
        "non-verbal",
        "speak",
        "speak",
        "speak",
        "leave",
    ]


def test_without_beats_it_composes_lines_and_leaves_before_the_cap():
    for seed in range(5):
        history = play(turn_cap=20, seed=seed)
        assert history[-1].action_type == "leave"
        assert 5 <= len(history) <= 20
        assert any("shared car" in entry.content for entry in history)


def test_without_beats_and_a_short_cap_it_still_leaves_in_time():
    history = play(turn_cap=6)
    assert history[-1].action_type == "leave" and len(history) <= 6


async def test_act_reports_scripted_usage_without_tokens():
    action, usage = await scripted.act(context(), beats=["Hello."])
    assert action == Action("speak", "Hello.")
    assert usage.model == "scripted"
    assert usage.prompt_tokens is None and usage.completion_tokens is None
    assert isinstance(usage.latency_ms, int) and usage.latency_ms >= 0


async def test_scripted_stream_yields_the_reply_word_by_word():
    stream = scripted.scripted_stream(context(), beats=["We could share the car on Sundays."])
    words = [delta async for delta in stream]
    assert words == ["We ", "could ", "share ", "the ", "car ", "on ", "Sundays."]
    assert stream.text == "We could share the car on Sundays."
    assert stream.action.action_type == "speak"
    assert stream.usage.model == "scripted"
