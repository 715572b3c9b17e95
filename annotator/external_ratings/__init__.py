"""Ratings made outside Parley, imported into a study as if its annotators had rated there.

A researcher who ran part of a study elsewhere (a Prolific form, a spreadsheet, Sotopia's own
rating interface) brings those ratings into the study, so its agreement report covers the outside
raters together with Parley's annotators and compares them all with the judge. Two file shapes are
read (``docs/formats.md``, "Ratings files"):

- **long** (CSV or JSON Lines): one answer per row, ``episode_id, annotator_id, question, value``,
  optionally ``rationale``, ``seat`` (the character's seat position from 0, for a question asked per
  character) and ``goal`` (``<role position>.<goal position>``, both from 0, for a question asked per
  goal). A multi-label answer is one row per label;
- **wide** (CSV): one rating per row, ``episode_id, annotator_id`` (and optionally ``seat``), then
  one column per question named by its key: ``key`` for a question asked once per episode (or for
  the row's ``seat``), ``key:<seat>`` for one character, ``key:g<role>.<goal>`` for one goal, and
  ``<key>_rationale`` (with the same suffix) for its rationale. Labels of a multi-label answer are
  joined by ``;``.

The rules, and why:

- **Gold**: rows of the annotator id ``gold`` are an item's adjudicated gold answers, not a rater's
  (``external_ratings.gold``);
- **Who rated**: each annotator id of the file becomes an ``ExternalAnnotator`` of the study, named
  ``external N`` on pages, with an account that cannot sign in and is never in the study's pool,
  so it is never given work. The same id in a later file finds the same annotator. The id itself is
  not stored (see ``ExternalAnnotator``).
- **What was rated**: an episode is named by its external id (or ``parley-episode-<pk>``, as exports
  name one without) and must be an item of the study; one of the team's episodes that is not, or an
  id the team does not have, is refused with the row named.
- **What counts as a rating**: each (annotator, episode) pair is one submitted annotation, read by
  the item page's own rules (``checking``). A question the file never names is not rated (a wide
  file may carry some of the instrument's questions); one it names is answered as the page asks.
  Span questions cannot be carried by these files; a file that names one is refused.
- **Every problem at once**: the whole file is read and checked before anything is written, and
  its problems are told together, each by row and column (``problems``), so one upload shows them all.
- **Stored as if rated in Parley**: the annotations are written by ``annotator.drafts.submit_new``,
  the rows ``submit`` writes for a first version, so the exports, the dashboard and every statistic
  of the report read them unchanged. Time on the page is unknown, so it is recorded as zero (the
  dashboard shows no time and no fast-submission flag).
- **Fast at any size**: the study, its item pages (one per item, not per rating), the external
  annotators and their stored ratings are read once, and everything is written in bulk, so the
  cost grows with the rows of the file, not with queries per rater.
- **Nothing is overwritten**: a rating already in the study with the same answers is unchanged; one
  whose answers differ is refused, so re-importing a file changes nothing and a corrected file
  cannot silently replace what reports were built on.
- **All or nothing**: one transaction per file; a dry run checks and writes everything, then rolls
  back, so it reports exactly what the import would do (the database's own checks included).
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import DatabaseError, transaction
from django.db.models import Max, prefetch_related_objects
from django.utils import timezone

from benchmark.exporting import stable_id
from benchmark.importing import ImportProblem, ImportResult, read_text
from benchmark.instruments.targets import COLUMNS, Target
from benchmark.models import Answer, Episode

from .. import drafts
from ..answer_forms import ParsedForm
from ..item_page import ItemPage
from ..models import Annotation, Assignment, ExternalAnnotator, Study, StudyItem
from . import gold as gold_ratings
from .checking import Answers, answers, check
from .problems import MAX_LISTED, Problems, RatingsRefused
from .reading import Rating, read_ratings

__all__ = [
    "MAX_LISTED", "RatingsRefused", "import_ratings", "import_ratings_text", "make_external_annotators", "source_key",
]


def import_ratings(
    path: str | Path, *, study: Study, dry_run: bool = False, curator: AbstractBaseUser | None = None,
) -> ImportResult:
    """Import one ratings file into ``study``, all or nothing; ``dry_run`` checks and writes, then rolls back.

    Raises ``ImportProblem`` naming the row (or line) and column (or field) of the problem, or
    ``RatingsRefused`` (an ``ImportProblem``) listing every problem when there are several. Rows of the
    annotator id ``gold`` are the items' gold answers (``external_ratings.gold``), decided by ``curator``
    (by default the study's creator).
    """
    path = Path(path)
    return import_ratings_text(read_text(path), file=path.name, study=study, dry_run=dry_run, curator=curator)


def import_ratings_text(
    text: str, *, file: str, study: Study, dry_run: bool = False, curator: AbstractBaseUser | None = None,
) -> ImportResult:
    """``import_ratings`` for a file already read (an upload): ``file`` is its name, for messages and to tell
    a CSV (``.csv``, or a first line with commas that is not JSON) from JSON Lines."""
    first_line = text.lstrip().split("\n", 1)[0]
    csv_file = file.lower().endswith(".csv") or (not first_line.startswith("{") and "," in first_line)
    problems = Problems(file)
    read = read_ratings(text, file, problems, csv_file=csv_file)
    if not read.ratings and not problems:
        problems.add(ImportProblem("holds no ratings", file=file))
    result = ImportResult(file=file, format=f"{read.shape} ratings", dry_run=dry_run)
    try:
        with transaction.atomic():
            context = _Study(study)
            context.read_pages(read.ratings)
            checked = [
                (rating, parsed) for rating in read.ratings
                if (parsed := context.check(rating, read.named, problems, result)) is not None
            ]
            problems.raise_any()
            gold = gold_ratings.check_gold(
                study, [(rating, context.item(rating), parsed) for rating, parsed in checked
                        if gold_ratings.is_gold(rating)],
                curator or study.created_by, problems, result,
            )
            problems.raise_any()
            _store(context, [(rating, parsed) for rating, parsed in checked if not gold_ratings.is_gold(rating)],
                   result)
            if gold:
                gold_ratings.store_gold(gold, curator or study.created_by, file, result)
            if dry_run:
                transaction.set_rollback(True)
    except DatabaseError as error:
        raise ImportProblem(f"the database refused the data: {error}".strip(), file=file) from error
    return result


class _Study:
    """What the import needs of the study, read once: its items by episode id, one item page per item, its
    external annotators by source key, and their ratings already stored."""

    def __init__(self, study: Study) -> None:
        self.study = study
        self.items: dict[str, list[StudyItem]] = defaultdict(list)
        for item in study.items.select_related("episode__scenario").order_by("position"):
            item.study = study  # every page reads the study's instrument: read it once
            self.items[stable_id(item.episode)].append(item)
        self.pages: dict[int, ItemPage] = {}
        self.annotators = {annotator.source_key: annotator for annotator in study.external_annotators.all()}
        existing = Assignment.objects.filter(
            item__study=study, annotator_id__in=[annotator.user_id for annotator in self.annotators.values()]
        )
        self.assignments = {(row.item_id, row.annotator_id): row for row in existing}
        self.stored = _stored(list(self.assignments.values()))

    def item(self, rating: Rating) -> StudyItem:
        items = self.items.get(rating.episode_id, [])
        origin = rating.origin.at("episode_id")
        if len(items) > 1:
            raise origin.problem(
                f"episode {rating.episode_id!r} is in {len(items)} items of study {self.study.slug!r} (pairwise "
                "comparisons, or excerpts of it such as one per mediator intervention); a ratings file cannot tell "
                "them apart"
            )
        if items:
            return items[0]
        if _team_episode(self.study, rating.episode_id):
            raise origin.problem(
                f"episode {rating.episode_id!r} is not in study {self.study.slug!r}: add it to the study first, or "
                "leave its ratings out"
            )
        raise origin.problem(f"the team {self.study.team.slug!r} has no episode with the id {rating.episode_id!r}")

    def read_pages(self, ratings: list[Rating]) -> None:
        """Build, together, a fresh rating's page of each item the ratings name (the same for every annotator)."""
        named = {items[0].pk: items[0] for items in (self.items.get(rating.episode_id) for rating in ratings) if items}
        prefetch_related_objects([self.study.instrument], "questions")  # every page asks them: read them once
        self.pages = ItemPage.fresh_pages(list(named.values()))
        probes = [page.probes for page in self.pages.values() if page.probes is not None]
        prefetch_related_objects(probes, "questions")

    def page(self, item: StudyItem) -> ItemPage:
        return self.pages[item.pk]

    def check(self, rating: Rating, named: set[str], problems: Problems, result: ImportResult) -> ParsedForm | None:
        """The rating read by its item's page, or None with its problems added; one already stored with the same
        answers is counted unchanged (and None)."""
        try:
            item = self.item(rating)
        except ImportProblem as problem:
            problems.add(problem)
            return None
        ignored: set[str] = set()
        parsed = check(rating, self.page(item), named, problems, ignored)
        result.ignored.update(ignored)
        if parsed is None:
            return None
        annotator = self.annotators.get(source_key(self.study, rating.annotator_id))
        existing = self.assignments.get((item.pk, annotator.user_id)) if annotator else None
        if existing is None:
            return parsed
        stored, given = self.stored.get(existing.pk, set()), answers(parsed)
        if stored != given:
            differs = sorted({key for key, *_ in stored ^ given})
            problems.add(rating.origin.problem(
                f"this annotator's rating of episode {rating.episode_id!r} is already in the study with other answers "
                f"(to {', '.join(differs)}); imported ratings are never overwritten: fix the file or leave this "
                "rating out"
            ))
        else:
            result.unchanged["rating"] += 1
        return None


def _team_episode(study: Study, episode_id: str) -> bool:
    episodes = Episode.objects.of_team(study.team)
    if episode_id.startswith("parley-episode-") and episode_id.removeprefix("parley-episode-").isdigit():
        return episodes.filter(pk=int(episode_id.removeprefix("parley-episode-")), external_id="").exists()
    return episodes.filter(external_id=episode_id).exists()


def _stored(assignments: list[Assignment]) -> dict[int, Answers]:
    """The answers of each assignment's latest submitted version, by assignment pk, in two queries."""
    latest: dict[int, list[int]] = {}
    submitted = Annotation.objects.filter(assignment__in=assignments, status=Annotation.Status.SUBMITTED)
    for assignment_id, response_id, probes_id in submitted.order_by("assignment_id", "-version").values_list(
        "assignment_id", "response_id", "probes_response_id"
    ):
        latest.setdefault(assignment_id, [pk for pk in (response_id, probes_id) if pk])
    owner = {response: assignment for assignment, responses in latest.items() for response in responses}
    stored: dict[int, Answers] = defaultdict(set)
    rows = Answer.objects.filter(response_id__in=list(owner)).values_list(
        "response_id", "question__key", "value", "reasoning", *COLUMNS
    )
    for response_id, key, value, reasoning, *target in rows:
        stored[owner[response_id]].add((key, Target.from_columns(*target), value, reasoning))
    return stored


def source_key(study: Study, annotator_id: str) -> str:
    """The stored stand-in for a file's annotator id: SHA-256 of the study's pk and the id."""
    return hashlib.sha256(f"parley-external-annotator:{study.pk}:{annotator_id}".encode()).hexdigest()


def _new_annotators(context: _Study, keys: list[str], result: ImportResult) -> None:
    """Make the study's external annotators (each with an account that cannot sign in) for ``keys``."""
    keys = [key for key in dict.fromkeys(keys) if key not in context.annotators]
    if not keys:
        return
    last = ExternalAnnotator.objects.filter(study=context.study).aggregate(last=Max("number"))["last"] or 0
    made = make_external_annotators(context.study, [(key, last + number) for number, key in enumerate(keys, start=1)])
    for annotator in made:
        context.annotators[annotator.source_key] = annotator
    result.created["external annotator"] += len(made)


def make_external_annotators(study: Study, wanted: list[tuple[str, int]]) -> list[ExternalAnnotator]:
    """Make ``study``'s external annotators ``(source key, number)``, each with an account that cannot sign in
    (also for the spans of an imported SHREC file, ``annotator.external_spans``)."""
    User = get_user_model()
    names = [f"external-{study.pk}-{number}" for _, number in wanted]
    taken = set(User.objects.filter(username__in=names).values_list("username", flat=True))
    users = []
    for name in names:
        while name in taken:
            name += "x"
        taken.add(name)
        user = User(username=name, is_active=False)
        user.set_unusable_password()
        users.append(user)
    users = User.objects.bulk_create(users)
    made = ExternalAnnotator.objects.bulk_create(
        ExternalAnnotator(study=study, number=number, source_key=key, user=user)
        for (key, number), user in zip(wanted, users, strict=True)
    )
    for annotator, user in zip(made, users, strict=True):
        annotator.user = user
    return made


def _store(context: _Study, checked: list[tuple[Rating, ParsedForm]], result: ImportResult) -> None:
    """Store each new rating as a submitted annotation of its external annotator."""
    study = context.study
    _new_annotators(context, [source_key(study, rating.annotator_id) for rating, _ in checked], result)
    now = timezone.now()
    submissions = []
    for rating, parsed in checked:
        item = context.item(rating)
        user = context.annotators[source_key(study, rating.annotator_id)].user
        assignment = Assignment(item=item, annotator=user, status=Assignment.Status.SUBMITTED, claimed_at=now,
                                lease_expires_at=now, submitted_at=now)
        probes = context.page(item).probes
        submissions.append((assignment, parsed, probes.pk if probes else None))
        result.created["answer"] += len(parsed.answers)
    if not submissions:
        return
    drafts.submit_new(submissions)
    result.created["rating"] += len(submissions)
    _note_overlap(study, {item.pk for item in (context.item(rating) for rating, _ in checked)
                          if item.kind == StudyItem.Kind.REGULAR}, result)


def _note_overlap(study: Study, items: set[int], result: ImportResult) -> None:
    """Say when ratings took an item past k: they count, and Parley's annotators get no more of it."""
    if not items:
        return
    submitted = Assignment.objects.filter(item_id__in=items, status=Assignment.Status.SUBMITTED)
    counts = Counter(submitted.values_list("item_id", flat=True))
    over = sum(count > study.overlap for count in counts.values())
    if over:
        result.note(
            f"{over} item(s) now have more than k = {study.overlap} submitted ratings; they count in the report like "
            "any other."
        )
    full = sum(count >= study.overlap for count in counts.values())
    if full:
        result.note(f"{full} item(s) now have k ratings or more, so the study's annotators are not offered them again.")
