import pytest
from django.contrib import admin
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from benchmark.models import ActionType, Barrier, BarrierCue, NeutralContext, Scenario, SimulationRun
from tests.builders import (
    default_team,
    make_cast,
    make_character,
    make_episode,
    make_scenario,
    make_scores,
    make_user,
)

pytestmark = pytest.mark.django_db

# Instruments, respondents and answers have their own admin module and tests (test_instruments_admin.py).
BENCHMARK_MODELS = [
    model for model, model_admin in admin.site._registry.items()
    if model._meta.app_label == "benchmark" and type(model_admin).__module__ == "benchmark.admin"
]


@pytest.fixture
def admin_client(client):
    client.force_login(make_user(superuser=True))
    return client


@pytest.fixture
def data():
    """A little of everything, so every changelist has rows to render."""
    episode = make_episode(
        barrier="semantic",
        turns=[(ActionType.SPEAK, "Hello there."), (ActionType.NON_VERBAL, "smiles"), (ActionType.LEAVE, "")],
        tag="pilot",
    )
    make_scores(episode, [("goal", 0, 5), ("mutual_understanding", None, 3)], evaluator="scripted")
    NeutralContext.objects.create(scenario=episode.scenario, prompt_version="v1", model="scripted", text="Two meet.")
    make_cast(episode.scenario, label="pilot cast")
    SimulationRun.objects.create(
        team=default_team(), tag="pilot", total=4, finished=4, status=SimulationRun.Status.FINISHED
    )
    return episode


def admin_url(model, action: str, *args) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{action}", args=args)


def test_every_benchmark_model_has_an_admin():
    names = {model.__name__ for model in admin.site._registry if model._meta.app_label == "benchmark"}
    assert names == {
        "Character", "Scenario", "Role", "Barrier", "Episode", "Seat", "Turn", "Respondent", "Response",
        "NeutralContext", "SimulationRun", "Team", "Cast", "Instrument", "Question", "SocialAttribute", "Answer", "Job",
    }


@pytest.mark.parametrize("model", BENCHMARK_MODELS, ids=lambda model: model.__name__)
def test_changelist_add_and_change_pages_open(admin_client, data, model):
    obj = model.objects.first()
    urls = [admin_url(model, "changelist"), admin_url(model, "change", obj.pk)]
    if model is not SimulationRun:  # runs are started from the benchmark pages, never added in the admin
        urls.append(admin_url(model, "add"))

    for url in urls:
        assert admin_client.get(url).status_code == 200, url


@pytest.mark.parametrize("model", BENCHMARK_MODELS, ids=lambda model: model.__name__)
def test_changelist_searches_and_filters_open(admin_client, data, model):
    model_admin = admin.site._registry[model]
    url = admin_url(model, "changelist")

    assert admin_client.get(url, {"q": "pilot"}).status_code == 200
    response = admin_client.get(url)
    for spec in response.context["cl"].filter_specs:
        for choice in spec.choices(response.context["cl"]):
            assert admin_client.get(url + choice["query_string"]).status_code == 200, (model_admin, choice)


@pytest.mark.parametrize("model", BENCHMARK_MODELS, ids=lambda model: model.__name__)
def test_changelist_query_count_does_not_grow_with_rows(admin_client, data, model):
    url = admin_url(model, "changelist")
    with CaptureQueriesContext(connection) as few:
        admin_client.get(url)
    for _ in range(5):
        make_episode(barrier="semantic", turns=4, tag="more")

    with CaptureQueriesContext(connection) as many:
        admin_client.get(url)

    assert len(many) == len(few), [q["sql"] for q in many.captured_queries]


def test_episode_changelist_shows_annotated_turn_counts(admin_client, data):
    response = admin_client.get(admin_url(type(data), "changelist"))

    assert response.context["cl"].result_list[0].turn_count == 3


def scenario_form(roles: int, character_pk: int) -> dict[str, str]:
    form = {
        "team": str(default_team().pk),
        "codename": "one-sided",
        "context": "A scenario under test.",
        "difficulty": "standard",
        "relationship": "0",
        "turn_taking": "round_robin",
        "probes-TOTAL_FORMS": "0",
        "probes-INITIAL_FORMS": "0",
        "barrier_prompts-TOTAL_FORMS": "0",
        "barrier_prompts-INITIAL_FORMS": "0",
        "roles-TOTAL_FORMS": str(roles),
        "roles-INITIAL_FORMS": "0",
        "roles-MIN_NUM_FORMS": "2",
        "roles-MAX_NUM_FORMS": "1000",
        "casts-TOTAL_FORMS": "0",
        "casts-INITIAL_FORMS": "0",
    }
    for index in range(roles):
        form |= {
            f"roles-{index}-position": str(index),
            f"roles-{index}-character": str(character_pk),
            f"roles-{index}-goals": f"Goal {index}.\nSecond goal {index}.",
        }
    return form


