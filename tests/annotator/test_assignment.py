"""Assignment of items to annotators: k per item, never twice, reproducible order, atomic claims."""

from collections import Counter
from datetime import timedelta
from functools import partial

import pytest
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotator.assignment import (
    SlotTaken,
    claim_next,
    item_order,
    mark_submitted,
    progress,
    remaining_for,
    renew,
)
from annotator.models import Assignment, StudyItem
from tests.annotator.builders import add_items, make_study
from tests.builders import make_user
from tests.concurrency import at_once, errors

pytestmark = pytest.mark.django_db

NOW = timezone.now()


def release_lapsed_claims(now):
    """Mark claims whose lease ran out as released, as an admin or a later clean-up might; returns how many."""
    lapsed = Assignment.objects.filter(status=Assignment.Status.CLAIMED, lease_expires_at__lt=now)
    return lapsed.update(status=Assignment.Status.RELEASED)


def members(study):
    return list(study.annotators.order_by("pk"))


def work_through(study, annotators, now=NOW):
    """Round-robin: each annotator claims and submits one item per turn until nobody gets one."""
    busy = True
    while busy:
        busy = False
        for annotator in annotators:
            assignment = claim_next(study, annotator, now=now)
            if assignment is not None:
                mark_submitted(assignment, now=now)
                busy = True


def submitted_per_item(study):
    return Counter(
        Assignment.objects.filter(item__study=study, status=Assignment.Status.SUBMITTED).values_list(
            "item_id", flat=True
        )
    )


def test_each_item_ends_with_exactly_k_submitted_distinct_annotators():
    study = make_study(items=20, overlap=3, annotators=6)
    work_through(study, members(study))

    for item in study.items.all():
        annotators = list(item.assignments.filter(status="submitted").values_list("annotator_id", flat=True))
        assert len(annotators) == 3
        assert len(set(annotators)) == 3
    assert not Assignment.objects.filter(item__study=study).exclude(status="submitted").exists()


def test_annotator_never_gets_the_same_item_twice_even_after_release():
    study = make_study(items=2, overlap=2, annotators=1, lease_minutes=30)
    annotator = members(study)[0]
    first = claim_next(study, annotator, now=NOW)
    later = NOW + timedelta(minutes=31)
    assert release_lapsed_claims(later) == 1

    second = claim_next(study, annotator, now=later)
    assert second.item_id != first.item_id
    mark_submitted(second, now=later)

    assert claim_next(study, annotator, now=later) is None
    assert Assignment.objects.filter(annotator=annotator).count() == 2


def test_annotator_does_not_get_an_item_back_whose_claim_lapsed_unreleased():
    study = make_study(items=1, overlap=2, annotators=1, lease_minutes=30)
    annotator = members(study)[0]
    claim_next(study, annotator, now=NOW)

    assert claim_next(study, annotator, now=NOW + timedelta(minutes=31)) is None


def test_order_differs_between_annotators():
    study = make_study(items=0, seed=7)
    item_ids = list(range(1, 21))

    assert item_order(study, 1, item_ids) != item_order(study, 2, item_ids)


def test_order_is_reproducible_and_independent_of_the_other_items():
    study = make_study(items=0, seed=7)
    item_ids = list(range(1, 21))
    order = item_order(study, 1, item_ids)

    assert item_order(study, 1, list(reversed(item_ids))) == order
    assert sorted(order) == item_ids
    assert item_order(study, 1, item_ids[:10]) == [item_id for item_id in order if item_id <= 10]


def test_order_depends_on_the_seed():
    first, second = make_study(items=0, seed=1), make_study(items=0, seed=2)
    item_ids = list(range(1, 21))

    assert item_order(first, 1, item_ids) != item_order(second, 1, item_ids)


def test_claims_follow_each_annotators_order():
    study = make_study(items=6, overlap=6, annotators=2)
    item_ids = list(study.items.values_list("pk", flat=True))
    for annotator in members(study):
        got = []
        while (assignment := claim_next(study, annotator, now=NOW)) is not None:
            mark_submitted(assignment, now=NOW)
            got.append(assignment.item_id)
        assert got == item_order(study, annotator.pk, item_ids)


def test_resume_returns_the_live_claim():
    study = make_study(items=3, overlap=1, annotators=1)
    annotator = members(study)[0]
    first = claim_next(study, annotator, now=NOW)

    assert claim_next(study, annotator, now=NOW + timedelta(minutes=5)) == first
    assert Assignment.objects.filter(annotator=annotator).count() == 1


def test_a_claim_reserves_its_slot_while_the_lease_runs():
    study = make_study(items=1, overlap=1, annotators=2, lease_minutes=30)
    first, second = members(study)
    claim_next(study, first, now=NOW)

    assert claim_next(study, second, now=NOW + timedelta(minutes=29)) is None


