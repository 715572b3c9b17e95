"""The item page asks yes/no, multiple-choice and multi-label questions, and keeps a correct answer to itself."""

import pytest
from django.urls import reverse

from annotator.models import Annotation, Assignment, Membership
from benchmark.models import Answer, Instrument, Question
from tests.annotator.builders import make_question, make_study
from tests.builders import make_user

pytestmark = pytest.mark.django_db

PLANTED_CORRECT = "planted-correct-choice"
TONES = {"choices": [{"value": v, "label": f"Sounds {v}"} for v in ("warm", "curt", "vague")], "max": 2}


@pytest.fixture
def annotator():
    return make_user(username="annotator-a")


@pytest.fixture
def assignment(annotator):
    instrument = Instrument.objects.create(name="New kinds")
    make_question(instrument=instrument, key="agreed", position=0, kind=Question.Kind.YES_NO,
                  prompt="Did they agree?")
    make_question(instrument=instrument, key="guess", position=1, kind=Question.Kind.MULTIPLE_CHOICE,
                  prompt="What did the first speaker want?", options={
                      "choices": [{"value": PLANTED_CORRECT, "label": "More time"}, {"value": "money",
                                                                                     "label": "Money"}],
                      "correct": PLANTED_CORRECT,
                  })
    make_question(instrument=instrument, key="tone", position=2, kind=Question.Kind.MULTI_LABEL,
                  prompt="How did this character sound?", options=TONES, scope="seat", required=False)
    study = make_study(instrument=instrument, items=1, overlap=1, annotators=[annotator])
    Membership.objects.filter(study=study).update(instructions_read_at="2025-01-01T00:00:00Z")
    return Assignment.objects.create(item=study.items.get(), annotator=annotator, claimed_at="2025-01-01T00:00:00Z",
                                     lease_expires_at="2999-01-01T00:00:00Z")


def test_the_new_kinds_are_asked_with_radios_and_checkboxes(client, annotator, assignment):
    client.force_login(annotator)

    page = client.get(reverse("annotator:item", args=[assignment.pk])).text

    assert 'type="radio" name="answer-agreed" value="yes"' in page and 'value="no"' in page
    assert 'type="radio" name="answer-guess"' in page and "More time" in page
    assert page.count('type="checkbox" name="answer-tone-0"') == 3 and "Sounds vague" in page


def test_a_multiple_choice_questions_correct_answer_never_reaches_the_page(client, annotator, assignment):
    client.force_login(annotator)

    response = client.get(reverse("annotator:item", args=[assignment.pk]))

    entries = [entry for section in response.context["sections"] for entry in section.entries]
    guess = next(entry for entry in entries if entry.question.key == "guess")
    assert "correct" not in guess.question.options
    assert response.text.count(PLANTED_CORRECT) == 1  # only as the value of its radio button, unmarked


def test_picked_labels_are_saved_one_row_each_and_shown_ticked_again(client, annotator, assignment):
    client.force_login(annotator)
    data = {"answer-agreed": "no", "answer-tone-0": ["curt", "warm"], "revision": "0"}

    assert client.post(reverse("annotator:draft", args=[assignment.pk]), data).status_code == 200

    annotation = Annotation.objects.get(assignment=assignment)
    assert sorted(annotation.response.answers.filter(question__key="tone").values_list("value", flat=True)) == [
        "curt", "warm"
    ]
    page = client.get(reverse("annotator:item", args=[assignment.pk])).text
    assert page.count("checked") == 3  # "no", and the two labels


def test_a_submit_with_too_many_labels_names_the_limit_and_stores_nothing_final(client, annotator, assignment):
    client.force_login(annotator)
    data = {"answer-agreed": "yes", "answer-guess": "money", "answer-tone-1": ["curt", "warm", "vague"],
            "revision": "0"}

    response = client.post(reverse("annotator:submit", args=[assignment.pk]), data, follow=True)

    assert "pick at most 2 of: Sounds warm, Sounds curt, Sounds vague." in response.text
    assert not Annotation.objects.filter(assignment=assignment, status="submitted").exists()


def test_a_complete_submit_stores_every_kind(client, annotator, assignment):
    client.force_login(annotator)
    data = {"answer-agreed": "yes", "answer-guess": "money", "answer-tone-1": ["vague"], "revision": "0"}

    assert client.post(reverse("annotator:submit", args=[assignment.pk]), data).status_code == 302

    rows = Answer.objects.filter(response__annotation__assignment=assignment, response__status="submitted")
    assert sorted(rows.values_list("question__key", "seat_position", "value")) == [
        ("agreed", None, "yes"), ("guess", None, "money"), ("tone", 1, "vague"),
    ]


def test_an_autosave_keeps_the_row_of_a_label_still_picked_and_reuses_the_unpicked_ones(client, annotator, assignment):
    client.force_login(annotator)
    url = reverse("annotator:draft", args=[assignment.pk])
    client.post(url, {"answer-agreed": "no", "answer-tone-0": ["curt", "warm"], "revision": "0"})
    tone = Answer.objects.filter(response__annotation__assignment=assignment, question__key="tone")
    before = dict(tone.values_list("value", "pk"))
    agreed = Answer.objects.get(response__annotation__assignment=assignment, question__key="agreed").pk

    client.post(url, {"answer-agreed": "no", "answer-tone-0": ["warm", "vague"], "answer-tone-1": ["curt"],
                      "revision": "1"})

    after = dict(tone.filter(seat_position=0).values_list("value", "pk"))
    assert after == {"warm": before["warm"], "vague": before["curt"]}  # curt's row now says vague
    assert tone.get(seat_position=1).value == "curt"
    assert Answer.objects.filter(response__annotation__assignment=assignment, question__key="agreed").get().pk == agreed
