"""Gold answers in a ratings file: the rows whose ``annotator_id`` is ``gold``.

A ratings file may carry an item's adjudicated answers made elsewhere (a spreadsheet where two people agreed
on the gold): its rows for the annotator id ``gold`` (any case) are read and checked exactly as any rater's,
then stored as the item's **final** gold (``annotator.adjudication.save_curation``: the study's gold
respondent, every answer the curator's own, each noted as imported from the file), never as an external
annotator's rating, so they never count among the annotators. The curator is whoever imports the file (on the
command line, the study's creator). As with ratings, nothing is overwritten: an item whose gold is already
final with the same answers is unchanged, and an item that already has other gold (or a curator's draft)
is refused with the row named.
"""

from __future__ import annotations

from collections import defaultdict

from django.contrib.auth.models import AbstractBaseUser

from benchmark.importing import ImportResult
from benchmark.instruments.targets import Target
from benchmark.models import Question

from ..adjudication import Decided, save_curation
from ..answer_forms import ParsedForm
from ..gold import GOLD
from ..models import Curation, Study, StudyItem
from .problems import Problems
from .reading import Rating

Checked = list[tuple[Rating, StudyItem, ParsedForm]]


def is_gold(rating: Rating) -> bool:
    return rating.annotator_id.strip().lower() == GOLD


def _decided(parsed: ParsedForm, file: str) -> list[Decided]:
    """The parsed answers as gold decisions, one per question and target (a multi-label's labels together)."""
    grouped: dict[tuple[int, Target], Decided] = {}
    questions: dict[int, Question] = {}
    by_cell: dict[tuple[int, Target], list] = defaultdict(list)
    for answer in parsed.answers:
        questions[answer.question.pk] = answer.question
        by_cell[(answer.question.pk, answer.target)].append(answer)
    for (question_id, target), answers in by_cell.items():
        grouped[(question_id, target)] = Decided(
            questions[question_id], target, None, [answer.value for answer in answers], answers[0].number,
            answers[0].rationale, f"imported from {file}",
        )
    return list(grouped.values())


def _stored(curation: Curation) -> set[tuple[int, Target, str]]:
    return {
        (answer.question_id, Target.of(answer), answer.value) for answer in curation.response.answers.all()
    }


def check_gold(study: Study, checked: Checked, curator: AbstractBaseUser | None, problems: Problems,
               result: ImportResult) -> Checked:
    """The gold ratings still to store; problems for those that would overwrite gold or lack a curator."""
    curations = {c.item_id: c for c in Curation.objects.filter(item__study=study).select_related("response")}
    fresh = []
    for rating, item, parsed in checked:
        if curator is None:
            problems.add(rating.origin.at("annotator_id").problem(
                "gold answers need a curator: import the file from the study's page, or create the study with an "
                "account first"
            ))
            continue
        existing = curations.get(item.pk)
        if existing is None:
            fresh.append((rating, item, parsed))
            continue
        given = {(answer.question.pk, answer.target, answer.value) for answer in parsed.answers}
        if existing.status == Curation.Status.FINAL and _stored(existing) == given:
            result.unchanged["gold answer set"] += 1
        else:
            problems.add(rating.origin.at("annotator_id").problem(
                f"item {item.position + 1} (episode {rating.episode_id!r}) already has "
                f"{'gold answers' if existing.status == Curation.Status.FINAL else 'a curator’s draft'} that differ "
                "from the file's; gold is never overwritten by an import: fix the file or leave these rows out"
            ))
    return fresh


def store_gold(checked: Checked, curator: AbstractBaseUser, file: str, result: ImportResult) -> None:
    """Each item's gold rows as its final curation (all in the import's transaction)."""
    for _rating, item, parsed in checked:
        decided = _decided(parsed, file)
        save_curation(item, curator, decided, final=True, note=f"Imported from {file}.", log=f"imported from {file}")
        result.created["gold answer"] += sum(len(entry.values) for entry in decided)
        result.created["gold answer set"] += 1