def test_a_scenario_with_one_role_is_rejected(admin_client):
    character = make_character()

    response = admin_client.post(admin_url(Scenario, "add"), scenario_form(1, character.pk))

    assert response.status_code == 200
    assert not Scenario.objects.filter(codename="one-sided").exists()
    assert "Please submit at least 2 forms." in response.text


def test_deleting_a_role_down_to_one_is_rejected(admin_client):
    scenario = make_scenario(roles=2)
    first, second = scenario.roles.order_by("position")
    form = scenario_form(2, first.character.pk) | {"codename": scenario.codename, "roles-INITIAL_FORMS": "2"}
    form |= {"roles-0-id": str(first.pk), "roles-1-id": str(second.pk), "roles-1-DELETE": "on"}
    form |= {"roles-0-scenario": str(scenario.pk), "roles-1-scenario": str(scenario.pk)}

    response = admin_client.post(admin_url(Scenario, "change", scenario.pk), form)

    assert response.status_code == 200
    assert "Please submit at least 2 forms." in response.text
    assert scenario.roles.count() == 2


def test_a_scenario_with_two_roles_is_saved(admin_client):
    character = make_character()

    response = admin_client.post(admin_url(Scenario, "add"), scenario_form(2, character.pk))

    assert response.status_code == 302
    assert Scenario.objects.get(codename="one-sided").roles.count() == 2
    roles = Scenario.objects.get(codename="one-sided").roles.order_by("position")
    assert [role.goal_text for role in roles] == ["Goal 0.\nSecond goal 0.", "Goal 1.\nSecond goal 1."]
    assert [goal.position for goal in roles[1].goals.all()] == [0, 1]


def test_researchers_can_add_their_own_barrier_with_cues(admin_client):
    response = admin_client.post(
        admin_url(Barrier, "add"),
        {
            "team": str(default_team().pk), "key": "jargon", "name": "Technical jargon",
            "definition": "Speaks in field-specific terms.",
            "position": "50",
            "cues-TOTAL_FORMS": "1", "cues-INITIAL_FORMS": "0", "cues-MIN_NUM_FORMS": "0", "cues-MAX_NUM_FORMS": "1000",
            "cues-0-dimension": "interaction_tactics", "cues-0-instruction": "Use a technical term",
            "cues-0-rate": "0.5", "cues-0-unit": "of nouns",
        },
    )

    assert response.status_code == 302
    barrier = Barrier.objects.get(key="jargon")
    assert not barrier.builtin
    assert BarrierCue.objects.filter(barrier=barrier).count() == 1


def test_builtin_barriers_keep_their_key_and_cannot_be_deleted(admin_client):
    barrier = Barrier.objects.get(key="semantic")
    assert barrier.builtin

    response = admin_client.get(admin_url(Barrier, "change", barrier.pk))

    assert "key" in response.context["adminform"].readonly_fields
    assert "builtin" in response.context["adminform"].readonly_fields
    assert admin_client.get(admin_url(Barrier, "delete", barrier.pk)).status_code == 403


def test_the_admin_is_closed_to_staff_researchers_with_every_model_permission(client, data):
    """A researcher who is staff and holds every permission still cannot edit another team's data in
    the admin: it is for superusers (config.admin)."""
    from django.contrib.auth.models import Permission

    researcher = make_user(staff=True)
    researcher.user_permissions.set(Permission.objects.all())
    client.force_login(researcher)
    turn = data.turns.first()

    for url in (admin_url(Scenario, "changelist"), admin_url(type(turn), "change", turn.pk)):
        response = client.get(url)
        assert response.status_code == 302 and "/admin/login/" in response["Location"], url
    response = client.post(admin_url(type(turn), "change", turn.pk), {"content": "rewritten"})
    assert response.status_code == 302
    turn.refresh_from_db()
    assert turn.content != "rewritten"
