"""Drafts, submits and edits: every save is all or nothing, and a stale tab never overwrites newer work."""

import json
from collections import Counter
from datetime import timedelta
from functools import partial

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotator import drafts
from annotator.answer_forms import parse_form
from annotator.assignment import SlotTaken, claim_next
from annotator.models import Annotation, Assignment, Span
from benchmark.instruments.presets import install_preset
from benchmark.models import Answer, Instrument, Response
from tests.annotator.builders import make_study
from tests.builders import make_episode, make_user
from tests.concurrency import at_once

pytestmark = pytest.mark.django_db


COMPLETE = {
    "answer-barrier_type": "semantic",
    "answer-unresolved_confusion": "2",
    "answer-mutual_understanding": "3",
    "rationale-barrier_type": "Lots of 'the thing'.",
}


@pytest.fixture
def socialveil():
    """An annotator's claimed item in a SocialVeil study."""
    annotator = make_user()
    study = make_study(instrument=install_preset("socialveil"), items=2, annotators=[annotator])
    return claim_next(study, annotator)


@pytest.fixture
def shrec():
    annotator = make_user()
    episode = make_episode(turns=[("speak", "Hello there, neighbour."), ("speak", "Keep it down, will you?")])
    study = make_study(instrument=install_preset("shrec-spans"), items=[episode], annotators=[annotator])
    return claim_next(study, annotator)


def parse(assignment, data, *, complete=False):
    turns = list(assignment.item.episode.turns.order_by("index").values_list("content", flat=True))
    return parse_form(
        assignment.item.study.instrument, data, seats=[0, 1], turn_lengths=[len(t) for t in turns], complete=complete
    )


def answers(annotation):
    return dict(annotation.response.answers.values_list("question__key", "value"))


def answer_rows(annotation):
    """question key → the pk and value of its answer row."""
    return {row.question.key: (row.pk, row.value) for row in annotation.response.answers.select_related("question")}


def answer_writes(queries):
    """How many statements of each kind (INSERT, UPDATE, DELETE) wrote answer rows."""
    return Counter(
        query["sql"].split()[0].upper() for query in queries.captured_queries
        if query["sql"].split()[0].upper() in {"INSERT", "UPDATE", "DELETE"} and '"benchmark_answer"' in query["sql"]
    )


def error_span(**fields):
    return {
        "label": "error", "start_turn": 1, "end_turn": 1, "start_char": 0, "end_char": 12,
        "attributes": ["emotions", "social-norms"], "rationale": "Curt.", "correction": "Ask politely.", **fields,
    }


def test_first_save_creates_version_one_at_revision_one(socialveil):
    annotation = drafts.save_draft(socialveil, parse(socialveil, {"answer-barrier_type": "emotional"}),
                                   revision=0, seconds=5)

    assert (annotation.version, annotation.status, annotation.revision) == (1, "draft", 1)
    assert annotation.response.instrument == socialveil.item.study.instrument
    assert (annotation.response.episode, annotation.response.respondent.user) == (
        socialveil.item.episode, socialveil.annotator,
    )
    assert (annotation.response.status, annotation.response.respondent.kind) == ("draft", "annotator")
    assert answers(annotation) == {"barrier_type": "emotional"}
    assert drafts.current(socialveil) == annotation


def test_save_replaces_the_answers_in_place_and_counts_the_revision(socialveil):
    drafts.save_draft(socialveil, parse(socialveil, {"answer-barrier_type": "emotional"}), revision=0, seconds=0)

    annotation = drafts.save_draft(
        socialveil, parse(socialveil, {"answer-unresolved_confusion": "4"}), revision=1, seconds=0
    )

    assert annotation.revision == 2
    assert Annotation.objects.filter(assignment=socialveil).count() == 1
    assert answers(annotation) == {"unresolved_confusion": "4"}
    assert Answer.objects.get(response__annotation=annotation).number == 4


