"""The SHREC report built from ORM task items and answers with known values (worked out by hand)."""

import pytest

from benchmark.models import Respondent, TaskAnswer, TaskSet
from benchmark.results.shrec.build import build_shrec
from benchmark.results.shrec.records import ShrecResultsProblem, choose_task_set
from benchmark.results.tables import report_json
from tests.benchmark.shrec_results_data import build_world, human_baseline
from tests.builders import default_team, make_team

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(monkeypatch):
    return human_baseline(monkeypatch)


def _row(report, label="(L) m1"):
    return next(row for row in report["rows"] if row["label"] == label)


def test_detection_cells_are_mean_and_sd_over_subsets_with_the_unparsed_answer_wrong():
    report = build_shrec(build_world()["task_set"], resamples=200)
    cell = _row(report)["tasks"]["detection"]

    # subset 0: C->C, E->E (accuracy 1, macro-F1 2/3); subset 1: N->N, E->unparsed (0.5, 1/3)
    assert cell["n_per_subset"] == [2, 2]
    assert cell["unparsed"] == 1 and cell["answered"] == 4 and cell["videos"] == 2
    assert cell["metrics"]["accuracy"]["mean"] == pytest.approx(0.75)
    assert cell["metrics"]["accuracy"]["sd"] == pytest.approx(0.353553, abs=1e-6)
    assert cell["metrics"]["macro_f1"]["mean"] == pytest.approx(0.5)
    assert cell["metrics"]["macro_f1"]["sd"] == pytest.approx(0.235702, abs=1e-6)
    # pooled: C 1, E 2/3 (the unparsed answer is a miss but no class's false positive), N 1
    assert cell["metrics"]["accuracy"]["pooled"] == pytest.approx(0.75)
    assert cell["metrics"]["macro_f1"]["pooled"] == pytest.approx(0.888889, abs=1e-6)
    low, high = cell["metrics"]["accuracy"]["ci95"]
    assert 0 <= low <= 0.75 <= high <= 1


def test_one_subset_has_no_sd_and_attributes_print_exact_set_accuracy():
    report = build_shrec(build_world()["task_set"], resamples=0)
    row = _row(report)

    assert row["tasks"]["error"]["metrics"]["accuracy"]["mean"] == pytest.approx(0.5)
    assert row["tasks"]["error"]["metrics"]["accuracy"]["sd"] is None
    attributes = row["tasks"]["attributes"]["metrics"]
    assert attributes["exact"]["mean"] == pytest.approx(0.5)
    assert attributes["partial"]["mean"] == pytest.approx(1.0)
    assert attributes["macro_f1"]["mean"] == pytest.approx(2 / 7)
    assert attributes["exact"]["ci95"] is None  # no resamples
    assert "exact-set accuracy" in report["legend"]["attr_acc"]
    assert "macro-F1" in report["legend"]["multi_f1"] and "positive_f1" in report["legend"]["multi_f1"]


def test_an_item_in_two_subsets_counts_in_both_and_once_pooled():
    report = build_shrec(build_world()["task_set"], resamples=0)
    cell = _row(report)["tasks"]["pre"]

    assert cell["n_per_subset"] == [2, 2]
    assert [entry["metrics"]["accuracy"] for entry in cell["per_subset"]] == [1.0, 0.5]
    assert cell["metrics"]["accuracy"]["pooled"] == pytest.approx(2 / 3)
    assert cell["items"] == 3 and cell["answered"] == 3


def test_rows_carry_the_paper_prefix_variant_and_prompt_versions():
    world = build_world()
    respondent = Respondent.objects.create(kind=Respondent.Kind.JUDGE, model="m1", prompt_version="shrec-pre-v1-cot")
    TaskAnswer.objects.create(item=world["items"]["p1"], respondent=respondent, variant="cot", reply="(2)", answer=2)

    report = build_shrec(world["task_set"], resamples=0)

    assert [row["label"] for row in report["rows"]] == ["(L) m1", "(L) m1 + cot"]
    assert _row(report, "(L) m1 + cot")["tasks"]["pre"]["answered"] == 1
    assert _row(report, "(L) m1 + cot")["tasks"]["detection"]["metrics"]["accuracy"]["mean"] is None
    assert _row(report)["prompt_versions"]["pre"] == ["shrec-pre-v1"]


