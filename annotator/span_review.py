"""SHREC's review step (spec ``shrec.md`` §1.1 "Protocol", SH-15): each annotator reviews the other's unmatched spans.

After two annotators marked an episode's spans independently, the spans SHREC's pairing left alone (singletons:
no span of the other annotator pairs with them) go back to the *other* annotator, who says whether they agree
with the mark. The share of reviewed marks they disagree with is the "persistent disagreement" (8.7 % in the
paper), reported in the review study's agreement report (``annotator.reports.reviews``).

A review is an ordinary annotation study made from a span study (``create_review_study``, the
``shrec_review_study`` command):

- the spans are read as SHREC's task builders read them (``annotator.shrec_records``) and paired as they
  pair them (``benchmark.shrec.segments``: the first two annotators who marked something, SHREC's rule on
  times, IoU on turns for spans without times); every singleton group is one unmatched span;
- one study item per unmatched span: a window of the span's turns (``StudyItem.first_turn``/``last_turn``),
  the span itself (``StudyItem.reviewed_span``) and the one annotator who may take it, the other annotator
  of that episode (``StudyItem.reviewer``; ``annotator.assignment`` offers the item to no one else);
- the instrument is made from ``REVIEW_SPEC``: "Do you agree with this mark?" (yes / no) and an optional
  comment; the item page shows the mark (label, attributes, rationale, correction, channel, its turns and
  times) above the excerpt (``review_view``), never the reviewer's own spans.

The limitation: annotators imported with a SHREC file (external annotators 1–3) cannot sign in, so their
episodes' unmatched spans cannot be reviewed in Parley; the command says so and leaves them out. The review
is for Parley's own span studies (SH-14), whose annotators have accounts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.text import slugify

from benchmark.instruments.checks import DEFAULT_TEXT_MAX_LENGTH
from benchmark.instruments.preset_specs import PresetSpec, QuestionSpec
from benchmark.instruments.versions import next_version
from benchmark.models import Instrument, Question
from benchmark.shrec.segments import SegmentOptions, annotator_pairs, episode_segments

from .forms import join_team_as_annotators
from .models import Membership, Span, Study, StudyItem
from .reports.reviews import AGREE, REVIEW_PRESET
from .shrec_records import study_episode_records

COMMENT = "comment"
REVIEW_SPEC = PresetSpec(
    name="SHREC span review",
    description=(
        "An annotator looks at a mark another annotator made on the same conversation that their own marks did "
        "not match, and says whether they agree with it (SHREC's review step)."
    ),
    questions=(
        QuestionSpec(
            key=AGREE, kind="yes_no", prompt="Do you agree with this mark?",
            help_text=(
                "Yes if you think the stretch shown is fairly marked as it is (the kind of mark and what it says); "
                "no if you still think it should not be marked this way."
            ),
        ),
        QuestionSpec(
            key=COMMENT, kind="text", required=False, prompt="Anything you would like to add?",
            help_text="Optional. For instance what you would change about the mark, or why you disagree.",
            options={"max_length": DEFAULT_TEXT_MAX_LENGTH},
        ),
    ),
    seats_needed=1,
)
INSTRUCTIONS = (
    "Another annotator marked these moments of conversations you annotated too, and your own marks did not "
    "match them. For each one you see the stretch of the conversation and what they said of it: whether the "
    "agent made a social error or showed competence, the social attributes involved, why, and for an error what "
    "the agent should have done.\n\n"
    "Say whether you agree with the mark. Disagreeing is fine: it is kept as a disagreement, nothing is "
    "changed. Your answers save as you go."
)
EXTERNAL_NOTE = (
    "review needs annotators who can sign in: the annotators of an imported SHREC file (external annotators) "
    "cannot, so their unmatched spans are left out"
)


class ReviewProblem(ValueError):
    """A review study that cannot be made, with a message that says why."""


@dataclass(frozen=True)
class Unmatched:
    """A span its episode's other annotator left unmatched, and who should review it."""

    span_id: int
    episode_id: int
    reviewer_id: int
    external: bool  # the reviewer is an external annotator, who cannot sign in


@dataclass(frozen=True)
class ReviewStudy:
    """What ``create_review_study`` made: the study (None when nothing could be reviewed) and what it left out."""

    study: Study | None
    items: int
    external: int  # unmatched spans left out because their reviewer cannot sign in
    unmatched: int


