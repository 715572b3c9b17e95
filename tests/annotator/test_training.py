"""Training then qualification before regular work: the order, the feedback, the score, the second attempt."""

import pytest
from django.urls import reverse
from django.utils import timezone

from annotator import drafts, qualification, training
from annotator.assignment import claim_next, remaining_for
from annotator.exports import records
from annotator.models import Annotation, Assignment, CrowdWorker, Membership, StudyEvent, StudyItem
from annotator.quality import study_quality
from annotator.reports.build import build_report
from tests.annotator.builders import add_annotators, add_answer, add_items, make_annotation, make_study
from tests.builders import make_user
from tests.concurrency import at_once, errors

pytestmark = pytest.mark.django_db

RIGHT, WRONG = "none", "semantic"  # add_items keys every non-regular item "none" on the one question


def training_study(*, training_items=2, qualification_items=2, regular=2, annotators=1, **fields):
    """A study of ``regular`` regular items, then training and qualification items (in that order of position)."""
    fields.setdefault("qualification_pass_mark", 80)
    study = make_study(items=regular, overlap=1, **fields)
    add_items(study, training_items, kind=StudyItem.Kind.TRAINING)
    add_items(study, qualification_items, kind=StudyItem.Kind.QUALIFICATION)
    users = add_annotators(study, annotators)
    Membership.objects.filter(study=study).update(instructions_read_at=timezone.now())
    return study, users


def of_kind(study, kind):
    return list(study.items.filter(kind=kind).order_by("position"))


def submit(client, assignment, value):
    """Post the item page's submit with ``value`` for the one question; the response (a redirect)."""
    current = drafts.current(assignment)
    revision = current.revision if current is not None and current.status == Annotation.Status.DRAFT else 0
    return client.post(reverse("annotator:submit", args=[assignment.pk]),
                       {"answer-barrier": value, "revision": revision})


def take(client, study, value):
    """Go to the next item and submit ``value``; returns the assignment taken (None when nothing was offered)."""
    response = client.get(reverse("annotator:next", args=[study.slug]))
    if response.status_code != 302 or "/a/" not in response.url:
        return None
    assignment = Assignment.objects.get(pk=int(response.url.rstrip("/").split("/")[-1]))
    submit(client, assignment, value)
    return assignment


def test_training_comes_first_in_study_order_then_qualification_then_regular(client):
    study, (annotator,) = training_study()
    client.force_login(annotator)
    taken = [take(client, study, RIGHT).item for _ in range(6)]

    kinds = [item.kind for item in taken]
    assert kinds == ["training", "training", "qualification", "qualification", "regular", "regular"]
    assert [item.position for item in taken[:4]] == sorted(item.position for item in taken[:4])


def test_training_and_qualification_items_are_for_everyone_whatever_k(client):
    study, annotators = training_study(annotators=3, regular=1)

    for annotator in annotators:
        assignment = claim_next(study, annotator)
        assert assignment.item == of_kind(study, "training")[0]


def test_after_a_training_item_the_page_shows_the_correct_answers_and_the_explanation(client):
    study, (annotator,) = training_study()
    first = of_kind(study, "training")[0]
    StudyItem.objects.filter(pk=first.pk).update(explanation="The agent spoke plainly: <no barrier> at all.")
    client.force_login(annotator)

    assignment = claim_next(study, annotator)
    response = submit(client, assignment, WRONG)
    assert response.url == reverse("annotator:item", args=[assignment.pk])
    page = client.get(response.url)

    assert "Training: the correct answers" in page.text
    assert "You matched <strong>0 of 1</strong>" in page.text
    assert "Semantic" in page.text and "<strong>None</strong>" in page.text
    assert "&lt;no barrier&gt; at all" in page.text  # the researcher's text, escaped
    assert reverse("annotator:next", args=[study.slug]) in page.text
    assert "Edit these answers" not in page.text
    following = client.get(client.get(reverse("annotator:next", args=[study.slug])).url)
    assert "Submit and see the correct answers" in following.text


def test_submitted_training_and_qualification_answers_cannot_be_edited(client):
    study, (annotator,) = training_study()
    client.force_login(annotator)
    assignment = take(client, study, RIGHT)

    client.post(reverse("annotator:edit", args=[assignment.pk]), {"version": 1})

    assert assignment.annotations.count() == 1


def test_passing_qualification_qualifies_and_opens_regular_work(client):
    study, (annotator,) = training_study()
    client.force_login(annotator)
    for value in (WRONG, WRONG, RIGHT, RIGHT):  # training answers never count toward the score
        take(client, study, value)

    membership = Membership.objects.get(study=study, annotator=annotator)
    assert membership.qualified_at is not None and membership.qualification_attempts == 1
    assert take(client, study, RIGHT).item.kind == "regular"
    event = StudyEvent.objects.get(study=study, action="qualification-qualified")
    assert "2 of 2 known answers matched (100 %" in event.detail and event.actor is None


def test_a_score_below_the_pass_mark_without_a_retry_ends_participation_politely(client):
    study, (annotator,) = training_study(screen_out_code="SCREEN-OUT-7")
    client.force_login(annotator)
    for value in (RIGHT, RIGHT, RIGHT, WRONG):  # 1 of 2 = 50 % < 80 %
        take(client, study, value)

    membership = Membership.objects.get(study=study, annotator=annotator)
    assert membership.disqualified_at is not None
    page = client.get(reverse("annotator:next", args=[study.slug]))
    assert page.status_code == 200
    assert "Thank you for your time" in page.text and "qualification items" in page.text
    assert "SCREEN-OUT-7" not in page.text  # a signed-up annotator is not a crowd worker
    assert claim_next(study, annotator) is None
    assert remaining_for(study, annotator) == 0