def test_an_autosave_changing_one_answer_updates_only_that_row(socialveil):
    first = drafts.save_draft(socialveil, parse(socialveil, COMPLETE), revision=0, seconds=0)
    before = answer_rows(first)

    with CaptureQueriesContext(connection) as queries:
        annotation = drafts.save_draft(
            socialveil, parse(socialveil, {**COMPLETE, "answer-unresolved_confusion": "4"}), revision=1, seconds=0
        )

    assert answer_writes(queries) == {"UPDATE": 1}
    after = answer_rows(annotation)
    assert after == {**before, "unresolved_confusion": (before["unresolved_confusion"][0], "4")}
    assert Answer.objects.get(pk=after["unresolved_confusion"][0]).number == 4


def test_an_autosave_with_nothing_changed_writes_no_answer(socialveil):
    first = drafts.save_draft(socialveil, parse(socialveil, COMPLETE), revision=0, seconds=0)
    before = answer_rows(first)

    with CaptureQueriesContext(connection) as queries:
        annotation = drafts.save_draft(socialveil, parse(socialveil, COMPLETE), revision=1, seconds=0)

    assert answer_writes(queries) == {}
    assert (annotation.revision, answer_rows(annotation)) == (2, before)


def test_an_autosave_deletes_a_cleared_answer_and_inserts_a_new_one_keeping_the_rest(socialveil):
    without_understanding = {key: value for key, value in COMPLETE.items() if key != "answer-mutual_understanding"}
    first = drafts.save_draft(socialveil, parse(socialveil, without_understanding), revision=0, seconds=0)
    before = answer_rows(first)
    data = {**without_understanding, "answer-mutual_understanding": "5"}
    del data["answer-unresolved_confusion"]

    with CaptureQueriesContext(connection) as queries:
        annotation = drafts.save_draft(socialveil, parse(socialveil, data), revision=1, seconds=0)

    assert answer_writes(queries) == {"DELETE": 1, "INSERT": 1}
    after = answer_rows(annotation)
    assert set(after) == {"barrier_type", "mutual_understanding"}
    assert after["barrier_type"] == before["barrier_type"]
    assert after["mutual_understanding"][1] == "5"
    assert not Answer.objects.filter(pk=before["unresolved_confusion"][0]).exists()


def test_a_submit_after_an_autosave_of_the_same_answers_only_checks_them(socialveil):
    drafts.save_draft(socialveil, parse(socialveil, COMPLETE), revision=0, seconds=0)
    before = answer_rows(drafts.current(socialveil))

    with CaptureQueriesContext(connection) as queries:
        annotation = drafts.submit(socialveil, parse(socialveil, COMPLETE, complete=True), revision=1, seconds=0)

    assert answer_writes(queries) == {}
    assert answer_rows(annotation) == before
    assert Response.objects.get(pk=annotation.response_id).status == Response.Status.SUBMITTED


def test_stale_revision_raises_and_changes_nothing(socialveil):
    drafts.save_draft(socialveil, parse(socialveil, {"answer-barrier_type": "emotional"}), revision=0, seconds=0)
    drafts.save_draft(socialveil, parse(socialveil, {"answer-barrier_type": "semantic"}), revision=1, seconds=0)

    with pytest.raises(drafts.StaleVersion):  # a second tab still showing revision 1
        drafts.save_draft(socialveil, parse(socialveil, {"answer-barrier_type": "none"}), revision=1, seconds=9)

    annotation = drafts.current(socialveil)
    assert annotation.revision == 2
    assert answers(annotation) == {"barrier_type": "semantic"}
    assert annotation.seconds_spent == 0


def test_a_first_save_claiming_a_later_revision_is_stale(socialveil):
    with pytest.raises(drafts.StaleVersion):
        drafts.save_draft(socialveil, parse(socialveil, {}), revision=3, seconds=0)
    assert not Annotation.objects.exists()


# One tab never conflicts with itself: saves naming the same tab are ordered by their numbers

TAB, OTHER_TAB = "a" * 32, "b" * 32


