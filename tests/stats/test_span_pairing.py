"""SHREC's pairing rule and the IoU pairing as one function (spec shrec.md SH-3, acceptance SH-A1)."""

import pytest

from benchmark.stats.spans import pair_spans, pairing_summary

FIRST = [(0, 10, "error"), (20, 30, "competency"), (50, 60, "competency")]  # A1, A2, A3
SECOND = [(1, 9, "error"), (21, 35, "error"), (80, 90, "competency")]  # B1, B2, B3


def test_sh_a1_groups_pair_same_label_first_then_any_candidate():
    groups = pair_spans(FIRST, SECOND, "shrec")
    assert groups == [(0, 0), (1, 1), (2, None), (None, 2)]


def test_sh_a1_overlap_share_and_label_agreement():
    summary = pairing_summary(FIRST, SECOND, pair_spans(FIRST, SECOND))
    assert summary.overlap_share == pytest.approx(0.667, abs=5e-4)
    assert summary.label_agreement == 0.5
    assert (summary.n_spans, summary.n_pairs, summary.n_agreed) == (6, 2, 1)


def test_contained_span_whose_end_is_far_is_not_paired():
    assert pair_spans([(0, 40, "error")], [(5, 20, "error")]) == [(0, None), (None, 0)]


def test_contained_span_whose_end_is_near_is_paired():
    assert pair_spans([(0, 40, "error")], [(5, 32, "error")]) == [(0, 0)]


def test_the_same_label_is_preferred_over_an_earlier_candidate():
    first = [(10, 20, "error")]
    second = [(9, 19, "competency"), (11, 21, "error")]
    assert pair_spans(first, second) == [(0, 1), (None, 0)]


def test_without_a_same_label_candidate_the_last_candidate_is_paired():
    first = [(10, 20, "error")]
    second = [(9, 19, "competency"), (11, 21, "competency"), (12, 40, "competency")]
    # (12, 40): starts 2 s apart, a candidate too; it is the last in start order.
    assert pair_spans(first, second)[0] == (0, 2)


def test_a_paired_span_leaves_the_pool():
    first = [(0, 10, "error"), (1, 11, "error")]
    second = [(0, 10, "error")]
    assert pair_spans(first, second) == [(0, 0), (1, None)]


def test_spans_are_taken_in_start_order_whatever_their_order_given():
    first = [(20, 30, "competency"), (0, 10, "error")]
    second = [(21, 31, "competency"), (1, 9, "error")]
    assert pair_spans(first, second) == [(1, 1), (0, 0)]


def test_tolerances_are_parameters():
    assert pair_spans([(0, 10, "error")], [(4, 14, "error")]) == [(0, None), (None, 0)]
    assert pair_spans([(0, 10, "error")], [(4, 14, "error")], start_tolerance=5) == [(0, 0)]


def test_iou_pairs_best_overlap_first():
    first = [(0, 4, "error"), (10, 12, "competency")]
    second = [(1, 4, "error"), (0, 3, "error"), (30, 31, "error")]
    # (0, 4) vs (1, 4): IoU 0.75, vs (0, 3): 0.75 as well; the lower id wins the tie.
    assert pair_spans(first, second, "iou") == [(0, 0), (1, None), (None, 1), (None, 2)]
    assert pair_spans(first, second, "iou", min_iou=0.8) == [(0, None), (1, None), (None, 1), (None, 0), (None, 2)]


def test_an_empty_side_gives_singletons():
    assert pair_spans([], SECOND, "iou") == [(None, 0), (None, 1), (None, 2)]
    assert pair_spans(FIRST, []) == [(0, None), (1, None), (2, None)]


def test_unknown_method_is_refused():
    with pytest.raises(ValueError, match="unknown pairing method 'overlap'"):
        pair_spans(FIRST, SECOND, "overlap")
