"""The demo's one adjudicated item: gold decided by the demo researcher on one item of the SocialVeil study.

So the adjudication queue, the item's review page, the gold rows of the export and the report's comparison
with gold all have something to show on first open. The item is the first in the queue (its generated ratings
disagree) with at least two questions; every question is decided through ``annotator.adjudication``, as
the page decides it: the first question in disagreement takes the answer most raters gave (picked, with a
note), the next one in disagreement gets the curator's own answer (the raters' mean, on the scale, with a
note saying so), and every other question the answer the raters share or most gave. Done once per study:
a study that has any curation is left alone, so running the demo again changes nothing.
"""

from __future__ import annotations

from collections import Counter

from django.contrib.auth.models import AbstractBaseUser

from benchmark.instruments.kinds.base import format_number
from benchmark.instruments.values import check_value

from .adjudication import Decided, adjudication_queue, save_curation
from .item_review import Cell, review
from .models import Curation, Study

GOLD_DEMO_STUDY = "demo-socialveil"


def _plurality(cell: Cell) -> Decided:
    """The answer most raters gave (the first rater's among ties), picked."""
    counts = Counter(entry.comparable for entry in cell.given)
    top = max(cell.given, key=lambda entry: counts[entry.comparable])
    return Decided(cell.question, cell.target, top.rater.annotation_id, list(top.values), top.number,
                   top.reasoning, "")


def _own(cell: Cell) -> Decided | None:
    """The raters' mean rounded onto the scale, as the curator's own answer; None when it is not a valid one."""
    if cell.agreement.mean is None:
        return None
    value, number, problem = check_value(cell.question, format_number(round(cell.agreement.mean)))
    if problem:
        return None
    return Decided(cell.question, cell.target, None, [value], number, "",
                   "The raters split; my own reading sits between them, at their mean.")


def adjudicate_demo_item(study: Study, curator: AbstractBaseUser) -> Curation | None:
    """Finalise the gold of one item of ``study`` in disagreement; None when it has gold already or no such item."""
    if Curation.objects.filter(item__study=study).exists():
        return None
    for row in adjudication_queue(study):
        if row.cells < 2 or not row.disagreements:
            continue
        row.item.study = study
        cells = review(row.item, blinded=True).cells
        decided, picked, own = [], False, False
        for cell in cells:
            entry = _plurality(cell)
            if cell.disagrees and not picked:
                entry.note, picked = "Most raters read it this way, and the transcript bears them out.", True
            elif cell.disagrees and not own and (written := _own(cell)) is not None:
                entry, own = written, True
            decided.append(entry)
        if picked and own:
            return save_curation(row.item, curator, decided, final=True, cells=len(cells),
                                 note="Adjudicated for the demo: one answer picked, one written.")
    return None
