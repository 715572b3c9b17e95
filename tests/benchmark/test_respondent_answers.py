"""Every respondent's answers about some episodes, through one reader, by question or dimension and kind."""

import pytest

from benchmark.instruments.answers import respondent_answers
from benchmark.models import Answer, Instrument, Respondent, Response
from tests.annotator.builders import make_question
from tests.builders import make_episode

pytestmark = pytest.mark.django_db

ANCHORS = {"anchors": [{"value": v, "label": str(v), "description": f"{v} of 5"} for v in range(1, 6)]}


def likert(name, key, dimension=""):
    instrument = Instrument.objects.create(name=name)
    return make_question(instrument=instrument, key=key, position=0, kind="likert", prompt="?", options=ANCHORS,
                         dimension=dimension)


def answer(question, episode, kind, name, number, status=Response.Status.SUBMITTED):
    field = "model" if kind in ("judge", "agent") else "label"
    who, _ = Respondent.objects.get_or_create(kind=kind, **{field: name})
    response = Response.objects.create(instrument=question.instrument, episode=episode, respondent=who, status=status)
    return Answer.objects.create(response=response, question=question, value=f"{number}", number=number)


def test_answers_to_the_same_question_or_dimension_are_read_and_nothing_else():
    episode = make_episode()
    asked = likert("Study", "confusion", "unresolved_confusion")
    rubric = likert("Rubric", "left", "unresolved_confusion")
    unrelated = likert("Other", "mood")
    answer(asked, episode, "judge", "same-question", 2)
    answer(rubric, episode, "judge", "same-dimension", 3)
    answer(unrelated, episode, "judge", "unrelated", 4)
    answer(rubric, make_episode(), "judge", "another-episode", 5)

    rows = respondent_answers([episode.pk], [asked])

    assert sorted((row.respondent, row.number) for row in rows) == [("same-dimension", 3), ("same-question", 2)]


def test_only_submitted_answers_of_the_kinds_asked_for_count():
    episode = make_episode()
    question = likert("Study", "confusion", "unresolved_confusion")
    answer(question, episode, "judge", "final", 2)
    answer(question, episode, "judge", "draft", 3, status=Response.Status.DRAFT)
    answer(question, episode, "judge", "old", 4, status=Response.Status.SUPERSEDED)
    answer(question, episode, "agent", "self-view", 5)

    judges = respondent_answers([episode.pk], [question])
    everyone = respondent_answers([episode.pk], [question], kinds=["judge", "agent"])

    assert [row.respondent for row in judges] == ["final"]
    assert sorted(row.respondent_kind for row in everyone) == ["agent", "judge"]


def test_an_unknown_respondent_kind_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown respondent kind oracle"):
        respondent_answers([], [], kinds=["judge", "oracle"])
