"""The annotator admin: every model has pages that open, annotations stay as written.

The instruments' admin (questions, frozen instruments, answers) is tested in
tests/benchmark/test_instruments_admin.py, on the same data (``annotated_study``).
"""

from datetime import timedelta

import pytest
from django.contrib import admin
from django.urls import reverse
from django.utils import timezone

from annotator.models import Annotation, Assignment, ReportBundle, Span, Study
from benchmark.instruments.versions import freeze
from benchmark.models import Question, SocialAttribute
from tests.annotator.builders import add_answer, make_annotation, make_instrument, make_question, make_study
from tests.builders import default_team, make_user

pytestmark = pytest.mark.django_db

ANNOTATOR_MODELS = [model for model in admin.site._registry if model._meta.app_label == "annotator"]
NOW = timezone.now()



@pytest.fixture
def admin_client(client):
    client.force_login(make_user(superuser=True))
    return client


def annotated_study() -> Study:
    """A study with a submitted annotation holding an answer and a span with an attribute; its instrument frozen."""
    instrument = make_instrument(name="Admin instrument")
    spans = make_question(
        instrument=instrument, key="spans", position=1, kind=Question.Kind.SPAN, prompt="Mark spans.",
        required=False, options={"labels": ["error", "competency"], "attributes": ["emotions"]},
    )
    study = make_study(instrument=instrument, items=2, gold=1, annotators=1, title="Pilot study")
    item = study.items.first()
    assignment = Assignment.objects.create(
        item=item, annotator=study.annotators.first(), status=Assignment.Status.SUBMITTED, claimed_at=NOW,
        lease_expires_at=NOW + timedelta(hours=1), submitted_at=NOW, seconds_spent=40,
    )
    annotation = make_annotation(assignment, status=Annotation.Status.SUBMITTED, submitted_at=NOW)
    add_answer(annotation, instrument.questions.get(key="barrier"), "semantic", reasoning="Vague words throughout.")
    span = Span.objects.create(annotation=annotation, question=spans, label="error", start_turn=0, end_turn=1,
                               rationale="Ignored the tears.", correction="Ask what is wrong.")
    span.attributes.set(SocialAttribute.objects.filter(key="emotions"))
    freeze(instrument)
    ReportBundle.objects.create(study=study, annotations=1)
    return study


@pytest.fixture
def data():
    return annotated_study()


def admin_url(model, action: str, *args) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{action}", args=args)


def test_every_annotator_model_has_an_admin():
    assert {model.__name__ for model in ANNOTATOR_MODELS} == {
        "Study", "Membership", "StudyItem", "ItemKey", "Assignment", "Annotation", "Span", "ReportBundle",
    }


@pytest.mark.parametrize("model", ANNOTATOR_MODELS, ids=lambda model: model.__name__)
def test_changelist_and_change_pages_open(admin_client, data, model):
    obj = model.objects.first()

    for url in [admin_url(model, "changelist"), admin_url(model, "change", obj.pk)]:
        assert admin_client.get(url).status_code == 200, url


@pytest.mark.parametrize("model", ANNOTATOR_MODELS, ids=lambda model: model.__name__)
def test_add_pages_open_where_adding_is_allowed(admin_client, data, model):
    expected = 403 if model in (Annotation, Span, ReportBundle) else 200

    assert admin_client.get(admin_url(model, "add")).status_code == expected


@pytest.mark.parametrize("model", ANNOTATOR_MODELS, ids=lambda model: model.__name__)
def test_searches_and_every_filter_open(admin_client, data, model):
    url = admin_url(model, "changelist")

    assert admin_client.get(url, {"q": "pilot"}).status_code == 200
    response = admin_client.get(url)
    for spec in response.context["cl"].filter_specs:
        for choice in spec.choices(response.context["cl"]):
            assert admin_client.get(url + choice["query_string"]).status_code == 200, choice["query_string"]


@pytest.mark.parametrize("model", ANNOTATOR_MODELS, ids=lambda model: model.__name__)
def test_changelists_take_a_fixed_number_of_queries(admin_client, data, model, django_assert_max_num_queries):
    with django_assert_max_num_queries(14):
        assert admin_client.get(admin_url(model, "changelist")).status_code == 200


def test_the_study_list_counts_items(admin_client, data):
    response = admin_client.get(admin_url(Study, "changelist"))

    (study,) = response.context["cl"].result_list
    assert study.item_count == 3


def test_annotations_are_shown_with_answers_and_spans_but_not_editable(admin_client, data):
    annotation = Annotation.objects.get()

    response = admin_client.get(admin_url(Annotation, "change", annotation.pk))

    assert "barrier: semantic — Vague words throughout." in response.text  # the version's answers
    assert "Ignored the tears." in response.text and "Emotions" in response.text
    assert 'name="answers-0-value"' not in response.text
    assert 'name="_save"' not in response.text
    assert admin_client.post(admin_url(Annotation, "delete", annotation.pk), {"post": "yes"}).status_code == 403
    assert Annotation.objects.exists()


def test_a_study_made_in_the_admin_belongs_to_its_maker(client):
    maker = make_user(superuser=True)
    client.force_login(maker)
    instrument = make_instrument()

    response = client.post(admin_url(Study, "add"), {
        "team": default_team().pk, "title": "From the admin", "slug": "from-the-admin", "instrument": instrument.pk,
        "instructions": "Read.",
        "overlap": "2", "lease_minutes": "60", "min_seconds_per_item": "30", "seed": "0", "is_open": "on",
        "memberships-TOTAL_FORMS": "0", "memberships-INITIAL_FORMS": "0", "memberships-MIN_NUM_FORMS": "0",
        "memberships-MAX_NUM_FORMS": "1000",
    })

    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else ""
    assert Study.objects.get(slug="from-the-admin").created_by == maker
