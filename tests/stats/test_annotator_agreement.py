"""Each annotator's agreement with the others and with gold, worked by hand on small tables."""

import numpy as np
import pandas as pd
import pytest

from benchmark.stats.annotator_agreement import annotator_agreement
from benchmark.stats.kappa import cohen_kappa_from_pairs
from benchmark.stats.mace import mace


def long(rows):
    return pd.DataFrame.from_records(rows, columns=["item", "annotator", "value"])


# Three annotators on four items: a and b agree everywhere, c disagrees with both on items 3 and 4.
NOMINAL = long([
    ("1", "a", "x"), ("1", "b", "x"), ("1", "c", "x"),
    ("2", "a", "y"), ("2", "b", "y"), ("2", "c", "y"),
    ("3", "a", "x"), ("3", "b", "x"), ("3", "c", "y"),
    ("4", "a", "y"), ("4", "b", "y"), ("4", "c", "x"),
])
GOLD = pd.DataFrame({"item": ["1", "3", "4"], "value": ["x", "x", "y"]})


def test_agreement_with_others_is_the_share_of_equal_pairs():
    result = annotator_agreement(NOMINAL, numeric=False, gold=GOLD, categories=["x", "y"])
    a, c = result.annotators["a"], result.annotators["c"]
    assert a["others"]["pairs"] == 8 and a["others"]["items"] == 4
    assert a["others"]["agreement"] == pytest.approx(6 / 8)  # equal to b four times, to c twice
    assert c["others"]["agreement"] == pytest.approx(4 / 8)


def test_kappa_with_others_averages_the_pairwise_cohen_kappas():
    result = annotator_agreement(NOMINAL, numeric=False, categories=["x", "y"])
    with_b = 1.0
    with_c = cohen_kappa_from_pairs([("x", "x"), ("y", "y"), ("x", "y"), ("y", "x")], ["x", "y"]).value
    assert with_c == pytest.approx(0.0)
    assert result.annotators["a"]["others"]["kappa"] == pytest.approx((with_b + with_c) / 2)
    assert result.annotators["c"]["others"]["kappa"] == pytest.approx(0.0)


def test_agreement_with_gold_counts_only_adjudicated_items():
    result = annotator_agreement(NOMINAL, numeric=False, gold=GOLD, categories=["x", "y"])
    a, c = result.annotators["a"]["gold"], result.annotators["c"]["gold"]
    assert a == {"items": 3, "agreement": 1.0, "kappa": pytest.approx(1.0)}
    assert c["items"] == 3 and c["agreement"] == pytest.approx(1 / 3)
    expected = cohen_kappa_from_pairs([("x", "x"), ("y", "x"), ("x", "y")], ["x", "y"]).value
    assert c["kappa"] == pytest.approx(expected)


def test_competence_is_mace_on_the_question():
    result = annotator_agreement(NOMINAL, numeric=False, categories=["x", "y"], seed=5)
    codes = {"x": 0, "y": 1}
    expected = mace(
        pd.factorize(NOMINAL["item"])[0], NOMINAL["annotator"].map({"a": 0, "b": 1, "c": 2}),
        NOMINAL["value"].map(codes), n_annotators=3, n_labels=2, seed=5,
    ).competence
    got = [result.annotators[name]["competence"] for name in "abc"]
    assert got == pytest.approx(expected.tolist())
    assert got[0] > got[2] and got[1] > got[2]


def test_numeric_questions_give_mean_absolute_differences_and_no_competence():
    table = long([("1", "a", 3.0), ("1", "b", 4.0), ("2", "a", 5.0), ("2", "b", 5.0), ("2", "c", 1.0)])
    gold = pd.DataFrame({"item": ["2"], "value": [4.0]})
    result = annotator_agreement(table, numeric=True, gold=gold)
    a = result.annotators["a"]
    assert a["others"]["mean_abs_difference"] == pytest.approx((1 + 0 + 4) / 3)
    assert a["others"]["agreement"] == pytest.approx(1 / 3)
    assert a["gold"] == {"items": 1, "agreement": 0.0, "mean_abs_difference": 1.0}
    assert "competence" not in a and "kappa" not in a["others"]
    assert set(result.methods) == {"others_agreement", "others_mean_abs_difference", "gold_agreement",
                                   "gold_mean_abs_difference"}


def test_one_annotator_has_no_one_to_agree_with():
    result = annotator_agreement(long([("1", "a", "x"), ("2", "a", "y")]), numeric=False)
    figures = result.annotators["a"]
    assert figures["others"] == {"items": 0, "pairs": 0, "agreement": None, "kappa": None}
    assert figures["competence"] is None
    assert "agreement with others: a single annotator answered this question" in result.notes
    assert "competence: MACE needs at least two annotators and two categories used" in result.notes


def test_a_single_label_used_leaves_kappa_and_competence_undefined():
    table = long([("1", "a", "x"), ("1", "b", "x"), ("2", "a", "x"), ("2", "b", "x")])
    result = annotator_agreement(table, numeric=False)
    assert result.annotators["a"]["others"]["agreement"] == 1.0
    assert result.annotators["a"]["others"]["kappa"] is None  # chance agreement is 1
    assert result.annotators["a"]["competence"] is None


def test_missing_answers_and_blanks_are_left_out():
    table = long([("1", "a", "x"), ("1", "b", ""), ("2", "a", "y"), ("2", "b", "y"), ("3", "b", None)])
    result = annotator_agreement(table, numeric=False, gold=pd.DataFrame({"item": ["9"], "value": ["x"]}))
    assert result.annotators["a"]["others"]["pairs"] == 1
    assert result.annotators["b"]["answers"] == 1
    assert result.annotators["b"]["gold"] == {"items": 0, "agreement": None, "kappa": None}
    assert "agreement with gold: no item with a gold answer was answered" in result.notes


def test_an_answer_outside_the_choices_is_a_category_of_its_own():
    table = long([("1", "a", "x"), ("1", "b", "z"), ("2", "a", "y"), ("2", "b", "y")])
    result = annotator_agreement(table, numeric=False, categories=["x", "y"],
                                 gold=pd.DataFrame({"item": ["1"], "value": ["w"]}))
    assert result.annotators["b"]["others"]["agreement"] == 0.5
    assert result.annotators["b"]["gold"]["agreement"] == 0.0
    assert not np.isnan(result.annotators["a"]["competence"])
