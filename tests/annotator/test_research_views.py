"""The researcher pages: who may open them, the study list, the dashboard, the report, and creating a study."""

from datetime import timedelta
from html import escape
from io import StringIO

import pytest
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from annotator import forms as study_forms
from annotator.forms import DEFAULT_INSTRUCTIONS, create_study
from annotator.models import Annotation, Assignment, ItemKey, Membership, Study, StudyItem
from annotator.permissions import ANNOTATORS
from benchmark.models import Barrier, Episode, Instrument, Question
from tests.annotator.builders import (
    add_annotators,
    add_answer,
    make_annotation,
    make_instrument,
    make_question,
    make_study,
)
from tests.builders import add_to_team, default_team, make_episode, make_researcher, make_scenario, make_team, make_user

pytestmark = pytest.mark.django_db


NOW = timezone.now()
# session, user, study, progress (3), quality (4), the pool, the items, generated ratings, the log's latest lines,
# check records (6)
DASHBOARD_QUERIES = 20


def annotator(team=None, **fields):
    """An annotator of ``team`` (the default team): someone who joined one of its studies."""
    user = make_user(**fields)
    user.groups.add(Group.objects.get_or_create(name=ANNOTATORS)[0])
    add_to_team(user, team, role="annotator")
    return user


def annotate(item, user, answers=(), *, seconds=90, status=Annotation.Status.SUBMITTED):
    """A submitted (or in-progress) annotation of ``item`` by ``user`` with ``answers`` [(question, value)]."""
    submitted = status == Annotation.Status.SUBMITTED
    assignment = Assignment.objects.create(
        item=item, annotator=user, claimed_at=NOW, lease_expires_at=NOW + timedelta(hours=1), seconds_spent=seconds,
        status=Assignment.Status.SUBMITTED if submitted else Assignment.Status.CLAIMED,
        submitted_at=NOW if submitted else None,
    )
    annotation = make_annotation(assignment, status=status, submitted_at=NOW if submitted else None)
    for question, value in answers:
        add_answer(annotation, question, value)
    return annotation


@pytest.fixture
def researcher():
    return make_user(staff=True, username="the-researcher")


@pytest.fixture
def annotator_a():
    return annotator(username="annotator-a")


@pytest.fixture
def annotator_b():
    return annotator(username="annotator-b")


@pytest.fixture
def study(researcher, annotator_a, annotator_b):
    return make_study(
        title="Barrier pilot", slug="barrier-pilot", items=3, gold=1, attention=1, overlap=2,
        annotators=[annotator_a, annotator_b], created_by=researcher,
    )


# Who may open what

PAGES = [
    ("study-list", ()),
    ("study-create", ()),
    ("dashboard", ("barrier-pilot",)),
    ("export", ("barrier-pilot", "csv")),
    ("export", ("barrier-pilot", "jsonl")),
    ("report", ("barrier-pilot",)),
]
PAGE_IDS = ["list", "create", "dashboard", "export-csv", "export-jsonl", "report"]


@pytest.mark.parametrize(("name", "args"), PAGES, ids=PAGE_IDS)
def test_anonymous_visitors_are_sent_to_log_in(client, study, name, args):
    response = client.get(reverse(f"annotator:{name}", args=args))

    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


@pytest.mark.parametrize("who", ["annotator_a", "annotator_b"])
@pytest.mark.parametrize(("name", "args"), PAGES, ids=PAGE_IDS)
def test_annotators_are_refused_every_researcher_page(client, study, request, who, name, args):
    user = request.getfixturevalue(who)
    annotate(study.items.first(), user, [(study.instrument.questions.first(), "none")])
    client.force_login(user)

    response = client.get(reverse(f"annotator:{name}", args=args))

    assert response.status_code == 403
    body = b"".join(getattr(response, "streaming_content", [response.content]))
    # The 403 page's header names the signed-in user, as every page does; the page itself must not.
    assert b"annotator-a" not in body.split(b'<main id="main"', 1)[-1]