def unmatched_spans(study: Study, options: SegmentOptions | None = None) -> list[Unmatched]:
    """Every span of ``study`` that SHREC's pairing leaves alone, with the other annotator of its episode."""
    options = options or SegmentOptions()
    found: list[tuple[int, int, int]] = []  # (span, episode, a span of the reviewer's)
    for record in study_episode_records(study):
        pairs = annotator_pairs(record, record.timed, "first_two")
        if not pairs or pairs[0][1] is None:
            continue  # one annotator marked something: there is no one to review it
        first, second = pairs[0]
        try:
            groups = episode_segments(record, options).groups
        except ValueError as problem:
            raise ReviewProblem(str(problem)) from None
        for segment in groups:
            if len(segment.span_ids) != 1:
                continue
            other = second if segment.annotators[0] == first.name else first
            found.append((int(segment.span_ids[0]), record.episode_id, int(other.spans[0].id)))
    owner = "annotation__assignment__annotator"
    rows = Span.objects.filter(pk__in=[row[2] for row in found]).values_list(
        "pk", f"{owner}_id", f"{owner}__external_annotator__number"
    )
    owners = {pk: (annotator, number is not None) for pk, annotator, number in rows}
    return [Unmatched(span, episode, *owners[theirs]) for span, episode, theirs in found]


def create_review_study(
    study: Study, *, title: str = "", slug: str = "", seed: int = 0, created_by: AbstractBaseUser | None = None,
) -> ReviewStudy:
    """A review study of ``study``'s unmatched spans, each offered to the other annotator alone, all or nothing.

    Spans whose reviewer is an external annotator are left out (counted in ``external``). Raises
    ``ReviewProblem`` when the slug is taken or the spans cannot be paired; returns a ``ReviewStudy`` without a
    study when no span can be reviewed."""
    if slug and Study.objects.filter(slug=slug).exists():
        raise ReviewProblem(f"the slug {slug!r} is not available; choose another")
    unmatched = unmatched_spans(study)
    reviewable = [row for row in unmatched if not row.external]
    external = len(unmatched) - len(reviewable)
    if not reviewable:
        return ReviewStudy(None, 0, external, len(unmatched))
    spans = {span.pk: span for span in Span.objects.filter(pk__in=[row.span_id for row in reviewable])}
    title = (title.strip() or f"Review: {study.title}")[:200]
    with transaction.atomic():
        instrument = _instrument(study.team, f"SHREC span review: {study.title}"[:200])
        review = Study.objects.create(
            team=study.team, title=title, slug=slug or _free_slug(title), instrument=instrument,
            instructions=INSTRUCTIONS, overlap=1, seed=seed, created_by=created_by, spans_need_rationale=False,
        )
        StudyItem.objects.bulk_create(
            StudyItem(
                study=review, position=position, episode_id=row.episode_id, first_turn=spans[row.span_id].start_turn,
                last_turn=spans[row.span_id].end_turn, reviewed_span_id=row.span_id, reviewer_id=row.reviewer_id,
            )
            for position, row in enumerate(reviewable)
        )
        reviewers = sorted({row.reviewer_id for row in reviewable})
        Membership.objects.bulk_create(Membership(study=review, annotator_id=user) for user in reviewers)
        join_team_as_annotators(study.team, list(review.annotators.all()))
    return ReviewStudy(review, len(reviewable), external, len(unmatched))


def _instrument(team: Any, name: str) -> Instrument:
    instrument = Instrument.objects.create(
        team=team, name=name, version=next_version(name), preset=REVIEW_PRESET, description=REVIEW_SPEC.description
    )
    questions = REVIEW_SPEC.questions
    Question.objects.bulk_create(spec.build(instrument, position) for position, spec in enumerate(questions))
    return instrument


def _free_slug(title: str) -> str:
    """A slug made from the title, numbered when taken (slugs are unique across teams)."""
    base = slugify(title)[:70].strip("-") or "shrec-span-review"
    slug, number = base, 1
    while Study.objects.filter(slug=slug).exists():
        number += 1
        slug = f"{base}-{number}"
    return slug


@dataclass(frozen=True)
class ReviewView:
    """The mark a review item shows, as plain values (the item page's blinding: no model instance)."""

    label: str
    attributes: tuple[str, ...]
    rationale: str
    correction: str
    channel: str
    turns: str
    seconds: str


def review_view(span: Span | None) -> ReviewView | None:
    """What the item page says of the reviewed ``span`` (None for other items)."""
    if span is None:
        return None
    turns = (
        f"turn {span.start_turn + 1}" if span.start_turn == span.end_turn
        else f"turns {span.start_turn + 1}–{span.end_turn + 1}"
    )
    seconds = f"{span.start_s:.1f} s to {span.end_s:.1f} s" if span.start_s is not None else ""
    return ReviewView(
        label=Span.Label(span.label).label.capitalize(),
        attributes=tuple(span.attributes.order_by("position", "key").values_list("name", flat=True)),
        rationale=span.rationale.strip(), correction=span.correction.strip(),
        channel=Span.Channel(span.channel).label.capitalize() if span.channel else "",
        turns=turns, seconds=seconds,
    )
