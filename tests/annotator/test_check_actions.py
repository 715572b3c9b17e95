"""Checks that act: a warning, then a pause, until a researcher restores the annotator; the check record."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotator.assignment import claim_next
from annotator.check_actions import act_on_checks, check_records, restore
from annotator.models import Assignment, Membership, StudyEvent
from tests.annotator.builders import add_answer, make_annotation, make_study
from tests.builders import make_user

pytestmark = pytest.mark.django_db

RIGHT, WRONG = "none", "semantic"


def checked_study(**fields):
    fields.setdefault("checks_warn_after", 2)
    fields.setdefault("checks_pause_after", 3)
    study = make_study(items=3, gold=2, attention=3, overlap=1, annotators=1, **fields)
    Membership.objects.filter(study=study).update(instructions_read_at=timezone.now())
    return study, study.annotators.get()


def answer(item, annotator, value, *, seconds=60, when=None):
    """A submitted assignment of ``item`` answered ``value`` on the one question."""
    when = when or timezone.now()
    assignment = Assignment.objects.create(
        item=item, annotator=annotator, status=Assignment.Status.SUBMITTED, claimed_at=when,
        lease_expires_at=when + timedelta(hours=1), submitted_at=when, seconds_spent=seconds,
    )
    annotation = make_annotation(assignment, submitted_at=when)
    add_answer(annotation, item.study.instrument.questions.get(), value)
    return assignment


def checks(study):
    return list(study.items.filter(kind__in=["gold", "attention"]).order_by("position"))


def test_nothing_happens_when_the_study_sets_no_action():
    study, annotator = checked_study(checks_warn_after=None, checks_pause_after=None)
    for item in checks(study):
        answer(item, annotator, WRONG)

    assert act_on_checks(study, annotator) is None
    assert not StudyEvent.objects.exists()


def test_failures_warn_once_then_pause_and_a_paused_annotator_gets_no_item():
    study, annotator = checked_study()
    items = checks(study)
    answer(items[0], annotator, WRONG)
    assert act_on_checks(study, annotator) is None
    answer(items[1], annotator, WRONG)
    assert act_on_checks(study, annotator) == "warned"
    answer(items[2], annotator, RIGHT)
    assert act_on_checks(study, annotator) is None  # warned already
    answer(items[3], annotator, WRONG)

    assert act_on_checks(study, annotator) == "paused"
    membership = Membership.objects.get(study=study, annotator=annotator)
    assert membership.warned_at is not None and membership.paused_at is not None
    assert claim_next(study, annotator) is None
    assert list(StudyEvent.objects.filter(study=study).order_by("pk").values_list("action", "actor")) == [
        ("checks-warned", None), ("checks-paused", None),
    ]


def test_a_pause_releases_the_claim_the_annotator_held():
    study, annotator = checked_study(checks_warn_after=None, checks_pause_after=1)
    held = claim_next(study, annotator)
    answer(checks(study)[0] if held.item != checks(study)[0] else checks(study)[1], annotator, WRONG)

    act_on_checks(study, annotator)

    assert Assignment.objects.get(pk=held.pk).status == Assignment.Status.RELEASED


def test_a_researcher_restores_a_paused_annotator_and_only_later_failures_count(client):
    study, annotator = checked_study(checks_warn_after=None, checks_pause_after=2)
    items = checks(study)
    earlier = timezone.now() - timedelta(minutes=5)
    answer(items[0], annotator, WRONG, when=earlier)
    answer(items[1], annotator, WRONG, when=earlier)
    assert act_on_checks(study, annotator) == "paused"
    researcher = make_user(staff=True)
    client.force_login(researcher)

    response = client.post(reverse("annotator:restore-annotator", args=[study.slug, annotator.pk]))

    assert response.status_code == 302
    membership = Membership.objects.get(study=study, annotator=annotator)
    assert membership.paused_at is None and membership.restored_at is not None
    assert StudyEvent.objects.get(action="checks-restored").actor == researcher
    claimed = claim_next(study, annotator)
    assert claimed is not None
    answer(next(item for item in items[2:] if item != claimed.item), annotator, WRONG)
    assert act_on_checks(study, annotator) is None  # one failure since the restore
    assert check_records(study)[annotator.pk]["failed_since_restore"] == 1


def test_restoring_someone_not_paused_changes_nothing():
    study, annotator = checked_study()

    assert restore(study, annotator, make_user(staff=True)) is False
    assert not StudyEvent.objects.exists()


def test_a_warning_is_shown_on_the_next_page_after_the_submit_that_reached_it(client):
    study, annotator = checked_study(checks_warn_after=1, checks_pause_after=None)
    client.force_login(annotator)
    for _ in range(8):
        held = claim_next(study, annotator)
        if held.item.kind != "regular":
            break
        client.post(reverse("annotator:submit", args=[held.pk]), {"answer-barrier": RIGHT})
    wrong = "semantic" if held.item.kind == "gold" else "emotional"

    response = client.post(reverse("annotator:submit", args=[held.pk]), {"answer-barrier": wrong}, follow=True)

    assert "did not match what they should be" in response.text


def test_the_check_record_has_attention_gold_failures_and_median_time():
    study, annotator = checked_study()
    gold = list(study.items.filter(kind="gold").order_by("position"))
    attention = list(study.items.filter(kind="attention").order_by("position"))
    regular = list(study.items.filter(kind="regular").order_by("position"))
    answer(gold[0], annotator, RIGHT, seconds=10)
    answer(gold[1], annotator, WRONG, seconds=20)
    answer(attention[0], annotator, WRONG, seconds=30)
    answer(regular[0], annotator, RIGHT, seconds=100)

    record = check_records(study)[annotator.pk]

    assert (record["attention_passed"], record["attention_failed"]) == (0, 1)
    assert (record["gold_accuracy"], record["gold_correct"], record["gold_checked"]) == (50, 1, 2)
    assert record["failed_since_restore"] == 2
    assert record["median_seconds"] == 25


def test_the_dashboard_shows_the_check_record_and_a_restore_button(client):
    study, annotator = checked_study(checks_pause_after=1)
    answer(checks(study)[0], annotator, WRONG)
    act_on_checks(study, annotator)
    client.force_login(make_user(staff=True))

    page = client.get(reverse("annotator:dashboard", args=[study.slug]))

    assert "Checks and qualification" in page.text
    assert reverse("annotator:restore-annotator", args=[study.slug, annotator.pk]) in page.text
    assert reverse("annotator:item-setup", args=[study.slug, study.items.first().pk]) in page.text


def test_the_check_records_take_six_queries_however_many_annotators(django_assert_max_num_queries):
    study, annotator = checked_study()
    for person in [annotator, *[make_user() for _ in range(4)]]:
        Membership.objects.get_or_create(study=study, annotator=person)
        for item in checks(study)[:3]:
            answer(item, person, WRONG)

    with django_assert_max_num_queries(6):
        records = check_records(study)

    assert len(records) == 5 and all(record["failed_since_restore"] == 3 for record in records.values())