@pytest.mark.parametrize(("name", "args"), PAGES, ids=PAGE_IDS)
def test_the_researcher_who_made_the_study_opens_every_page(client, study, researcher, name, args):
    client.force_login(researcher)

    assert client.get(reverse(f"annotator:{name}", args=args)).status_code == 200


@pytest.mark.parametrize(("name", "args"), PAGES[2:], ids=PAGE_IDS[2:])
def test_another_teams_study_is_not_found(client, study, name, args):
    client.force_login(make_researcher(make_team()))

    assert client.get(reverse(f"annotator:{name}", args=args)).status_code == 404


@pytest.mark.parametrize(("name", "args"), PAGES[2:], ids=PAGE_IDS[2:])
def test_every_researcher_of_the_team_opens_its_studies(client, study, name, args):
    client.force_login(make_researcher(study.team))

    assert client.get(reverse(f"annotator:{name}", args=args)).status_code == 200


@pytest.mark.parametrize(("name", "args"), PAGES, ids=PAGE_IDS)
def test_a_superuser_opens_every_study(client, study, name, args):
    client.force_login(make_user(superuser=True))

    assert client.get(reverse(f"annotator:{name}", args=args)).status_code == 200


def test_members_of_the_researchers_group_are_researchers_too(client, study):
    user = make_researcher()
    study.created_by = user
    study.save()
    client.force_login(user)

    assert client.get(reverse("annotator:dashboard", args=[study.slug])).status_code == 200


def test_an_annotator_cannot_create_a_study(client, annotator_a):
    client.force_login(annotator_a)
    make_episode(tag="pilot")

    response = client.post(reverse("annotator:study-create"), valid_form_data(slug="sneaky", pool=[annotator_a.pk]))

    assert response.status_code == 403
    assert not Study.objects.filter(slug="sneaky").exists()


# The list


def test_the_list_shows_each_study_with_its_progress(client, study, researcher, annotator_a, annotator_b):
    barrier = study.instrument.questions.first()
    first, second, _ = study.items.filter(kind="regular").order_by("position")
    annotate(first, annotator_a, [(barrier, "none")])
    annotate(first, annotator_b, [(barrier, "none")])
    annotate(second, annotator_a, [(barrier, "none")])
    make_study(title="Someone else's", team=make_team())
    client.force_login(researcher)

    response = client.get(reverse("annotator:study-list"))

    assert "Barrier pilot" in response.text
    assert "Someone else" not in response.text
    (row,) = response.context["rows"]
    assert (row.items, row.items_complete, row.submitted, row.slots, row.percent) == (3, 1, 3, 6, 50)
    assert f'href="{reverse("annotator:dashboard", args=[study.slug])}"' in response.text


def test_the_list_takes_a_fixed_number_of_queries(client, researcher, django_assert_max_num_queries):
    for _ in range(5):
        make_study(items=3, created_by=researcher)
    client.force_login(researcher)

    with django_assert_max_num_queries(6):
        response = client.get(reverse("annotator:study-list"))

    assert len(response.context["rows"]) == 5


# The dashboard


def test_the_dashboard_shows_the_invite_link_exports_and_report(client, study, researcher):
    client.force_login(researcher)

    response = client.get(reverse("annotator:dashboard", args=[study.slug]))

    assert f"http://testserver/annotate/join/{study.invite_token}/" in response.text
    for fmt in ("csv", "jsonl"):
        assert f'href="{reverse("annotator:export", args=[study.slug, fmt])}"' in response.text
    assert f'href="{reverse("annotator:report", args=[study.slug])}"' in response.text


