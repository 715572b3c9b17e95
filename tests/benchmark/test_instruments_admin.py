"""The instruments' admin: pages open for every model, frozen instruments stay frozen, answers stay as given."""

import json

import pytest
from django.contrib import admin
from django.urls import reverse

from benchmark.instruments import admin as instruments_admin
from benchmark.models import Answer, Instrument, Question, Response
from tests.annotator.builders import make_instrument
from tests.annotator.test_admin import annotated_study
from tests.builders import default_team, make_user

pytestmark = pytest.mark.django_db

INSTRUMENT_MODELS = [
    model for model, model_admin in admin.site._registry.items()
    if type(model_admin).__module__ == instruments_admin.__name__
]
READ_ONLY = (Answer,)


@pytest.fixture
def admin_client(client):
    client.force_login(make_user(superuser=True))
    return client


@pytest.fixture
def data():
    return annotated_study()


def admin_url(model, action: str, *args) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{action}", args=args)


def test_instruments_questions_and_answers_have_an_admin():
    assert {model.__name__ for model in INSTRUMENT_MODELS} == {
        "Instrument", "Question", "SocialAttribute", "Answer",
    }


@pytest.mark.parametrize("model", INSTRUMENT_MODELS, ids=lambda model: model.__name__)
def test_changelist_change_and_add_pages_open(admin_client, data, model):
    obj = model.objects.first()

    for url in [admin_url(model, "changelist"), admin_url(model, "change", obj.pk)]:
        assert admin_client.get(url).status_code == 200, url
    assert admin_client.get(admin_url(model, "add")).status_code == (403 if model in READ_ONLY else 200)


@pytest.mark.parametrize("model", INSTRUMENT_MODELS, ids=lambda model: model.__name__)
def test_searches_and_every_filter_open(admin_client, data, model):
    url = admin_url(model, "changelist")

    assert admin_client.get(url, {"q": "pilot"}).status_code == 200
    response = admin_client.get(url)
    for spec in response.context["cl"].filter_specs:
        for choice in spec.choices(response.context["cl"]):
            assert admin_client.get(url + choice["query_string"]).status_code == 200, choice["query_string"]


@pytest.mark.parametrize("model", INSTRUMENT_MODELS, ids=lambda model: model.__name__)
def test_changelists_take_a_fixed_number_of_queries(admin_client, data, model, django_assert_max_num_queries):
    with django_assert_max_num_queries(14):
        assert admin_client.get(admin_url(model, "changelist")).status_code == 200


def test_answers_are_listed_but_not_changed_here(admin_client, data):
    answer = Answer.objects.get()

    assert "Vague words throughout." in admin_client.get(admin_url(Response, "change", answer.response_id)).text
    assert 'name="_save"' not in admin_client.get(admin_url(Answer, "change", answer.pk)).text
    assert admin_client.post(admin_url(Answer, "delete", answer.pk), {"post": "yes"}).status_code == 403


def test_a_frozen_instruments_questions_are_read_only(admin_client, data):
    response = admin_client.get(admin_url(Instrument, "change", data.instrument.pk))

    assert response.status_code == 200
    assert 'name="questions-0-prompt"' not in response.text
    assert 'name="name"' not in response.text
    assert "Which communication barrier" in response.text  # shown, not editable


def test_a_frozen_question_cannot_be_changed_on_its_own_page(admin_client, data):
    question = data.instrument.questions.get(key="barrier")

    response = admin_client.post(admin_url(Question, "change", question.pk), {"prompt": "Changed?"})

    assert response.status_code == 403
    question.refresh_from_db()
    assert question.prompt != "Changed?"


def test_an_editable_instruments_questions_are_editable(admin_client):
    instrument = make_instrument()

    response = admin_client.get(admin_url(Instrument, "change", instrument.pk))

    assert 'name="questions-0-prompt"' in response.text


def test_bad_question_options_are_refused_with_a_message(admin_client):
    instrument = make_instrument()
    question = instrument.questions.get()
    data = {
        "name": instrument.name, "preset": "", "version": "1", "description": "",
        "questions-TOTAL_FORMS": "1", "questions-INITIAL_FORMS": "1", "questions-MIN_NUM_FORMS": "0",
        "questions-MAX_NUM_FORMS": "1000",
        "questions-0-id": str(question.pk), "questions-0-instrument": str(instrument.pk), "questions-0-key": "barrier",
        "questions-0-position": "0", "questions-0-kind": "likert", "questions-0-prompt": "How much?",
        "questions-0-help_text": "", "questions-0-required": "on", "questions-0-scope": "episode",
        "questions-0-rationale": "none",
        "questions-0-options": '{"anchors": [{"value": 1, "label": "low"}]}', "questions-0-dimension": "",
        "questions-0-truth": "",
    }

    response = admin_client.post(admin_url(Instrument, "change", instrument.pk), data)

    assert response.status_code == 200
    assert "options.anchors" in response.text
    question.refresh_from_db()
    assert question.kind == "categorical"


def test_copy_as_new_version_makes_an_editable_copy(admin_client, data):
    instrument = data.instrument

    response = admin_client.post(
        admin_url(Instrument, "changelist"), {"action": "copy_as_new_version", "_selected_action": [instrument.pk]},
        follow=True,
    )

    copy = Instrument.objects.get(name=instrument.name, version=instrument.version + 1)
    assert not copy.frozen
    assert list(copy.questions.values_list("key", flat=True)) == ["barrier", "spans"]
    assert str(copy) in response.text


def test_a_numeric_question_saved_in_the_admin_gets_its_bounds_from_its_options(admin_client):
    instrument = make_instrument()
    question = instrument.questions.get()
    anchors = [{"value": v, "label": f"L{v}", "description": f"Level {v}."} for v in range(1, 6)]
    data = {
        "name": instrument.name, "team": "", "preset": "", "version": "1", "description": "",
        "questions-TOTAL_FORMS": "1", "questions-INITIAL_FORMS": "1", "questions-MIN_NUM_FORMS": "0",
        "questions-MAX_NUM_FORMS": "1000",
        "questions-0-id": str(question.pk), "questions-0-instrument": str(instrument.pk), "questions-0-key": "barrier",
        "questions-0-position": "0", "questions-0-kind": "likert", "questions-0-prompt": "How much?",
        "questions-0-help_text": "", "questions-0-required": "on", "questions-0-scope": "episode",
        "questions-0-rationale": "none", "questions-0-options": json.dumps({"anchors": anchors}),
        "questions-0-dimension": "", "questions-0-truth": "",
    }

    response = admin_client.post(admin_url(Instrument, "change", instrument.pk), data)

    assert response.status_code == 302, response.context["inline_admin_formsets"][0].formset.errors
    question.refresh_from_db()
    assert (question.kind, question.low, question.high) == ("likert", 1, 5)


def test_an_instrument_made_in_the_admin_can_belong_to_a_team(admin_client):
    response = admin_client.post(admin_url(Instrument, "add"), {
        "name": "Our own", "team": default_team().pk, "preset": "", "version": "1", "description": "",
        "questions-TOTAL_FORMS": "0", "questions-INITIAL_FORMS": "0", "questions-MIN_NUM_FORMS": "0",
        "questions-MAX_NUM_FORMS": "1000",
    })

    assert response.status_code == 302
    assert Instrument.objects.get(name="Our own").team == default_team()
