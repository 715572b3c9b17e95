"""Annotators never see what the scenario's probes test them on.

A scenario's role carries a planted private fact, reason, goal and character secret. Every URL
of the site is opened as an annotator of one study per preset (with a regular, a gold, an
attention and a pairwise item, each with a draft, and one item submitted), with and without
htmx's header, and the annotator's own posts (a draft, a failed submit) are sent too. The URLs
come from the resolver, not from a list here, so a page added later is covered without a change.

What a page may show is what one of its questions rates: Sotopia-EVAL scores each character's
progress towards their goal and whether they kept their secret, so its pages show the goal and
the secret; AgentSense asks about each goal one by one, so its item page shows each goal beside
its question, and nowhere else. The private fact and the reason are shown nowhere.
"""

import io
import itertools
import zipfile
from datetime import timedelta

import pytest
from django.db import transaction
from django.urls import NoReverseMatch, URLPattern, URLResolver, get_resolver, reverse
from django.urls.converters import IntConverter
from django.utils import timezone

from annotator import drafts
from annotator.item_page import ItemPage
from annotator.models import Assignment, StudyItem
from annotator.reports import build_report
from benchmark.evaluation.interviews.instruments import probes_instrument
from benchmark.instruments.presets import PRESETS, install_preset
from benchmark.models import Answer, Goal, Probe, Respondent, Response
from tests.annotator.builders import make_study
from tests.builders import make_character, make_episode, make_scenario, make_user

pytestmark = pytest.mark.django_db

PRIVATE = "Planted private fact: the boiler was condemned in March."
REASON = "Planted reason: a debt nobody else knows of."
GOAL = "Planted goal: have the others pay for the new boiler."
SECRET = "Planted secret: sold the old boiler for scrap."
GOAL_PROBE = "Planted probe about the goal: what did Wren want?"
PRIVATE_PROBE = "Planted probe about the private fact: what happened to the boiler?"
# What each preset's questions rate, and so may show.
RATED = {"sotopia-eval": {GOAL, SECRET}, "agentsense": {GOAL}}


def planted_scenario():
    scenario = make_scenario(
        context="Three housemates meet to decide how to heat the house this winter.",
        roles=[
            {"goal": [GOAL], "reason": REASON, "private_knowledge": PRIVATE,
             "character": make_character(first_name="Wren", last_name="Adler", secret=SECRET)},
            {"goal": ["Keep the heating bill low."]},
            {"goal": ["Help the other two agree."]},
        ],
    )
    about = scenario.roles.get(position=0)
    Probe.objects.create(scenario=scenario, about=about, position=0, topic="private_info", text=PRIVATE_PROBE,
                         options=["It was condemned", "It was new", "It was sold"], correct=0)
    Probe.objects.create(scenario=scenario, about=about, position=1, topic="goal", text=GOAL_PROBE,
                         options=["A new boiler paid by the others", "A holiday", "A quieter house"], correct=0)
    Probe.objects.create(scenario=scenario, about=about, position=2, topic="reason",
                         text="Why did Wren want it?", options=["A debt", "A bet", "A promise"], correct=0)
    return scenario


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    """One study per preset over the planted scenario's episodes; the annotator holds every item. Built
    once for the module in a transaction rolled back at its end; each test's changes roll back."""
    with django_db_blocker.unblock(), transaction.atomic():
        yield build_world()
        transaction.set_rollback(True)


def build_world():
    scenario = planted_scenario()
    annotator = make_user(username="blind-annotator")
    studies = {}
    for preset in PRESETS:
        episodes = [make_episode(scenario=scenario, turns=4) for _ in range(5)]
        study = make_study(instrument=install_preset(preset), items=episodes[:1], gold=episodes[1:2],
                           attention=episodes[2:3], overlap=1, annotators=[annotator], slug=f"blind-{preset}")
        study.items.filter(kind=StudyItem.Kind.ATTENTION).update(attention_instruction="Pick the first answer.")
        StudyItem.objects.create(study=study, episode=episodes[3], compared_episode=episodes[4], position=99)
        study.memberships.update(instructions_read_at=timezone.now())
        now = timezone.now()
        for item in study.items.all():
            assignment = Assignment.objects.create(item=item, annotator=annotator, claimed_at=now,
                                                   lease_expires_at=now + timedelta(hours=1))
            drafts.save_draft(assignment, ItemPage(assignment).parse({}, complete=False), revision=0, seconds=1)
        studies[preset] = study
    return annotator, studies


