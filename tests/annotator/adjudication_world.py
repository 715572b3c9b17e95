"""A small study for the adjudication tests: two annotators who disagree on item 1 and agree on item 2."""

from datetime import timedelta
from typing import Any

from django.utils import timezone

from annotator.models import Annotation, Assignment, StudyItem
from benchmark.models import Barrier
from tests.annotator.builders import add_annotators, add_answer, make_annotation, make_question, make_study
from tests.builders import make_episode, make_researcher, make_scenario, make_team

NOW = timezone.now()
CONDITION = "Plantedcondition barrier"


def rate(item: StudyItem, user: Any, answers: list[tuple[Any, str, dict[str, Any]]]) -> Annotation:
    """A submitted rating of ``item`` by ``user`` with ``answers`` [(question, value, answer fields)]."""
    assignment = Assignment.objects.create(
        item=item, annotator=user, claimed_at=NOW, lease_expires_at=NOW + timedelta(hours=1),
        status=Assignment.Status.SUBMITTED, submitted_at=NOW,
    )
    annotation = make_annotation(assignment, submitted_at=NOW)
    for question, value, fields in answers:
        add_answer(annotation, question, value, **fields)
    return annotation


def build_world() -> dict[str, Any]:
    """A study of two items (condition: a planted barrier) with a categorical ``barrier`` question and a 1-5
    Likert ``warmth``; annotators ``ann`` and ``bob`` rate item ``first`` differently on both (``a1``, ``b1``:
    none / 2 and semantic / 4) and item ``second`` alike (none / 3)."""
    team = make_team(name="Curators' lab", slug="curators-lab")
    researcher = make_researcher(team)
    barrier = Barrier.objects.create(team=team, key="plantedcondition", name=CONDITION, definition="Planted.")
    scenario = make_scenario(team=team)
    episodes = [make_episode(scenario=scenario, turns=2, barrier=barrier) for _ in range(2)]
    study = make_study(items=episodes, overlap=2, created_by=researcher, team=team)
    anchors = [{"value": value, "label": str(value)} for value in range(1, 6)]
    likert = make_question(instrument=study.instrument, key="warmth", position=1, kind="likert",
                           prompt="How warm?", options={"anchors": anchors})
    barrier_q = study.instrument.questions.get(key="barrier")
    first, second = study.items.order_by("position")
    ann, bob = add_annotators(study, 2)
    a1 = rate(first, ann, [(barrier_q, "none", {}), (likert, "2", {"number": 2})])
    b1 = rate(first, bob, [(barrier_q, "semantic", {}), (likert, "4", {"number": 4})])
    rate(second, ann, [(barrier_q, "none", {}), (likert, "3", {"number": 3})])
    rate(second, bob, [(barrier_q, "none", {}), (likert, "3", {"number": 3})])
    return {"study": study, "researcher": researcher, "first": first, "second": second, "ann": ann, "bob": bob,
            "a1": a1, "b1": b1, "likert": likert, "barrier": barrier_q}


