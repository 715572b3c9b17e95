"""Setting up and running agent–agent episodes, turn by turn, with resume."""

import pytest
from asgiref.sync import async_to_sync

from benchmark.agents import acting, llm
from benchmark.demo.content import SCENARIOS
from benchmark.demo.install import install_scenario
from benchmark.models import Barrier, Episode, Role, Scenario, Seat, Turn
from benchmark.runs.simulation import create_episode, run_episode
from tests.builders import default_team
from tests.fake_llm import FAKE_MODEL

pytestmark = pytest.mark.django_db

SHORT = {0: ["Hi Omar.", "[non-verbal] waves", "See you."], 1: ["Hi Nadia.", "Good to see you.", "Bye."]}
LONG = {0: [f"Point {n}." for n in range(12)], 1: [f"Reply {n}." for n in range(12)]}


@pytest.fixture(autouse=True)
def no_configured_models(settings):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}


@pytest.fixture
def scenario() -> Scenario:
    return install_scenario(SCENARIOS[0], default_team())


def barrier(key: str = "semantic") -> Barrier:
    return Barrier.objects.get(key=key)


def run(episode: Episode, **options) -> Episode:
    return async_to_sync(run_episode)(episode, **options)


def test_create_episode_seats_the_scenarios_roles_with_their_default_characters(scenario):
    episode = create_episode(scenario, barrier(), barrier_seats=(1,), strategy="repair", tag="t1", settings={"seed": 4})
    seats = list(episode.seats.select_related("role", "character"))
    assert [(s.position, s.role.position, s.character_id) for s in seats] == [
        (r.position, r.position, r.character_id) for r in scenario.roles.order_by("position")
    ]
    assert [s.carries_barrier for s in seats] == [False, True]
    assert [s.strategy for s in seats] == [Seat.Strategy.REPAIR, Seat.Strategy.DEFAULT]
    assert [s.model for s in seats] == [llm.SCRIPTED, llm.SCRIPTED]
    assert episode.status == Episode.Status.PENDING
    assert (episode.source, episode.tag, episode.settings, episode.turn_cap) == ("simulated", "t1", {"seed": 4}, 20)


def test_create_episode_uses_configured_models_unless_given(scenario, settings):
    settings.PARLEY_MODELS = {"agent": "openai/barrier-model", "partner": "openai/partner-model"}
    episode = create_episode(scenario, barrier(), models={1: "openai/other"})
    assert list(episode.seats.values_list("model", flat=True)) == ["openai/barrier-model", "openai/other"]
    episode = create_episode(scenario, barrier())
    assert list(episode.seats.values_list("model", flat=True)) == ["openai/barrier-model", "openai/partner-model"]


def test_create_episode_rejects_a_role_without_a_character(scenario):
    Role.objects.filter(scenario=scenario, position=1).update(character=None)
    with pytest.raises(ValueError, match="no default character"):
        create_episode(scenario, barrier())


def test_create_episode_rejects_an_unknown_barrier_seat(scenario):
    with pytest.raises(ValueError, match=r"barrier seat\(s\) 2 are not role positions"):
        create_episode(scenario, barrier(), barrier_seats=(0, 2))


def test_episode_ends_when_a_seat_leaves(scenario):
    episode = run(create_episode(scenario, barrier("none")), beats=SHORT)
    turns = list(episode.turns.order_by("index"))
    assert [t.action_type for t in turns] == ["speak", "speak", "non-verbal", "speak", "speak", "speak", "leave"]
    assert [t.seat.position for t in turns] == [0, 1, 0, 1, 0, 1, 0]
    assert episode.status == Episode.Status.FINISHED
    assert episode.end_reason == Episode.EndReason.LEAVE
    assert episode.started_at <= episode.finished_at


def test_episode_ends_at_the_turn_cap(scenario):
    episode = run(create_episode(scenario, barrier("none"), turn_cap=6), beats=LONG)
    assert episode.turns.count() == 6
    assert episode.end_reason == Episode.EndReason.TURN_CAP
    assert episode.status == Episode.Status.FINISHED


def test_each_turn_is_stored_with_its_model_and_latency(scenario):
    episode = run(create_episode(scenario, barrier()), beats=SHORT, seed=2)
    for turn in episode.turns.all():
        assert turn.model == "scripted"
        assert turn.latency_ms is not None
        assert turn.prompt_tokens is None and turn.completion_tokens is None
    assert Episode.objects.get(pk=episode.pk).settings["seed"] == 2


def test_resume_continues_from_the_next_index_and_ends_the_same_way(scenario):
    spec = SCENARIOS[0]
    beats = {n: role.beats for n, role in enumerate(spec.roles)}
    whole = run(create_episode(scenario, barrier("emotional")), beats=beats, seed=5)
    expected = list(whole.turns.order_by("index").values_list("index", "action_type", "content"))

    interrupted = create_episode(scenario, barrier("emotional"))
    run(interrupted, beats=beats, seed=5)
    interrupted.turns.filter(index__gte=7).delete()  # as if the process died after turn 6
    Episode.objects.filter(pk=interrupted.pk).update(status=Episode.Status.RUNNING, end_reason="")

    resumed = run(interrupted, beats=beats, seed=5)
    assert list(resumed.turns.order_by("index").values_list("index", "action_type", "content")) == expected
    assert resumed.end_reason == whole.end_reason


def test_resume_after_a_leave_adds_no_turn(scenario):
    episode = run(create_episode(scenario, barrier("none")), beats=SHORT)
    count = episode.turns.count()
    again = run(episode, beats=SHORT)
    assert again.turns.count() == count and again.end_reason == Episode.EndReason.LEAVE


def test_a_model_failure_marks_the_episode_failed(scenario, monkeypatch):
    async def unavailable(*args, **kwargs):
        raise llm.LLMUnavailable("model down")

    monkeypatch.setattr(acting, "act", unavailable)
    episode = create_episode(scenario, barrier())
    with pytest.raises(llm.LLMUnavailable):
        run(episode)
    episode.refresh_from_db()
    assert episode.status == Episode.Status.FAILED
    assert episode.end_reason == Episode.EndReason.MODEL_ERROR
    assert episode.finished_at is not None


def test_an_llm_episode_stores_token_counts(scenario, fake_llm):
    fake_llm.reply_when("role-playing Nadia Haddad", '{"action_type": "speak", "argument": "Weekdays for me, then."}')
    fake_llm.reply_when("role-playing Omar Haddad", '{"action_type": "leave", "argument": ""}')
    episode = create_episode(scenario, barrier(), models={0: FAKE_MODEL, 1: FAKE_MODEL})
    episode = run(episode)
    turns = list(Turn.objects.filter(episode=episode).order_by("index"))
    assert [(t.action_type, t.content) for t in turns] == [("speak", "Weekdays for me, then."), ("leave", "")]
    assert all(t.model == FAKE_MODEL and t.prompt_tokens and t.completion_tokens for t in turns)
    assert episode.end_reason == Episode.EndReason.LEAVE
    assert "Semantic vagueness" in fake_llm.prompts[0] and "Semantic vagueness" not in fake_llm.prompts[1]