def test_the_dashboard_shows_each_annotators_work_and_quality(client, study, researcher, annotator_a, annotator_b):
    barrier = study.instrument.questions.first()
    regular = list(study.items.filter(kind="regular").order_by("position"))
    annotate(regular[0], annotator_a, [(barrier, "none")], seconds=120)
    annotate(regular[1], annotator_a, [(barrier, "none")], seconds=5)  # too fast
    annotate(study.items.get(kind="gold"), annotator_a, [(barrier, "semantic")], seconds=60)  # key: none
    annotate(study.items.get(kind="attention"), annotator_a, [(barrier, "none")], seconds=60)  # passed
    annotate(regular[2], annotator_b, [], status=Annotation.Status.DRAFT)
    client.force_login(researcher)

    response = client.get(reverse("annotator:dashboard", args=[study.slug]))

    rows = {row.user.username: row for row in response.context["annotators"]}
    a, b = rows["annotator-a"], rows["annotator-b"]
    assert (a.work.submitted, a.work.in_progress, a.time_spent) == (4, 0, "4 min 05 s")
    assert (a.gold_accuracy, a.quality.attention_passed, a.quality.fast_submissions) == (0, 1, 1)
    assert (b.work.submitted, b.work.in_progress, b.gold_accuracy) == (0, 1, None)
    assert a.pseudonym == f"a{annotator_a.pk}"
    assert "1 of 1 passed" in response.text
    assert "1 flagged" in response.text


def test_the_dashboard_marks_items_short_of_k(client, study, researcher, annotator_a, annotator_b):
    barrier = study.instrument.questions.first()
    first = study.items.get(position=0)
    annotate(first, annotator_a, [(barrier, "none")])
    annotate(first, annotator_b, [(barrier, "none")])
    client.force_login(researcher)

    response = client.get(reverse("annotator:dashboard", args=[study.slug]))

    short = [row.item.position for row in response.context["items"] if row.short]
    assert short == [1, 2]  # gold and attention items are never "short": everyone rates them
    assert response.text.count('class="item--short"') == 2
    assert "2</strong> regular items still have fewer than 2 ratings" in response.text


def test_the_dashboard_lists_someone_removed_from_the_pool(client, study, researcher, annotator_a):
    annotate(study.items.first(), annotator_a, [(study.instrument.questions.first(), "none")])
    Membership.objects.filter(annotator=annotator_a).delete()
    client.force_login(researcher)

    response = client.get(reverse("annotator:dashboard", args=[study.slug]))

    rows = {row.user.username: row for row in response.context["annotators"]}
    assert not rows["annotator-a"].member
    assert "no longer in the pool" in response.text


def test_the_dashboard_query_count_does_not_grow_with_annotations(client, researcher, django_assert_max_num_queries):
    study = make_study(items=6, gold=1, attention=1, overlap=3, created_by=researcher)
    barrier = study.instrument.questions.first()
    client.force_login(researcher)
    url = reverse("annotator:dashboard", args=[study.slug])

    def queries() -> int:
        with django_assert_max_num_queries(DASHBOARD_QUERIES), CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured)

    people = add_annotators(study, 1)
    annotate(study.items.first(), people[0], [(barrier, "none")])
    few = queries()
    for person in add_annotators(study, 6):
        for item in study.items.all()[:4]:
            annotate(item, person, [(barrier, "semantic")], seconds=3)
    many = queries()

    assert many == few


# The report


# Creating a study


def valid_form_data(**overrides):
    data = {
        "title": "New study", "slug": "new-study", "preset": "socialveil", "instrument": "",
        "source": "", "scenario": "", "barrier": "", "status": "finished", "tag": "pilot",
        "limit": "", "seed": "7", "overlap": "2", "lease_minutes": "60", "min_seconds_per_item": "30",
        "gold_items": "0", "attention_items": "0", "instructions": "",
    }
    data.update(overrides)
    return data


@pytest.fixture
def episodes():
    """Two scenarios × (none, semantic, emotional), tagged 'pilot', and one untagged episode."""
    made = []
    for _ in range(2):
        scenario = make_scenario()
        made += [make_episode(scenario=scenario, barrier=key, tag="pilot") for key in ("none", "semantic", "emotional")]
    make_episode(tag="")
    return made