def save_from(assignment, tab, number, data, *, revision, seconds=0):
    return drafts.save_draft(assignment, parse(assignment, data), revision=revision, seconds=seconds, tab=tab,
                             tab_save=number)


def test_a_tabs_page_saving_after_its_previous_pages_late_save_is_not_a_conflict(socialveil):
    save_from(socialveil, TAB, 1, {"answer-barrier_type": "semantic"}, revision=0)
    # The reloaded page was served at revision 1; then the previous page's beacon landed.
    save_from(socialveil, TAB, 2, {"answer-barrier_type": "semantic", "rationale-barrier_type": "Old."}, revision=1)

    annotation = save_from(socialveil, TAB, 3, {"answer-barrier_type": "semantic", "rationale-barrier_type": "New."},
                           revision=1)

    assert (annotation.revision, annotation.saved_by_tab, annotation.tab_save) == (3, TAB, 3)
    assert annotation.response.answers.get().reasoning == "New."


def test_a_late_save_from_a_tabs_previous_page_does_not_clobber_its_newer_one(socialveil):
    save_from(socialveil, TAB, 1, {"answer-barrier_type": "semantic"}, revision=0)
    save_from(socialveil, TAB, 3, {"answer-barrier_type": "semantic", "rationale-barrier_type": "New."}, revision=1)

    with pytest.raises(drafts.Superseded):  # the previous page's beacon, sent before save 3, arrives after it
        save_from(socialveil, TAB, 2, {"answer-barrier_type": "none", "rationale-barrier_type": "Old."}, revision=1,
                  seconds=4)

    annotation = drafts.current(socialveil)
    assert (annotation.revision, annotation.tab_save, annotation.seconds_spent) == (2, 3, 0)
    assert annotation.response.answers.values_list("value", "reasoning").get() == ("semantic", "New.")


def test_a_tab_submits_after_its_own_late_save_without_a_conflict(socialveil):
    save_from(socialveil, TAB, 1, {"answer-barrier_type": "semantic"}, revision=0)
    save_from(socialveil, TAB, 2, {"answer-barrier_type": "none"}, revision=1)  # late, after the reload was served

    annotation = drafts.submit(socialveil, parse(socialveil, COMPLETE, complete=True), revision=1, seconds=0,
                               tab=TAB, tab_save=3)

    assert annotation.status == Annotation.Status.SUBMITTED
    assert answers(annotation)["barrier_type"] == "semantic"


def test_two_tabs_still_conflict_whatever_their_numbers(socialveil):
    save_from(socialveil, TAB, 1, {"answer-barrier_type": "semantic"}, revision=0)
    save_from(socialveil, OTHER_TAB, 2, {"answer-barrier_type": "emotional"}, revision=1)

    with pytest.raises(drafts.StaleVersion) as problem:  # the first tab still shows revision 1
        save_from(socialveil, TAB, 3, {"answer-barrier_type": "none"}, revision=1)
    with pytest.raises(drafts.StaleVersion):
        drafts.submit(socialveil, parse(socialveil, {**COMPLETE, "answer-barrier_type": "none"}, complete=True),
                      revision=1, seconds=0, tab=TAB, tab_save=4)

    assert not isinstance(problem.value, drafts.Superseded)
    annotation = drafts.current(socialveil)
    assert (annotation.revision, annotation.saved_by_tab) == (2, OTHER_TAB)
    assert answers(annotation) == {"barrier_type": "emotional"}


def test_a_save_naming_no_tab_needs_the_current_revision_and_ends_the_tabs_claim(socialveil):
    save_from(socialveil, TAB, 1, {"answer-barrier_type": "semantic"}, revision=0)
    with pytest.raises(drafts.StaleVersion):
        drafts.save_draft(socialveil, parse(socialveil, {"answer-barrier_type": "none"}), revision=0, seconds=0)
    drafts.save_draft(socialveil, parse(socialveil, {"answer-barrier_type": "none"}), revision=1, seconds=0)

    with pytest.raises(drafts.StaleVersion):  # the tab's save was not the last one any more
        save_from(socialveil, TAB, 2, {"answer-barrier_type": "emotional"}, revision=1)
    assert answers(drafts.current(socialveil)) == {"barrier_type": "none"}


