"""SHREC's review step (SH-15): each annotator reviews the other's unmatched spans; persistent disagreement."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from annotator import assignment as assignments
from annotator.models import Assignment, Membership, Span, StudyItem
from annotator.reports.build import build_report
from annotator.span_review import REVIEW_PRESET, create_review_study, unmatched_spans
from benchmark.instruments.presets import install_preset
from benchmark.models import SocialAttribute
from tests.annotator.builders import make_annotation, make_study
from tests.builders import add_to_team, make_scenario, make_user

from .shrec_study import shrec_study, timed_episode

pytestmark = pytest.mark.django_db
NOW = timezone.now()


def _annotate(study, item, user, spans, minutes):
    """``user``'s submitted annotation of ``item`` with ``spans`` (label, start_s, end_s, turn, attributes, text)."""
    claimed = NOW + timedelta(minutes=minutes)  # the claim's time orders the annotators (first, second)
    assignment = Assignment.objects.create(item=item, annotator=user, claimed_at=claimed,
                                           lease_expires_at=claimed + timedelta(hours=1), status="submitted",
                                           submitted_at=claimed)
    annotation = make_annotation(assignment, submitted_at=claimed)
    question = study.instrument.questions.get(key="spans")
    for label, start_s, end_s, turn, attributes, text in spans:
        span = Span.objects.create(
            annotation=annotation, question=question, label=label, start_turn=turn, end_turn=turn + 1,
            start_s=start_s, end_s=end_s, seat_position=0, channel="non-verbal",
            rationale=f"{text} rationale", correction=f"{text} correction" if label == "error" else "",
        )
        span.attributes.set(SocialAttribute.objects.filter(key__in=attributes))


@pytest.fixture
def spans_study():
    """Two annotators with accounts on episode 1 (one pair, one unmatched span each); alice alone on episode 2."""
    scenario = make_scenario()
    alice, bob = make_user(username="alice"), make_user(username="bob")
    study = make_study(instrument=install_preset("shrec-spans"), items=[], team=scenario.team,
                       title="Our spans", slug="our-spans", annotators=[alice, bob])
    first = StudyItem.objects.create(study=study, episode=timed_episode(scenario, 1, "empathic"), position=0)
    second = StudyItem.objects.create(study=study, episode=timed_episode(scenario, 2, "empathic"), position=1)
    _annotate(study, first, alice, [("error", 6.0, 13.0, 1, ["emotions"], "Alice paired"),
                                    ("competency", 26.0, 33.0, 5, ["engagement"], "Alice alone")], 0)
    _annotate(study, first, bob, [("error", 7.0, 13.0, 1, ["emotions"], "Bob paired"),
                                  ("error", 46.0, 53.0, 9, ["intention", "social-norms"], "Bob alone")], 1)
    _annotate(study, second, alice, [("error", 6.0, 13.0, 1, ["emotions"], "Alice only")], 2)
    return study, alice, bob


def _review(study, **options):
    review = create_review_study(study, **options).study
    review.memberships.update(instructions_read_at=NOW)
    return review


def _span(text):
    return Span.objects.get(rationale=f"{text} rationale")


def test_each_unmatched_span_goes_to_the_other_annotator_of_its_episode(spans_study):
    study, alice, bob = spans_study
    found = {(row.span_id, row.reviewer_id, row.external) for row in unmatched_spans(study)}
    assert found == {(_span("Alice alone").pk, bob.pk, False), (_span("Bob alone").pk, alice.pk, False)}


def test_the_command_makes_one_windowed_item_per_unmatched_span_reserved_for_its_reviewer(spans_study):
    study, alice, bob = spans_study
    out = StringIO()
    call_command("shrec_review_study", "--study", study.slug, "--slug", "our-review", stdout=out)
    assert "Created review study 'our-review' of 'our-spans': 2 unmatched spans to review" in out.getvalue()
    assert "2 reviewers" in out.getvalue()
    items = {item.reviewed_span.rationale: item for item in StudyItem.objects.filter(study__slug="our-review")}
    assert set(items) == {"Alice alone rationale", "Bob alone rationale"}
    assert (items["Alice alone rationale"].reviewer, items["Bob alone rationale"].reviewer) == (bob, alice)
    assert (items["Bob alone rationale"].first_turn, items["Bob alone rationale"].last_turn) == (9, 10)
    review = items["Bob alone rationale"].study
    assert review.overlap == 1 and review.instrument.preset == REVIEW_PRESET
    assert [q.key for q in review.instrument.questions.order_by("position")] == ["agree", "comment"]
    assert set(review.annotators.all()) == {alice, bob}
    with pytest.raises(CommandError, match="'our-review' is not available"):
        call_command("shrec_review_study", "--study", study.slug, "--slug", "our-review", stdout=StringIO())


