"""Krippendorff's unitizing alpha against the worked examples of Krippendorff (1995, p. 57) and
(2004, p. 254), with the values DKPro Agreement's tests assert for them (dkpro/dkpro-statistics,
dkpro-statistics-agreement/src/test/java/org/dkpro/statistics/agreement/unitizing/
Krippendorff1995Test.java, Krippendorff2004Test.java, UnitizingAgreementTest.java), to the same
tolerances; plus properties."""

import pandas as pd
import pytest

from benchmark.stats.unitizing import Segment, distance, segments, study_unitizing_alpha, unitizing_alpha

# Krippendorff (2004), p. 254: two observers, continuum [150, 450); (begin, length, coder, category).
EXAMPLE_2004 = [
    (225, 70, 0, "c"), (370, 30, 0, "c"), (220, 80, 1, "c"), (355, 20, 1, "c"), (400, 20, 1, "c"),
    (180, 60, 0, "k"), (300, 50, 0, "k"), (180, 60, 1, "k"), (300, 50, 1, "k"),
]

# Krippendorff (1995), p. 57: four pairs of coders on a continuum of 24; (begin, length, coder, category).
EXAMPLE_1995 = [
    (2, 8, 0, "A"), (14, 6, 0, "A"), (4, 4, 1, "A"), (15, 2, 1, "A"),
    (0, 18, 0, "B"), (0, 2, 1, "B"), (2, 1, 1, "B"), (3, 1, 1, "B"), (4, 1, 1, "B"), (5, 1, 1, "B"),
    (6, 3, 1, "B"), (9, 1, 1, "B"),
    (2, 6, 0, "C"), (10, 2, 0, "C"), (14, 4, 0, "C"), (20, 2, 0, "C"), (0, 2, 1, "C"), (4, 4, 1, "C"),
    (10, 4, 1, "C"), (16, 2, 1, "C"), (20, 2, 1, "C"),
    (0, 2, 0, "D"), (2, 8, 0, "D"), (10, 4, 0, "D"), (14, 6, 0, "D"), (20, 4, 0, "D"), (0, 4, 1, "D"),
    (4, 4, 1, "D"), (8, 7, 1, "D"), (15, 2, 1, "D"), (17, 7, 1, "D"),
]


def example_1995(stretch):
    units = [
        (coder, int(begin * stretch), int(begin * stretch) + int(length * stretch), category)
        for begin, length, coder, category in EXAMPLE_1995
    ]
    return unitizing_alpha(units, [0, 1], int(24 * stretch))


def test_distances_of_krippendorff_2004():
    def seg(begin, length, category):
        return Segment(begin, begin + length, category is not None)

    assert distance(seg(2, 3, None), seg(2, 2, "X")) + distance(seg(5, 6, "X"), seg(4, 7, None)) == 40
    assert distance(seg(5, 6, "X"), seg(4, 2, "X")) == 26
    assert distance(seg(5, 6, "X"), seg(6, 4, "X")) == 2
    assert distance(seg(5, 6, "X"), seg(5, 6, "X")) == 0
    assert distance(seg(225, 70, "c"), seg(220, 80, "c")) == 50
    assert distance(seg(370, 30, "c"), seg(355, 20, "c")) == 850
    assert distance(seg(400, 50, None), seg(400, 20, "c")) == 400
    assert distance(seg(1, 8, "A"), seg(7, 4, None)) == 0


def test_krippendorff_2004_example():
    units = [(coder, begin - 150, begin - 150 + length, category) for begin, length, coder, category in EXAMPLE_2004]
    result = unitizing_alpha(units, [0, 1], 300)
    assert result.alpha == pytest.approx(0.8591, abs=0.0005)
    c, k = result.by_category["c"], result.by_category["k"]
    assert c["observed_disagreement"] == pytest.approx(0.0144, abs=1e-4)
    assert c["expected_disagreement"] == pytest.approx(0.0532, abs=1e-4)
    assert c["alpha"] == pytest.approx(0.7286, abs=1e-4)
    assert k["observed_disagreement"] == 0.0
    assert k["expected_disagreement"] == pytest.approx(0.0490, abs=1e-4)
    assert k["alpha"] == 1.0