def test_submit_validates_every_answer_and_changes_nothing_when_incomplete(socialveil):
    drafts.save_draft(socialveil, parse(socialveil, {"answer-barrier_type": "emotional"}), revision=0, seconds=0)

    with pytest.raises(drafts.Incomplete) as problem:
        drafts.submit(socialveil, parse(socialveil, {"answer-barrier_type": "none"}, complete=True),
                      revision=1, seconds=0)

    assert set(problem.value.errors) == {"answer-unresolved_confusion", "answer-mutual_understanding"}
    annotation = drafts.current(socialveil)
    assert (annotation.status, annotation.revision) == ("draft", 1)
    assert answers(annotation) == {"barrier_type": "emotional"}


def test_submit_stores_the_answers_marks_everything_submitted_and_freezes_the_instrument(socialveil):
    annotation = drafts.submit(socialveil, parse(socialveil, COMPLETE, complete=True), revision=0, seconds=40)

    annotation.refresh_from_db()
    socialveil.refresh_from_db()
    assert annotation.status == "submitted" and annotation.submitted_at is not None
    assert answers(annotation)["barrier_type"] == "semantic"
    assert socialveil.status == Assignment.Status.SUBMITTED
    assert Instrument.objects.get(pk=annotation.response.instrument_id).frozen
    assert annotation.response.status == Response.Status.SUBMITTED


def test_stale_tab_after_submit_cannot_overwrite(socialveil):
    drafts.save_draft(socialveil, parse(socialveil, {"answer-barrier_type": "emotional"}), revision=0, seconds=0)
    drafts.submit(socialveil, parse(socialveil, COMPLETE, complete=True), revision=1, seconds=0)

    with pytest.raises(drafts.StaleVersion):  # the other tab autosaves with the revision it last saw
        drafts.save_draft(socialveil, parse(socialveil, {"answer-barrier_type": "none"}), revision=2, seconds=0)
    with pytest.raises(drafts.StaleVersion):
        drafts.submit(socialveil, parse(socialveil, {**COMPLETE, "answer-barrier_type": "none"}, complete=True),
                      revision=1, seconds=0)

    annotation = Annotation.objects.get(assignment=socialveil)
    assert answers(annotation)["barrier_type"] == "semantic"


def test_edit_makes_version_two_copying_answers_and_spans_and_leaves_version_one_alone(shrec):
    submitted = drafts.submit(
        shrec,
        parse(shrec, {"spans-spans": json.dumps([error_span()]), "answer-overall_comment": "Tense."}, complete=True),
        revision=0, seconds=0,
    )

    draft = drafts.start_edit(shrec, version=1)
    drafts.save_draft(shrec, parse(shrec, {"spans-spans": "[]", "answer-overall_comment": "Changed."}),
                      revision=draft.revision, seconds=0)

    assert (draft.version, draft.status, draft.revision) == (2, "draft", 0)
    assert drafts.current(shrec).pk == draft.pk
    original = Annotation.objects.get(pk=submitted.pk)
    assert original.status == "submitted"
    assert (original.response.status, draft.response.status) == ("submitted", "draft")
    assert draft.response_id != original.response_id
    assert answers(original) == {"overall_comment": "Tense."}
    span = original.spans.get()
    assert (span.label, span.start_turn, span.end_char, span.correction) == ("error", 1, 12, "Ask politely.")
    assert sorted(span.attributes.values_list("key", flat=True)) == ["emotions", "social-norms"]
    assert answers(draft) == {"overall_comment": "Changed."}
    assert not draft.spans.exists()