def test_lease_expiry_frees_the_slot_for_another_annotator():
    study = make_study(items=1, overlap=1, annotators=2, lease_minutes=30)
    first, second = members(study)
    claim_next(study, first, now=NOW)

    taken = claim_next(study, second, now=NOW + timedelta(minutes=31))

    assert taken is not None and taken.annotator == second


def test_renew_extends_the_lease():
    study = make_study(items=1, overlap=1, annotators=2, lease_minutes=30)
    first, second = members(study)
    assignment = claim_next(study, first, now=NOW)

    renew(assignment, now=NOW + timedelta(minutes=20))

    assert assignment.lease_expires_at == NOW + timedelta(minutes=50)
    assert claim_next(study, second, now=NOW + timedelta(minutes=45)) is None


def test_renew_takes_back_a_released_claim_whose_slot_is_free():
    study = make_study(items=1, overlap=1, annotators=1, lease_minutes=30)
    assignment = claim_next(study, members(study)[0], now=NOW)
    later = NOW + timedelta(minutes=40)
    release_lapsed_claims(later)

    renew(assignment, now=later)

    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.CLAIMED
    assert assignment.lease_expires_at == later + timedelta(minutes=30)


def test_renew_raises_slot_taken_when_the_slot_went_to_someone_else():
    study = make_study(items=1, overlap=1, annotators=2, lease_minutes=30)
    first, second = members(study)
    assignment = claim_next(study, first, now=NOW)
    later = NOW + timedelta(minutes=40)
    claim_next(study, second, now=later)

    with pytest.raises(SlotTaken, match="another annotator"):
        renew(assignment, now=later)

    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.RELEASED


def test_submitting_after_the_slot_was_taken_records_nothing():
    study = make_study(items=1, overlap=1, annotators=2, lease_minutes=30)
    first, second = members(study)
    assignment = claim_next(study, first, now=NOW)
    later = NOW + timedelta(minutes=40)
    claim_next(study, second, now=later)

    with pytest.raises(SlotTaken):
        mark_submitted(assignment, now=later)

    assert not Assignment.objects.filter(status="submitted").exists()


def test_submitting_a_lapsed_claim_whose_slot_is_free_counts():
    study = make_study(items=1, overlap=1, annotators=1, lease_minutes=30)
    assignment = claim_next(study, members(study)[0], now=NOW)
    later = NOW + timedelta(minutes=40)

    mark_submitted(assignment, now=later)

    assignment.refresh_from_db()
    assert (assignment.status, assignment.submitted_at) == (Assignment.Status.SUBMITTED, later)


def test_submitting_again_keeps_the_first_submission_time():
    study = make_study(items=1, overlap=1, annotators=1)
    assignment = claim_next(study, members(study)[0], now=NOW)
    mark_submitted(assignment, now=NOW)

    mark_submitted(assignment, now=NOW + timedelta(days=1))
    renew(assignment, now=NOW + timedelta(days=1))

    assignment.refresh_from_db()
    assert (assignment.status, assignment.submitted_at) == (Assignment.Status.SUBMITTED, NOW)


def test_gold_and_attention_items_go_to_every_annotator_and_do_not_count_toward_k():
    study = make_study(items=3, overlap=1, annotators=3, gold=2, attention=1)
    work_through(study, members(study))

    counts = submitted_per_item(study)
    for item in study.items.all():
        assert counts[item.pk] == (3 if item.kind != StudyItem.Kind.REGULAR else 1)


def test_gold_items_are_shuffled_in_with_the_regular_ones():
    study = make_study(items=12, gold=4)
    gold = set(study.items.filter(kind="gold").values_list("pk", flat=True))
    item_ids = list(study.items.values_list("pk", flat=True))
    first_gold_positions = {
        min(index for index, item_id in enumerate(item_order(study, annotator_id, item_ids)) if item_id in gold)
        for annotator_id in range(1, 9)
    }
    assert len(first_gold_positions) > 1


def test_non_members_are_refused():
    study = make_study(items=1, annotators=1)

    with pytest.raises(PermissionDenied):
        claim_next(study, make_user(), now=NOW)


def test_closed_study_gives_nothing():
    study = make_study(items=2, annotators=1, is_open=False)

    assert claim_next(study, members(study)[0], now=NOW) is None
    assert not Assignment.objects.exists()


def test_remaining_for_counts_what_the_annotator_could_still_claim():
    study = make_study(items=3, overlap=1, annotators=2, gold=1)
    first, second = members(study)
    assert remaining_for(study, first, now=NOW) == 4

    done = claim_next(study, first, now=NOW)
    mark_submitted(done, now=NOW)
    held = claim_next(study, first, now=NOW)

    assert remaining_for(study, first, now=NOW) == 2
    regular_taken = sum(item.kind == StudyItem.Kind.REGULAR for item in (done.item, held.item))
    assert remaining_for(study, second, now=NOW) == 4 - regular_taken


