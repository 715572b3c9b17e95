"""Gold everywhere: exports, the report and the ratings import treat adjudicated gold as a respondent of kind
gold, and it never counts as one more annotator."""

import csv
import io
import json

import pytest

from annotator.adjudication import Decided, save_curation
from annotator.exports import export_lines
from annotator.external_ratings import import_ratings_text
from annotator.gold import gold_values
from annotator.models import CuratedDecision, Curation, ExternalAnnotator
from annotator.reports import build_report
from benchmark.exporting import stable_id
from benchmark.importing import ImportProblem
from benchmark.instruments.targets import Target
from benchmark.models import Respondent
from tests.annotator.adjudication_world import build_world

pytestmark = pytest.mark.django_db
EPISODE = Target.episode()


@pytest.fixture
def world():
    return build_world()


def finalise(world, barrier="semantic", warmth=3.0, final=True):
    decided = [
        Decided(world["barrier"], EPISODE, world["b1"].pk, [barrier], None, "", "picked"),
        Decided(world["likert"], EPISODE, None, [f"{warmth:g}"], warmth, "", "own"),
    ]
    return save_curation(world["first"], world["researcher"], decided, final=final, cells=2)


def export_rows(study, **options):
    return list(csv.DictReader(io.StringIO("".join(export_lines(study, "csv", **options)))))


def test_export_writes_gold_rows_after_the_annotations(world):
    finalise(world)
    rows = export_rows(world["study"])
    gold = [row for row in rows if row["annotator"] == "gold"]
    assert [(row["item"], row["question"], row["value"], row["status"]) for row in gold] == [
        ("1", "barrier", "semantic", "final"), ("1", "warmth", "3", "final"),
    ]
    assert rows[-2:] == gold and gold[0]["annotation_version"] == ""
    assert len(rows) - len(gold) == 8  # the four ratings' answers, as before


def test_a_draft_gold_is_exported_only_with_every_version(world):
    finalise(world, final=False)
    assert not [row for row in export_rows(world["study"]) if row["annotator"] == "gold"]
    drafts = [row for row in export_rows(world["study"], all_versions=True) if row["annotator"] == "gold"]
    assert {row["status"] for row in drafts} == {"draft"}


def test_gold_is_never_an_annotator_in_the_report(world):
    before = build_report(world["study"], resamples=50)
    finalise(world)
    after = build_report(world["study"], resamples=50)
    assert after["counts"]["annotators"] == before["counts"]["annotators"] == 2
    assert after["counts"]["annotations"] == before["counts"]["annotations"]
    assert after["questions"]["barrier"]["n_ratings"] == before["questions"]["barrier"]["n_ratings"]


def test_the_report_compares_the_annotators_with_gold_when_asked(world):
    finalise(world)
    report = build_report(world["study"], resamples=50, respondent_kinds=[Respondent.Kind.GOLD])
    judge = report["questions"]["warmth"]["judge"]
    assert judge["evaluator"] == "gold" and judge["respondent_kind"] == "gold" and judge["scores"] == 1


def ratings_file(world, rows):
    episode = stable_id(world["first"].episode)
    lines = ["episode_id,annotator_id,question,value"] + [f"{episode},{who},{key},{value}" for who, key, value in rows]
    return "\n".join(lines) + "\n"


def test_rows_of_annotator_gold_import_as_final_gold_not_as_a_rater(world):
    text = ratings_file(world, [("gold", "barrier", "emotional"), ("gold", "warmth", "5"), ("r1", "barrier", "none"),
                                ("r1", "warmth", "2")])
    result = import_ratings_text(text, file="gold.csv", study=world["study"], curator=world["researcher"])
    assert result.created["gold answer"] == 2 and result.created["rating"] == 1
    assert ExternalAnnotator.objects.filter(study=world["study"]).count() == 1  # r1 only
    curation = Curation.objects.get(item=world["first"])
    assert curation.status == Curation.Status.FINAL and curation.curator == world["researcher"]
    assert all(d.picked_id is None and "gold.csv" in d.note for d in CuratedDecision.objects.filter(curation=curation))
    assert gold_values(world["study"])[(world["first"].pk, "warmth", EPISODE)] == ["5"]
    again = import_ratings_text(text, file="gold.csv", study=world["study"], curator=world["researcher"])
    assert again.unchanged["gold answer set"] == 1 and again.unchanged["rating"] == 1


def test_imported_gold_never_overwrites_other_gold(world):
    finalise(world)
    text = ratings_file(world, [("gold", "barrier", "emotional"), ("gold", "warmth", "5")])
    with pytest.raises(ImportProblem, match="already has gold answers"):
        import_ratings_text(text, file="gold.csv", study=world["study"], curator=world["researcher"])
    assert gold_values(world["study"])[(world["first"].pk, "barrier", EPISODE)] == ["semantic"]


def test_a_bad_gold_value_is_named_like_any_rating(world):
    text = ratings_file(world, [("gold", "warmth", "9")])
    with pytest.raises(ImportProblem, match="row 2, field value: Warmth"):
        import_ratings_text(text, file="gold.csv", study=world["study"], curator=world["researcher"])
    assert not Curation.objects.exists()


def test_a_dry_run_of_gold_stores_nothing(world):
    text = ratings_file(world, [("gold", "barrier", "none")])
    result = import_ratings_text(text, file="gold.csv", study=world["study"], dry_run=True,
                                 curator=world["researcher"])
    assert result.created["gold answer"] == 1 and not Curation.objects.exists()


def test_gold_jsonl_export_names_gold(world):
    finalise(world)
    records = [json.loads(line) for line in export_lines(world["study"], "jsonl")]
    assert {record["annotator"] for record in records if record["status"] == "final"} == {"gold"}
