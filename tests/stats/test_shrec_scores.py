"""SHREC's scores (SH-12) against the spec's hand-computed acceptance values SH-A5..SH-A8 (to 1e-4),
and against scikit-learn where it computes the same thing."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import f1_score

from benchmark.stats import shrec
from benchmark.stats.shrec import (
    ATTRIBUTE_LABELS,
    CHANCE,
    DETECTION_LABELS,
    ERROR_LABELS,
    METRICS,
    accuracy,
    attribute_scores,
    binary_positive_f1,
    class_f1,
    cluster_bootstrap_scores,
    collapse_to_error,
    macro_f1,
    subset_mean_sd,
    task_scores,
)

CODES = {"C": "competency", "E": "error", "N": "none"}
GOLD = [CODES[c] for c in "CCCEEEENNN"]
PRED = [CODES[c] for c in "CENEECENEN"]

CM, KS, EM, EN, IN, SC, SN = (
    "conversational-mechanics", "knowledge-state", "emotions", "engagement", "intention", "social-context",
    "social-norms",
)
ATTR_GOLD = [[CM], [CM, KS], [EM, EN], [SC, SN, IN]]
ATTR_PRED = [[CM], [CM], [IN], [SC, IN, EN, KS]]


def approx(value):
    return pytest.approx(value, abs=1e-4)


def test_sh_a5_detection_accuracy_and_macro_f1():
    assert accuracy(GOLD, PRED) == approx(0.6)
    per_class = class_f1(GOLD, PRED, DETECTION_LABELS)
    assert [per_class[label].f1 for label in DETECTION_LABELS] == [approx(0.4), approx(0.6667), approx(0.6667)]
    assert macro_f1(GOLD, PRED, DETECTION_LABELS) == approx(0.5778)
    assert task_scores("detection", GOLD, PRED) == {"accuracy": approx(0.6), "macro_f1": approx(0.5778)}


def test_sh_a5_collapsed_to_error_or_not():
    gold, pred = collapse_to_error(GOLD), collapse_to_error(PRED)
    assert accuracy(gold, pred) == approx(0.7)
    per_class = class_f1(gold, pred, ERROR_LABELS)
    assert per_class["error"].f1 == approx(0.6667)
    assert per_class["no_error"].f1 == approx(0.7273)
    assert task_scores("error", gold, pred) == {"accuracy": approx(0.7), "macro_f1": approx(0.6970)}


def test_sh_a5_unparsed_answer_is_wrong_but_no_false_positive():
    pred = list(PRED)
    pred[8] = None  # was "error" against a gold "none"
    assert accuracy(GOLD, pred) == approx(0.6)
    assert macro_f1(GOLD, pred, DETECTION_LABELS) == approx(0.6056)
    # The error class lost a false positive: its precision rose from 3/5 to 3/4.
    assert class_f1(GOLD, pred, DETECTION_LABELS)["error"].precision == approx(0.75)


def test_out_of_space_answer_counts_like_an_unparsed_one():
    pred = list(PRED)
    pred[8] = "maybe"
    assert macro_f1(GOLD, pred, DETECTION_LABELS) == approx(0.6056)
    assert collapse_to_error(["error", "none", "competency", None, "maybe"]) == [
        "error", "no_error", "no_error", None, None,
    ]


def test_macro_f1_matches_scikit_learn_with_the_label_space_and_zero_division_0():
    pred = list(PRED)
    pred[8] = None
    ours = macro_f1(GOLD, pred, DETECTION_LABELS)
    theirs = f1_score(GOLD, ["<unparsed>" if p is None else p for p in pred], labels=list(DETECTION_LABELS),
                      average="macro", zero_division=0)
    assert ours == pytest.approx(theirs)


def test_gold_outside_the_label_space_is_refused():
    with pytest.raises(ValueError, match="not in the label space"):
        macro_f1(["error", "maybe"], ["error", "error"], DETECTION_LABELS)
    with pytest.raises(ValueError, match="2 gold answers but 1 predictions"):
        accuracy(["error", "none"], ["error"])


def test_sh_a6_attribute_scores():
    result = attribute_scores(ATTR_GOLD, ATTR_PRED)
    assert result.exact == approx(0.25)
    assert result.partial == approx(0.75)
    assert result.example_f1 == approx(0.5595)
    assert result.macro_f1 == approx(0.3810)
    assert result.micro_f1 == approx(0.5333)
    f1 = {label: scores.f1 for label, scores in result.per_label.items()}
    assert f1 == {CM: 1.0, SC: 1.0, IN: approx(0.6667), EM: 0.0, EN: 0.0, KS: 0.0, SN: 0.0}
    assert list(result.to_dict()["per_label"]) == list(ATTRIBUTE_LABELS)
    assert task_scores("attributes", ATTR_GOLD, ATTR_PRED) == {
        "exact": approx(0.25), "macro_f1": approx(0.3810), "partial": approx(0.75),
        "example_f1": approx(0.5595), "micro_f1": approx(0.5333),
    }


def test_attribute_macro_and_micro_f1_match_scikit_learn():
    def indicator(sets):
        return np.array([[label in s for label in ATTRIBUTE_LABELS] for s in sets], dtype=int)

    gold, pred = indicator(ATTR_GOLD), indicator(ATTR_PRED)
    result = attribute_scores(ATTR_GOLD, ATTR_PRED)
    assert result.macro_f1 == pytest.approx(f1_score(gold, pred, average="macro", zero_division=0))
    assert result.micro_f1 == pytest.approx(f1_score(gold, pred, average="micro", zero_division=0))
    assert result.example_f1 == pytest.approx(f1_score(gold, pred, average="samples", zero_division=0))


def test_unparsed_attribute_answer_is_wrong_everywhere_and_misses_its_gold_labels():
    parsed_empty = attribute_scores([[CM]], [[]])
    unparsed = attribute_scores([[CM]], [None])
    assert (unparsed.exact, unparsed.partial, unparsed.example_f1) == (0.0, 0.0, 0.0)
    assert unparsed.per_label[CM].recall == 0.0
    assert unparsed.macro_f1 == parsed_empty.macro_f1
    # An empty answer to an empty gold is exact; an unparsed one is not.
    assert attribute_scores([[]], [[]]).exact == 1.0
    assert attribute_scores([[]], [None]).exact == 0.0
    with pytest.raises(ValueError, match="not among"):
        attribute_scores([["curiosity"]], [[CM]])


def test_sh_a7_multiple_attributes():
    gold = [True] * 6 + [False] * 4
    pred = [True] * 10
    scores = task_scores("multiple", gold, pred)
    assert scores == {"accuracy": approx(0.6), "macro_f1": approx(0.375), "positive_f1": approx(0.75)}
    assert binary_positive_f1(gold, pred, True) == approx(0.75)
    gold = [c == "T" for c in "TTFTFFTF"]
    pred = [c == "T" for c in "TFFTTFTF"]
    assert task_scores("multiple", gold, pred)["accuracy"] == approx(0.75)
    assert task_scores("multiple", gold, pred)["macro_f1"] == approx(0.75)


def test_an_integer_is_not_a_boolean_answer():
    assert accuracy([True, False], [1, 0]) == 0.0
    with pytest.raises(ValueError, match="not in the label space"):
        task_scores("pre", [True], [1])


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=60))
def test_sh_a7_binary_macro_f1_never_exceeds_accuracy(pairs):
    gold = [g for g, _ in pairs]
    pred = [p for _, p in pairs]
    scores = task_scores("multiple", gold, pred)
    assert scores["macro_f1"] <= scores["accuracy"] + 1e-12


def test_with_unparsed_answers_binary_macro_f1_can_exceed_accuracy():
    # Not a binary confusion matrix any more: the unparsed answer lowers accuracy and a recall only.
    scores = task_scores("multiple", [False, False, True], [False, None, True])
    assert scores["accuracy"] == approx(0.6667)
    assert scores["macro_f1"] == approx(0.8333)


def test_sh_a8_subset_mean_and_sd():
    assert subset_mean_sd([0.60, 0.65, 0.70]) == (approx(0.65), approx(0.05), 3)
    assert subset_mean_sd([0.60, 0.65, 0.70], ddof=0).sd == approx(0.0408)
    assert subset_mean_sd([0.6, None, float("nan")]) == (0.6, None, 1)
    assert subset_mean_sd([]) == (None, None, 0)


def test_chance_levels_and_metrics_per_task():
    assert CHANCE["detection"] == pytest.approx(1 / 3)
    assert CHANCE["error"] == CHANCE["multiple"] == 0.5
    assert all(CHANCE[task] == 0.2 for task in ("pre", "post", "rationale", "correction"))
    assert CHANCE["attributes"] == pytest.approx(1 / 127)
    assert task_scores("rationale", [1, 2, 3, 4], [1, 2, None, 5]) == {"accuracy": 0.5}
    assert set(METRICS) == set(shrec.TASKS)
    with pytest.raises(ValueError, match="unknown SHREC task"):
        task_scores("sarcasm", [1], [1])


def test_bootstrap_by_video_gives_intervals_around_every_metric():
    videos = list("aabbccddee")
    result = cluster_bootstrap_scores("detection", GOLD, PRED, videos, resamples=500, seed=1)
    assert set(result) == {"accuracy", "macro_f1"}
    for cell in result.values():
        low, high = cell["ci95"]
        assert low <= cell["value"] <= high
        assert cell["n"] == 10 and cell["clusters"] == 5
    assert result["macro_f1"]["value"] == approx(0.5778)
    again = cluster_bootstrap_scores("detection", GOLD, PRED, videos, resamples=500, seed=1)
    assert again == result


def test_bootstrap_of_one_video_has_no_interval_and_identical_videos_a_point_interval():
    single = cluster_bootstrap_scores("attributes", ATTR_GOLD, ATTR_PRED, ["v"] * 4)
    assert single["exact"] == {"value": 0.25, "ci95": None, "n": 4, "clusters": 1}
    # Every video holds the same two answers: each resample scores exactly the same.
    gold = ["error", "none"] * 3
    pred = ["error", "error"] * 3
    same = cluster_bootstrap_scores("detection", gold, pred, ["a", "a", "b", "b", "c", "c"], resamples=200)
    assert same["accuracy"]["ci95"] == [0.5, 0.5]
    assert same["macro_f1"]["ci95"] == [approx(same["macro_f1"]["value"])] * 2


def test_bootstrap_of_attributes_recomputes_macro_f1_from_resampled_counts():
    result = cluster_bootstrap_scores("attributes", ATTR_GOLD * 3, ATTR_PRED * 3, list("abcd") * 3, resamples=300)
    assert result["macro_f1"]["value"] == approx(0.3810)
    low, high = result["macro_f1"]["ci95"]
    assert 0.0 <= low <= 0.3810 <= high <= 1.0


def test_agreed_vs_disagreed_attribute_scores():
    groups = ["agreed", "disagreed", "agreed", "disagreed"]
    result = shrec.scores_by_group("attributes", ATTR_GOLD, ATTR_PRED, groups)
    assert list(result) == ["agreed", "disagreed"]
    # agreed: {CM}/{CM} exact; {EM, EN}/{IN} nothing. disagreed: {CM, KS}/{CM}; {SC, SN, IN}/{SC, IN, EN, KS}.
    assert result["agreed"]["n"] == 2
    assert result["agreed"]["exact"] == 0.5 and result["agreed"]["partial"] == 0.5
    assert result["agreed"]["example_f1"] == approx(0.5)
    assert result["disagreed"]["exact"] == 0.0 and result["disagreed"]["partial"] == 1.0
    assert result["disagreed"]["example_f1"] == approx((2 / 3 + 4 / 7) / 2)


def test_error_detection_scores_per_attribute():
    gold = ["error", "error", "no_error", "error"]
    pred = ["error", "no_error", "no_error", "error"]
    sets = [[EM], [EM, CM], [CM], None]
    result = shrec.scores_by_attribute("error", gold, pred, sets)
    assert result[EM] == {"n": 2, "accuracy": 0.5, "macro_f1": approx(1 / 3), "error_f1": approx(2 / 3)}
    # CM: gold error/no_error, predicted no_error/no_error.
    assert result[CM]["n"] == 2 and result[CM]["accuracy"] == 0.5 and result[CM]["error_f1"] == 0.0
    assert result[SN] == {"n": 0}
    assert list(result) == list(ATTRIBUTE_LABELS)
