"""A "not applicable" answer (the per-intervention instrument's) goes through the annotator's form, is stored with
no number, and is left out of the agreement report's numbers with a note that says so."""

import pytest

from annotator import drafts
from annotator.exports import records
from annotator.item_page import ItemPage
from annotator.models import Assignment
from annotator.reports import build_report
from benchmark.instruments.presets import INTERVENTION_DIMENSIONS, PROMEDIATE_INTERVENTION_PRESET, install_preset
from benchmark.models import Answer
from tests.annotator.builders import make_study
from tests.builders import make_episode, make_scenario

pytestmark = pytest.mark.django_db


def test_not_applicable_is_stored_without_a_number_and_left_out_of_the_report_by_name():
    episodes = [make_episode(scenario=make_scenario(roles=3), turns=3) for _ in range(2)]
    study = make_study(
        instrument=install_preset(PROMEDIATE_INTERVENTION_PRESET), items=episodes, overlap=2, annotators=2
    )
    for number, annotator in enumerate(study.annotators.order_by("pk")):
        for position in (0, 1):
            assignment = Assignment.objects.create(
                item=study.items.get(position=position),
                annotator=annotator,
                claimed_at="2025-01-01T00:00:00Z",
                lease_expires_at="2999-01-01T00:00:00Z",
            )
            data = {f"answer-{key}-t{turn}": str(3 + number) for key in INTERVENTION_DIMENSIONS for turn in range(3)}
            data["answer-emotional_dynamics-t1"] = "na"
            drafts.submit(assignment, ItemPage(assignment).parse(data, complete=True), revision=0, seconds=30)

    stored = Answer.objects.filter(question__key="emotional_dynamics", turn=1)
    assert {(answer.value, answer.number) for answer in stored} == {("na", None)}
    report = build_report(study, resamples=20)
    emotions = report["questions"]["emotional_dynamics"]
    assert emotions["n_ratings"] == 2 * 2 * 3 - 4
    assert "answers: 4 not applicable and left out" in emotions["notes"]
    assert not any("left blank" in note for note in emotions["notes"])
    exported = [
        row for row in records(study) if row["row_type"] == "answer" and row["question"] == "emotional_dynamics"
    ]
    assert {(row["value"], row["number"]) for row in exported if row["start_turn"] == 1} == {("na", None)}