def test_edit_copies_the_spans_with_their_attributes(shrec):
    drafts.submit(shrec, parse(shrec, {"spans-spans": json.dumps([error_span()])}, complete=True),
                  revision=0, seconds=0)

    draft = drafts.start_edit(shrec, version=1)

    span = draft.spans.get()
    assert (span.start_turn, span.start_char, span.end_char, span.rationale) == (1, 0, 12, "Curt.")
    assert sorted(span.attributes.values_list("key", flat=True)) == ["emotions", "social-norms"]


def test_edit_only_starts_from_the_latest_submitted_version(socialveil):
    with pytest.raises(drafts.StaleVersion):  # nothing submitted yet
        drafts.start_edit(socialveil, version=1)
    drafts.submit(socialveil, parse(socialveil, COMPLETE, complete=True), revision=0, seconds=0)
    drafts.start_edit(socialveil, version=1)

    with pytest.raises(drafts.StaleVersion):  # a second click, or an old page
        drafts.start_edit(socialveil, version=1)
    assert Annotation.objects.filter(assignment=socialveil).count() == 2


def test_submitting_an_edit_keeps_both_versions(socialveil):
    drafts.submit(socialveil, parse(socialveil, COMPLETE, complete=True), revision=0, seconds=0)
    draft = drafts.start_edit(socialveil, version=1)

    drafts.submit(socialveil, parse(socialveil, {**COMPLETE, "answer-barrier_type": "none"}, complete=True),
                  revision=draft.revision, seconds=0)

    versions = Annotation.objects.filter(assignment=socialveil).order_by("version")
    assert [(a.version, a.status, answers(a)["barrier_type"]) for a in versions] == [
        (1, "submitted", "semantic"), (2, "submitted", "none")
    ]
    # Whoever reads responses sees the edit as the current answers, the first version as superseded.
    assert [a.response.status for a in versions] == ["superseded", "submitted"]


def test_seconds_accumulate_on_the_annotation_and_the_assignment(socialveil):
    drafts.save_draft(socialveil, parse(socialveil, {}), revision=0, seconds=30)
    drafts.save_draft(socialveil, parse(socialveil, {}), revision=1, seconds=12)
    drafts.submit(socialveil, parse(socialveil, COMPLETE, complete=True), revision=2, seconds=3)

    socialveil.refresh_from_db()
    assert Annotation.objects.get(assignment=socialveil).seconds_spent == 45
    assert socialveil.seconds_spent == 45


def test_an_implausible_number_of_seconds_is_capped(socialveil):
    annotation = drafts.save_draft(socialveil, parse(socialveil, {}), revision=0, seconds=10**9)
    assert annotation.seconds_spent == drafts.MAX_SECONDS_PER_SAVE


def test_a_save_renews_the_lease(socialveil):
    Assignment.objects.filter(pk=socialveil.pk).update(lease_expires_at=timezone.now() + timedelta(minutes=1))

    drafts.save_draft(socialveil, parse(socialveil, {}), revision=0, seconds=0)

    socialveil.refresh_from_db()
    assert socialveil.lease_expires_at > timezone.now() + timedelta(minutes=30)


def test_a_save_after_the_slot_went_to_someone_else_stores_nothing():
    first, second = make_user(), make_user()
    study = make_study(instrument=install_preset("socialveil"), items=1, overlap=1, annotators=[first, second])
    lapsed = claim_next(study, first)
    Assignment.objects.filter(pk=lapsed.pk).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    assert claim_next(study, second) is not None

    with pytest.raises(SlotTaken):
        drafts.save_draft(lapsed, parse(lapsed, {"answer-barrier_type": "none"}), revision=0, seconds=0)
    assert not Annotation.objects.exists()


def test_spans_are_stored_with_their_attributes(shrec):
    spans = [error_span(), error_span(label="competency", correction="", start_turn=0, end_turn=1,
                                      start_char=None, end_char=None, attributes=["engagement"])]

    annotation = drafts.save_draft(shrec, parse(shrec, {"spans-spans": json.dumps(spans)}), revision=0, seconds=0)

    stored = list(annotation.spans.order_by("pk"))
    assert [(s.label, s.start_turn, s.end_turn, s.start_char) for s in stored] == [
        ("error", 1, 1, 0), ("competency", 0, 1, None)
    ]
    assert [sorted(s.attributes.values_list("key", flat=True)) for s in stored] == [
        ["emotions", "social-norms"], ["engagement"]
    ]


