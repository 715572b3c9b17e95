"""External judges of the goals (AgentSense's third perspective): every goal of every character, yes or no."""

import json

import pytest
from asgiref.sync import async_to_sync

from benchmark.agents import llm
from benchmark.demo.content import GROUP_SCENARIOS
from benchmark.demo.install import beats_of, install_scenario
from benchmark.evaluation import goal_judge, scripted_judge
from benchmark.evaluation.goal_judge import CACHED, FAILED, JUDGED, judge_goals, load_goals
from benchmark.evaluation.interviews.instruments import GOALS_PRESET
from benchmark.models import Answer, Episode, Goal, Respondent, Response
from benchmark.runs.simulation import create_episode, run_episode
from tests.builders import default_team, get_barrier, make_episode
from tests.fake_llm import FAKE_MODEL

pytestmark = pytest.mark.django_db
OTHER_MODEL = "openai/second-judge"


@pytest.fixture(autouse=True)
def no_configured_models(settings):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}
    settings.PARLEY_JUDGE_RETRIES = 1


def group_episode() -> Episode:
    spec = GROUP_SCENARIOS[0]
    scenario = install_scenario(spec, default_team())
    episode = create_episode(scenario, get_barrier("none"), models=dict.fromkeys(range(3), llm.SCRIPTED),
                             turn_cap=scenario.turn_cap)
    return async_to_sync(run_episode)(episode, seed=1, beats=beats_of(spec))


def judge(episode_ids, models, **options):
    return async_to_sync(judge_goals)(episode_ids, models, **options)


def goal_reply(episode: Episode, answer: str = "yes", reasoning: str = "It was settled.") -> str:
    return json.dumps({goal.key: {"reasoning": reasoning, "answer": answer} for goal in load_goals(episode.pk).goals})


# --- the scripted judge --------------------------------------------------------------------------------


def test_the_scripted_judge_answers_every_goal_of_every_character_once():
    episode = group_episode()
    [result] = judge([episode.pk], llm.SCRIPTED)

    goals = Goal.objects.filter(role__scenario=episode.scenario)
    assert (result.outcome, result.answers) == (JUDGED, goals.count()) and goals.count() >= 3
    response = Response.objects.get()
    assert response.instrument.preset == GOALS_PRESET and response.seat_position is None
    assert (response.respondent.kind, response.respondent.model, response.respondent.prompt_version) == (
        Respondent.Kind.JUDGE, "scripted", goal_judge.SCRIPTED_VERSION
    )
    assert sorted(response.answers.values_list("goal_id", flat=True)) == sorted(goals.values_list("pk", flat=True))
    for answer in response.answers.all():
        assert answer.value in ("yes", "no")
        assert answer.reasoning.startswith(scripted_judge.DISCLAIMER) and "key words" in answer.reasoning


def test_the_scripted_judge_says_yes_only_for_a_goal_whose_words_came_up_before_an_agreed_close():
    episode = make_episode(turns=[
        ("speak", "Hello, let us talk about the garden."),
        ("speak", "Fine."),
        ("speak", "I will water the garden roses every weekend, agreed?"),
        ("speak", "Great, that works for me. Thanks."),
        ("leave", ""),
    ])
    episode.seats.get(position=0).role.goals.update(text="Get the garden roses watered every weekend.")
    episode.seats.get(position=1).role.goals.update(text="Borrow the neighbour's ladder for the attic.")
    judge([episode.pk], llm.SCRIPTED)
    values = dict(Answer.objects.values_list("goal__role__position", "value"))
    assert values == {0: "yes", 1: "no"}


# --- judge models through the gateway ------------------------------------------------------------------


