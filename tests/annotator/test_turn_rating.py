"""Rating single turns (issue 22): the "Rate each reply" preset asks its questions of every agent turn.

The item page shows the questions beside each agent turn; the answers are stored with a turn
target (``benchmark.instruments.targets``); the agreement report's unit is (item, turn); the
export gives each answer's turn.
"""

import re

import pytest
from django.urls import reverse

from annotator import drafts
from annotator.exports import records
from annotator.item_page import ItemPage
from annotator.models import Annotation, Assignment
from annotator.reports import build_report
from benchmark.instruments.presets import TURN_RATING_PRESET, install_preset
from benchmark.instruments.targets import Target
from benchmark.models import ActionType, Answer
from tests.annotator.builders import make_study
from tests.builders import make_episode

pytestmark = pytest.mark.django_db

TURNS = [
    (ActionType.SPEAK, "Hi! Is now a good time to talk about the rent?"),
    (ActionType.SPEAK, "Sure, go ahead."),
    (ActionType.NONE, ""),  # did nothing: no reply to rate
    (ActionType.SPEAK, "Could I pay my half next Friday?"),
]
AGENT_TURNS = (0, 1, 3)


@pytest.fixture
def study():
    return make_study(instrument=install_preset(TURN_RATING_PRESET), items=[make_episode(turns=TURNS)
                                                                            for _ in range(2)],
                      overlap=2, annotators=2)


def assignment_of(study, annotator, position=0):
    item = study.items.get(position=position)
    return Assignment.objects.create(item=item, annotator=annotator, claimed_at="2025-01-01T00:00:00Z",
                                     lease_expires_at="2999-01-01T00:00:00Z")


def ratings(numbers, comments=None):
    """The posted form: ``numbers`` (and ``comments``) by turn index."""
    data = {f"answer-helpfulness-t{turn}": str(number) for turn, number in numbers.items()}
    data.update({f"answer-comment-t{turn}": text for turn, text in (comments or {}).items()})
    return data


def submit(assignment, data):
    page = ItemPage(assignment)
    return drafts.submit(assignment, page.parse(data, complete=True), revision=0, seconds=30)


def test_the_preset_asks_helpfulness_and_a_comment_of_each_turn():
    questions = list(install_preset(TURN_RATING_PRESET).questions.order_by("position"))

    assert [(q.key, q.kind, q.scope, q.required) for q in questions] == [
        ("helpfulness", "likert", "turn", True), ("comment", "text", "turn", False)]
    assert (questions[0].low, questions[0].high) == (1, 5)
    assert all(anchor["description"] for anchor in questions[0].options["anchors"])


def test_the_item_page_shows_the_rating_beside_each_agent_turn(client, study):
    annotator = study.annotators.first()
    assignment = assignment_of(study, annotator)
    client.force_login(annotator)

    page = client.get(reverse("annotator:item", args=[assignment.pk])).text

    for turn in AGENT_TURNS:
        assert re.search(rf'<input type="radio" form="annotation-form" name="answer-helpfulness-t{turn}" value="5"',
                         page)
        assert f'name="answer-comment-t{turn}"' in page
    assert "answer-helpfulness-t2" not in page  # "did nothing" is no reply
    transcript = page[page.index('class="transcript'):page.index("</ol>")]
    assert transcript.count("data-turn-rating") == len(AGENT_TURNS)  # beside the turns, not in the form's list
    assert "Very helpful" in page and "Rate each reply" in page


def test_autosave_and_submit_store_each_answer_with_its_turn(client, study):
    annotator = study.annotators.first()
    assignment = assignment_of(study, annotator)
    client.force_login(annotator)

    draft = client.post(reverse("annotator:draft", args=[assignment.pk]),
                        {**ratings({0: 4}, {1: "A bit curt."}), "revision": "0"}, headers={"HX-Request": "true"})
    assert draft.status_code == 200
    annotation = Annotation.objects.get(assignment=assignment)
    stored = {(a.question.key, Target.of(a)): a.value for a in annotation.response.answers.all()}
    assert stored == {("helpfulness", Target.of_turn(0)): "4", ("comment", Target.of_turn(1)): "A bit curt."}

    missing = client.post(reverse("annotator:submit", args=[assignment.pk]),
                          {**ratings({0: 4, 1: 2}), "revision": "1"}, follow=True)
    assert "turn 4" in missing.text  # the reply left unrated is named
    client.post(reverse("annotator:submit", args=[assignment.pk]), {**ratings({0: 4, 1: 2, 3: 5}), "revision": "2"})

    annotation = Annotation.objects.get(assignment=assignment, status=Annotation.Status.SUBMITTED)
    answers = annotation.response.answers.filter(question__key="helpfulness")
    assert {Target.of(a): a.number for a in answers} == {
        Target.of_turn(0): 4, Target.of_turn(1): 2, Target.of_turn(3): 5}


def test_the_report_measures_agreement_per_item_and_turn(study):
    first, second = study.annotators.order_by("pk")
    for position in (0, 1):
        submit(assignment_of(study, first, position), ratings({0: 4, 1: 2, 3: 5}))
        submit(assignment_of(study, second, position), ratings({0: 5, 1: 2, 3: 4}, {3: "Polite."}))

    report = build_report(study, resamples=50)

    helpfulness = report["questions"]["helpfulness"]
    assert helpfulness["question"]["unit"] == "item:turn"
    assert helpfulness["n_items"] == 2 * len(AGENT_TURNS)  # each (item, turn) is a unit
    assert helpfulness["n_ratings"] == 2 * 2 * len(AGENT_TURNS)
    assert helpfulness["icc"]["icc1"] is not None


def test_the_export_gives_each_answer_its_turn(study):
    first = study.annotators.first()
    submit(assignment_of(study, first), ratings({0: 4, 1: 2, 3: 5}, {3: "Polite."}))

    rows = [row for row in records(study) if row["row_type"] == "answer"]

    assert [(row["question"], row["start_turn"], row["end_turn"], row["value"]) for row in rows] == [
        ("helpfulness", 0, 0, "4"), ("helpfulness", 1, 1, "2"), ("helpfulness", 3, 3, "5"),
        ("comment", 3, 3, "Polite."),
    ]
    assert all(row["seat"] is None and row["start_char"] is None for row in rows)
    assert Answer.objects.filter(turn__isnull=False).count() == 4
