import json

import numpy as np
import pandas as pd
import pytest

from benchmark.stats.report import agreement_report, question_report, span_question_report
from benchmark.stats.tables import long_from_wide
from tests.stats.notes import unexplained_nulls
from tests.stats.references import FLEISS_1971, KRIPPENDORFF_2011, SHROUT_FLEISS

KEYS = {
    "type",
    "n_items",
    "n_ratings",
    "excluded_items",
    "n_annotators",
    "percent_agreement",
    "krippendorff_alpha",
    "icc",
    "fleiss_kappa",
    "randolph_kappa",
    "cohen_kappa",
    "binned_kappa",
    "accuracy",
    "by_condition",
    "judge_by_condition",
    "alignment",
    "spans",
    "interpretation",
    "methods",
    "notes",
}
ICC_KEYS = {"icc1", "icc1_ci95", "icc1k", "icc1k_ci95", "F", "df1", "df2", "p", "k", "method"}


def small_study(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n_items = 60
    item = np.repeat(np.arange(n_items), 3)
    annotator = np.concatenate([rng.choice(6, 3, replace=False) for _ in range(n_items)])
    scenario = item // 3
    barrier = np.array(["none", "semantic", "sociocultural", "emotional"])[scenario % 4]
    answer = np.where(rng.random(len(item)) < 0.7, barrier, "none")
    latent = rng.normal(3, 1, n_items)
    rating = np.clip(np.rint(latent[item] + rng.normal(0, 0.5, len(item))), 1, 5)
    judge = latent + rng.normal(0, 0.4, n_items)
    common = {"item": item, "annotator": annotator, "cluster": scenario, "condition": barrier}
    return pd.concat(
        [
            pd.DataFrame({**common, "question": "barrier", "value": answer, "truth": barrier}),
            pd.DataFrame({**common, "question": "confusion", "value": rating.astype(str), "judge": judge[item]}),
        ],
        ignore_index=True,
    )


def test_every_question_has_every_key_and_is_strict_json():
    report = agreement_report(small_study(), seed=1, resamples=200)
    assert set(report["questions"]) == {"barrier", "confusion"}
    for question in report["questions"].values():
        assert set(question) == KEYS
    json.dumps(report, allow_nan=False)


def test_categorical_question():
    question = agreement_report(small_study(), seed=1, resamples=200)["questions"]["barrier"]
    assert question["type"] == "categorical"
    assert question["n_items"] == 60 and question["n_ratings"] == 180
    assert set(question["fleiss_kappa"]) >= {"value", "ci95"}
    assert isinstance(question["randolph_kappa"], float)
    assert question["cohen_kappa"] is None
    assert set(question["krippendorff_alpha"]) == {"nominal"}
    accuracy = question["accuracy"]
    assert set(accuracy) >= {"overall", "by_class", "chance", "resamples", "cluster"}
    assert accuracy["cluster"] == "cluster" and accuracy["resamples"] == 200
    assert set(accuracy["by_class"]["none"]) == {"value", "ci95", "n"}
    assert question["icc"] is None
    assert "fleiss_kappa" in question["interpretation"]
    assert any(note.startswith("cohen_kappa:") for note in question["notes"])


def test_numeric_question():
    question = agreement_report(small_study(), seed=1, resamples=200)["questions"]["confusion"]
    assert question["type"] == "numeric"
    assert set(question["icc"]) >= ICC_KEYS
    assert question["icc"]["twoway"] is None  # 3 of 6 annotators: not crossed
    assert set(question["krippendorff_alpha"]) == {"nominal", "ordinal", "interval"}
    assert set(question["binned_kappa"]) == {"3", "4", "5"}
    assert set(question["alignment"]) >= {"pearson_r", "ci95", "p", "spearman_rho", "n"}
    assert question["alignment"]["n"] == 60
    assert set(question["by_condition"]) == {"none", "semantic", "sociocultural", "emotional"}
    assert set(question["by_condition"]["none"]) == {"mean", "ci95", "n"}
    assert question["fleiss_kappa"] is None
    assert question["interpretation"]["icc1k"] in {"poor", "fair", "good", "excellent"}


def test_numeric_can_be_declared_categorical():
    report = agreement_report(small_study(), categorical=["confusion"], resamples=0)
    assert report["questions"]["confusion"]["type"] == "categorical"


def test_reference_values_through_the_report():
    shrout = question_report(long_from_wide(SHROUT_FLEISS))
    assert round(shrout["icc"]["icc1"], 3) == 0.166
    assert round(shrout["icc"]["twoway"]["icc3"], 3) == 0.715
    fleiss = question_report(long_from_wide(FLEISS_1971), kind="categorical", resamples=100)
    assert round(fleiss["fleiss_kappa"]["value"], 3) == 0.430
    krippendorff = question_report(long_from_wide(KRIPPENDORFF_2011.T))
    assert round(krippendorff["krippendorff_alpha"]["interval"], 3) == 0.849
    assert round(krippendorff["krippendorff_alpha"]["ordinal"], 3) == 0.815
    assert krippendorff["excluded_items"] == 1


def test_seed_makes_the_report_reproducible():
    assert agreement_report(small_study(), seed=5, resamples=100) == agreement_report(
        small_study(), seed=5, resamples=100
    )


@pytest.mark.parametrize(
    "table",
    [
        pd.DataFrame({"item": [1, 1, 2, 2], "annotator": [1, 2, 1, 2], "value": [3, 3, 3, 3]}),
        pd.DataFrame({"item": [1, 2, 3], "annotator": [1, 1, 1], "value": [1, 2, 3]}),
        pd.DataFrame({"item": [1, 1], "annotator": [1, 2], "value": ["a", "b"]}),
        pd.DataFrame({"item": [1, 1, 2, 2], "annotator": [1, 2, 1, 2], "value": ["x", "x", "x", "x"]}),
        pd.DataFrame({"item": [], "annotator": [], "value": []}),
    ],
    ids=["no-variance", "one-rating-each", "one-item", "one-category", "empty"],
)
def test_degenerate_input_gives_nulls_with_reasons(table):
    report = question_report(table, resamples=50)
    assert set(report) == KEYS
    json.dumps(report, allow_nan=False)
    assert report["notes"]


def test_single_rating_items_are_counted():
    report = question_report(pd.DataFrame({"item": [1, 2, 3], "annotator": [1, 1, 1], "value": [1, 2, 3]}))
    assert report["excluded_items"] == 3 and report["n_items"] == 0
    assert report["icc"]["icc1"] is None


def test_span_question():
    spans = pd.DataFrame(
        {
            "question": "social_errors",
            "item": [1, 1],
            "annotator": ["A", "B"],
            "start": [0, 0],
            "end": [3, 3],
            "label": ["error", "error"],
            "attributes": ["emotion", "emotion;engagement"],
        }
    )
    report = span_question_report(spans)
    assert set(report) == KEYS and report["type"] == "spans"
    assert report["spans"]["label_agreement"] == 1.0
    assert report["spans"]["attributes"]["exact_match"] == 0.0
    combined = agreement_report(small_study(), spans=spans, resamples=0)
    assert combined["questions"]["social_errors"]["type"] == "spans"


def test_missing_columns_are_a_clear_error():
    with pytest.raises(ValueError, match="no column question"):
        agreement_report(pd.DataFrame({"item": [1], "value": [1]}))


def test_ratings_far_from_zero_get_the_same_report_and_readable_notes():
    rng = np.random.default_rng(4)
    latent = rng.normal(3, 1, 30)
    matrix = np.clip(np.rint(latent[:, None] + rng.normal(0, 0.7, (30, 3))), 1, 5)
    plain = question_report(long_from_wide(matrix), resamples=0)
    shifted = question_report(long_from_wide(matrix + 1e9), resamples=0)
    assert shifted["icc"]["icc1"] == pytest.approx(plain["icc"]["icc1"], rel=1e-6)
    assert "binned_kappa: bins span the observed range [1000000001, 1000000005]; pass the scale to fix it" in (
        shifted["notes"]
    )
    assert shifted["binned_kappa"] == plain["binned_kappa"]


def test_equal_ratings_say_so_without_a_range_of_no_width():
    report = question_report(long_from_wide(np.full((4, 3), 1e9 + 1)), resamples=0)
    binned = [note for note in report["notes"] if note.startswith("binned_kappa:")]
    assert binned == ["binned_kappa: every rating is 1000000001, so there is no range to cut into bins; pass the scale"]


def degenerate_reports() -> dict[str, dict]:
    """Reports of inputs where much is undefined: every null in them must come with a note."""
    def numeric(**columns):
        base = {"item": [1, 1, 2, 2, 3, 3], "annotator": [1, 2, 1, 2, 1, 2], "value": [1, 2, 2, 3, 4, 4]}
        return pd.DataFrame({**base, **columns})

    spans = pd.DataFrame(
        {"item": [1, 1, 2, 2], "annotator": ["A", "B", "A", "B"], "start": [0, 0, 0, 5], "end": [3, 3, 2, 9],
         "label": ["error", "error", "error", "competency"], "attributes": ["", "", "emotion", ""]}
    )
    far = spans.assign(start=[0, 5, 0, 5], end=[2, 9, 2, 9])
    return {
        "no judge, blank condition": question_report(numeric(condition=[""] * 6), resamples=0),
        "judge, no condition": question_report(numeric(judge=[1.0, 1.0, 2.0, 2.0, 3.0, 3.0]), resamples=0),
        "condition, no judge scores": question_report(
            numeric(condition=["a"] * 6, judge=[np.nan] * 6), resamples=0
        ),
        "a condition without judge scores": question_report(
            numeric(condition=["a", "a", "a", "a", "b", "b"], judge=[1.0, 1.0, 2.0, 2.0, np.nan, np.nan]),
            resamples=50,
        ),
        "single ratings": question_report(
            pd.DataFrame({"item": [1, 2, 3], "annotator": [1, 1, 1], "value": [1.0, 2.0, 3.0],
                          "condition": ["a", "a", "b"], "judge": [1.0, 2.0, 2.0], "truth": [1.0, 2.0, 3.0]}),
            resamples=50,
        ),
        "single categorical ratings": question_report(
            pd.DataFrame({"item": [1, 2], "annotator": [1, 1], "value": ["x", "y"], "truth": ["x", "x"]}),
            kind="categorical", resamples=50,
        ),
        "no resamples": question_report(
            pd.DataFrame({"item": [1, 1, 2, 2, 3, 3], "annotator": [1, 2] * 3, "value": ["x", "y", "x", "x", "y", "y"],
                          "truth": ["x", "x", "x", "x", "y", "y"], "cluster": ["s", "s", "t", "t", "u", "u"]}),
            kind="categorical", resamples=0,
        ),
        "one category": question_report(
            pd.DataFrame({"item": [1, 1, 2, 2], "annotator": [1, 2, 1, 2], "value": ["x"] * 4}), resamples=50
        ),
        "equal ratings": question_report(numeric(value=[3] * 6, condition=["a"] * 6), resamples=50),
        "no ratings": question_report(pd.DataFrame({"item": [], "annotator": [], "value": []}), resamples=50),
        "blank values": question_report(
            pd.DataFrame({"item": [1, 2], "annotator": [1, 1], "value": [None, None]}), resamples=50
        ),
        "no spans": span_question_report(spans.iloc[:0]),
        "spans that never overlap": span_question_report(far),
        "spans without attributes or labels": span_question_report(
            spans.drop(columns=["label"]).assign(attributes="")
        ),
        "spans of one annotator": span_question_report(spans[spans["annotator"] == "A"]),
        "overlapping spans, one attribute": span_question_report(spans),
    }


@pytest.mark.parametrize("case", list(degenerate_reports()))
def test_every_null_comes_with_a_note(case):
    report = degenerate_reports()[case]
    json.dumps(report, allow_nan=False)
    assert unexplained_nulls(report) == []


def test_declared_categories_set_the_chance_level_as_they_set_randolphs_q():
    table = pd.DataFrame(
        {"item": [1, 1, 2, 2, 3, 3], "annotator": [1, 2] * 3, "value": ["a", "a", "b", "b", "a", "b"],
         "truth": ["a", "a", "b", "b", "a", "a"]}
    )
    report = question_report(table, kind="categorical", categories=["a", "b", "c", "d", "e"], resamples=0)
    assert report["accuracy"]["chance"] == 0.2
    assert report["randolph_kappa"] == pytest.approx((report["percent_agreement"] - 0.2) / 0.8)


def test_with_clusters_each_interval_says_whether_it_accounts_for_them():
    table = small_study()
    numeric = question_report(table[table["question"] == "confusion"], resamples=100)
    categorical = question_report(table[table["question"] == "barrier"], kind="categorical", resamples=100)
    assert "resampling clusters" in categorical["fleiss_kappa"]["method"]
    assert categorical["accuracy"]["cluster"] == "cluster"
    for key in ("icc", "by_condition", "judge_by_condition", "alignment"):
        assert any(
            note.startswith(f"{key}: ") and "not account for the clusters" in note for note in numeric["notes"]
        ), key
    assert "do not account for the clusters" in numeric["methods"]["clusters"]
    unclustered = question_report(table[table["question"] == "confusion"].drop(columns="cluster"), resamples=0)
    assert not any("clusters" in note for note in unclustered["notes"])
    assert "clusters" not in unclustered["methods"]
