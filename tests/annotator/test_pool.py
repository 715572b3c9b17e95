"""A study's pool: releasing, reassigning and removing annotators, curators, invitations, the pool page's rows."""

import csv
import io
from functools import partial

import pytest
from django.core import mail
from django.utils import timezone

from annotator import pool
from annotator.assignment import SlotTaken, claim_next, mark_submitted, renew, taken_back
from annotator.exports import export_lines
from annotator.models import Assignment, Membership, StudyEvent
from tests.annotator.builders import add_answer, make_annotation, make_study
from tests.builders import make_researcher, make_user
from tests.concurrency import at_once, errors

pytestmark = pytest.mark.django_db


@pytest.fixture
def researcher():
    return make_researcher()


def claim(study, annotator):
    Membership.objects.filter(study=study, annotator=annotator).update(instructions_read_at=timezone.now())
    return claim_next(study, annotator)


def submit(study, annotator):
    assignment = claim(study, annotator)
    mark_submitted(assignment)
    annotation = make_annotation(assignment, submitted_at=timezone.now())
    add_answer(annotation, study.instrument.questions.get(), "none")
    return assignment


# Release and reassign


def test_release_gives_the_items_back_and_the_annotator_does_not_get_them_again(researcher):
    study = make_study(items=1, overlap=1, annotators=2)
    first, second = study.annotators.all()
    held = claim(study, first)

    assert pool.release(study, first.pk, actor=researcher) == 1

    held.refresh_from_db()
    assert taken_back(held)
    assert claim(study, first) is None  # an annotator never gets an item twice
    assert claim(study, second).item == held.item
    with pytest.raises(SlotTaken):
        renew(held)
    event = StudyEvent.objects.get(study=study)
    assert (event.action, event.actor, event.annotator) == ("released", researcher, first)


def test_reassign_moves_an_item_in_progress_to_another_member(researcher):
    study = make_study(items=1, overlap=1, annotators=2)
    first, second = study.annotators.all()
    held = claim(study, first)

    moved = pool.reassign(study, held.pk, second.pk, actor=researcher)

    held.refresh_from_db()
    assert taken_back(held)
    assert (moved.annotator, moved.item, moved.status) == (second, held.item, Assignment.Status.CLAIMED)
    assert claim(study, second) == moved
    assert "from" in StudyEvent.objects.get(study=study, action="reassigned").detail


def test_reassign_refuses_someone_who_already_had_the_item(researcher):
    study = make_study(items=1, overlap=2, annotators=2)
    first, second = study.annotators.all()
    held = claim(study, first)
    submit(study, second)

    with pytest.raises(pool.PoolError, match="rates an item once"):
        pool.reassign(study, held.pk, second.pk, actor=researcher)
    held.refresh_from_db()
    assert held.status == Assignment.Status.CLAIMED  # nothing changed


@pytest.mark.parametrize("standing", ["removed_at", "disqualified_at", "paused_at"])
def test_reassign_refuses_a_member_who_cannot_take_items(researcher, standing):
    study = make_study(items=1, overlap=1, annotators=2)
    first, second = study.annotators.all()
    held = claim(study, first)
    Membership.objects.filter(study=study, annotator=second).update(**{standing: timezone.now()})

    with pytest.raises(pool.PoolError, match="cannot take items"):
        pool.reassign(study, held.pk, second.pk, actor=researcher)


def test_reassign_refuses_a_submitted_item_and_someone_outside_the_pool(researcher):
    study = make_study(items=2, overlap=1, annotators=2)
    first, second = study.annotators.all()
    done = submit(study, first)

    with pytest.raises(pool.PoolError, match="no longer in progress"):
        pool.reassign(study, done.pk, second.pk, actor=researcher)
    with pytest.raises(pool.PoolError, match="not in this study's pool"):
        pool.reassign(study, done.pk, make_user().pk, actor=researcher)


def test_an_item_of_another_study_cannot_be_reassigned(researcher):
    study, other = make_study(annotators=2), make_study(annotators=1)
    held = claim(other, other.annotators.get())

    with pytest.raises(pool.PoolError, match="not in this study"):
        pool.reassign(study, held.pk, study.annotators.first().pk, actor=researcher)


# Remove


