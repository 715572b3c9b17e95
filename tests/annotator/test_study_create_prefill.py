"""The annotation-study form takes starting values from its link, e.g. a chat study's "Annotate these episodes"."""

import pytest
from django.urls import reverse

from benchmark.models import Episode
from tests.builders import make_episode, make_user

pytestmark = pytest.mark.django_db


def test_the_form_is_prefilled_with_the_episode_filters_from_the_link(client):
    make_episode(source=Episode.Source.HUMAN_CHAT, tag="chat:demo-chat")
    make_episode(source=Episode.Source.HUMAN_CHAT, tag="chat:demo-chat", status=Episode.Status.FAILED)
    make_episode(tag="demo")
    client.force_login(make_user(staff=True))

    response = client.get(
        reverse("annotator:study-create"),
        {"tag": "chat:demo-chat", "status": "finished", "source": "human_chat", "title": "Annotate demo"},
    )

    form = response.context["form"]
    assert (form["tag"].value(), form["status"].value(), form["source"].value()) == (
        "chat:demo-chat", "finished", "human_chat"
    )
    assert form["title"].value() == "Annotate demo"
    assert response.context["count"] == 1
    assert '<option value="chat:demo-chat" selected>' in response.text


def test_without_a_query_the_form_starts_as_before(client):
    make_episode()
    client.force_login(make_user(staff=True))

    response = client.get(reverse("annotator:study-create"))

    form = response.context["form"]
    assert form["status"].value() == "finished"
    assert form["tag"].value() in (None, "")
    assert response.context["count"] == 1


def test_only_the_name_and_episode_filters_can_be_prefilled(client):
    client.force_login(make_user(staff=True))

    form = client.get(reverse("annotator:study-create"), {"overlap": "99", "instructions": "Be evil"}).context["form"]

    assert form["overlap"].value() == 3
    assert "Be evil" not in form["instructions"].value()