def test_only_the_other_annotator_can_claim_an_item(spans_study):
    study, alice, bob = spans_study
    review = _review(study)
    carol = make_user(username="carol")
    Membership.objects.create(study=review, annotator=carol, instructions_read_at=NOW)
    assert assignments.remaining_for(review, carol) == 0
    assert assignments.claim_next(review, carol) is None
    for reviewer, marked_by in ((alice, "Bob alone"), (bob, "Alice alone")):
        assert assignments.remaining_for(review, reviewer) == 1
        assert assignments.progress(review).per_annotator[reviewer.pk].remaining == 1
        claimed = assignments.claim_next(review, reviewer)
        assert claimed.item.reviewed_span == _span(marked_by)
        assignments.mark_submitted(claimed)
        assert assignments.claim_next(review, reviewer) is None
    assert assignments.progress(review).per_annotator[carol.pk].remaining == 0


def test_the_page_shows_the_other_annotators_mark_and_never_the_reviewers_own(client, spans_study):
    study, alice, _ = spans_study
    review = _review(study)
    add_to_team(alice, study.team, role="annotator")
    client.force_login(alice)
    claimed = assignments.claim_next(review, alice)
    page = client.get(reverse("annotator:item", args=[claimed.pk]))
    html = page.text
    assert page.status_code == 200
    for shown in ("The mark to review: Social error", "Bob alone rationale", "Bob alone correction", "Intention",
                  "Social norms and routines", "Non-verbal", "turns 10–11", "46.0 s to 53.0 s",
                  "Do you agree with this mark?", "Episode 1 says line 9.", "Episode 1 says line 10."):
        assert shown in html, shown
    for hidden in ("Alice paired", "Alice alone", "Alice only", "Bob paired", "Episode 1 says line 8."):
        assert hidden not in html, hidden
    assert page.context["review"].label == "Social error"


def test_the_page_context_holds_no_model_instance(spans_study):
    from annotator.answer_forms import FormValues
    from annotator.item_page import ItemPage
    from tests.annotator.test_item_page_context import model_objects

    study, alice, _ = spans_study
    page = ItemPage(assignments.claim_next(_review(study), alice))
    context = page.context(alice, FormValues.stored(page.annotation))
    assert context["review"] is not None and model_objects(context) == []


def test_the_report_gives_the_share_of_persistent_disagreement(client, spans_study):
    study, alice, bob = spans_study
    review = _review(study)
    assert build_report(review, resamples=20)["span_review"]["reviewed"] == 0
    for reviewer, agree in ((alice, "no"), (bob, "yes")):
        add_to_team(reviewer, study.team, role="annotator")
        client.force_login(reviewer)
        claimed = assignments.claim_next(review, reviewer)
        response = client.post(reverse("annotator:submit", args=[claimed.pk]),
                               {"answer-agree": agree, "answer-comment": "", "revision": "0"})
        assert response.status_code in (200, 302)
    report = build_report(review, resamples=20)
    outcome = report["span_review"]
    assert (outcome["marks"], outcome["reviewed"], outcome["disagreed"]) == (2, 2, 1)
    assert outcome["persistent_disagreement"] == pytest.approx(0.5)
    assert any("50.0% persistent disagreement" in note for note in report["notes"])
    assert build_report(study, resamples=20)["span_review"] is None  # not a review study
    client.force_login(make_user(staff=True))
    assert "50.0% persistent disagreement" in client.get(reverse("annotator:report", args=[review.slug])).text
    assert client.get(reverse("annotator:dashboard", args=[review.slug])).status_code == 200


def test_an_imported_files_external_annotators_cannot_review_and_the_command_says_so():
    study = shrec_study()
    assert create_review_study(study).unmatched == 0  # every span of the fixture pairs
    paired = Span.objects.filter(annotation__assignment__item__study=study).first()
    Span.objects.create(annotation=paired.annotation, question=paired.question, label="error", start_turn=10,
                        end_turn=10, start_s=50.0, end_s=54.0, seat_position=0, rationale="Left alone")
    made = create_review_study(study)
    assert made.study is None and made.unmatched == made.external == 1
    assert not StudyItem.objects.filter(reviewed_span__isnull=False).exists()
    with pytest.raises(CommandError, match="review needs annotators who can sign in"):
        call_command("shrec_review_study", "--study", study.slug, stdout=StringIO())