@pytest.fixture
def researcher_client(client, researcher):
    client.force_login(researcher)
    return client


def create(client, **overrides):
    return client.post(reverse("annotator:study-create"), valid_form_data(**overrides))


def test_the_form_offers_every_preset_and_counts_matching_episodes(researcher_client, episodes):
    response = researcher_client.get(reverse("annotator:study-create"))

    assert response.status_code == 200
    for key in ("socialveil", "sotopia-eval", "shrec-spans", "promediate"):
        assert f'value="{key}"' in response.text
    assert response.context["count"] == 7
    assert DEFAULT_INSTRUCTIONS["socialveil"].split("\n")[0] in response.text


def test_the_live_count_follows_the_filters(researcher_client, episodes):
    semantic = Barrier.objects.get(key="semantic")

    response = researcher_client.get(
        reverse("annotator:study-create"), {"partial": "count", "barrier": semantic.pk, "tag": "pilot"},
        headers={"HX-Request": "true"},
    )

    assert response.status_code == 200
    assert "<strong>2</strong> episodes match" in response.text
    assert "<form" not in response.text


def test_choosing_a_preset_swaps_in_its_default_instructions(researcher_client):
    response = researcher_client.get(
        reverse("annotator:study-create"),
        {"partial": "instructions", "preset": "sotopia-eval", "instructions": DEFAULT_INSTRUCTIONS["socialveil"]},
        headers={"HX-Request": "true"},
    )

    assert DEFAULT_INSTRUCTIONS["sotopia-eval"].split("\n")[0] in response.text
    assert 'id="field-instructions"' in response.text


def test_choosing_a_preset_keeps_instructions_the_researcher_wrote(researcher_client):
    response = researcher_client.get(
        reverse("annotator:study-create"),
        {"partial": "instructions", "preset": "sotopia-eval", "instructions": "My own words."},
        headers={"HX-Request": "true"},
    )

    assert "My own words." in response.text
    assert DEFAULT_INSTRUCTIONS["sotopia-eval"].split("\n")[0] not in response.text


def test_creating_a_study_makes_items_keys_and_pool(researcher_client, researcher, episodes, annotator_a, annotator_b):
    response = create(researcher_client, pool=[annotator_a.pk, annotator_b.pk], gold_items="2", attention_items="1")

    study = Study.objects.get(slug="new-study")
    assert response.status_code == 302
    assert response.url == reverse("annotator:dashboard", args=["new-study"])
    assert study.created_by == researcher
    assert (study.overlap, study.seed, study.instrument.preset) == (2, 7, "socialveil")
    assert study.instructions == DEFAULT_INSTRUCTIONS["socialveil"]
    assert set(study.annotators.all()) == {annotator_a, annotator_b}
    assert sorted(study.items.values_list("episode_id", flat=True)) == sorted(e.pk for e in episodes)
    assert list(study.items.values_list("position", flat=True)) == list(range(6))

    barrier_question = study.instrument.questions.get(truth="episode.barrier")
    gold = study.items.filter(kind=StudyItem.Kind.GOLD).select_related("episode__barrier")
    assert gold.count() == 2
    for item in gold:
        (key,) = item.keys.all()
        assert (key.question, key.value) == (barrier_question, item.episode.barrier.key)
    (check,) = study.items.filter(kind=StudyItem.Kind.ATTENTION).select_related("episode__barrier")
    assert check.episode.barrier.key != "none"
    assert "“No barrier”" in check.attention_instruction
    assert check.keys.get().value == "none"


def test_a_limit_takes_a_reproducible_sample(researcher_client, episodes):
    create(researcher_client, slug="first", limit="3", seed="11")
    create(researcher_client, slug="second", limit="3", seed="11")

    first = list(Study.objects.get(slug="first").items.values_list("episode_id", flat=True))
    second = list(Study.objects.get(slug="second").items.values_list("episode_id", flat=True))
    assert len(first) == 3 and first == second