def test_removing_keeps_submitted_work_releases_the_rest_and_gives_no_more_items(researcher):
    study = make_study(items=3, overlap=1, annotators=1)
    annotator = study.annotators.get()
    done = submit(study, annotator)
    held = claim(study, annotator)

    assert pool.remove(study, annotator.pk, actor=researcher) == 1

    membership = Membership.objects.get(study=study, annotator=annotator)
    assert membership.removed_at is not None
    done.refresh_from_db()
    held.refresh_from_db()
    assert done.status == Assignment.Status.SUBMITTED and taken_back(held)
    assert claim(study, annotator) is None
    with pytest.raises(pool.PoolError, match="already removed"):
        pool.remove(study, annotator.pk, actor=researcher)


def test_a_removed_annotators_work_is_marked_in_the_export(researcher):
    study = make_study(items=2, overlap=1, annotators=2)
    gone, staying = study.annotators.all()
    submit(study, gone)
    submit(study, staying)
    pool.remove(study, gone.pk, actor=researcher)

    rows = list(csv.DictReader(io.StringIO("".join(export_lines(study, "csv")))))

    marks = {row["annotator"]: row["annotator_removed_at"] for row in rows}
    assert marks[f"a{gone.pk}"].endswith("Z") and marks[f"a{staying.pk}"] == ""


def test_a_removed_annotator_frees_a_place_in_a_full_pool(researcher):
    study = make_study(annotators=2, max_annotators=2)
    assert pool.pool_is_full(study)

    pool.remove(study, study.annotators.first().pk, actor=researcher)

    assert not pool.pool_is_full(study)


def test_curators_are_made_and_unmade_but_not_from_removed_annotators(researcher):
    study = make_study(annotators=2)
    first, second = study.annotators.all()

    pool.set_curator(study, first.pk, True, actor=researcher)
    assert Membership.objects.get(study=study, annotator=first).is_curator
    pool.set_curator(study, first.pk, False, actor=researcher)
    assert not Membership.objects.get(study=study, annotator=first).is_curator
    pool.remove(study, second.pk, actor=researcher)
    with pytest.raises(pool.PoolError):
        pool.set_curator(study, second.pk, True, actor=researcher)


# The pool page's rows


def test_each_member_has_a_row_with_status_counts_and_median_time(researcher):
    study = make_study(items=4, overlap=1, annotators=3)
    worker, curator, gone = sorted(study.annotators.all(), key=lambda user: user.username)
    for seconds in (10, 30, 50):
        done = submit(study, worker)
        Assignment.objects.filter(pk=done.pk).update(seconds_spent=seconds)
    claim(study, curator)
    pool.set_curator(study, curator.pk, True, actor=researcher)
    pool.remove(study, gone.pk, actor=researcher)

    rows = {row["user"]: row for row in pool.annotator_rows(study)}

    assert (rows[worker]["status"], rows[worker]["submitted"], rows[worker]["median_seconds"]) == ("active", 3, 30)
    assert (rows[curator]["status"], rows[curator]["in_progress"]) == ("curator", 1)
    assert rows[gone]["status"] == "removed" and rows[gone]["median_seconds"] is None


def test_other_parts_add_columns_to_the_pool_page(researcher):
    study = make_study(annotators=1)
    annotator = study.annotators.get()
    pool.register_column("Test figure", lambda study, memberships: {m.annotator_id: "42" for m in memberships})
    try:
        row = pool.annotator_rows(study)[0]
    finally:
        pool._columns.pop("Test figure")

    assert row["user"] == annotator and row["columns"]["Test figure"] == "42"


# Invitations


def test_an_invitation_by_username_is_accepted_on_the_annotator_page(researcher):
    study = make_study()
    person = make_user(username="kim")

    invitation = pool.invite_user(study, "kim", actor=researcher)

    assert pool.pending_for(person) == [invitation]
    assert not Membership.objects.filter(study=study, annotator=person).exists()
    pool.accept(invitation, person)
    assert Membership.objects.filter(study=study, annotator=person).exists()
    assert pool.pending_for(person) == []
    assert set(StudyEvent.objects.filter(study=study).values_list("action", flat=True)) == {
        "invited", "joined", "invitation-accepted"}


