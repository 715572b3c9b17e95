"""Quality control: accuracy on gold items, attention checks, and submissions that were too fast."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotator.models import Annotation, Assignment, ItemKey
from annotator.quality import AnnotatorQuality, KnownAnswer, matches, study_quality
from benchmark.models import Question
from tests.annotator.builders import add_answer, make_annotation, make_instrument, make_question, make_study
from tests.builders import make_user

pytestmark = pytest.mark.django_db


NOW = timezone.now()


def annotate(item, annotator, answers, *, version=1, status=Annotation.Status.SUBMITTED, seconds=90):
    """An annotation version with ``answers`` {question: value}; numbers are stored for numeric values."""
    assignment, _ = Assignment.objects.get_or_create(
        item=item, annotator=annotator,
        defaults={
            "status": Assignment.Status.SUBMITTED, "claimed_at": NOW, "lease_expires_at": NOW + timedelta(hours=1),
            "submitted_at": NOW, "seconds_spent": seconds,
        },
    )
    annotation = make_annotation(
        assignment, version=version, status=status,
        submitted_at=NOW if status == Annotation.Status.SUBMITTED else None,
    )
    for question, value in answers.items():
        number = float(value) if value.lstrip("-").replace(".", "", 1).isdigit() else None
        add_answer(annotation, question, value, number=number)
    return annotation


@pytest.fixture
def study():
    """Gold items keyed 'none' on ``barrier`` and 3 ± 1 on ``confusion``; attention items keyed 'none'."""
    instrument = make_instrument()
    confusion = make_question(
        instrument=instrument, key="confusion", position=1, kind=Question.Kind.LIKERT, prompt="How much confusion?",
        options={"anchors": [{"value": v, "label": str(v), "description": ""} for v in range(1, 6)]},
    )
    study = make_study(instrument=instrument, items=2, gold=2, attention=2, min_seconds_per_item=30)
    for item in study.items.filter(kind="gold"):
        ItemKey.objects.create(item=item, question=confusion, value="3", tolerance=1)
    return study


def parts(study):
    barrier, confusion = study.instrument.questions.order_by("position")
    gold = list(study.items.filter(kind="gold").order_by("position"))
    attention = list(study.items.filter(kind="attention").order_by("position"))
    regular = list(study.items.filter(kind="regular").order_by("position"))
    return barrier, confusion, gold, attention, regular


def test_gold_accuracy_is_the_share_of_known_answers_matched(study):
    barrier, confusion, gold, _, _ = parts(study)
    annotator = make_user()
    annotate(gold[0], annotator, {barrier: "none", confusion: "4"})  # both right (4 is within 3 ± 1)
    annotate(gold[1], annotator, {barrier: "semantic", confusion: "5"})  # both wrong

    figures = study_quality(study)[annotator.pk]

    assert (figures.gold_correct, figures.gold_checked) == (2, 4)
    assert figures.gold_accuracy == 0.5


def test_an_unanswered_known_question_counts_as_a_miss(study):
    barrier, _, gold, _, _ = parts(study)
    annotator = make_user()
    annotate(gold[0], annotator, {barrier: "none"})

    figures = study_quality(study)[annotator.pk]

    assert (figures.gold_correct, figures.gold_checked) == (1, 2)


def test_attention_checks_pass_only_when_every_key_matches(study):
    barrier, _, _, attention, _ = parts(study)
    careful, careless = make_user(), make_user()
    for item in attention:
        annotate(item, careful, {barrier: "none"})
    annotate(attention[0], careless, {barrier: "none"})
    annotate(attention[1], careless, {barrier: "emotional"})

    quality = study_quality(study)

    assert (quality[careful.pk].attention_passed, quality[careful.pk].attention_failed) == (2, 0)
    assert (quality[careless.pk].attention_passed, quality[careless.pk].attention_failed) == (1, 1)
    assert quality[careful.pk].gold_accuracy is None


def test_only_the_latest_submitted_version_counts(study):
    barrier, _, _, attention, _ = parts(study)
    annotator = make_user()
    annotate(attention[0], annotator, {barrier: "semantic"}, version=1)
    annotate(attention[0], annotator, {barrier: "none"}, version=2)
    annotate(attention[0], annotator, {barrier: "emotional"}, version=3, status=Annotation.Status.DRAFT)

    figures = study_quality(study)[annotator.pk]

    assert (figures.attention_passed, figures.attention_failed) == (1, 0)


def test_submissions_faster_than_the_minimum_are_flagged(study):
    barrier, _, _, _, regular = parts(study)
    hasty, steady = make_user(), make_user()
    annotate(regular[0], hasty, {barrier: "none"}, seconds=5)
    annotate(regular[1], hasty, {barrier: "none"}, seconds=29)
    annotate(regular[0], steady, {barrier: "none"}, seconds=30)

    quality = study_quality(study)

    assert quality[hasty.pk].fast_submissions == 2
    assert steady.pk not in quality  # nothing to report: no quality items, nothing fast


def test_claims_in_progress_are_not_flagged(study):
    _, _, _, _, regular = parts(study)
    annotator = make_user()
    Assignment.objects.create(item=regular[0], annotator=annotator, claimed_at=NOW,
                              lease_expires_at=NOW + timedelta(hours=1), seconds_spent=2)

    assert study_quality(study) == {}


def test_other_studies_do_not_count(study):
    other = make_study(gold=1)
    annotator = make_user()
    annotate(other.items.get(kind="gold"), annotator, {other.instrument.questions.first(): "semantic"}, seconds=1)

    assert study_quality(study) == {}


def test_the_figures_take_a_fixed_number_of_queries(study, django_assert_max_num_queries):
    barrier, confusion, gold, attention, regular = parts(study)
    for _ in range(5):
        annotator = make_user()
        for item in gold:
            annotate(item, annotator, {barrier: "none", confusion: "3"})
        for item in attention:
            annotate(item, annotator, {barrier: "none"}, seconds=3)

    with django_assert_max_num_queries(4):
        quality = study_quality(study)

    assert len(quality) == 5
    assert all(figures.gold_accuracy == 1 and figures.attention_passed == 2 for figures in quality.values())
    assert all(figures.fast_submissions == 2 for figures in quality.values())


@pytest.mark.parametrize(
    ("key", "value", "number", "expected"),
    [
        (KnownAnswer("3", 0), "3", 3.0, True),
        (KnownAnswer("3", 0), "4", 4.0, False),
        (KnownAnswer("3", 0.5), "3.5", 3.5, True),
        (KnownAnswer("3", 0.5), "2.4", 2.4, False),
        (KnownAnswer("none", 0), "none", None, True),
        (KnownAnswer("none", 0), " none ", None, True),
        (KnownAnswer("none", 0), "None", None, False),
        (KnownAnswer("yes", 0), "7", 7.0, False),
    ],
)
def test_matching_known_answers(key, value, number, expected):
    assert matches(key, value, number) is expected


def test_no_gold_answers_means_no_accuracy():
    assert AnnotatorQuality().gold_accuracy is None
