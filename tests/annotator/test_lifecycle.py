"""A study's life: settings that may change and why not, pause/resume/close/reopen, items added and removed."""

from datetime import timedelta
from functools import partial

import pytest
from django.utils import timezone

from annotator import lifecycle
from annotator.assignment import SlotTaken, claim_next, mark_submitted, renew, taken_back
from annotator.models import Assignment, Membership, StudyEvent, StudyItem
from benchmark.models import Episode
from tests.annotator.builders import make_annotation, make_study
from tests.builders import make_episode, make_researcher, make_user
from tests.concurrency import at_once, errors

pytestmark = pytest.mark.django_db


@pytest.fixture
def researcher():
    return make_researcher()


def claim(study, annotator):
    Membership.objects.filter(study=study, annotator=annotator).update(instructions_read_at=timezone.now())
    return claim_next(study, annotator)


# Settings


def test_a_fresh_study_locks_nothing():
    assert lifecycle.locked_fields(make_study()) == {}


def test_the_seed_locks_once_an_item_was_claimed():
    study = make_study(annotators=1)
    claim(study, study.annotators.get())

    assert "order" in lifecycle.locked_fields(study)["seed"]


def test_the_comprehension_instrument_locks_once_someone_answered_it():
    study = make_study(annotators=1)
    Membership.objects.filter(study=study).update(comprehension_failures=1)

    assert "comprehension_instrument" in lifecycle.locked_fields(study)


def test_the_pass_mark_and_retry_lock_once_someone_took_the_qualification():
    study = make_study(annotators=1)
    Membership.objects.filter(study=study).update(qualification_attempts=1)

    locked = lifecycle.locked_fields(study)
    assert {"qualification_pass_mark", "qualification_retry"} <= set(locked)


def test_settings_change_and_are_logged(researcher):
    study = make_study(overlap=2, lease_minutes=60)

    said = lifecycle.update_settings(study, {"overlap": 3, "lease_minutes": 30, "title": study.title},
                                     actor=researcher)

    study.refresh_from_db()
    assert (study.overlap, study.lease_minutes) == (3, 30)
    assert len(said) == 2
    event = StudyEvent.objects.get(study=study)
    assert (event.action, event.actor) == ("settings", researcher)
    assert "3" in event.detail and "30" in event.detail


def test_k_shrinks_only_down_to_the_most_ratings_an_item_has(researcher):
    study = make_study(items=1, overlap=3, annotators=3)
    for annotator in study.annotators.all()[:2]:
        claim(study, annotator)

    assert "Item 1 already has 2 ratings" in lifecycle.overlap_problem(study, 1)
    assert lifecycle.overlap_problem(study, 2) == ""
    with pytest.raises(lifecycle.LifecycleError, match="down to 2"):
        lifecycle.update_settings(study, {"overlap": 1}, actor=researcher)
    lifecycle.update_settings(study, {"overlap": 2}, actor=researcher)
    study.refresh_from_db()
    assert study.overlap == 2


def test_a_locked_setting_is_refused_with_its_reason(researcher):
    study = make_study(annotators=1, seed=5)
    claim(study, study.annotators.get())

    with pytest.raises(lifecycle.LifecycleError, match="order each annotator saw"):
        lifecycle.update_settings(study, {"seed": 6}, actor=researcher)
    study.refresh_from_db()
    assert study.seed == 5
    assert not StudyEvent.objects.filter(study=study).exists()


def test_a_new_lease_applies_to_new_claims(researcher):
    study = make_study(annotators=2, lease_minutes=60)
    first, second = study.annotators.all()
    held = claim(study, first)
    lifecycle.update_settings(study, {"lease_minutes": 5}, actor=researcher)

    fresh = claim(study, second)

    held.refresh_from_db()
    assert held.lease_expires_at - held.claimed_at == timedelta(minutes=60)
    assert fresh.lease_expires_at - fresh.claimed_at == timedelta(minutes=5)


# The phase