def test_a_draft_span_without_its_rationale_is_stored_as_typed(shrec):
    parsed = parse(shrec, {"spans-spans": json.dumps([error_span(), error_span(rationale="", correction="")])})

    annotation = drafts.save_draft(shrec, parsed, revision=0, seconds=0)

    stored = Span.objects.filter(annotation=annotation).order_by("pk")
    assert [(span.rationale != "", span.correction != "") for span in stored] == [(True, True), (False, False)]


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_tabs_saving_at_once_are_serialised_and_only_one_wins():
    """Six tabs of the same item post their first autosave at the same moment: one creates the draft."""
    annotator = make_user()
    study = make_study(instrument=install_preset("socialveil"), items=1, annotators=[annotator])
    assignment = claim_next(study, annotator)
    parsed = [parse(assignment, {"answer-barrier_type": value}) for value in
              ("none", "semantic", "emotional", "sociocultural", "none", "semantic")]

    def save(form):
        try:
            drafts.save_draft(Assignment.objects.get(pk=assignment.pk), form, revision=0, seconds=1)
        except drafts.StaleVersion:
            return "stale"
        return "saved"

    outcomes = at_once(*(partial(save, form) for form in parsed))

    assert Counter(outcomes) == {"saved": 1, "stale": 5}
    annotation = Annotation.objects.get(assignment=assignment)
    assert (annotation.version, annotation.revision, annotation.seconds_spent) == (1, 1, 1)
    assert annotation.response.answers.count() == 1


def test_cancelling_an_edit_deletes_the_draft_and_keeps_the_submitted_version(socialveil):
    drafts.submit(socialveil, parse(socialveil, COMPLETE, complete=True), revision=0, seconds=0)
    draft = drafts.start_edit(socialveil, version=1)
    drafts.save_draft(socialveil, parse(socialveil, {**COMPLETE, "answer-barrier_type": "none"}),
                      revision=draft.revision, seconds=0)

    drafts.cancel_edit(socialveil, version=2)

    versions = Annotation.objects.filter(assignment=socialveil)
    assert [(a.version, a.status, answers(a)["barrier_type"]) for a in versions] == [(1, "submitted", "semantic")]
    assert Assignment.objects.get(pk=socialveil.pk).status == Assignment.Status.SUBMITTED
    assert not Response.objects.filter(pk=draft.response_id).exists()  # the cancelled version's answers went too
    assert not Answer.objects.filter(response_id=draft.response_id).exists()


def test_only_an_open_edit_of_a_submitted_version_can_be_cancelled(socialveil):
    drafts.save_draft(socialveil, parse(socialveil, COMPLETE), revision=0, seconds=0)
    with pytest.raises(drafts.StaleVersion):  # a first draft is not an edit
        drafts.cancel_edit(socialveil, version=1)
    drafts.submit(socialveil, parse(socialveil, COMPLETE, complete=True), revision=1, seconds=0)
    with pytest.raises(drafts.StaleVersion):  # nothing being edited
        drafts.cancel_edit(socialveil, version=1)
    drafts.start_edit(socialveil, version=1)
    drafts.cancel_edit(socialveil, version=2)

    with pytest.raises(drafts.StaleVersion):  # a second click, or an old page
        drafts.cancel_edit(socialveil, version=2)
    assert Annotation.objects.filter(assignment=socialveil).count() == 1


def test_deleting_a_study_takes_its_annotations_answers_with_it(socialveil):
    drafts.submit(socialveil, parse(socialveil, COMPLETE, complete=True), revision=0, seconds=0)
    drafts.start_edit(socialveil, version=1)

    socialveil.item.study.delete()

    assert not Annotation.objects.exists()
    assert not Response.objects.exists() and not Answer.objects.exists()  # no orphaned answers for reports to find
