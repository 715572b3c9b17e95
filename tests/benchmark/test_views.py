import re

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from benchmark.models import ActionType, Episode, Instrument, Question, Respondent, Response
from tests.builders import get_barrier, make_episode, make_scenario, make_scores, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):
    client.force_login(make_user(staff=True))
    return client


def episode_url(episode: Episode) -> str:
    return reverse("benchmark:episode", args=[episode.pk])


# Who may look

@pytest.mark.parametrize("page", ["list", "detail"])
def test_anonymous_users_are_sent_to_log_in(client, page):
    url = reverse("benchmark:index") if page == "list" else episode_url(make_episode())

    response = client.get(url)

    assert response.status_code == 302
    assert "login" in response.url


@pytest.mark.parametrize("page", ["list", "detail"])
def test_users_who_are_not_researchers_are_refused(client, page):
    episode = make_episode(turns=[(ActionType.SPEAK, "A private line.")])
    client.force_login(make_user())

    response = client.get(reverse("benchmark:index") if page == "list" else episode_url(episode))

    assert response.status_code == 403
    assert "A private line." not in response.text


def test_members_of_the_researchers_group_see_the_episodes(client):
    make_episode(turns=[(ActionType.SPEAK, "A research line.")])
    user = make_user()
    user.groups.add(Group.objects.get_or_create(name="researchers")[0])
    client.force_login(user)

    assert client.get(reverse("benchmark:index")).status_code == 200


# The list

def test_staff_see_the_episode_list_with_turn_counts(staff_client):
    episode = make_episode(turns=3, external_id="run-a-1")

    response = staff_client.get(reverse("benchmark:index"))

    assert response.status_code == 200
    assert list(response.context["page"].object_list) == [episode]
    assert response.context["page"].object_list[0].turn_count == 3
    assert f'href="{episode_url(episode)}"' in response.text
    assert "run-a-1" in response.text


def test_the_list_shows_the_newest_episodes_first(staff_client):
    older, newer = make_episode(), make_episode()

    response = staff_client.get(reverse("benchmark:index"))

    assert list(response.context["page"].object_list) == [newer, older]


def test_the_list_shows_fifty_episodes_a_page(staff_client):
    scenario = make_scenario()
    for _ in range(51):
        make_episode(scenario=scenario, turns=0)

    first = staff_client.get(reverse("benchmark:index"))
    second = staff_client.get(reverse("benchmark:index"), {"page": 2})

    assert len(first.context["page"].object_list) == 50
    assert len(second.context["page"].object_list) == 1
    assert "?page=2" in first.text


@pytest.mark.parametrize(
    ("filter_name", "wanted", "other"),
    [
        ("source", {"source": Episode.Source.HUMAN_CHAT}, {"source": Episode.Source.IMPORTED}),
        ("status", {"status": Episode.Status.FAILED}, {"status": Episode.Status.FINISHED}),
        ("tag", {"tag": "pilot"}, {"tag": "main"}),
        ("barrier", {"barrier": "semantic"}, {"barrier": "emotional"}),
    ],
)
def test_filters_narrow_the_list(staff_client, filter_name, wanted, other):
    match = make_episode(**wanted)
    make_episode(**other)
    value = match.barrier.pk if filter_name == "barrier" else wanted[filter_name]

    response = staff_client.get(reverse("benchmark:index"), {filter_name: value})

    assert list(response.context["page"].object_list) == [match]


def test_scenario_filter_narrows_the_list(staff_client):
    match = make_episode()
    make_episode()

    response = staff_client.get(reverse("benchmark:index"), {"scenario": match.scenario.pk})

    assert list(response.context["page"].object_list) == [match]


def test_filters_combine(staff_client):
    semantic = get_barrier("semantic")
    match = make_episode(barrier=semantic, status=Episode.Status.FAILED)
    make_episode(barrier=semantic, status=Episode.Status.FINISHED)
    make_episode(status=Episode.Status.FAILED)

    response = staff_client.get(reverse("benchmark:index"), {"barrier": semantic.pk, "status": "failed"})

    assert list(response.context["page"].object_list) == [match]


def test_an_unknown_filter_value_is_ignored(staff_client):
    episode = make_episode()

    response = staff_client.get(reverse("benchmark:index"), {"barrier": "999999", "status": "nonsense"})

    assert response.status_code == 200
    assert list(response.context["page"].object_list) == [episode]