def test_a_model_at_another_temperature_is_a_row_of_its_own():
    world = build_world()
    warmer = Respondent.objects.create(kind=Respondent.Kind.JUDGE, model="m1", prompt_version="shrec-pre-v1",
                                       label="temperature 0.7")
    TaskAnswer.objects.create(item=world["items"]["p1"], respondent=warmer, reply="(5)", answer=5)

    report = build_shrec(world["task_set"], resamples=0)

    assert [row["label"] for row in report["rows"]] == ["(L) m1", "(L) m1 (temperature 0.7)"]
    assert _row(report, "(L) m1 (temperature 0.7)")["tasks"]["pre"]["metrics"]["accuracy"]["pooled"] == 0.0


def test_an_answer_under_a_newer_prompt_version_replaces_the_older_one():
    world = build_world()
    newer = Respondent.objects.create(kind=Respondent.Kind.JUDGE, model="m1", prompt_version="shrec-pre-v2")
    TaskAnswer.objects.create(item=world["items"]["p3"], respondent=newer, reply="(3)", answer=3)

    report = build_shrec(world["task_set"], resamples=0)

    assert _row(report)["tasks"]["pre"]["metrics"]["accuracy"]["pooled"] == pytest.approx(1.0)
    assert _row(report)["prompt_versions"]["pre"] == ["shrec-pre-v1", "shrec-pre-v2"]
    assert any("earlier prompt version" in note for note in report["notes"])


def test_the_human_row_pools_every_answer_with_people_and_majority_in_the_json(people):
    world = build_world()
    people(world)

    report = build_shrec(world["task_set"], resamples=0)
    human = report["human"]

    assert human["label"] == "Human" and human["people"] == 2 and human["answers"] == 3
    assert human["tasks"]["pre"]["metrics"]["accuracy"]["pooled"] == pytest.approx(2 / 3)
    assert [entry["n"] for entry in human["tasks"]["pre"]["per_subset"]] == [3, 1]
    assert human["per_person"]["P1"]["pre"]["metrics"]["accuracy"] == 1.0
    assert human["per_person"]["P2"]["pre"]["metrics"]["accuracy"] == 0.0
    # p1 is tied between 1 and 2: the majority takes 1 (sorts first), which is wrong; p2's 1 is right
    assert human["majority"]["pre"]["metrics"]["accuracy"] == 0.5
    assert human["majority_ties"] == 1
    assert any("tied human answers" in note for note in report["notes"])


def test_per_attribute_error_f1_groups_error_items_by_their_segment_attributes():
    report = build_shrec(build_world()["task_set"], resamples=0)
    panel = report["per_attribute"]

    errors = panel["error_f1"]["(L) m1"]
    # emotions: gold error, no_error; answered error, error -> error F1 2/3, no_error 0, macro 1/3
    assert errors["emotions"] == {"n": 2, "f1": pytest.approx(1 / 3), "error_f1": pytest.approx(2 / 3),
                                  "accuracy": 0.5}
    assert errors["intention"] == {"n": 1, "f1": 0.0, "error_f1": 0.0, "accuracy": 0.0}
    assert errors["social-norms"] == {"n": 0, "f1": None, "error_f1": None, "accuracy": None}
    f1 = panel["attribute_f1"]["(L) m1"]["f1"]
    assert f1["conversational-mechanics"] == 1.0 and f1["knowledge-state"] == 0.0 and f1["emotions"] == 1.0