def test_a_judge_model_reads_every_goal_and_the_transcript_and_its_answers_are_stored(fake_llm):
    episode = group_episode()
    fake_llm.reply_when("For each goal, was it achieved?", goal_reply(episode, "No", "Nobody agreed to it."))

    [result] = judge([episode.pk], FAKE_MODEL)

    assert result.outcome == JUDGED and len(fake_llm.requests) == 1
    request = fake_llm.requests[0]
    assert request["temperature"] == 0
    prompt = request["messages"][1]["content"]
    for goal in Goal.objects.filter(role__scenario=episode.scenario):
        assert goal.text in prompt
    assert "(goal of Mei Tanaka): Pay no more than 200 euros of the heating bill." in prompt
    assert "What only they knew: The meter app shows" in prompt
    first_turn = episode.turns.order_by("index").first().content
    assert first_turn in prompt.split("TRANSCRIPT:")[1]
    response = Response.objects.get()
    assert (response.respondent.model, response.respondent.prompt_version) == (FAKE_MODEL, "goals-judge-1")
    assert response.prompt_tokens and response.latency_ms is not None and response.seat_position is None
    assert set(response.answers.values_list("value", "reasoning")) == {("no", "Nobody agreed to it.")}


def test_several_judge_models_each_answer_as_their_own_respondent(fake_llm):
    episode = group_episode()
    fake_llm.reply_when("For each goal, was it achieved?", goal_reply(episode))

    results = judge([episode.pk], [FAKE_MODEL, OTHER_MODEL, llm.SCRIPTED])

    assert [(r.model, r.outcome) for r in results] == [
        (FAKE_MODEL, JUDGED), (OTHER_MODEL, JUDGED), ("scripted", JUDGED)
    ]
    assert sorted(request["model"] for request in fake_llm.requests) == ["fake-model", "second-judge"]
    goals = Goal.objects.filter(role__scenario=episode.scenario).count()
    for model in (FAKE_MODEL, OTHER_MODEL, "scripted"):
        assert Answer.objects.filter(response__respondent__model=model, response__respondent__kind="judge").count() \
            == goals


def test_a_stored_verdict_is_kept_unless_forced(fake_llm):
    episode = group_episode()
    fake_llm.reply_when("For each goal, was it achieved?", goal_reply(episode))
    judge([episode.pk], FAKE_MODEL)
    first = set(Answer.objects.values_list("pk", flat=True))

    [again] = judge([episode.pk], FAKE_MODEL)
    assert again.outcome == CACHED and len(fake_llm.requests) == 1
    assert set(Answer.objects.values_list("pk", flat=True)) == first

    [forced] = judge([episode.pk], FAKE_MODEL, force=True)
    assert forced.outcome == JUDGED and len(fake_llm.requests) == 2
    assert Response.objects.count() == 1 and not set(Answer.objects.values_list("pk", flat=True)) & first


def test_a_missing_reason_or_answer_is_repaired_once(fake_llm):
    episode = group_episode()
    keys = [goal.key for goal in load_goals(episode.pk).goals]
    fake_llm.enqueue(text=json.dumps({key: {"answer": "perhaps", "reasoning": ""} for key in keys}))
    fake_llm.enqueue(text=goal_reply(episode))
    [result] = judge([episode.pk], FAKE_MODEL)
    assert result.outcome == JUDGED
    repair = fake_llm.requests[1]["messages"][-1]["content"]
    assert "'g1' answer 'perhaps' is not one of 'yes', 'no'" in repair


def test_a_judge_that_cannot_answer_fails_with_the_reason_and_stores_nothing(fake_llm):
    episode = group_episode()
    fake_llm.reply_when("For each goal, was it achieved?", "All goals were met, I think.")
    [result] = judge([episode.pk], FAKE_MODEL, retries=1)
    assert result.outcome == FAILED and "(after 2 attempts)" in result.error
    assert not Response.objects.exists()


def test_an_episode_without_turns_is_not_judged():
    episode = make_episode(turns=0)
    [result] = judge([episode.pk], llm.SCRIPTED)
    assert result.outcome == FAILED and "has no turns to judge" in result.error
