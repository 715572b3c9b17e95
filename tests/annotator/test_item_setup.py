"""A researcher sets an item up: its kind, the training explanation, and known answers per question and seat."""

import pytest
from django.urls import reverse
from django.utils import timezone

from annotator.models import Assignment, ItemKey, StudyEvent
from benchmark.models import Question
from tests.annotator.builders import make_instrument, make_question, make_study
from tests.builders import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    """An instrument with the episode-level ``barrier`` choice, a per-seat Likert, and a free-text question."""
    instrument = make_instrument()
    make_question(instrument=instrument, key="warmth", position=1, kind=Question.Kind.LIKERT, scope="seat",
                  prompt="How warm was this character?",
                  options={"anchors": [{"value": v, "label": str(v), "description": ""} for v in range(1, 6)]})
    make_question(instrument=instrument, key="notes", position=2, kind=Question.Kind.TEXT, prompt="Notes",
                  required=False)
    make_question(instrument=instrument, key="goal", position=3, kind="slider", prompt="How far did they get?",
                  options={"min": 0, "max": 100, "step": 1})
    return make_study(instrument=instrument, items=2)


@pytest.fixture
def researcher(client):
    user = make_user(staff=True)
    client.force_login(user)
    return user


def url(study, item):
    return reverse("annotator:item-setup", args=[study.slug, item.pk])


def fields_of(study):
    barrier, warmth, _, _ = study.instrument.questions.order_by("position")
    return barrier, warmth


def test_the_page_asks_a_known_answer_per_question_and_per_seat_and_none_for_free_text(client, study, researcher):
    item = study.items.first()

    page = client.get(url(study, item))

    barrier, warmth = fields_of(study)
    assert page.status_code == 200
    assert f'name="key_{barrier.pk}_all"' in page.text
    assert f'name="key_{warmth.pk}_0"' in page.text and f'name="key_{warmth.pk}_1"' in page.text
    assert f'name="tolerance_{warmth.pk}_0"' in page.text
    assert "Notes" not in page.text


def test_a_training_item_is_saved_with_its_explanation_and_known_answers(client, study, researcher):
    item = study.items.first()
    barrier, warmth = fields_of(study)

    response = client.post(url(study, item), {
        "kind": "training", "explanation": "No barrier: both speak plainly.",
        f"key_{barrier.pk}_all": "none", f"key_{warmth.pk}_1": "4", f"tolerance_{warmth.pk}_1": "1",
    })

    assert response.status_code == 302
    item.refresh_from_db()
    assert (item.kind, item.explanation) == ("training", "No barrier: both speak plainly.")
    keys = sorted(ItemKey.objects.filter(item=item).values_list("question__key", "seat_position", "value",
                                                                 "tolerance"), key=str)
    assert keys == [("barrier", None, "none", 0.0), ("warmth", 1, "4", 1.0)]
    event = StudyEvent.objects.get(action="item-setup")
    assert event.actor == researcher and "training" in event.detail


def test_a_known_answer_the_question_does_not_allow_is_refused_on_its_field(client, study, researcher):
    item = study.items.first()
    goal = study.instrument.questions.get(key="goal")

    response = client.post(url(study, item), {"kind": "qualification", f"key_{goal.pk}_all": "150"})

    assert response.status_code == 400
    assert "“150” is not an answer this question allows" in response.text
    assert not ItemKey.objects.exists()
    item.refresh_from_db()
    assert item.kind == "regular"


def test_a_point_off_the_scale_is_refused(client, study, researcher):
    _, warmth = fields_of(study)

    response = client.post(url(study, study.items.first()), {"kind": "gold", f"key_{warmth.pk}_0": "9"})

    assert response.status_code == 400
    assert "Select a valid choice" in response.text


def test_a_choice_that_is_not_offered_is_refused(client, study, researcher):
    barrier, _ = fields_of(study)

    response = client.post(url(study, study.items.first()), {"kind": "gold", f"key_{barrier.pk}_all": "sarcastic"})

    assert response.status_code == 400
    assert "Select a valid choice" in response.text


def test_a_checked_item_needs_a_known_answer(client, study, researcher):
    response = client.post(url(study, study.items.first()), {"kind": "qualification"})

    assert response.status_code == 400
    assert "needs at least one known answer" in response.text


def test_an_attention_item_needs_its_instruction(client, study, researcher):
    barrier, _ = fields_of(study)

    response = client.post(url(study, study.items.first()), {"kind": "attention", f"key_{barrier.pk}_all": "none"})

    assert response.status_code == 400
    assert "An attention check needs the instruction" in response.text


def test_the_kind_of_an_item_someone_claimed_cannot_change(client, study, researcher):
    item = study.items.first()
    now = timezone.now()
    Assignment.objects.create(item=item, annotator=make_user(), claimed_at=now, lease_expires_at=now)
    barrier, _ = fields_of(study)

    page = client.get(url(study, item))
    client.post(url(study, item), {"kind": "training", "explanation": "Why.", f"key_{barrier.pk}_all": "none"})

    assert "The kind cannot change" in page.text
    item.refresh_from_db()
    assert item.kind == "regular" and item.explanation == "Why."  # the explanation still changes