def test_an_empty_seed_gets_a_random_one_that_is_kept(researcher_client, episodes):
    create(researcher_client, seed="")

    assert Study.objects.get(slug="new-study").seed is not None


def test_an_existing_instrument_can_be_used(researcher_client, episodes):
    instrument = make_instrument()

    create(researcher_client, preset="", instrument=str(instrument.pk), instructions="Read carefully.")

    study = Study.objects.get(slug="new-study")
    assert (study.instrument, study.instructions) == (instrument, "Read carefully.")


def test_pairs_put_each_barrier_episode_beside_its_baseline(researcher_client, episodes):
    instrument = make_instrument()
    make_question(instrument=instrument, key="better", position=1, kind=Question.Kind.PAIRWISE, prompt="Better?",
                            options={"choices": [{"value": "A", "label": "A"}, {"value": "B", "label": "B"}]})

    create(researcher_client, preset="", instrument=str(instrument.pk), pair_with_baseline="on")

    items = Study.objects.get(slug="new-study").items.select_related("episode__barrier", "compared_episode__barrier")
    assert items.count() == 4
    for item in items:
        keys = {item.episode.barrier.key, item.compared_episode.barrier.key}
        assert "none" in keys and len(keys) == 2
        assert item.episode.scenario_id == item.compared_episode.scenario_id


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"title": ""}, "title", "This field is required."),
        ({"slug": "not a slug!"}, "slug", "Enter a valid “slug”"),
        ({"preset": ""}, "preset", "Choose an instrument preset or an existing instrument."),
        ({"overlap": "0"}, "overlap", "greater than or equal to 1"),
        ({"lease_minutes": "0"}, "lease_minutes", "greater than or equal to 1"),
        ({"limit": "0"}, "limit", "greater than or equal to 1"),
        ({"barrier": "99999"}, "barrier", "Select a valid choice."),
        ({"gold_items": "-1"}, "gold_items", "greater than or equal to 0"),
        ({"gold_items": "5", "attention_items": "2"}, "gold_items", "need 7 episodes, but the study has 6"),
        ({"gold_items": "1", "preset": "sotopia-eval"}, "gold_items",
         "no question whose answer is the episode's barrier"),
        ({"attention_items": "5"}, "attention_items", "too few of those match"),
        ({"pair_with_baseline": "on"}, "pair_with_baseline", "no pairwise question"),
        ({"pair_with_baseline": "on", "preset": "promediate", "gold_items": "1"}, "pair_with_baseline",
         "cannot be gold or attention items"),
        ({"preset": "promediate"}, "preset", "needs episodes with a mediator"),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_each_bad_input_has_a_message(researcher_client, episodes, overrides, field, message):
    response = create(researcher_client, **overrides)

    assert response.status_code == 200
    assert any(message in error for error in response.context["form"].errors[field]), response.context["form"].errors
    assert escape(message) in response.text
    assert not Study.objects.exists()


def test_a_taken_slug_is_refused(researcher_client, episodes, study):
    response = create(researcher_client, slug=study.slug)

    assert "This slug is not available; choose another." in response.context["form"].errors["slug"]
    assert Study.objects.count() == 1


def test_both_a_preset_and_an_instrument_is_refused(researcher_client, episodes):
    response = create(researcher_client, instrument=str(make_instrument().pk))

    assert "not both" in response.context["form"].errors["instrument"][0]


def test_k_above_the_pool_size_is_refused(researcher_client, episodes, annotator_a, annotator_b):
    response = create(researcher_client, overlap="3", pool=[annotator_a.pk, annotator_b.pk])

    (error,) = response.context["form"].errors["overlap"]
    assert "Overlap k is 3, but the pool has only 2 annotators" in error


def test_k_may_exceed_an_empty_pool(researcher_client, episodes):
    create(researcher_client, overlap="5")

    assert Study.objects.get(slug="new-study").overlap == 5