def test_krippendorff_1995_observed_disagreements():
    by_category = example_1995(1).by_category
    observed = {name: cell["observed_disagreement"] for name, cell in by_category.items()}
    assert observed == {
        "A": pytest.approx(0.03125, abs=1e-5), "B": pytest.approx(2.26736, abs=1e-5),
        "C": pytest.approx(0.02777, abs=1e-5), "D": pytest.approx(0.38715, abs=1e-5),
    }


def test_krippendorff_1995_alphas_on_a_fine_continuum():
    # The example's continuum stretched 50,000 times approaches Krippendorff's continuous values.
    by_category = example_1995(50_000).by_category
    expected = {"A": 0.06990, "B": 1.17731, "C": 0.08642, "D": 0.41445}
    alphas = {"A": 0.553, "B": -0.926, "C": 0.679, "D": 0.066}
    for name in "ABCD":
        assert by_category[name]["expected_disagreement"] == pytest.approx(expected[name], abs=0.005)
        assert by_category[name]["alpha"] == pytest.approx(alphas[name], abs=0.02)


def test_krippendorff_1995_coarse_continuum():
    c = example_1995(0.5).by_category["C"]
    assert c["observed_disagreement"] == pytest.approx(0.02777, abs=1e-5)
    assert c["expected_disagreement"] == pytest.approx(0.05494, abs=1e-5)
    assert c["alpha"] == pytest.approx(0.494, abs=0.02)


def test_one_long_unit_against_three_short_ones():
    # r0: -11111111-   r1: --1-1-1---   (DKPro's UnitizingAgreementTest)
    result = unitizing_alpha([(0, 1, 9, "A"), (1, 2, 3, "A"), (1, 4, 5, "A"), (1, 6, 7, "A")], [0, 1], 10)
    cell = result.by_category["A"]
    assert cell["observed_disagreement"] == pytest.approx(0.9100, abs=1e-4)
    assert cell["expected_disagreement"] == pytest.approx(0.5351, abs=1e-4)
    assert cell["alpha"] == pytest.approx(-0.7003, abs=1e-4)


def test_one_unit_of_three_coders_is_chance_and_no_units_undefined():
    assert unitizing_alpha([(0, 0, 1, "X")], [0, 1, 2], 20).alpha == 0.0
    empty = unitizing_alpha([], [0, 1, 2], 20)
    assert empty.alpha is None and "no units" in empty.notes[0]


def test_identical_segmentations_agree_perfectly():
    units = [(coder, begin, end, label) for coder in "xyz" for begin, end, label in
             [(0, 5, "error"), (10, 30, "competency"), (40, 41, "error")]]
    result = unitizing_alpha(units, list("xyz"), 60)
    assert result.alpha == 1.0
    assert all(cell["alpha"] == 1.0 for cell in result.by_category.values())


def test_a_coder_who_marked_nothing_lowers_alpha():
    both = unitizing_alpha([("a", 2, 6, "error"), ("b", 2, 6, "error")], ["a", "b"], 20)
    one = unitizing_alpha([("a", 2, 6, "error")], ["a", "b"], 20)
    assert both.alpha == 1.0 and one.alpha < both.alpha


def test_overlapping_units_of_one_coder_are_merged_and_noted():
    result = unitizing_alpha([("a", 0, 4, "e"), ("a", 2, 6, "e"), ("b", 0, 6, "e")], ["a", "b"], 10)
    assert result.alpha == 1.0
    assert "1 overlapping units of the same coder and label merged" in result.notes


def test_bad_units_are_refused():
    with pytest.raises(ValueError, match="outside the continuum"):
        unitizing_alpha([("a", 5, 12, "e")], ["a", "b"], 10)
    with pytest.raises(ValueError, match="not among the coders"):
        unitizing_alpha([("c", 1, 2, "e")], ["a", "b"], 10)