def test_pause_stops_new_claims_but_held_items_can_be_submitted(researcher):
    study = make_study(annotators=2)
    first, second = study.annotators.all()
    held = claim(study, first)

    lifecycle.change_phase(study, "pause", actor=researcher)

    assert study.phase == "paused"
    assert claim(study, second) is None
    assert claim(study, first) == held  # "continue" still finds it
    mark_submitted(held)
    held.refresh_from_db()
    assert held.status == Assignment.Status.SUBMITTED
    assert claim(study, first) is None


def test_resume_hands_out_items_again(researcher):
    study = make_study(annotators=1)
    lifecycle.change_phase(study, "pause", actor=researcher)
    lifecycle.change_phase(study, "resume", actor=researcher)

    assert study.phase == "open"
    assert claim(study, study.annotators.get()) is not None


def test_close_takes_back_held_items_and_keeps_their_drafts(researcher):
    study = make_study(annotators=2)
    first, second = study.annotators.all()
    held = claim(study, first)
    draft = make_annotation(held, status="draft")
    done = claim(study, second)
    mark_submitted(done)
    make_annotation(done, submitted_at=timezone.now())

    detail = lifecycle.change_phase(study, "close", actor=researcher)

    assert study.phase == "closed" and study.closed_at is not None
    assert "1 item in progress released" in detail
    held.refresh_from_db()
    done.refresh_from_db()
    assert taken_back(held) and done.status == Assignment.Status.SUBMITTED
    assert held.annotations.get() == draft  # closing never deletes work
    assert claim(study, first) is None
    with pytest.raises(SlotTaken, match="took this item back"):
        renew(held)
    with pytest.raises(SlotTaken):
        mark_submitted(held)


def test_a_taken_back_claim_is_not_retaken_after_reopening(researcher):
    study = make_study(items=1, overlap=2, annotators=1)
    held = claim(study, study.annotators.get())
    lifecycle.change_phase(study, "close", actor=researcher)
    lifecycle.change_phase(study, "reopen", actor=researcher)

    with pytest.raises(SlotTaken):
        renew(held)
    held.refresh_from_db()
    assert held.status == Assignment.Status.RELEASED


def test_a_lapsed_lease_is_not_mistaken_for_a_taken_back_claim():
    study = make_study(annotators=1)
    held = claim(study, study.annotators.get())
    Assignment.objects.filter(pk=held.pk).update(status="released", lease_expires_at=timezone.now())
    held.refresh_from_db()

    assert not taken_back(held)
    renew(held)  # its slot is free: the open tab takes it back
    assert held.status == Assignment.Status.CLAIMED


@pytest.mark.parametrize(("start", "action"), [("open", "resume"), ("open", "reopen"), ("paused", "pause"),
                                               ("closed", "pause"), ("closed", "close"), ("open", "explode")])
def test_a_move_the_phase_does_not_allow_is_refused(researcher, start, action):
    study = make_study(is_open=start == "open", closed_at=timezone.now() if start == "closed" else None)

    with pytest.raises(lifecycle.LifecycleError):
        lifecycle.change_phase(study, action, actor=researcher)
    assert not StudyEvent.objects.filter(study=study).exists()


def test_every_move_is_logged_with_who(researcher):
    study = make_study()
    for action in ("pause", "resume", "close", "reopen"):
        lifecycle.change_phase(study, action, actor=researcher)

    events = list(StudyEvent.objects.filter(study=study).order_by("pk").values_list("action", "actor"))
    assert events == [(action, researcher.pk) for action in ("pause", "resume", "close", "reopen")]


# Items


def test_items_are_added_from_episodes_not_yet_in_the_study(researcher):
    study = make_study(items=2)
    scenario = study.items.first().episode.scenario
    new = [make_episode(scenario=scenario, turns=2) for _ in range(3)]

    added = lifecycle.add_items(study, Episode.objects.all(), limit=None, seed=0, actor=researcher)

    assert (added.added, added.already_in) == (3, 2)
    assert set(study.items.values_list("episode_id", flat=True)) >= {episode.pk for episode in new}
    assert sorted(study.items.values_list("position", flat=True)) == [0, 1, 2, 3, 4]
    assert StudyEvent.objects.get(study=study).action == "items-added"


