"""Who finds which annotation pages: researchers reach their studies from the menu and the Annotate
page; annotators are never shown a link to a page that would refuse them."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotator.models import Membership
from benchmark.instruments.presets import install_preset
from tests.annotator.builders import make_study
from tests.builders import make_user

pytestmark = pytest.mark.django_db

HREF = re.compile(r'href="(/[^"]*)"')


def nav(page: str) -> str:
    return re.search(r'<nav class="site-nav".*?</nav>', page, re.S).group(0)


def test_the_menu_gives_researchers_their_annotation_studies(client):
    client.force_login(make_user(staff=True))

    for page in ("home", "benchmark:index", "chat:index", "annotator:index"):
        menu = nav(client.get(reverse(page)).text)
        assert f'href="{reverse("annotator:study-list")}"' in menu, page
        assert "Annotation studies" in menu


def test_the_menu_gives_annotators_no_researcher_link(client):
    client.force_login(make_user())

    menu = nav(client.get(reverse("annotator:index")).text)

    assert reverse("annotator:study-list") not in menu


def test_a_researcher_with_nothing_to_annotate_is_pointed_to_their_studies_not_told_nothing_is_assigned(client):
    client.force_login(make_user(staff=True))

    page = client.get(reverse("annotator:index")).text

    assert "Nothing is assigned to you yet" not in page
    main = page.split('<main', 1)[1]
    assert f'href="{reverse("annotator:study-list")}"' in main
    assert f'href="{reverse("annotator:study-create")}"' in main


@pytest.mark.parametrize("preset", ["socialveil", "shrec-spans"])
def test_no_page_an_annotator_opens_links_to_a_page_that_refuses_them(client, preset):
    annotator = make_user(username="annotator-a")
    study = make_study(instrument=install_preset(preset), items=2, overlap=1, annotators=[annotator])
    client.force_login(annotator)
    pages = [reverse("home"), reverse("annotator:index"), reverse("annotator:instructions", args=[study.slug])]
    Membership.objects.filter(study=study).update(instructions_read_at="2025-01-01T00:00:00Z")
    item = client.get(reverse("annotator:next", args=[study.slug]))
    pages.append(item.url)
    pages.append(reverse("annotator:index"))  # now with an item in progress

    links = set()
    for path in pages:
        response = client.get(path)
        assert response.status_code == 200, path
        links.update(HREF.findall(response.text))
    links = {link for link in links if not link.startswith("/static/")}

    assert links  # the pages do link somewhere
    refused = [link for link in sorted(links) if _status(annotator, link) == 403]
    assert refused == []


def _status(user, path: str) -> int:
    visitor = Client()
    visitor.force_login(user)
    return visitor.get(path).status_code