def test_a_disqualified_crowd_worker_gets_the_screen_out_code(client):
    study, (annotator,) = training_study(screen_out_code="SCREEN-OUT-7", crowd_link=True)
    CrowdWorker.objects.create(study=study, participant_id="PID1", user=annotator, browser_token="0" * 64)
    client.force_login(annotator)
    for value in (RIGHT, RIGHT, WRONG, WRONG):
        take(client, study, value)

    page = client.get(reverse("annotator:next", args=[study.slug]))

    assert "SCREEN-OUT-7" in page.text
    assert CrowdWorker.objects.get(user=annotator).screened_out_at is not None


def test_a_second_attempt_answers_the_same_items_afresh_and_can_qualify(client):
    study, (annotator,) = training_study(qualification_retry=True)
    client.force_login(annotator)
    for value in (RIGHT, RIGHT, WRONG, WRONG):
        take(client, study, value)

    offer = client.get(reverse("annotator:next", args=[study.slug]))
    assert "Take the qualification again" in offer.text and "0 %" in offer.text
    client.post(reverse("annotator:training-retry", args=[study.slug]))
    page = client.get(client.get(reverse("annotator:next", args=[study.slug])).url)
    assert "second qualification attempt" in page.text and "Cancel edit" not in page.text
    second = [take(client, study, RIGHT) for _ in range(2)]

    assert [assignment.item.kind for assignment in second] == ["qualification", "qualification"]
    assert all(assignment.annotations.count() == 2 for assignment in second)  # the first attempt kept
    membership = Membership.objects.get(study=study, annotator=annotator)
    assert membership.qualification_attempts == 2 and membership.qualified_at is not None
    assert take(client, study, RIGHT).item.kind == "regular"


def test_the_second_attempt_starts_empty(client):
    study, (annotator,) = training_study(qualification_retry=True)
    client.force_login(annotator)
    for value in (RIGHT, RIGHT, WRONG, WRONG):
        take(client, study, value)

    client.post(reverse("annotator:training-retry", args=[study.slug]))

    drafts_opened = Annotation.objects.filter(assignment__annotator=annotator, version=2)
    assert drafts_opened.count() == 2
    assert all(not draft.response.answers.exists() for draft in drafts_opened)
    # Starting again from a second tab does nothing more.
    client.post(reverse("annotator:training-retry", args=[study.slug]))
    assert Annotation.objects.filter(assignment__annotator=annotator).count() == 6


def test_failing_the_second_attempt_disqualifies(client):
    study, (annotator,) = training_study(qualification_retry=True)
    client.force_login(annotator)
    for value in (RIGHT, RIGHT, WRONG, WRONG):
        take(client, study, value)
    client.post(reverse("annotator:training-retry", args=[study.slug]))
    take(client, study, RIGHT)
    take(client, study, WRONG)

    membership = Membership.objects.get(study=study, annotator=annotator)
    assert membership.qualification_attempts == 2 and membership.disqualified_at is not None
    assert list(StudyEvent.objects.filter(study=study).values_list("action", flat=True).order_by("pk")) == [
        "qualification-retry", "qualification-second-attempt", "qualification-disqualified",
    ]


def test_a_study_without_a_pass_mark_asks_its_qualification_items_without_scoring_them(client):
    study, (annotator,) = training_study(qualification_pass_mark=None)
    client.force_login(annotator)
    taken = [take(client, study, WRONG).item.kind for _ in range(5)]

    assert taken == ["training", "training", "qualification", "qualification", "regular"]
    assert Membership.objects.get(study=study, annotator=annotator).disqualified_at is None


def test_a_lapsed_training_claim_is_taken_up_again_before_anything_else():
    study, (annotator,) = training_study()
    first = claim_next(study, annotator)
    Assignment.objects.filter(pk=first.pk).update(lease_expires_at=timezone.now() - timezone.timedelta(minutes=1))

    again = claim_next(study, annotator)

    assert again.pk == first.pk and again.status == Assignment.Status.CLAIMED


def test_training_and_qualification_answers_stay_out_of_quality_exports_and_the_report(client):
    study, (annotator,) = training_study(regular=1)
    client.force_login(annotator)
    for value in (RIGHT, RIGHT, RIGHT, RIGHT, RIGHT):
        take(client, study, value)

    figures = study_quality(study)[annotator.pk]
    assert (figures.fast_submissions, figures.gold_checked) == (1, 0)  # the regular item alone, of five
    assert {row["item_kind"] for row in records(study)} == {"regular"}
    counts = build_report(study, resamples=10)["counts"]
    assert (counts["items"], counts["annotations"]) == (1, 1)


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_two_tabs_finishing_qualification_at_once_score_it_once():
    study, (annotator,) = training_study()
    for item in [*of_kind(study, "training"), *of_kind(study, "qualification")]:
        assignment = claim_next(study, annotator)
        assert assignment.item == item
        answer = make_annotation(assignment, submitted_at=timezone.now())
        add_answer(answer, study.instrument.questions.get(), RIGHT)
        Assignment.objects.filter(pk=assignment.pk).update(status="submitted", submitted_at=timezone.now())

    outcomes = at_once(*(lambda: qualification.settle(study, annotator) for _ in range(4)))

    assert errors(outcomes) == []
    assert (outcomes.count("qualified"), outcomes.count(None)) == (1, 3)
    assert StudyEvent.objects.filter(study=study, action="qualification-qualified").count() == 1
    assert Membership.objects.get(study=study, annotator=annotator).qualification_attempts == 1
    assert training.stage(study, annotator).name == "regular"


def test_an_outsider_cannot_start_a_second_attempt(client):
    study, _ = training_study(qualification_retry=True)
    client.force_login(make_user())

    assert client.post(reverse("annotator:training-retry", args=[study.slug])).status_code == 404