def test_bad_usernames_are_named(researcher):
    study = make_study(annotators=1)

    with pytest.raises(pool.PoolError, match="No one has the username “nobody”"):
        pool.invite_user(study, "nobody", actor=researcher)
    with pytest.raises(pool.PoolError, match="already in the pool"):
        pool.invite_user(study, study.annotators.get().username, actor=researcher)
    make_user(username="kim")
    pool.invite_user(study, "kim", actor=researcher)
    with pytest.raises(pool.PoolError, match="already invited"):
        pool.invite_user(study, "kim", actor=researcher)


def test_an_invitation_by_email_sends_the_join_link(researcher, django_capture_on_commit_callbacks):
    study = make_study()

    with django_capture_on_commit_callbacks(execute=True):
        invitation = pool.invite_email(study, "Kim@Example.org", "http://testserver/annotate/join/t/",
                                       actor=researcher)

    assert invitation.email == "kim@example.org"
    (message,) = mail.outbox
    assert message.to == ["Kim@Example.org"] and study.title in message.subject
    assert "http://testserver/annotate/join/t/?invitation=" in message.body
    token = message.body.split("?invitation=")[1].split()[0]
    assert pool.signed_invitation(study, token) == invitation
    assert pool.signed_invitation(study, token + "x") is None
    assert pool.signed_invitation(make_study(), token) is None


def test_an_email_invitation_is_accepted_when_that_address_joins(researcher):
    study = make_study()
    invitation = pool.invite_email(study, "kim@example.org", "http://x/", actor=researcher)
    person = make_user(email="KIM@example.org")

    assert pool.pending_for(person) == [invitation]
    pool.accept(invitation, person)

    invitation.refresh_from_db()
    assert invitation.accepted_at is not None


def test_a_closed_study_accepts_no_invitation(researcher):
    study = make_study()
    person = make_user(username="kim")
    invitation = pool.invite_user(study, "kim", actor=researcher)
    study.is_open, study.closed_at = False, timezone.now()
    study.save()

    assert pool.pending_for(person) == []
    with pytest.raises(pool.PoolError, match="closed"):
        pool.accept(invitation, person)


# Races


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_claim_racing_a_removal_never_leaves_the_removed_annotator_an_item():
    researcher = make_researcher()
    for _ in range(3):
        study = make_study(items=4, overlap=1, annotators=1)
        annotator = study.annotators.get()
        Membership.objects.filter(study=study).update(instructions_read_at=timezone.now())

        outcomes = at_once(partial(pool.remove, study, annotator.pk, actor=researcher),
                           partial(claim_next, study, annotator))

        assert errors(outcomes) == []
        assert not Assignment.objects.filter(item__study=study, status="claimed").exists()


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_two_researchers_reassigning_one_item_at_once_give_it_to_one():
    first, second = make_researcher(), make_researcher()
    study = make_study(items=1, overlap=1, annotators=3)
    holder, one, other = study.annotators.all()
    Membership.objects.filter(study=study).update(instructions_read_at=timezone.now())
    held = claim_next(study, holder)

    outcomes = at_once(partial(pool.reassign, study, held.pk, one.pk, actor=first),
                       partial(pool.reassign, study, held.pk, other.pk, actor=second))

    assert sum(isinstance(outcome, pool.PoolError) for outcome in outcomes) == 1
    assert [type(outcome) for outcome in errors(outcomes)] == [pool.PoolError]
    assert Assignment.objects.filter(item__study=study, status="claimed").count() == 1


def test_a_removed_annotator_can_be_reinstated_if_the_pool_has_room(researcher):
    study = make_study(items=2, overlap=1, annotators=2, max_annotators=2)
    gone, staying = study.annotators.all()
    pool.remove(study, gone.pk, actor=researcher)
    with pytest.raises(pool.PoolError, match="reinstate them"):
        pool.invite_user(study, gone.username, actor=researcher)
    pool.join_study(make_user(), study)

    with pytest.raises(pool.PoolError, match="pool is full"):
        pool.reinstate(study, gone.pk, actor=researcher)
    study.max_annotators = 3
    study.save()
    pool.reinstate(study, gone.pk, actor=researcher)

    assert claim(study, gone) is not None
    with pytest.raises(pool.PoolError, match="is in the pool"):
        pool.reinstate(study, staying.pk, actor=researcher)