def test_added_items_can_be_sampled(researcher):
    study = make_study(items=1)
    scenario = study.items.first().episode.scenario
    for _ in range(4):
        make_episode(scenario=scenario, turns=2)

    added = lifecycle.add_items(study, Episode.objects.all(), limit=2, seed=3, actor=researcher)

    assert added.added == 2 and study.items.count() == 3


def test_nothing_new_to_add_says_so(researcher):
    study = make_study(items=2)

    with pytest.raises(lifecycle.LifecycleError, match="already have"):
        lifecycle.add_items(study, Episode.objects.all(), limit=None, seed=0, actor=researcher)


def test_another_teams_episodes_are_never_added(researcher):
    from tests.builders import make_scenario, make_team

    study = make_study(items=1)
    other = make_episode(scenario=make_scenario(team=make_team()), turns=2)

    with pytest.raises(lifecycle.LifecycleError):
        lifecycle.add_items(study, Episode.objects.filter(pk=other.pk), limit=None, seed=0, actor=researcher)


def test_shortening_removes_only_unclaimed_items_and_says_how_many_could_not_go(researcher):
    study = make_study(items=4, overlap=1, annotators=2, gold=1)
    first, second = study.annotators.all()
    claimed = [claim(study, first).item, claim(study, second).item]
    regular_claimed = [item for item in claimed if item.kind == StudyItem.Kind.REGULAR]

    removed = lifecycle.shorten(study, 10, actor=researcher)

    assert removed.removed == 4 - len(regular_claimed)
    assert removed.kept == 10 - removed.removed
    left = set(study.items.values_list("pk", flat=True))
    assert {item.pk for item in claimed} <= left
    assert study.items.filter(kind=StudyItem.Kind.GOLD).exists()
    assert StudyEvent.objects.get(study=study).action == "items-removed"


def test_shortening_takes_the_last_items_first(researcher):
    study = make_study(items=4)

    lifecycle.shorten(study, 1, actor=researcher)

    assert list(study.items.values_list("position", flat=True)) == [0, 1, 2]


# Races


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_claim_racing_a_close_never_leaves_an_item_in_progress():
    researcher = make_researcher()
    annotators = [make_user() for _ in range(4)]
    for _ in range(3):
        study = make_study(items=6, overlap=2, annotators=annotators)
        Membership.objects.filter(study=study).update(instructions_read_at=timezone.now())
        outcomes = at_once(partial(lifecycle.change_phase, study, "close", actor=researcher),
                           *(partial(claim_next, study, annotator) for annotator in annotators))
        assert errors(outcomes) == []
        assert not Assignment.objects.filter(item__study=study, status="claimed").exists()


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_two_researchers_closing_at_once_close_it_once():
    first, second = make_researcher(), make_researcher()
    study = make_study()

    outcomes = at_once(partial(lifecycle.change_phase, study, "close", actor=first),
                       partial(lifecycle.change_phase, study, "close", actor=second))

    assert sum(isinstance(outcome, lifecycle.LifecycleError) for outcome in outcomes) == 1
    assert StudyEvent.objects.filter(study=study, action="close").count() == 1


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_shortening_racing_claims_never_removes_a_claimed_item():
    researcher = make_researcher()
    annotators = [make_user() for _ in range(4)]
    study = make_study(items=6, overlap=1, annotators=annotators)
    Membership.objects.filter(study=study).update(instructions_read_at=timezone.now())

    outcomes = at_once(partial(lifecycle.shorten, study, 6, actor=researcher),
                       *(partial(claim_next, study, annotator) for annotator in annotators))

    assert errors(outcomes) == []
    claimed = [outcome for outcome in outcomes[1:] if outcome is not None]
    assert all(StudyItem.objects.filter(pk=assignment.item_id).exists() for assignment in claimed)
    assert outcomes[0].removed + len(claimed) == 6