def the_regular_item(study, annotator):
    """The annotator's assignment on the study's one regular item that pairs no second conversation."""
    return Assignment.objects.get(item__study=study, item__kind="regular", item__compared_episode=None,
                                  annotator=annotator)


def patterns(entries=None, namespace=""):
    """(name to reverse, its parameters' converters) for every named URL of the site, includes followed."""
    for entry in get_resolver().url_patterns if entries is None else entries:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from patterns(entry.url_patterns, inner)
        elif isinstance(entry, URLPattern) and entry.name:
            yield namespace + entry.name, getattr(entry.pattern, "converters", {})


def urls_for(name, converters, values):
    """Every address of ``name`` with its parameters filled from ``values`` (by name, else by converter)."""
    names = list(converters)
    choices = [values.get(key) or values["int" if isinstance(converters[key], IntConverter) else "str"]
               for key in names]
    for combination in itertools.product(*choices):
        try:
            yield reverse(name, kwargs=dict(zip(names, combination, strict=True)))
        except NoReverseMatch:  # a value the converter refuses, or a regex route: nothing to open
            continue


def texts_of(response):
    """The response's text, and each member's for a ZIP download."""
    body = b"".join(response.streaming_content) if response.streaming else response.content
    if body[:2] == b"PK":
        with zipfile.ZipFile(io.BytesIO(body)) as archive:
            return [archive.read(name).decode("utf-8", "replace") for name in archive.namelist()]
    return [body.decode("utf-8", "replace")]


def preset_of(url, studies, annotator):
    """The preset of the study a URL is about (by slug or assignment id), or None."""
    for preset, study in studies.items():
        if f"/{study.slug}/" in url or url.endswith(f"/{study.slug}"):
            return preset
        for pk in Assignment.objects.filter(item__study=study, annotator=annotator).values_list("pk", flat=True):
            if f"/{pk}/" in url:
                return preset
    return None


@pytest.fixture
def swept(world):
    """The world as the sweep opens it: one of the annotator's items already submitted."""
    annotator, studies = world
    submitted = the_regular_item(studies["agentsense"], annotator)
    submitted.status, submitted.submitted_at = Assignment.Status.SUBMITTED, timezone.now()
    submitted.save()
    return world


def sweep_values(annotator, studies):
    """The values each URL parameter is filled with, by name, else by converter."""
    assignments = list(Assignment.objects.filter(annotator=annotator).values_list("pk", flat=True))
    return {
        "assignment_id": assignments,
        "slug": [study.slug for study in studies.values()],
        "token": [study.invite_token for study in studies.values()],
        "fmt": ["csv", "json", "jsonl", "html", "zip", "txt", "svg"],
        "int": sorted({*assignments, *StudyItem.objects.values_list("episode_id", flat=True),
                       *(study.pk for study in studies.values()), 1}),
        "str": ["x", "csv"],
    }


def assert_blind(opened, studies, annotator):
    """No response shows a planted text its study's questions do not rate."""
    for url, response in opened:
        allowed = RATED.get(preset_of(url, studies, annotator), set())
        for text in texts_of(response):
            for planted in {PRIVATE, REASON, GOAL, SECRET} - allowed:
                assert planted not in text, f"{planted!r} on {url} ({response.status_code})"


# Every named URL of the site, one test each (the sweep shares the module's world); the annotator's own
# posts are one more test.
ROUTES = sorted({name for name, _ in patterns()})


