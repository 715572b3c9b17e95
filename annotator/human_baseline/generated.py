"""Generated answers for the demo's human-baseline study, labelled as generated wherever they appear.

A fresh demo has no people to answer its task items, so the results' Human row would be empty. These
answers stand in for them: each generated person picks the item's correct answer with a chance of their
own (``SKILLS``, 0.85 down to 0.65, around the paper's human accuracies of 0.54–0.87) and otherwise a
wrong one at random: another option; for the attribute task the gold set with one attribute dropped or one
added; for the multiple-attribute task the other answer. The gold is read only to draw this seeded
accuracy: nothing else of the item's answer shapes what is picked.

Each answer is read by the item page's own form (``ItemPage.parse`` with ``complete=True``) and stored by the
bulk path of imported ratings (``drafts.submit_new``: the same checks in a handful of queries, so a demo of a
few hundred answers takes a second or two, not half a minute). It carries ``generated_by = GENERATED_BY``
(``Annotation.generated_by``), which the human-baseline source hands on to the results
(``HumanAnswer.generated_by``). Everything is seeded: the same study and people give the same answers.
Running it again on a study that has generated answers changes nothing.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.http import QueryDict
from django.utils import timezone

from benchmark.models import Task

from .. import drafts
from ..answer_forms import field_name
from ..forms import join_team_as_annotators
from ..item_page import ItemPage
from ..models import Annotation, Assignment, Membership, Study, StudyItem

GENERATED_BY = "seeded answers generated for the demo (no person gave them)"
SKILLS = (0.85, 0.75, 0.65)  # each generated person's chance of the right answer, in turn
SECONDS_PER_ITEM = (20, 120)


def generate_human_answers(study: Study, annotators: Sequence[AbstractBaseUser], *, seed: int = 0) -> int:
    """Answer every regular item of ``study`` as ``annotators`` (joined to its pool if need be), each item by as many
    of them, in order, as its overlap leaves room for; returns how many answers were submitted (0 when the study
    already holds generated answers)."""
    if Annotation.objects.filter(assignment__item__study=study, generated_by=GENERATED_BY).exists():
        return 0
    for user in annotators:
        Membership.objects.get_or_create(study=study, annotator=user)
    join_team_as_annotators(study.team, list(annotators))
    rng = random.Random(f"{seed}:{study.slug}")
    items = list(study.items.filter(kind=StudyItem.Kind.REGULAR).select_related("task_item").order_by("position"))
    pages = ItemPage.fresh_pages(items)
    held = Counter(Assignment.objects.filter(item__study=study).exclude(status=Assignment.Status.RELEASED)
                   .values_list("item_id", flat=True))
    mine = set(Assignment.objects.filter(item__study=study).values_list("item_id", "annotator_id"))
    now = timezone.now()
    submissions = []
    for item in items:
        room = study.overlap - held[item.pk]
        for number, annotator in enumerate(annotators):
            if room <= 0:
                break
            if (item.pk, annotator.pk) in mine:
                continue
            parsed = pages[item.pk].parse(_form(pages[item.pk], SKILLS[number % len(SKILLS)], rng), complete=True)
            assignment = Assignment(
                item=item, annotator=annotator, status=Assignment.Status.SUBMITTED, claimed_at=now,
                lease_expires_at=now, submitted_at=now, seconds_spent=rng.randint(*SECONDS_PER_ITEM),
            )
            submissions.append((assignment, parsed, None))
            room -= 1
    with transaction.atomic():
        drafts.submit_new(submissions)  # the imported ratings' bulk path: the same checks, a handful of queries
        seconds = {assignment.pk: assignment.seconds_spent for assignment, _, _ in submissions}
        made = list(Annotation.objects.filter(assignment_id__in=seconds))
        for annotation in made:
            annotation.generated_by, annotation.seconds_spent = GENERATED_BY, seconds[annotation.assignment_id]
        Annotation.objects.bulk_update(made, ["generated_by", "seconds_spent"])
    return len(submissions)


def _form(page: ItemPage, skill: float, rng: random.Random) -> QueryDict:
    """The form one generated person posts for a task item: its one question answered."""
    form = QueryDict(mutable=True)
    for question in page.questions:  # the item's task's question alone
        form.setlist(field_name(question), _values(page.item.task_item, question, rng.random() < skill, rng))
    return form


def _values(task_item: Any, question: Any, right: bool, rng: random.Random) -> list[str]:
    """What is posted: the right answer, or a wrong one drawn at random."""
    if task_item.task == Task.ATTRIBUTES:
        gold = sorted(task_item.gold or [])
        others = [str(choice["value"]) for choice in question.options["choices"] if choice["value"] not in gold]
        if right or not gold or (len(gold) == 1 and not others):
            return gold
        if len(gold) > 1 and (not others or rng.random() < 0.5):
            dropped = rng.choice(gold)
            return [key for key in gold if key != dropped]
        return sorted([*gold, rng.choice(others)])
    if task_item.task == Task.MULTIPLE:
        return ["yes" if bool(task_item.gold) == right else "no"]
    correct = [position for position in task_item.correct if isinstance(position, int)]
    wrong = [position for position in range(len(task_item.options)) if position not in correct]
    if (right and correct) or not wrong:
        return [str(correct[0] if correct else 0)]
    return [str(rng.choice(wrong))]
