"""The demo's training phase: a study whose first items teach and then qualify (``annotator.training``).

Two training items show, after each is submitted, the condition the conversation was held under with an
explanation of what gives it away; two qualification items follow, scored against a pass mark of 80 %,
with a second attempt allowed. The known answer of each is the question that asks for the condition,
as the demo's gold items have it. Checks act too: two failed checks warn, three pause.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from . import study_log
from .forms import BARRIER_TRUTH
from .models import ItemKey, Study, StudyItem

TRAINING_ITEMS = 2
QUALIFICATION_ITEMS = 2
PASS_MARK = 80


def explanation(barrier_name: str, definition: str) -> str:
    """What a training item explains: the condition, and what in the conversation shows it."""
    return (
        f"This conversation was held under the {barrier_name} condition. {definition} "
        "Look at how the agent phrases its turns and how the other character responds: the pattern repeats "
        "across the conversation, not in one reply only."
    )


def set_up_training(study: Study, actor: AbstractBaseUser | None) -> None:
    """Make the study's first items training and qualification items with known answers, and set the marks."""
    question = study.instrument.questions.get(truth=BARRIER_TRUTH)
    regular = study.items.filter(kind=StudyItem.Kind.REGULAR).select_related("episode__barrier").order_by("position")
    items = list(regular[: TRAINING_ITEMS + QUALIFICATION_ITEMS])
    with transaction.atomic():
        for number, item in enumerate(items):
            barrier = item.episode.barrier
            if number < TRAINING_ITEMS:
                item.kind, item.explanation = StudyItem.Kind.TRAINING, explanation(barrier.name, barrier.definition)
            else:
                item.kind = StudyItem.Kind.QUALIFICATION
        StudyItem.objects.bulk_update(items, ["kind", "explanation"])
        seat = 0 if question.scope == "seat" else None
        ItemKey.objects.bulk_create(
            ItemKey(item=item, question=question, seat_position=seat, value=item.episode.barrier.key) for item in items
        )
        study.qualification_pass_mark, study.qualification_retry = PASS_MARK, True
        study.checks_warn_after, study.checks_pause_after = 2, 3
        study.save(update_fields=["qualification_pass_mark", "qualification_retry", "checks_warn_after",
                                  "checks_pause_after"])
        study_log.record(
            study, "item-setup",
            f"{TRAINING_ITEMS} training and {QUALIFICATION_ITEMS} qualification items (pass mark {PASS_MARK} %, a "
            "second attempt allowed); failed checks warn at 2 and pause at 3.",
            actor=actor,
        )