def test_remaining_for_is_zero_outside_the_pool():
    study = make_study(items=3, annotators=1)

    assert remaining_for(study, make_user(), now=NOW) == 0


def test_progress_counts_a_small_study():
    study = make_study(items=3, overlap=2, annotators=3, gold=1, lease_minutes=30)
    first, second, third = members(study)
    regular = list(study.items.filter(kind="regular").order_by("position"))
    gold = study.items.get(kind="gold")
    now = NOW + timedelta(minutes=10)

    def give(item, annotator, status, claimed_at=now, seconds=0):
        return Assignment.objects.create(
            item=item, annotator=annotator, status=status, claimed_at=claimed_at,
            lease_expires_at=claimed_at + timedelta(minutes=30),
            submitted_at=claimed_at if status == "submitted" else None, seconds_spent=seconds,
        )

    give(regular[0], first, "submitted", seconds=60)
    give(regular[0], second, "submitted", seconds=90)
    give(regular[1], first, "submitted", seconds=30)
    give(regular[1], second, "claimed")
    give(regular[2], third, "claimed", claimed_at=NOW - timedelta(hours=1))  # lapsed, not yet released
    give(gold, first, "submitted", seconds=20)

    result = progress(study, now=now)

    assert (result.items, result.items_complete, result.submitted, result.in_progress) == (3, 1, 3, 1)
    assert (result.slots, result.quality_items, result.quality_submitted) == (6, 1, 1)
    assert result.items_short == [(regular[1], 1), (regular[2], 0)]
    assert result.per_annotator[first.pk].submitted == 3
    assert result.per_annotator[first.pk].seconds_spent == 110
    assert result.per_annotator[first.pk].remaining == 1  # regular[2]; regular[1] is full with second's claim
    assert result.per_annotator[second.pk].in_progress == 1
    assert result.per_annotator[second.pk].remaining == 2  # regular[2] and gold
    assert result.per_annotator[third.pk].in_progress == 0
    assert result.per_annotator[third.pk].remaining == 1  # gold; regular[2] was theirs already
    for annotator in (first, second, third):
        assert result.per_annotator[annotator.pk].remaining == remaining_for(study, annotator, now=now)


def test_progress_query_count_does_not_grow_with_items(django_assert_max_num_queries):
    annotators = [make_user() for _ in range(4)]
    counts = []
    for items in (3, 30):
        study = make_study(items=items, overlap=2, annotators=annotators, gold=2)
        work_through(study, annotators[:3])
        claim_next(study, annotators[3], now=NOW)
        with CaptureQueriesContext(connection) as queries:
            progress(study, now=NOW)
        counts.append(len(queries))
    assert counts[0] == counts[1]
    with django_assert_max_num_queries(3):
        progress(study, now=NOW)


def test_claim_query_count_does_not_grow_with_items():
    counts = []
    for items in (3, 60):
        study = make_study(items=items, overlap=1, annotators=2)
        work_through(study, members(study)[:1])
        add_items(study, 1)
        with CaptureQueriesContext(connection) as queries:
            claim_next(study, members(study)[1], now=NOW)
        counts.append(len(queries))
    assert counts[0] == counts[1]


# Concurrency: every thread has its own database connection, so these run outside a test transaction.
#
# PostgreSQL makes a racing claim wait for the item's row lock, SQLite for the database's write lock
# (every transaction takes it first); either way the invariants below must hold.


def race(study, work):
    """Run ``work(annotator)`` for every member at once, each in its own thread and connection."""
    assert errors(at_once(*(partial(work, annotator) for annotator in members(study)))) == []


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_racing_claims_never_give_away_more_than_k_slots():
    annotators = [make_user() for _ in range(8)]
    for _ in range(3):
        study = make_study(items=3, overlap=2, annotators=annotators)
        race(study, partial(claim_next, study))

        live = Counter(Assignment.objects.filter(item__study=study, status="claimed").values_list("item", flat=True))
        assert sorted(live.values()) == [2, 2, 2]


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_racing_annotators_fill_every_slot_exactly():
    study = make_study(items=20, overlap=2, annotators=8)

    def work(annotator):
        while (assignment := claim_next(study, annotator)) is not None:
            renew(assignment)
            mark_submitted(assignment)

    race(study, work)

    counts = submitted_per_item(study)
    assert [counts[item_id] for item_id in study.items.values_list("pk", flat=True)] == [2] * 20
    assert not Assignment.objects.filter(item__study=study).exclude(status="submitted").exists()