def test_the_pool_offers_only_the_teams_annotators(researcher_client, annotator_a):
    outsider = make_user(username="not-an-annotator")
    annotator(team=make_team(), username="another-teams-annotator")

    response = researcher_client.get(reverse("annotator:study-create"))

    assert "annotator-a" in response.text
    assert outsider.username not in response.text
    assert "another-teams-annotator" not in response.text


def test_another_teams_annotator_cannot_be_put_in_the_pool(researcher_client, episodes):
    stranger = annotator(team=make_team(), username="another-teams-annotator")

    response = create(researcher_client, pool=[stranger.pk], overlap="1")

    assert response.status_code == 200
    assert "pool" in response.context["form"].errors
    assert not Study.objects.filter(slug="new-study").exists()


def test_no_matching_episode_is_refused(researcher_client, episodes):
    response = create(researcher_client, barrier=str(Barrier.objects.get(key="sociocultural").pk))

    assert "a study needs at least one episode" in str(response.context["form"].non_field_errors())
    assert "a study needs at least one episode" in response.text


def test_creation_is_all_or_nothing(episodes, monkeypatch):
    instruments_before = Instrument.objects.count()

    def fail(*args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(study_forms.ItemKey.objects, "bulk_create", fail)
    with pytest.raises(RuntimeError):
        create_study(
            team=default_team(), title="T", slug="t", preset="socialveil", episodes=Episode.objects.all(), gold_items=1
        )

    assert not Study.objects.exists()
    assert not StudyItem.objects.exists()
    assert not ItemKey.objects.exists()
    assert Instrument.objects.count() == instruments_before


# The demo studies


def demo_studies(*args: str) -> str:
    out = StringIO()
    call_command("load_demo_studies", *args, stdout=out)
    return out.getvalue()


def test_the_demo_studies_need_the_demo_first():
    with pytest.raises(CommandError, match="load_demo"):
        demo_studies()
    assert not Study.objects.exists()


def test_the_demo_studies_are_made_once_over_the_demo_episodes(worlds):
    # load_demo, then load_demo_studies --base-url http://parley.test/: built once per session (tests/worlds.py)
    output = worlds.lay("demo-studies").output["load_demo_studies"]
    again = demo_studies("--base-url", "http://parley.test/")

    studies = {study.slug: study for study in Study.objects.all()}
    assert set(studies) == {"demo-socialveil", "demo-sotopia-eval", "demo-shrec-spans", "demo-agentsense",
                            "demo-turn-rating", "demo-promediate-interventions", "demo-shrec-recordings",
                            "demo-shrec-human-baseline", "demo-shrec-t1",  # load_demo's SHREC import
                            "demo-training"}
    veil = studies["demo-socialveil"]
    assert (veil.items.count(), veil.overlap, veil.created_by.username) == (48, 3, "researcher")
    assert veil.items.filter(kind="gold").count() == 2 and veil.items.filter(kind="attention").count() == 2
    assert sorted(veil.annotators.values_list("username", flat=True)) == ["annotator1", "annotator2", "annotator3"]
    assert studies["demo-sotopia-eval"].items.count() == 12
    assert studies["demo-shrec-spans"].instrument.preset == "shrec-spans"
    assert "http://parley.test/annotate/studies/demo-socialveil/" in output
    assert f"http://parley.test/annotate/join/{veil.invite_token}/" in output
    agentsense = studies["demo-agentsense"]
    assert (agentsense.instrument.preset, agentsense.items.count(), agentsense.overlap) == ("agentsense", 10, 3)
    assert "http://parley.test/annotate/studies/demo-agentsense/report/?compare=judge&compare=agent" in output
    assert "No agentsense study" not in output and "No promediate study" in output
    assert studies["demo-turn-rating"].instrument.preset == "turn-rating"
    interventions = studies["demo-promediate-interventions"]
    assert interventions.instrument.preset == "promediate-intervention"
    assert not interventions.items.filter(target_turn__isnull=True).exists()  # one item per intervention
    assert "http://parley.test/annotate/studies/demo-promediate-interventions/report/?compare=judge" in output
    training = studies["demo-training"]
    assert training.qualification_pass_mark == 80
    assert [training.items.filter(kind=kind).exclude(**({"explanation": ""} if kind == "training" else {})).count()
            for kind in ("training", "qualification")] == [2, 2]
    assert "(8 new)" in output and "(0 new)" in again
    assert Study.objects.count() == 10


# Which instruments a study may use


def test_a_teams_own_instruments_and_the_shared_ones_are_offered_and_no_other_teams(researcher_client, episodes):
    ours = make_instrument(name="Ours", team=default_team())
    theirs = make_instrument(name="Theirs", team=make_team(name="Elsewhere", slug="elsewhere"))
    shared = make_instrument(name="Shared")

    form = researcher_client.get(reverse("annotator:study-create")).context["form"]
    offered = set(form.fields["instrument"].queryset)
    response = create(researcher_client, preset="", instrument=str(theirs.pk))

    assert {ours, shared} <= offered and theirs not in offered
    assert "instrument" in response.context["form"].errors
    assert not Study.objects.filter(slug="new-study").exists()


def test_an_instrument_that_marks_spans_per_goal_is_refused_for_a_study(researcher_client, episodes):
    instrument = make_instrument(name="Per goal")
    make_question(instrument=instrument, key="marks", position=1, kind=Question.Kind.SPAN, prompt="Mark it.",
                  scope="goal", options={"labels": ["error", "competency"], "attributes": ["emotions"]})

    response = create(researcher_client, preset="", instrument=str(instrument.pk))

    assert "asks the span question marks per character or per goal" in response.context["form"].errors["instrument"][0]


def test_an_instrument_that_asks_per_goal_makes_a_study(researcher_client, episodes):
    instrument = make_instrument(name="Per goal")
    make_question(instrument=instrument, key="reached", position=1, kind=Question.Kind.YES_NO, prompt="Reached?",
                  scope="goal")

    create(researcher_client, preset="", instrument=str(instrument.pk))

    assert Study.objects.get(slug="new-study").instrument == instrument


def test_the_dashboard_links_each_item_to_its_episode_and_counts_generated_ratings_as_its_progress_does(
    client, researcher
):
    from tests.annotator.test_reports import annotate

    study = make_study(items=2, gold=1, created_by=researcher)
    rater = make_user()
    for item in study.items.all():  # both regular items and the gold one
        annotate(item, rater)
    Annotation.objects.filter(assignment__item__study=study).update(generated_by="a test generator")
    client.force_login(researcher)

    page = client.get(reverse("annotator:dashboard", args=[study.slug])).text

    for item in study.items.select_related("episode"):
        assert f'<a href="{reverse("benchmark:episode", args=[item.episode.pk])}">' in page
    assert ("<strong>50%</strong> ratings in (2 of 4)" in page
            and "2 of the 2 ratings on regular items and 1 of the 1 on quality items were generated by "
                "a test generator" in page)


def test_the_episode_page_labels_generated_ratings_as_generated_not_as_a_human_annotators(client, researcher):
    from tests.annotator.test_reports import annotate

    study = make_study(items=2, created_by=researcher)
    generated_item, rated_item = study.items.order_by("position")
    annotate(generated_item, make_user())
    annotate(rated_item, make_user())
    Annotation.objects.filter(assignment__item=generated_item).update(generated_by="a test generator")
    client.force_login(researcher)

    generated = client.get(reverse("benchmark:episode", args=[generated_item.episode_id])).text
    rated = client.get(reverse("benchmark:episode", args=[rated_item.episode_id])).text

    assert 'title="written by a test generator">generated, not a person&#x27;s</span>' in generated
    assert "human annotator" not in generated
    assert '<span class="badge">human annotator</span>' in rated