@pytest.mark.parametrize("route", ROUTES)
def test_no_page_an_annotator_can_open_shows_a_private_fact_a_reason_or_an_unrated_goal_or_secret(
    client, swept, route
):
    annotator, studies = swept
    values = sweep_values(annotator, studies)
    client.force_login(annotator)
    opened = []
    for name, converters in patterns():
        if name != route:
            continue
        for url in urls_for(name, converters, values):
            for headers in ({}, {"HX-Request": "true"}):
                opened.append((url, client.get(url, headers=headers)))

    if route == "annotator:item":
        item_pages = [url for url, response in opened if response.status_code == 200]
        assert len(item_pages) >= 4 * len(PRESETS)  # every item of every study was really opened
    assert_blind(opened, studies, annotator)


def test_the_annotators_own_posts_show_no_private_fact_a_reason_or_an_unrated_goal_or_secret(client, swept):
    annotator, studies = swept
    client.force_login(annotator)
    opened = []
    for pk in Assignment.objects.filter(annotator=annotator).values_list("pk", flat=True):
        # an autosave's status, a submit that fails, and the item page after it
        opened.append((f"/annotate/a/{pk}/draft/", client.post(f"/annotate/a/{pk}/draft/", {"revision": 1})))
        client.post(f"/annotate/a/{pk}/submit/", {"revision": 1})
        opened.append((f"/annotate/a/{pk}/ after a failed submit", client.get(f"/annotate/a/{pk}/")))

    assert len(opened) >= 2 * 4 * len(PRESETS)
    assert_blind(opened, studies, annotator)


def test_the_agentsense_item_page_shows_a_goal_only_beside_its_question_and_asks_no_probe_it_answers(client, world):
    annotator, studies = world
    assignment = the_regular_item(studies["agentsense"], annotator)
    client.force_login(annotator)

    page = client.get(f"/annotate/a/{assignment.pk}/").text

    assert page.count(GOAL) == page.count(f"Wren Adler’s goal: {GOAL}") == 1
    assert PRIVATE_PROBE in page and "Why did Wren want it?" in page
    assert GOAL_PROBE not in page  # the goal beside its question would answer it


def test_sotopia_eval_shows_the_goal_and_secret_it_rates(client, world):
    annotator, studies = world
    assignment = the_regular_item(studies["sotopia-eval"], annotator)
    client.force_login(annotator)

    page = client.get(f"/annotate/a/{assignment.pk}/").text

    assert GOAL in page and SECRET in page


def test_the_report_sets_the_agents_beside_the_annotators_on_the_same_probes(world):
    annotator, studies = world
    study = studies["agentsense"]
    assignment = the_regular_item(study, annotator)
    scenario = assignment.item.episode.scenario
    form = {"answer-probe_1": "0", "answer-probe_3": "1"}
    for goal in Goal.objects.filter(role__scenario=scenario):
        form |= {f"answer-goal_achieved-g{goal.pk}": "yes", f"rationale-goal_achieved-g{goal.pk}": "Turn 2."}
    annotation = drafts.submit(assignment, ItemPage(assignment).parse(form, complete=True), revision=1, seconds=60)
    probes = probes_instrument(scenario)
    # An answer to the goal probe given before such probes were left out of the page does not count either.
    Answer.objects.create(response=annotation.probes_response, question=probes.questions.get(key="probe_2"),
                          value="1")
    agent = Respondent.objects.create(kind="agent", model="m-agent", prompt_version="probes-1")
    response = Response.objects.create(instrument=probes, episode=assignment.item.episode, respondent=agent,
                                       seat_position=1)
    Answer.objects.bulk_create(Answer(response=response, question=question, value="0")
                               for question in probes.questions.all())

    report = build_report(study, resamples=0, respondent_kinds=["agent"])["agentsense"]["probes"]

    assert report["humans"] == {"n": 2, "correct": 1, "accuracy": 0.5}
    # The probe about Wren's goal, which annotators are not asked, is left out of the agent's score too.
    assert report["agents"] == [{"measure": "attacker", "model": "m-agent", "n": 2, "correct": 2, "accuracy": 1.0}]
