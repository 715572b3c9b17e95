import numpy as np
import pandas as pd
import pytest

from benchmark.stats.spans import attribute_set, interval_iou, span_agreement


def spans(rows):
    return pd.DataFrame(rows, columns=["item", "annotator", "start", "end", "label", "attributes"])


def test_iou_of_half_open_intervals():
    pairs = [((0, 4), (2, 6)), ((0, 4), (0, 8)), ((0, 2), (2, 4)), ((3, 3), (3, 3))]
    (start_a, end_a), (start_b, end_b) = (zip(*side, strict=True) for side in zip(*pairs, strict=True))
    assert interval_iou(start_a, end_a, start_b, end_b).tolist() == [pytest.approx(2 / 6), 0.5, 0.0, 1.0]


def test_attribute_sets_from_lists_or_text():
    assert attribute_set(["emotion", "engagement"]) == {"emotion", "engagement"}
    assert attribute_set("emotion; intention|norms") == {"emotion", "intention", "norms"}
    assert attribute_set(None) == frozenset()
    assert attribute_set(np.nan) == frozenset()


def test_pairs_by_overlap_and_measures_agreement():
    table = spans(
        [
            # item 1: A and B mark nearly the same turns, same label, attributes overlap partly.
            (1, "A", 0, 4, "error", ["emotion", "engagement"]),
            (1, "B", 1, 4, "error", ["emotion"]),
            # A marks a second span B did not.
            (1, "A", 10, 12, "competency", ["norms"]),
            # item 2: same span, different labels, identical attributes.
            (2, "A", 5, 7, "error", "intention"),
            (2, "B", 5, 7, "competency", "intention"),
        ]
    )
    result = span_agreement(table, min_iou=0.5)
    assert result.n_spans == 5 and result.n_pairs == 2
    assert result.overlap_share == pytest.approx(4 / 5)
    assert result.label_agreement == pytest.approx(1 / 2)
    assert result.disagreement_share == pytest.approx(2 / 5)
    # Pair 1: F1 = 2*1/(2+1) = 2/3, partial, not exact. Pair 2: F1 = 1, exact.
    assert result.attribute_f1 == pytest.approx((2 / 3 + 1) / 2)
    assert result.attribute_partial_match == 1.0
    assert result.attribute_exact_match == 0.5
    assert result.per_attribute["emotion"] == {"spans": 2, "pairs_both": 1, "f1": 1.0}
    assert result.per_attribute["engagement"] == {"spans": 1, "pairs_both": 0, "f1": 0.0}
    assert result.per_attribute["norms"]["f1"] is None  # never inside a pair


def test_threshold_decides_what_overlaps():
    table = spans([(1, "A", 0, 10, "error", "emotion"), (1, "B", 6, 10, "error", "emotion")])
    assert span_agreement(table, min_iou=0.5).n_pairs == 0
    assert span_agreement(table, min_iou=0.4).n_pairs == 1


def test_greedy_matching_takes_the_best_overlap_first():
    table = spans(
        [
            (1, "A", 0, 10, "error", "x"),
            (1, "B", 0, 9, "error", "x"),  # IoU .9 with A's span
            (1, "B", 2, 10, "competency", "x"),  # IoU .8, left unpaired once A's span is taken
        ]
    )
    result = span_agreement(table, min_iou=0.5)
    assert result.n_pairs == 1
    assert result.label_agreement == 1.0
    assert result.overlap_share == pytest.approx(2 / 3)


def test_each_other_annotator_gets_one_partner():
    table = spans(
        [
            (1, "A", 0, 4, "error", "x"),
            (1, "B", 0, 4, "error", "x"),
            (1, "C", 0, 4, "error", "x"),
        ]
    )
    result = span_agreement(table)
    assert result.n_pairs == 3  # A-B, A-C, B-C
    assert result.overlap_share == 1.0


def test_inclusive_turn_ranges():
    table = spans([(1, "A", 3, 3, "error", "x"), (1, "B", 3, 4, "error", "x")])
    assert span_agreement(table, end_inclusive=True, min_iou=0.5).n_pairs == 1
    assert span_agreement(table, end_inclusive=False, min_iou=0.5).n_pairs == 0


def test_items_need_two_annotators():
    table = spans([(1, "A", 0, 4, "error", "x"), (2, "A", 0, 4, "error", "x"), (2, "B", 0, 4, "error", "x")])
    result = span_agreement(table)
    assert result.excluded_items == 1 and result.n_items == 1
    assert result.n_spans == 2


def test_coders_who_marked_nothing_count():
    table = spans([(1, "A", 0, 4, "error", "x")])
    coders = pd.DataFrame({"item": [1, 1], "annotator": ["A", "B"]})
    result = span_agreement(table, coders=coders)
    assert result.excluded_items == 0
    assert result.overlap_share == 0.0
    assert result.label_agreement is None
    assert any("no spans overlap" in note for note in result.notes)


def test_pairs_without_attributes_are_left_out_of_attribute_agreement():
    table = spans([(1, "A", 0, 4, "error", None), (1, "B", 0, 4, "error", "")])
    result = span_agreement(table)
    assert result.n_pairs == 1
    assert result.attribute_f1 is None and result.attribute_pairs == 0
