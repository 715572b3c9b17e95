"""The annotator admin: every model has pages that open, frozen schemes stay frozen, annotations stay as written."""

from datetime import timedelta

import pytest
from django.contrib import admin
from django.urls import reverse
from django.utils import timezone

from annotator import schemes
from annotator.models import (
    Annotation,
    Answer,
    Assignment,
    Question,
    ReportBundle,
    Scheme,
    SocialAttribute,
    Span,
    Study,
)
from tests.annotator.builders import make_scheme, make_study
from tests.builders import default_team, make_user

pytestmark = pytest.mark.django_db

ANNOTATOR_MODELS = [model for model in admin.site._registry if model._meta.app_label == "annotator"]
NOW = timezone.now()



@pytest.fixture
def admin_client(client):
    client.force_login(make_user(superuser=True))
    return client


@pytest.fixture
def data():
    """A study with a submitted annotation holding an answer and a span with an attribute."""
    scheme = make_scheme(name="Admin scheme")
    spans = Question.objects.create(
        scheme=scheme, key="spans", position=1, kind=Question.Kind.SPAN, prompt="Mark spans.", required=False,
        options={"labels": ["error", "competency"], "attributes": ["emotions"]},
    )
    study = make_study(scheme=scheme, items=2, gold=1, annotators=1, title="Pilot study")
    item = study.items.first()
    assignment = Assignment.objects.create(
        item=item, annotator=study.annotators.first(), status=Assignment.Status.SUBMITTED, claimed_at=NOW,
        lease_expires_at=NOW + timedelta(hours=1), submitted_at=NOW, seconds_spent=40,
    )
    annotation = Annotation.objects.create(
        assignment=assignment, scheme=scheme, status=Annotation.Status.SUBMITTED, submitted_at=NOW
    )
    Answer.objects.create(annotation=annotation, question=scheme.questions.get(key="barrier"), value="semantic",
                          rationale="Vague words throughout.")
    span = Span.objects.create(annotation=annotation, question=spans, label="error", start_turn=0, end_turn=1,
                               rationale="Ignored the tears.", correction="Ask what is wrong.")
    span.attributes.set(SocialAttribute.objects.filter(key="emotions"))
    schemes.freeze(scheme)
    ReportBundle.objects.create(study=study, annotations=1)
    return study


def admin_url(model, action: str, *args) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{action}", args=args)


def test_every_annotator_model_has_an_admin():
    assert {model.__name__ for model in ANNOTATOR_MODELS} == {
        "Scheme", "Question", "Study", "Membership", "StudyItem", "ItemKey", "Assignment", "Annotation", "Answer",
        "Span", "SocialAttribute", "ReportBundle",
    }


@pytest.mark.parametrize("model", ANNOTATOR_MODELS, ids=lambda model: model.__name__)
def test_changelist_and_change_pages_open(admin_client, data, model):
    obj = model.objects.first()

    for url in [admin_url(model, "changelist"), admin_url(model, "change", obj.pk)]:
        assert admin_client.get(url).status_code == 200, url


@pytest.mark.parametrize("model", ANNOTATOR_MODELS, ids=lambda model: model.__name__)
def test_add_pages_open_where_adding_is_allowed(admin_client, data, model):
    expected = 403 if model in (Annotation, Answer, Span, ReportBundle) else 200

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


def test_a_frozen_schemes_questions_are_read_only(admin_client, data):
    response = admin_client.get(admin_url(Scheme, "change", data.scheme.pk))

    assert response.status_code == 200
    assert 'name="questions-0-prompt"' not in response.text
    assert 'name="name"' not in response.text
    assert "Which communication barrier" in response.text  # shown, not editable


def test_a_frozen_question_cannot_be_changed_on_its_own_page(admin_client, data):
    question = data.scheme.questions.get(key="barrier")

    response = admin_client.post(admin_url(Question, "change", question.pk), {"prompt": "Changed?"})

    assert response.status_code == 403
    question.refresh_from_db()
    assert question.prompt != "Changed?"


def test_an_editable_schemes_questions_are_editable(admin_client):
    scheme = make_scheme()

    response = admin_client.get(admin_url(Scheme, "change", scheme.pk))

    assert 'name="questions-0-prompt"' in response.text


def test_bad_question_options_are_refused_with_a_message(admin_client):
    scheme = make_scheme()
    question = scheme.questions.get()
    data = {
        "name": scheme.name, "preset": "", "version": "1", "description": "",
        "questions-TOTAL_FORMS": "1", "questions-INITIAL_FORMS": "1", "questions-MIN_NUM_FORMS": "0",
        "questions-MAX_NUM_FORMS": "1000",
        "questions-0-id": str(question.pk), "questions-0-scheme": str(scheme.pk), "questions-0-key": "barrier",
        "questions-0-position": "0", "questions-0-kind": "likert", "questions-0-prompt": "How much?",
        "questions-0-help_text": "", "questions-0-required": "on", "questions-0-rationale": "none",
        "questions-0-options": '{"anchors": [{"value": 1, "label": "low"}]}', "questions-0-dimension": "",
        "questions-0-truth": "",
    }

    response = admin_client.post(admin_url(Scheme, "change", scheme.pk), data)

    assert response.status_code == 200
    assert "options.anchors" in response.text
    question.refresh_from_db()
    assert question.kind == "categorical"


def test_copy_as_new_version_makes_an_editable_copy(admin_client, data):
    scheme = data.scheme

    response = admin_client.post(
        admin_url(Scheme, "changelist"), {"action": "copy_as_new_version", "_selected_action": [scheme.pk]},
        follow=True,
    )

    copy = Scheme.objects.get(name=scheme.name, version=scheme.version + 1)
    assert not copy.frozen
    assert list(copy.questions.values_list("key", flat=True)) == ["barrier", "spans"]
    assert str(copy) in response.text


def test_annotations_are_shown_with_answers_and_spans_but_not_editable(admin_client, data):
    annotation = Annotation.objects.get()

    response = admin_client.get(admin_url(Annotation, "change", annotation.pk))

    assert "Vague words throughout." in response.text
    assert "Ignored the tears." in response.text and "Emotions" in response.text
    assert 'name="answers-0-value"' not in response.text
    assert 'name="_save"' not in response.text
    assert admin_client.post(admin_url(Annotation, "delete", annotation.pk), {"post": "yes"}).status_code == 403
    assert Annotation.objects.exists()


def test_a_study_made_in_the_admin_belongs_to_its_maker(client):
    maker = make_user(superuser=True)
    client.force_login(maker)
    scheme = make_scheme()

    response = client.post(admin_url(Study, "add"), {
        "team": default_team().pk, "title": "From the admin", "slug": "from-the-admin", "scheme": scheme.pk,
        "instructions": "Read.",
        "overlap": "2", "lease_minutes": "60", "min_seconds_per_item": "30", "seed": "0", "is_open": "on",
        "memberships-TOTAL_FORMS": "0", "memberships-INITIAL_FORMS": "0", "memberships-MIN_NUM_FORMS": "0",
        "memberships-MAX_NUM_FORMS": "1000",
    })

    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else ""
    assert Study.objects.get(slug="from-the-admin").created_by == maker