def test_study_alpha_lays_items_end_to_end_in_seconds():
    spans = pd.DataFrame(
        [
            ("v1", "A", 1.0, 3.5, "error"), ("v1", "B", 1.0, 3.5, "error"),
            ("v2", "A", 0.5, 2.0, "competency"), ("v2", "B", 0.5, 2.0, "competency"),
            ("v3", "A", 0.0, 1.0, "error"),  # v3 has one annotator only
        ],
        columns=["item", "annotator", "start", "end", "label"],
    )
    result = study_unitizing_alpha(spans, {"v1": 10.0, "v2": 5.0, "v3": 4.0}, resolution=0.5, coordinate="seconds")
    assert result.alpha == 1.0
    assert (result.n_items, result.excluded_items, result.n_coders) == (2, 1, 2)
    assert result.continuum_length == 15.0
    assert result.to_dict()["coordinate"] == "seconds"

    # The same spans against direct units on the 0.5 s grid, v2 starting at step 20.
    moved = spans.copy()
    moved.loc[(moved["item"] == "v2") & (moved["annotator"] == "B"), "end"] = 3.0
    study = study_unitizing_alpha(moved, {"v1": 10.0, "v2": 5.0}, resolution=0.5)
    direct = unitizing_alpha(
        [(0, 2, 7, "error"), (1, 2, 7, "error"), (0, 21, 24, "competency"), (1, 21, 26, "competency")], [0, 1], 30,
        boundaries=[20],
    )
    assert study.alpha == pytest.approx(direct.alpha)
    assert 0 < study.alpha < 1


def test_study_alpha_counts_annotators_who_marked_nothing():
    spans = pd.DataFrame([("t1", "A", 0, 2, "error")], columns=["item", "annotator", "start", "end", "label"])
    coders = pd.DataFrame([("t1", "A"), ("t1", "B")], columns=["item", "annotator"])
    without = study_unitizing_alpha(spans, {"t1": 6}, resolution=1)
    assert without.alpha is None and without.excluded_items == 1
    counted = study_unitizing_alpha(spans, {"t1": 6}, coders=coders, resolution=1)
    assert counted.n_coders == 2 and counted.alpha is not None and counted.alpha <= 0


def test_gaps_are_cut_where_an_item_ends():
    assert segments([(2, 4)], 10, boundaries=[6]) == [
        Segment(0, 2, False), Segment(2, 4, True), Segment(4, 6, False), Segment(6, 10, False),
    ]
    assert segments([(2, 8)], 10, boundaries=[6]) == [Segment(0, 2, False), Segment(2, 8, True), Segment(8, 10, False)]


def test_study_alpha_does_not_depend_on_item_order_or_who_is_coder_one():
    rows = [
        ("e1", "A", 0, 2, "error"), ("e1", "B", 0, 3, "error"), ("e1", "A", 5, 6, "competency"),
        ("e2", "B", 1, 2, "error"), ("e2", "C", 1, 4, "error"),
        ("e3", "A", 2, 3, "competency"),
    ]
    coders = [("e1", "A"), ("e1", "B"), ("e2", "B"), ("e2", "C"), ("e3", "A"), ("e3", "C")]
    lengths = {"e1": 8, "e2": 5, "e3": 6}
    columns = ["item", "annotator", "start", "end", "label"]

    def alpha(order, swap):
        table = pd.DataFrame([r for item in order for r in rows if r[0] == item], columns=columns)
        who = [c for item in order for c in coders if c[0] == item]
        if swap:
            who = [c for item in order for c in reversed([c for c in coders if c[0] == item])]
        return study_unitizing_alpha(table, lengths, coders=pd.DataFrame(who, columns=["item", "annotator"]),
                                     resolution=1).alpha

    reference = alpha(["e1", "e2", "e3"], False)
    assert reference is not None and -1 < reference < 1
    assert alpha(["e3", "e1", "e2"], False) == pytest.approx(reference)
    assert alpha(["e2", "e3", "e1"], True) == pytest.approx(reference)