def test_htmx_request_gets_only_the_results_partial(staff_client):
    make_episode(external_id="swapped-in")

    response = staff_client.get(reverse("benchmark:index"), headers={"HX-Request": "true"})

    assert response.status_code == 200
    assert [t.name for t in response.templates][0] == "benchmark/partials/_episode_rows.html"
    assert "swapped-in" in response.text
    assert "<html" not in response.text
    assert "<form" not in response.text
    assert "HX-Request" in response["Vary"]


def test_htmx_history_restore_gets_the_whole_page(staff_client):
    response = staff_client.get(
        reverse("benchmark:index"), headers={"HX-Request": "true", "HX-History-Restore-Request": "true"}
    )

    assert "<html" in response.text


def test_list_query_count_does_not_grow_with_the_number_of_episodes(staff_client, django_assert_max_num_queries):
    scenario = make_scenario()
    for _ in range(2):
        make_episode(scenario=scenario, turns=2)
    with CaptureQueriesContext(connection) as few:
        staff_client.get(reverse("benchmark:index"))

    for _ in range(30):
        make_episode(scenario=make_scenario(), turns=3, barrier="semantic")

    with django_assert_max_num_queries(len(few)):
        response = staff_client.get(reverse("benchmark:index"))
    assert len(response.context["page"].object_list) == 32


# The detail page

def test_staff_see_the_episode_with_scenario_roles_seats_and_transcript(staff_client):
    scenario = make_scenario(
        context="Two flatmates sort out the rent.",
        roles=[{"goal": "Pay less rent this month."}, {"goal": "Get the rent on time.", "reason": "Savings."}],
    )
    episode = make_episode(
        scenario=scenario,
        barrier="semantic",
        barrier_seat=1,
        turns=[
            (ActionType.SPEAK, "Can we talk about the rent?"),
            (ActionType.NON_VERBAL, "sighs"),
            (ActionType.ACTION, "hands over an envelope"),
            (ActionType.LEAVE, ""),
        ],
    )
    [first, second] = scenario.roles.order_by("position")

    response = staff_client.get(episode_url(episode))

    assert response.status_code == 200
    text = response.text
    for expected in [
        "Two flatmates sort out the rent.",
        "Pay less rent this month.",
        "Get the rent on time.",
        first.character.name,
        second.character.name,
        "speaks under Semantic vagueness",
        "Can we talk about the rent?",
        "<em>sighs</em>",
        "<em>hands over an envelope</em>",
        "left the conversation",
    ]:
        assert expected in text
    assert text.count("turn--barrier") == 2


def test_missing_episode_is_a_404(staff_client):
    assert staff_client.get(reverse("benchmark:episode", args=[999999])).status_code == 404


def test_answers_are_grouped_by_respondent_and_instrument_with_the_kind_named(staff_client):
    episode = make_episode()
    make_scores(episode, [("goal", 0, 7)], evaluator="openai/gpt-4o", reasoning="Got most of the way.")
    make_scores(episode, [("mutual_understanding", None, 4)], evaluator="openai/gpt-4o")
    make_scores(episode, [("goal", 0, 6.5)], evaluator="human mean")

    response = staff_client.get(episode_url(episode))

    groups = response.context["answer_groups"]
    assert [(g.kind_label, g.respondent, g.instrument, [(r.question, r.target) for r in g.rows]) for g in groups] == [
        ("automated judge", "openai/gpt-4o", "SocialVeil judge v1", [("Mutual understanding", "the episode")]),
        ("automated judge", "openai/gpt-4o", "Sotopia-EVAL judge v1", [("Goal completion", episode.seats.get(
            position=0).character.name)]),
        ("human annotator", "human mean", "Sotopia-EVAL judge v1", [("Goal completion", episode.seats.get(
            position=0).character.name)]),
    ]
    assert "Got most of the way." in response.text
    assert "6.5" in response.text and "0 to 10" in response.text
    assert "automated judge" in response.text and "human annotator" in response.text


