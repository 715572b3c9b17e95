"""The results report is kept between loads, and built afresh once the answers or turns it reads change."""

import json

import pytest
from django.urls import reverse

from benchmark.models import ActionType, Answer, Episode, Turn
from benchmark.results import build, report_cache
from tests.benchmark.results_data import judged_experiment
from tests.builders import make_researcher, make_scores, make_team, make_user

pytestmark = pytest.mark.django_db

PAGE = reverse("benchmark:results")
JSON = reverse("benchmark:results-json")


@pytest.fixture
def researcher_client(client):
    client.force_login(make_user(staff=True))
    return client


@pytest.fixture
def builds(monkeypatch):
    """Counts the reports built (not served from the cache)."""
    made = []
    real = build.build_results

    def counted(*args, **kwargs):
        made.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(build, "build_results", counted)
    return made


def partner_goal(client, condition="none"):
    report = json.loads(client.get(JSON).content)
    return report["means"]["partner-model"][condition]["goal"]["mean"]


def test_a_reload_of_unchanged_data_is_served_from_the_cache(researcher_client, builds, monkeypatch):
    judged_experiment()
    first = researcher_client.get(PAGE)
    drawn = []
    means = reverse("benchmark:results-figure", args=["means"])
    drawn_first = researcher_client.get(means).text
    monkeypatch.setattr(report_cache, "results_figures", lambda report, names: drawn.append(names))

    second = researcher_client.get(PAGE)
    researcher_client.get(JSON)
    drawn_again = researcher_client.get(means).text

    assert first.status_code == second.status_code == 200
    assert len(builds) == 1 and drawn == []
    assert drawn_again == drawn_first and drawn_first.count('<svg role="img"') == 1
    assert second.context["report"] == first.context["report"]


def test_other_filters_are_another_report(researcher_client, builds):
    judged_experiment()
    researcher_client.get(PAGE)

    response = researcher_client.get(PAGE, {"evaluator": "scripted"})

    assert len(builds) == 2
    assert response.context["report"]["evaluator"]["evaluator"] == "scripted"


def test_a_new_answer_is_in_the_next_load(researcher_client, builds):
    episodes = judged_experiment()
    assert partner_goal(researcher_client) == 7.0

    make_scores(episodes[0], [("goal", 1, 0)], evaluator="judge-b", prompt_version="v1")
    report = json.loads(researcher_client.get(JSON).content)

    assert len(builds) == 2
    assert [e["evaluator"] for e in report["evaluators"]].count("judge-b") == 1


def test_a_score_edited_in_place_is_in_the_next_load(researcher_client):
    episodes = judged_experiment()
    assert partner_goal(researcher_client) == 7.0

    # An edit that no signal sees, as a bulk update of a draft's answers makes.
    Answer.objects.filter(response__episode=episodes[0], response__respondent__model="judge-a",
                          question__key="goal", seat_position=1).update(number=10, value="10")

    assert partner_goal(researcher_client) == 8.0


def test_a_new_turn_is_in_the_next_load(researcher_client, builds):
    episodes = judged_experiment()
    before = researcher_client.get(reverse("benchmark:results-csv", args=["episodes"])).text

    episode = episodes[0]
    Turn.objects.create(episode=episode, index=99, seat=episode.seats.get(position=1), action_type=ActionType.SPEAK,
                        content="I think I am not sure about that thing.")
    after = researcher_client.get(reverse("benchmark:results-csv", args=["episodes"])).text

    assert len(builds) == 2 and after != before


def test_a_cached_report_is_never_served_to_another_team(client):
    judged_experiment()
    client.force_login(make_user(staff=True))
    assert json.loads(client.get(JSON).content)["models"] == ["partner-model"]

    client.force_login(make_researcher(make_team()))
    report = json.loads(client.get(JSON).content)

    assert report["models"] == [] and report["evaluator"] is None


def test_a_problem_is_explained_on_every_load(researcher_client, builds):
    judged_experiment()

    for _ in range(2):
        response = researcher_client.get(PAGE, {"evaluator": "majority", "prompt_version": "v1"})
        assert response.status_code == 400 and "a majority needs at least two judges" in response.text
    assert len(builds) == 2


def test_a_cache_time_of_zero_keeps_nothing(researcher_client, builds, settings):
    settings.PARLEY_REPORT_CACHE_SECONDS = 0
    judged_experiment()

    researcher_client.get(JSON)
    researcher_client.get(JSON)

    assert len(builds) == 2



def test_a_report_built_again_with_the_same_numbers_reuses_its_figures(monkeypatch):
    judged_experiment()
    report, _ = build.build_results(build.ResultFilters(), Episode.objects.all(), resamples=0)
    first = report_cache.cached_figures(report, "means")
    drawn = []
    monkeypatch.setattr(report_cache, "results_figures",
                        lambda report, names: drawn.append(names) or {"means": None})

    again = report_cache.cached_figures({**report, "generated_at": "2030-01-01T00:00:00Z"}, "means")
    changed = report_cache.cached_figures({**report, "models": [*report["models"], "another-model"]}, "means")

    assert [figure.svg for figure in again] == [figure.svg for figure in first] and len(first) == 1
    assert drawn == [["means"]] and changed == []
