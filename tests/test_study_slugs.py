"""A slug another team uses is refused in the same words as any taken slug, never saying that a study has it."""

import pytest
from django.urls import reverse

from tests.annotator.builders import make_study
from tests.annotator.test_research_views import valid_form_data
from tests.builders import make_episode, make_scenario, make_team, make_user
from tests.chat.builders import make_chat_study
from tests.chat.test_research import form_data

pytestmark = pytest.mark.django_db

REFUSAL = "This slug is not available; choose another."


@pytest.fixture
def researcher_client(client):
    client.force_login(make_user(staff=True))
    return client


def test_a_chat_study_slug_of_another_team_is_refused_without_saying_it_exists(researcher_client):
    theirs = make_chat_study(team=make_team(), slug="secret-plan")
    assert researcher_client.get(reverse("chat:monitor", args=[theirs.slug])).status_code == 404

    response = researcher_client.post(reverse("chat:study-create"), form_data([make_scenario()], slug="secret-plan",
                                                                              target_none="2"))

    assert response.context["form"].errors["slug"] == [REFUSAL]
    assert "exists" not in response.content.decode()


def test_an_annotation_study_slug_of_another_team_is_refused_without_saying_it_exists(researcher_client):
    make_study(team=make_team(), slug="secret-plan", items=1)
    for _ in range(2):
        make_episode(tag="pilot")

    response = researcher_client.post(reverse("annotator:study-create"), valid_form_data(slug="secret-plan"))

    assert response.context["form"].errors["slug"] == [REFUSAL]
    assert "exists" not in response.content.decode()


def test_a_slug_of_ones_own_team_is_refused_in_the_same_words(researcher_client):
    make_chat_study(slug="own-plan")

    response = researcher_client.post(reverse("chat:study-create"), form_data([make_scenario()], slug="own-plan",
                                                                              target_none="2"))

    assert response.context["form"].errors["slug"] == [REFUSAL]
