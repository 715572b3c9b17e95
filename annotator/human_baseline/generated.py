"""Generated answers for the demo's human-baseline study, labelled as generated wherever they appear.

A fresh demo has no people to answer its task items, so the results' Human row would be empty. These
answers stand in for them: each generated person picks the item's correct answer with a chance of their
own (``SKILLS``, 0.85 down to 0.65, around the paper's human accuracies of 0.54–0.87) and otherwise a
wrong one at random: another option; for the attribute task the gold set with one attribute dropped or one
added; for the multiple-attribute task the other answer. The gold is read only to draw this seeded
accuracy: nothing else of the item's answer shapes what is picked.

Each answer goes through the item page's own path (``assignment.claim_next``, ``ItemPage.parse`` with
``complete=True``, ``drafts.submit``), so it passes the same checks, and carries ``generated_by =
GENERATED_BY`` (``Annotation.generated_by``), which the human-baseline source hands on to the results
(``HumanAnswer.generated_by``). Everything is seeded: the same study and people give the same answers.
Running it again on a study that has generated answers changes nothing.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.http import QueryDict

from benchmark.models import Task

from .. import assignment as assignments
from .. import drafts
from ..answer_forms import field_name
from ..forms import join_team_as_annotators
from ..item_page import ItemPage
from ..models import Annotation, Membership, Study

GENERATED_BY = "seeded answers generated for the demo (no person gave them)"
SKILLS = (0.85, 0.75, 0.65)  # each generated person's chance of the right answer, in turn
SECONDS_PER_ITEM = (20, 120)


def generate_human_answers(study: Study, annotators: Sequence[AbstractBaseUser], *, seed: int = 0) -> int:
    """Answer every item of ``study`` as ``annotators`` (joined to its pool if need be), up to its overlap;
    returns how many answers were submitted (0 when the study already holds generated answers)."""
    if Annotation.objects.filter(assignment__item__study=study, generated_by=GENERATED_BY).exists():
        return 0
    for user in annotators:
        Membership.objects.get_or_create(study=study, annotator=user)
    join_team_as_annotators(study.team, list(annotators))
    rng = random.Random(f"{seed}:{study.slug}")
    submitted = 0
    for number, annotator in enumerate(annotators):
        skill = SKILLS[number % len(SKILLS)]
        while (claimed := assignments.claim_next(study, annotator)) is not None:
            page = ItemPage(claimed, with_answers=False)
            parsed = page.parse(_form(page, skill, rng), complete=True)
            drafts.submit(claimed, parsed, revision=0, seconds=rng.randint(*SECONDS_PER_ITEM), generated_by=GENERATED_BY)
            submitted += 1
    return submitted


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
