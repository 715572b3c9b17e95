"""``manage.py evaluate``: choosing episodes, the summary line, and clear refusals."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from benchmark.evaluation import judge, scripted_judge
from benchmark.evaluation.goal_judge import load_goals
from benchmark.evaluation.interviews.instruments import GOALS_PRESET as GOALS
from benchmark.models import Answer, Episode, Goal, Probe, Response
from tests.benchmark.test_judge import PROMPT_MARK, reply
from tests.builders import make_episode
from tests.fake_llm import FAKE_MODEL

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def judge_model(settings):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": FAKE_MODEL, "neutralizer": ""}


def evaluate(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("evaluate", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_scores_the_tagged_episodes_and_prints_a_summary(fake_llm):
    fake_llm.reply_when(PROMPT_MARK, reply())
    tagged = [make_episode(tag="pilot") for _ in range(2)]
    make_episode(tag="other")

    out, err = evaluate("--tag", "pilot")

    assert out.splitlines()[-1] == (
        f"Evaluated 2 episode(s) with {FAKE_MODEL} ({judge.JUDGE_PROMPT_VERSION}): 2 scored, 0 cached, 0 failed."
    )
    assert Answer.objects.filter(response__episode__in=tagged).count() == 2 * 16
    assert Answer.objects.exclude(response__episode__in=tagged).count() == 0
    assert "evaluate [" in err and "2/2" in err


def test_a_second_run_is_all_cache_hits_and_calls_no_model(fake_llm):
    fake_llm.reply_when(PROMPT_MARK, reply())
    make_episode(tag="pilot")
    evaluate("--tag", "pilot")
    fake_llm.reset()

    out, _ = evaluate("--tag", "pilot")

    assert "0 scored, 1 cached, 0 failed." in out
    assert fake_llm.requests == []


def test_force_scores_cached_episodes_again(fake_llm):
    fake_llm.enqueue(text=reply(seat_score=1))
    fake_llm.enqueue(text=reply(seat_score=9))
    episode = make_episode(tag="pilot")
    evaluate("--tag", "pilot")

    out, _ = evaluate("--tag", "pilot", "--force")

    assert "1 scored, 0 cached, 0 failed." in out
    goal = Answer.objects.filter(response__episode=episode, question__key="goal")
    assert set(goal.values_list("number", flat=True)) == {9}


def test_only_finished_episodes_are_scored_unless_status_says_otherwise(fake_llm):
    fake_llm.reply_when(PROMPT_MARK, reply())
    finished = make_episode(tag="pilot")
    running = make_episode(tag="pilot", status=Episode.Status.RUNNING)

    evaluate("--tag", "pilot")
    assert set(Response.objects.values_list("episode", flat=True)) == {finished.pk}

    out, _ = evaluate("--tag", "pilot", "--status", "any")
    assert "1 scored, 1 cached" in out
    assert Answer.objects.filter(response__episode=running).count() == 16


def test_ids_and_source_narrow_the_selection(fake_llm):
    fake_llm.reply_when(PROMPT_MARK, reply())
    first, second = make_episode(), make_episode(source=Episode.Source.IMPORTED)
    make_episode()

    out, _ = evaluate("--ids", f"{first.pk},{second.pk}", "--source", "imported")

    assert "Evaluated 1 episode(s)" in out
    assert set(Response.objects.values_list("episode", flat=True)) == {second.pk}


def test_the_model_option_overrides_the_configured_judge(fake_llm):
    fake_llm.reply_when(PROMPT_MARK, reply())
    episode = make_episode()

    evaluate("--model", "openai/other-judge")

    assert {r["model"] for r in fake_llm.requests} == {"other-judge"}
    assert set(Response.objects.filter(episode=episode).values_list("respondent__model", flat=True)) == {
        "openai/other-judge"
    }


def test_without_a_configured_judge_the_scripted_heuristics_score(fake_llm, settings):
    settings.PARLEY_MODELS = {}
    episode = make_episode()

    out, _ = evaluate()

    assert f"with {scripted_judge.RESPONDENT} ({scripted_judge.PROMPT_VERSION}): 1 scored" in out
    assert Answer.objects.filter(response__episode=episode, response__respondent__model="scripted").count() == 16
    assert fake_llm.requests == []


def test_a_failed_episode_is_reported_and_the_command_exits_non_zero(fake_llm):
    first, second = make_episode(tag="pilot"), make_episode(tag="pilot")
    fake_llm.reply_when(PROMPT_MARK, reply())
    for _ in range(2):  # one at a time, so the first episode gets these: the reply and its repair
        fake_llm.enqueue(text=json.dumps({"seats": {}, "episode": {}}))
    out, err = StringIO(), StringIO()

    with pytest.raises(CommandError, match="1 judgement\\(s\\) could not be made"):
        call_command("evaluate", "--tag", "pilot", "--retries", "0", "--concurrency", "1", stdout=out, stderr=err)

    assert "1 scored, 0 cached, 1 failed." in out.getvalue()
    assert f"episode {first.pk}: " in err.getvalue()
    assert f"'seats' → seat_1 ({first.seats.get(position=0).character.name}) is missing" in err.getvalue()
    assert not Response.objects.filter(episode=first).exists()
    assert Answer.objects.filter(response__episode=second).count() == 16


def test_an_unknown_tag_is_refused_by_name(fake_llm):
    make_episode(tag="pilot")

    with pytest.raises(CommandError, match="No episode has the tag 'pliot'"):
        evaluate("--tag", "pliot")
    assert fake_llm.requests == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ids", "3,x"], "--ids takes episode ids separated by commas, e.g. 3,7,12; 'x' is not an id"),
        (["--ids", ","], "--ids was given no episode id"),
        (["--ids", "999999"], "No episode with id 999999"),
        (["--concurrency", "0"], "--concurrency must be at least 1"),
        (["--retries", "-1"], "--retries cannot be negative"),
        (["--model", " "], "--model cannot be empty"),
        (["--source", "human_chat"], "No episode matches source human_chat, status finished"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(fake_llm, args, message):
    make_episode()

    with pytest.raises(CommandError, match=message.replace("(", "\\(")):
        evaluate(*args)
    assert not Response.objects.exists()


def test_several_judges_each_score_and_are_summed_up_one_by_one(fake_llm):
    fake_llm.reply_when(PROMPT_MARK, reply())
    episode = make_episode(tag="pilot")

    out, err = evaluate("--tag", "pilot", "--models", "openai/judge-a,scripted")

    assert out.splitlines()[0] == (
        f"Scoring 1 episode(s) with openai/judge-a (prompt version {judge.JUDGE_PROMPT_VERSION}), "
        "scripted (prompt version heuristic-1)."
    )
    assert out.splitlines()[-2:] == [
        f"Evaluated 1 episode(s) with openai/judge-a ({judge.JUDGE_PROMPT_VERSION}): 1 scored, 0 cached, 0 failed.",
        "Evaluated 1 episode(s) with scripted (heuristic-1): 1 scored, 0 cached, 0 failed.",
    ]
    assert "2/2" in err
    judges = Response.objects.filter(episode=episode).values_list("respondent__model", flat=True)
    assert sorted(set(judges)) == ["openai/judge-a", "scripted"]


def test_the_configured_judge_may_name_several_models(fake_llm, settings):
    settings.PARLEY_MODELS = {"judge": f"{FAKE_MODEL}, scripted"}
    fake_llm.reply_when(PROMPT_MARK, reply())
    make_episode()

    out, _ = evaluate()

    assert out.count("1 scored, 0 cached, 0 failed.") == 2


# --- --interview and --blind: AgentSense's perspectives and its baseline ---------------------------------


def goals_reply(episode: Episode) -> str:
    return json.dumps({goal.key: {"reasoning": "Agreed at the end.", "answer": "yes"}
                       for goal in load_goals(episode.pk).goals})


def test_interview_asks_the_agents_and_has_every_judge_answer_every_goal(fake_llm):
    episode = make_episode(tag="pilot", seat_fields={"model": "scripted"})
    fake_llm.reply_when(PROMPT_MARK, reply())
    fake_llm.reply_when("For each goal, was it achieved?", goals_reply(episode))

    out, _ = evaluate("--tag", "pilot", "--model", f"scripted,{FAKE_MODEL}", "--interview")

    assert "Interviewed the agents of 1 episode(s): 1 interviewed, 0 cached, 0 failed." in out
    assert f"Judged the goals of 1 episode(s) with {FAKE_MODEL} (goals-judge-1): 1 judged, 0 cached, 0 failed." in out
    assert "with scripted (scripted-goals-judge-1): 1 judged" in out
    goals = Goal.objects.filter(role__scenario=episode.scenario).count()
    for model in ("scripted", FAKE_MODEL):
        verdict = Response.objects.get(respondent__kind="judge", respondent__model=model, instrument__preset=GOALS)
        assert verdict.seat_position is None and verdict.answers.count() == goals
    assert Response.objects.filter(respondent__kind="agent").count() == 2  # each seat on the goals (no probes)

    fake_llm.reset()
    out, _ = evaluate("--tag", "pilot", "--model", f"scripted,{FAKE_MODEL}", "--interview")
    assert "0 interviewed, 1 cached" in out and "0 judged, 1 cached" in out and fake_llm.requests == []


def test_without_interview_nobody_is_asked_about_the_goals(fake_llm):
    fake_llm.reply_when(PROMPT_MARK, reply())
    make_episode(tag="pilot", seat_fields={"model": "scripted"})
    out, _ = evaluate("--tag", "pilot")
    assert "Interviewed" not in out and not Response.objects.filter(instrument__preset=GOALS).exists()


def test_blind_asks_each_seat_its_probes_without_the_transcript():
    episode = make_episode(tag="pilot", seat_fields={"model": "scripted"})
    plain = make_episode(tag="pilot", seat_fields={"model": "scripted"})
    Probe.objects.create(scenario=episode.scenario, about=episode.scenario.roles.get(position=1), position=0,
                         topic=Probe.Topic.GOAL, text="What does the other want?", options=["Quiet", "A party"],
                         correct=0)

    out, _ = evaluate("--tag", "pilot", "--model", "scripted", "--blind")

    assert "Blind test on 1 episode(s) with probes (1 without): 1 answered, 0 cached, 0 failed." in out
    [response] = Response.objects.filter(respondent__kind="agent")
    assert (response.episode, response.seat_position, response.respondent.prompt_version) == (
        episode, 0, "scripted-blind-1"
    )
    assert not Response.objects.filter(episode=plain, respondent__kind="agent").exists()