def test_the_dataset_panel_reads_what_the_task_set_stored():
    report = build_shrec(build_world()["task_set"], resamples=0)
    panel = report["dataset"]

    assert panel["recorded"] is True and panel["pairing"] == "shrec"
    assert panel["overall"]["overlap"] == pytest.approx(4 / 6)
    assert panel["overall"]["agreement"] == pytest.approx(0.5)
    assert panel["overall"]["channels"] == {"verbal": 4, "non-verbal": 1, "both": 0, "": 1}
    assert panel["overall"]["mean_agreed_attributes"] == 1.5
    assert list(panel["by_source"]) == ["empathic", "wellness"]
    assert panel["by_source"]["wellness"]["agreement"] is None  # no pairs
    assert panel["items"]["detection"]["by_source"] == {"empathic": 2, "wellness": 2}
    assert panel["items"]["detection"]["by_label"] == {"competency": 1, "error": 2, "none": 1}


def test_a_task_set_without_dataset_statistics_says_so():
    task_set = build_world()["task_set"]
    TaskSet.objects.filter(pk=task_set.pk).update(params={"seed": 0})
    task_set.refresh_from_db()

    panel = build_shrec(task_set, resamples=0)["dataset"]

    assert panel["recorded"] is False and "not recorded" in panel["note"]


def test_the_json_is_byte_identical_twice():
    task_set = build_world()["task_set"]

    assert report_json(build_shrec(task_set, resamples=100)) == report_json(build_shrec(task_set, resamples=100))


def test_an_empty_task_set_gives_a_clear_note():
    task_set = TaskSet.objects.create(team=default_team(), name="empty")

    report = build_shrec(task_set, resamples=0)

    assert report["rows"] == [] and report["human"] is None
    assert any("has no items" in note for note in report["notes"])


def test_the_latest_task_set_is_chosen_by_default_and_a_wrong_name_is_explained():
    build_world(name="older")
    newer = build_world(name="newer")["task_set"]
    build_world(make_team(), name="other-team")

    task_sets = TaskSet.objects.of_team(default_team())
    assert choose_task_set(task_sets) == newer
    with pytest.raises(ShrecResultsProblem, match="the task sets are newer, older"):
        choose_task_set(task_sets, "other-team")


def test_no_task_set_at_all_is_explained():
    with pytest.raises(ShrecResultsProblem, match="no SHREC task set yet"):
        choose_task_set(TaskSet.objects.of_team(make_team()))


def test_every_key_of_the_report_is_documented(people):
    from pathlib import Path

    world = build_world()
    people(world)
    report = build_shrec(world["task_set"], resamples=0)
    schema = (Path(__file__).resolve().parents[2] / "docs" / "results-schema.md").read_text(encoding="utf-8")
    schema = schema[schema.index("# SHREC results"):]

    cell = report["rows"][0]["tasks"]["detection"]
    keys = [*report, *report["task_set"], *report["tasks"][0], *report["rows"][0], *cell, *cell["per_subset"][0],
            *cell["metrics"]["accuracy"], *report["human"], *report["per_attribute"], *report["dataset"],
            *report["dataset"]["overall"], *report["dataset"]["items"]["detection"]]
    assert [key for key in keys if f"`{key}`" not in schema and f'"{key}"' not in schema] == []


def test_the_coercing_models_reading_is_scored_when_asked_where_there_is_one():
    world = build_world()
    # the parser could not read d4's reply; a coercing model read it as "error" (right)
    TaskAnswer.objects.filter(item=world["items"]["d4"]).update(coerced="error", coerced_by="openai/gpt-4o-mini")

    parsed = build_shrec(world["task_set"], resamples=0)
    coerced = build_shrec(world["task_set"], answers="coerced", resamples=0)

    assert parsed["answers"] == "parsed"
    assert _row(parsed)["tasks"]["detection"]["metrics"]["accuracy"]["pooled"] == pytest.approx(0.75)
    assert coerced["answers"] == "coerced"
    assert _row(coerced)["tasks"]["detection"]["metrics"]["accuracy"]["pooled"] == pytest.approx(1.0)
    assert _row(coerced)["tasks"]["detection"]["unparsed"] == 0
    assert "1 model answer(s) as a coercing model read them" in " ".join(coerced["notes"])


def test_an_unknown_answer_source_is_refused():
    with pytest.raises(ShrecResultsProblem, match="unknown answer source 'guessed'"):
        build_shrec(build_world()["task_set"], answers="guessed")
