"""The demo loader: 12 two-party scenarios and a three-party one × 4 conditions of scripted episodes,
scores, interviews and accounts, idempotent."""

import re
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.urls import resolve

from benchmark.agents import scripted
from benchmark.demo.content import CONDITIONS, GROUP_SCENARIOS, SCENARIOS
from benchmark.models import (
    Answer,
    Character,
    Episode,
    Goal,
    Probe,
    Relationship,
    Respondent,
    Response,
    Role,
    Scenario,
    Turn,
)

pytestmark = pytest.mark.django_db


def load(*args: str) -> str:
    out = StringIO()
    call_command("load_demo", *args, stdout=out)
    return out.getvalue()


def counts() -> dict[str, int]:
    return {
        model.__name__: model.objects.count()
        for model in (Character, Scenario, Role, Goal, Probe, Episode, Turn, Response, Answer, User)
    }


def test_demo_content_is_varied_and_plain_beats_carry_no_barrier_signals():
    assert len(SCENARIOS) >= 12
    assert {s.relationship for s in SCENARIOS} >= {
        Relationship.FAMILY,
        Relationship.FRIEND,
        Relationship.ROMANTIC,
        Relationship.ACQUAINTANCE,
        Relationship.STRANGER,
    }
    assert {s.difficulty for s in SCENARIOS} == {"standard", "hard"}
    for spec in [*SCENARIOS, *GROUP_SCENARIOS]:
        for role in spec.roles:
            assert 6 <= len(role.beats) <= 10, spec.codename
            assert role.character.secret and role.character.big_five and role.goals
            for beat in role.beats:
                assert not any(scripted.barrier_signals(beat).values()), beat
                assert not scripted.is_clarification_request(beat), beat
            assert all(goal.text not in spec.context for goal in role.goals)


def test_the_group_scenario_has_three_parties_two_tagged_goals_each_and_probes_about_each():
    (spec,) = GROUP_SCENARIOS
    assert len(spec.roles) == 3
    for role in spec.roles:
        assert len(role.goals) == 2
        assert all(goal.tags and set(goal.tags) <= {"existence", "relatedness", "growth"} for goal in role.goals)
    assert {probe.about for probe in spec.probes} == {0, 1, 2}
    assert all(0 <= probe.correct < len(probe.options) for probe in spec.probes)


def test_load_demo_creates_scenarios_episodes_scores_and_accounts():
    output = load("--base-url", "https://parley.example.org/")

    demo = Episode.objects.filter(tag="demo")
    assert Scenario.objects.filter(external_id__startswith="demo-scenario-").count() == len(SCENARIOS) + 1 == 13
    assert demo.count() == 4 * len(SCENARIOS) == 48
    for scenario in Scenario.objects.all():
        conditions = sorted(scenario.episodes.values_list("barrier__key", flat=True))
        assert conditions == sorted(CONDITIONS)
    for episode in demo.prefetch_related("turns"):
        assert 8 <= episode.turns.count() <= 20, episode
        assert episode.status == Episode.Status.FINISHED
        assert episode.source == Episode.Source.SIMULATED
        assert episode.end_reason in {Episode.EndReason.LEAVE, Episode.EndReason.TURN_CAP}
        assert {t.model for t in episode.turns.all()} == {"scripted"}
        scripted_answers = Answer.objects.filter(response__episode=episode, response__respondent__model="scripted")
        assert scripted_answers.count() == 2 * 7 + 2  # seven questions per seat, two per episode
    baseline_turns = Turn.objects.filter(episode__tag="demo", episode__barrier__key="none")
    assert not any(scripted.is_clarification_request(t.content) for t in baseline_turns)
    # the two-party demo is as it was: nobody interviewed
    assert not Response.objects.filter(episode__tag="demo", respondent__kind=Respondent.Kind.AGENT).exists()

    groups = Episode.objects.filter(tag="demo-groups")
    assert groups.count() == 4
    for episode in groups:
        assert episode.status == Episode.Status.FINISHED and episode.seats.count() == 3
        assert set(episode.turns.values_list("seat__position", flat=True)) == {0, 1, 2}
        judged = Answer.objects.filter(response__episode=episode, response__respondent__kind=Respondent.Kind.JUDGE)
        assert judged.filter(goal__isnull=True).count() == 3 * 7 + 2  # seven questions per seat, two per episode
        # and the scripted judge answers each of the six goals (the external perspective)
        assert judged.filter(goal__isnull=False, response__seat_position__isnull=True).count() == 6
        # every seat answers the six goal questions and the probes it may be asked
        responses = episode.responses.filter(respondent__kind=Respondent.Kind.AGENT)
        assert sorted(responses.values_list("seat_position", flat=True)) == [0, 0, 1, 1, 2, 2]
        goal_answers = Answer.objects.filter(response__in=responses, goal__isnull=False)
        assert goal_answers.count() == 3 * 6
        assert set(goal_answers.values_list("value", flat=True)) <= {"yes", "no"}

    researcher = User.objects.get(username="researcher")
    # a researcher of the default team, with no admin rights: the admin is for superusers
    assert not researcher.is_staff and not researcher.is_superuser
    assert list(researcher.groups.values_list("name", flat=True)) == ["researchers"]
    assert not researcher.groups.get().permissions.exists()
    assert list(researcher.team_memberships.values_list("team__slug", "role")) == [("default", "researcher")]
    for name in ("annotator1", "annotator2", "annotator3"):
        annotator = User.objects.get(username=name)
        assert list(annotator.groups.values_list("name", flat=True)) == ["annotators"]
        assert not annotator.is_staff and not annotator.is_superuser

    links = re.findall(r"https://parley\.example\.org(/\S+)", output)
    assert len(links) == 4
    assert all(resolve(path).url_name == "login-link" for path in links)
    assert output.count("password ") == 4
    assert "shared-car" in output and output.strip().splitlines()[-1].startswith(
        "Demo ready: 13 scenarios, 52 episodes"
    )


def test_load_demo_is_idempotent():
    load()
    before = counts()
    turns = list(Turn.objects.order_by("episode__external_id", "index").values_list("content", flat=True))
    output = load()
    assert counts() == before
    assert list(Turn.objects.order_by("episode__external_id", "index").values_list("content", flat=True)) == turns
    assert "(0 new)" in output
    assert "unchanged" in output


def test_load_demo_logs_in_a_demo_account_by_its_link(client):
    output = load("--skip-accounts")
    assert "0 accounts" in output and not User.objects.exists()
    output = load()
    path = re.search(r"http://127\.0\.0\.1:8000(/login/\S+)", output).group(1)
    response = client.get(path)
    assert response.status_code in (200, 302)
    assert int(client.session["_auth_user_id"]) == User.objects.get(username="researcher").pk
