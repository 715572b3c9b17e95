import pytest
from django.urls import reverse

from benchmark.models import Barrier
from tests.builders import PASSWORD, add_to_team, make_episode, make_researcher, make_scenario, make_team, make_user

pytestmark = pytest.mark.django_db


def test_home_shows_a_researcher_the_counts_of_their_teams_data(client):
    scenario = make_scenario()
    make_episode(scenario=scenario)
    make_episode(scenario=scenario)
    make_episode(scenario=make_scenario(team=make_team()))  # another team's: not counted
    client.force_login(make_user(staff=True))

    response = client.get(reverse("home"))

    assert response.status_code == 200
    assert response.context["counts"] == {"scenarios": 1, "episodes": 2, "barriers": Barrier.objects.count()}
    assert "<strong>1</strong> scenario<" in response.text
    assert "<strong>2</strong> episodes" in response.text


def test_home_shows_visitors_and_annotators_no_counts(client):
    """An annotator saw "0 scenarios / 0 episodes": counts of research data they may not see."""
    make_episode()
    for user in (None, make_user()):
        if user:
            client.force_login(user)
        response = client.get(reverse("home"))

        assert response.context["counts"] is None
        assert "0</strong> scenarios" not in response.text and 'class="stats"' not in response.text


def test_home_links_a_researcher_to_every_entry_page_and_a_superuser_to_the_admin(client):
    client.force_login(make_user(staff=True))
    response = client.get(reverse("home"))

    for name in ["benchmark:index", "annotator:index", "annotator:study-list", "chat:index"]:
        assert f'href="{reverse(name)}"' in response.text
    assert f'href="{reverse("admin:index")}"' not in response.text

    client.force_login(make_user(superuser=True))
    assert f'href="{reverse("admin:index")}"' in client.get(reverse("home")).text


def test_home_shows_visitors_and_annotators_no_link_that_would_refuse_them(client):
    for user in (None, make_user()):
        if user:
            client.force_login(user)
        page = client.get(reverse("home")).text
        for name in ["benchmark:index", "benchmark:runs", "benchmark:results", "chat:index", "admin:index"]:
            assert f'href="{reverse(name)}"' not in page


def test_nav_shows_staff_links_only_to_staff(client):
    client.force_login(make_user())
    page = client.get(reverse("annotator:index")).text
    for staff_page in ["benchmark:index", "chat:index", "admin:index"]:
        assert f'href="{reverse(staff_page)}"' not in page

    client.force_login(make_user(staff=True))
    page = client.get(reverse("annotator:index")).text
    assert f'href="{reverse("benchmark:index")}"' in page
    assert f'href="{reverse("admin:index")}"' not in page  # the admin is for superusers


def test_logout_is_a_post_form_that_returns_home(client):
    client.force_login(make_user())
    page = client.get(reverse("home")).text
    assert f'action="{reverse("logout")}"' in page

    response = client.post(reverse("logout"), {"next": reverse("home")})

    assert response.status_code == 302
    assert response.url == reverse("home")
    assert "_auth_user_id" not in client.session


def test_login_form_logs_in_and_goes_to_the_page_asked_for(client):
    user = make_user()
    assert client.get(reverse("login")).status_code == 200

    response = client.post(reverse("login"), {"username": user.username, "password": PASSWORD,
                                              "next": reverse("home")})

    assert response.status_code == 302
    assert response.url == reverse("home")
    assert client.session["_auth_user_id"] == str(user.pk)


@pytest.mark.parametrize(
    ("role", "landing"),
    [
        ("annotator", "annotator:index"),
        ("researcher", "annotator:study-list"),
        ("team researcher", "annotator:study-list"),
        ("superuser", "admin:index"),
    ],
)
def test_each_role_lands_where_its_work_is(client, role, landing):
    """Every log-in landed on the home page; the form sent next=/ when no page was asked for."""
    user = make_researcher() if role == "researcher" else make_user(superuser=role == "superuser")
    if role == "team researcher":
        add_to_team(user)
    form = client.get(reverse("login")).text
    assert 'name="next"' not in form

    response = client.post(reverse("login"), {"username": user.username, "password": PASSWORD})

    assert response.status_code == 302
    assert response.url == reverse(landing)
    assert client.get(response.url).status_code == 200


# The entry pages the home page links to (the annotator's and chat's have their own tests in
# tests/annotator/ and tests/chat/).

def test_chat_entry_is_for_researchers_and_counts_scenarios(client):
    make_scenario()
    make_scenario()
    client.force_login(make_user())
    assert client.get(reverse("chat:index")).status_code == 403

    client.force_login(make_user(staff=True))
    response = client.get(reverse("chat:index"))

    assert response.status_code == 200
    assert "2 scenarios are" in response.text
    assert f'href="{reverse("benchmark:index")}"' in response.text
