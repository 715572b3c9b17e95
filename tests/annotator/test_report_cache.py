"""A study's agreement report is kept between loads, and built afresh once its answers change."""

import json

import pytest
from django.urls import reverse

from annotator.models import StudyItem
from annotator.reports import stamp
from benchmark.models import Respondent, Response
from tests.annotator.test_reports import annotate, full_answers, rated_study, respond
from tests.builders import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def researcher():
    return make_user(staff=True, username="the-researcher")


@pytest.fixture
def study(researcher):
    return rated_study(title="Barrier pilot", slug="barrier-pilot", created_by=researcher)[0]


@pytest.fixture
def owner(client, researcher):
    client.force_login(researcher)
    return client


@pytest.fixture
def calls(monkeypatch):
    """Counts the reports built and the page views drawn (not served from the cache)."""
    made = {"report": 0, "view": 0}
    build, view = stamp.build_report, stamp.report_view

    def counted_build(*args, **kwargs):
        made["report"] += 1
        return build(*args, **kwargs)

    def counted_view(*args, **kwargs):
        made["view"] += 1
        return view(*args, **kwargs)

    monkeypatch.setattr(stamp, "build_report", counted_build)
    monkeypatch.setattr(stamp, "report_view", counted_view)
    return made


def page(client):
    return client.get(reverse("annotator:report", args=["barrier-pilot"]))


def report_json(client, **query):
    return json.loads(client.get(reverse("annotator:report-download", args=["barrier-pilot", "json"]), query).content)


def test_a_reload_of_unchanged_answers_is_served_from_the_cache(owner, study, calls):
    first = page(owner)
    second = page(owner)
    report_json(owner)

    assert first.status_code == second.status_code == 200
    assert calls == {"report": 1, "view": 1}
    assert second.text.count("<svg") == first.text.count("<svg") > 0
    assert second.context["report"] == first.context["report"]


def test_a_new_submitted_annotation_is_in_the_next_load(owner, study, calls):
    assert report_json(owner)["counts"]["annotations"] == 12

    item = study.items.filter(kind=StudyItem.Kind.REGULAR).order_by("position").first()
    annotate(item, make_user(username="rater-D"), full_answers(0, 0))

    assert report_json(owner)["counts"]["annotations"] == 13
    assert calls["report"] == 2


def test_a_new_judge_answer_is_in_the_next_load(owner, study, calls):
    page(owner)

    episode = study.items.filter(kind=StudyItem.Kind.REGULAR).first().episode
    rubric = Response.objects.filter(respondent__model="judge-x").first().instrument
    respond(Respondent.Kind.JUDGE, "judge-new", rubric, episode, [("confusion_left", None, 2)])
    page(owner)

    assert calls["report"] == 2


def test_each_comparison_is_its_own_report(owner, study, calls):
    judges = report_json(owner)
    agents = report_json(owner, compare="agent")

    assert judges["compared_with"] == ["judge"] and agents["compared_with"] == ["agent"]
    assert calls["report"] == 2


def test_a_cache_time_of_zero_keeps_nothing(owner, study, calls, settings):
    settings.PARLEY_REPORT_CACHE_SECONDS = 0

    page(owner)
    page(owner)

    assert calls == {"report": 2, "view": 2}