def test_several_judges_are_followed_by_their_majority(staff_client):
    episode = make_episode()
    for judge, goal in (("openai/a", 2), ("openai/b", 9), ("openai/c", 4)):
        make_scores(episode, [("goal", 1, goal)], evaluator=judge)

    response = staff_client.get(episode_url(episode))

    groups = response.context["answer_groups"]
    assert [g.respondent for g in groups] == ["openai/a", "openai/b", "openai/c", "majority"]
    majority = groups[-1]
    assert (majority.majority_of, majority.rows[0].value, majority.rows[0].reasoning) == (3, "4", "median of 3 judges")
    assert "majority of 3 judges" in response.text


def test_an_interviewed_agent_and_its_choices_are_shown_with_their_labels(staff_client):
    episode = make_episode()
    instrument = Instrument.objects.create(team=episode.team, name="Check-in")
    Question.objects.create(
        instrument=instrument, key="mood", position=0, kind="categorical", prompt="How did it feel?",
        options={"choices": [{"value": "ok", "label": "It went fine"}, {"value": "bad", "label": "It went badly"}]},
    )
    agent = Respondent.objects.create(kind="agent", model="scripted", prompt_version="interview-1")
    answered = Response.objects.create(episode=episode, respondent=agent, instrument=instrument, seat_position=1)
    answered.answers.create(question=instrument.questions.get(), value="ok", reasoning="We agreed.")

    response = staff_client.get(episode_url(episode))

    group = response.context["answer_groups"][0]
    speaker = episode.seats.get(position=1).character.name
    assert (group.kind_label, group.interviewed_seat) == ("interviewed agent", speaker)
    assert group.rows[0].value == "It went fine"
    assert "speaking as" in response.text


def test_scripted_model_output_is_labelled_offline(staff_client):
    episode = make_episode(seat_fields={"model": "scripted"}, turns=2)
    make_scores(episode, [("mutual_understanding", None, 3)], evaluator="scripted")

    response = staff_client.get(episode_url(episode))

    # two seats, two turns and one group of answers
    assert response.text.count("scripted (offline)") == 5


def test_real_model_names_are_shown_as_they_are(staff_client):
    episode = make_episode(seat_fields={"model": "openai/gpt-4o-mini"}, turns=1)

    response = staff_client.get(episode_url(episode))

    assert "openai/gpt-4o-mini" in response.text
    assert "scripted (offline)" not in response.text


def test_script_tags_in_user_text_come_out_escaped(staff_client):
    attack = "<script>alert('x')</script>"
    scenario = make_scenario(context=attack, roles=[{"goal": attack}, {"goal": "ok"}])
    episode = make_episode(scenario=scenario, turns=[(ActionType.SPEAK, attack), (ActionType.NON_VERBAL, attack)],
                           tag=attack)
    make_scores(episode, [("mutual_understanding", None, 3)], evaluator=attack, reasoning=attack)

    for response in [
        staff_client.get(episode_url(episode)),
        staff_client.get(reverse("benchmark:index")),
    ]:
        assert "<script>alert" not in response.text
        assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in response.text


def test_the_episode_page_numbers_turns_from_one_as_annotators_read_them(staff_client):
    episode = make_episode(turns=[(ActionType.SPEAK, "First words."), (ActionType.SPEAK, "Second words.")])

    page = staff_client.get(episode_url(episode)).text

    assert re.findall(r'<span class="turn__index">(?:<span class="visually-hidden">Turn </span>)?(\d+)</span>',
                      page) == ["1", "2"]


def test_the_list_marks_a_barrier_seat_only_where_a_barrier_applies(staff_client):
    make_episode(barrier="none", barrier_seat=0)
    make_episode(barrier="semantic", barrier_seat=0)

    page = staff_client.get(reverse("benchmark:index")).content.decode()

    assert page.count('<span class="badge badge--barrier"') == 1


def test_gestures_and_actions_are_shown_in_emphasis_without_their_marks_and_escaped(staff_client):
    episode = make_episode(turns=[(ActionType.NON_VERBAL, "*smiles <b>warmly</b>*"),
                                  (ActionType.ACTION, "[hands over the keys]"),
                                  (ActionType.SPEAK, "I said *this* and [that].")])

    page = staff_client.get(reverse("benchmark:episode", args=[episode.pk])).content.decode()

    assert "<em>smiles &lt;b&gt;warmly&lt;/b&gt;</em>" in page
    assert "<em>hands over the keys</em>" in page
    assert "I said *this* and [that]." in page  # speech is shown as written
    assert "**" not in page and "[[" not in page
