"""Reading a long-format CSV of ratings into a checked table (benchmark.stats.csv_input)."""

import io
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmark.stats.csv_input import (
    CsvProblem,
    OptionProblem,
    collect,
    parse_categories,
    parse_number,
    parse_question_list,
    parse_scale,
    read_long_csv,
)
from benchmark.stats.report import agreement_report
from tests.stats.references import FLEISS_1971, KRIPPENDORFF_2011, SHROUT_FLEISS

FIXTURES = Path(__file__).parent / "fixtures"
HEADER = "item,annotator,question,value\n"


def problem(text: str, **options) -> CsvProblem:
    with pytest.raises(CsvProblem) as caught:
        read_long_csv(text, name="ratings.csv", **options)
    return caught.value


@pytest.mark.parametrize(
    ("name", "matrix"),
    [("fleiss_1971.csv", FLEISS_1971), ("shrout_fleiss_1979.csv", SHROUT_FLEISS),
     ("krippendorff_2011.csv", KRIPPENDORFF_2011.T)],
)
def test_fixtures_hold_the_published_reference_data(name, matrix):
    table, _ = read_long_csv(FIXTURES / name)

    def number(label: str) -> int:  # patient12 -> 12
        return int(re.sub(r"\D", "", label))

    wide = table.pivot(index="item", columns="annotator", values="value")
    wide = wide.loc[sorted(wide.index, key=number), sorted(wide.columns, key=number)]
    np.testing.assert_array_equal(wide.to_numpy(dtype=float), np.asarray(matrix, dtype=float))


def test_reads_a_file_path_with_typed_columns():
    table, options = read_long_csv(FIXTURES / "shrout_fleiss_1979.csv")

    assert list(table.columns) == ["item", "annotator", "question", "value"]
    assert len(table) == 24
    assert table["value"].map(type).eq(float).all()
    assert table.loc[0].to_dict() == {"item": "target1", "annotator": "judge1", "question": "score", "value": 9.0}
    assert options.numeric == ("score",) and options.categorical == ()


def test_reads_text_and_streams():
    text = HEADER + "1,A,q,x\n1,B,q,y\n"

    from_text, _ = read_long_csv(text)
    from_stream, _ = read_long_csv(io.StringIO(text))

    pd.testing.assert_frame_equal(from_text, from_stream)
    assert from_text["value"].tolist() == ["x", "y"]


def test_header_is_matched_without_case_spaces_or_byte_order_mark(tmp_path):
    path = tmp_path / "ratings.csv"
    path.write_text(" Item ,ANNOTATOR,Question,Value,notes\n1,A,q,3,ok\n1,B,q,4,\n", encoding="utf-8-sig")

    table, _ = read_long_csv(path)

    assert list(table.columns) == ["item", "annotator", "question", "value"]  # unknown columns are ignored
    assert table["value"].tolist() == [3.0, 4.0]


def test_optional_columns_are_typed_and_blanks_are_unknown():
    text = (
        "item,annotator,question,value,cluster,truth,condition,judge\n"
        "1,A,goal,7,s1,7,semantic,6.5\n"
        "1,B,goal,8,,,semantic,6.5\n"
        "1,A,barrier,semantic,s1,semantic,,\n"
    )

    table, _ = read_long_csv(text)

    goal = table[table["question"] == "goal"]
    assert goal["truth"].tolist() == [7.0, None]
    assert goal["cluster"].tolist() == ["s1", None]
    assert goal["judge"].tolist() == [6.5, 6.5]
    barrier = table[table["question"] == "barrier"].iloc[0]
    assert barrier["truth"] == "semantic" and barrier["condition"] is None and math.isnan(barrier["judge"])


def test_questions_of_numbers_are_numeric_and_others_categorical():
    _, options = read_long_csv(HEADER + "1,A,goal,7\n1,B,goal,-0.5e1\n1,A,barrier,none\n1,B,barrier,semantic\n")

    assert options.numeric == ("goal",) and options.categorical == ("barrier",)


def test_declared_categorical_keeps_numbers_as_text():
    table, options = read_long_csv(HEADER + "1,A,diagnosis,1\n1,B,diagnosis,2\n", categorical=["diagnosis"])

    assert table["value"].tolist() == ["1", "2"]
    assert options.categorical == ("diagnosis",)
    assert options.as_arguments()["categorical"] == ("diagnosis",)


def test_categories_make_a_question_categorical_and_are_checked():
    table, options = read_long_csv(HEADER + "1,A,d,1\n1,B,d,3\n", categories={"d": ["1", "2", "3"]})

    assert options.categorical == ("d",) and options.categories == {"d": ("1", "2", "3")}
    assert table["value"].tolist() == ["1", "3"]

    found = problem(HEADER + "1,A,d,1\n1,B,d,4\n", categories={"d": ["1", "2", "3"]})
    assert str(found) == (
        "ratings.csv, row 3, column value: '4' is not one of the categories given for question 'd' (1, 2, 3)"
    )


def test_scale_makes_a_question_numeric_and_is_checked():
    _, options = read_long_csv(HEADER + "1,A,goal,0\n1,B,goal,10\n", scales={"goal": (0.0, 10.0)})
    assert options.numeric == ("goal",) and options.scales == {"goal": (0.0, 10.0)}

    found = problem(HEADER + "1,A,goal,0\n1,B,goal,11\n", scales={"goal": (0.0, 10.0)})
    assert (found.row, found.column) == (3, "value")
    assert "11 is outside the scale 0:10 given for question 'goal'" in found.message


def test_blank_values_are_no_rating_and_are_counted():
    table, options = read_long_csv(HEADER + "1,A,q,3\n1,B,q,\n1,C,q,4\n\n")

    assert table["annotator"].tolist() == ["A", "C"]
    assert options.blank_values == 1


def test_a_question_whose_every_value_is_blank_is_reported_with_a_note():
    table, options = read_long_csv(HEADER + "1,A,q,3\n1,B,q,4\n1,A,skipped,\n1,B,skipped,\n")

    assert options.blank_questions == ("skipped",)
    assert options.numeric == ("q", "skipped") and options.to_dict()["blank_questions"] == ["skipped"]
    report = agreement_report(table, **options.as_arguments(), resamples=0)
    skipped = report["questions"]["skipped"]
    assert (skipped["type"], skipped["n_items"], skipped["n_ratings"]) == ("numeric", 0, 0)
    assert skipped["notes"][0] == "answers: every value of this question is blank; there is nothing to compute"


def test_a_blank_question_declared_categorical_stays_categorical():
    table, options = read_long_csv(
        HEADER + "1,A,q,3\n1,A,skipped,\n", categories={"skipped": ("yes", "no")}
    )

    assert options.categorical == ("skipped",) and options.numeric == ("q",)
    report = agreement_report(table, **options.as_arguments(), resamples=0)
    assert report["questions"]["skipped"]["type"] == "categorical"


def test_missing_required_column_names_row_one_and_the_column():
    found = problem("item,annotator,value\n1,A,3\n")

    assert (found.file, found.row, found.column) == ("ratings.csv", 1, "question")
    assert str(found).startswith("ratings.csv, row 1, column question: the header lacks question;")


def test_another_separator_gets_a_hint():
    found = problem("item;annotator;question;value\n1;A;q;3\n")

    assert "separated by commas" in found.message


@pytest.mark.parametrize("column", ["item", "annotator", "question"])
def test_empty_identifier_names_the_row_and_column(column):
    cells = {"item": "1", "annotator": "A", "question": "q", "value": "3"}
    cells[column] = " "

    found = problem(HEADER + "1,B,q,2\n" + ",".join(cells.values()) + "\n")

    assert (found.row, found.column) == (3, column)
    assert found.message == f"the {column} is empty; every rating needs one"


def test_non_number_in_an_inferred_numeric_question_is_an_error():
    found = problem(HEADER + "1,A,goal,7\n1,B,goal,n/a\n2,A,goal,3\n")

    assert (found.row, found.column) == (3, "value")
    assert "'n/a' is not a number, but question 'goal' has numbers too (row 2: '7')" in found.message
    assert "--categorical goal" in found.message


def test_non_number_in_a_declared_numeric_question_is_an_error():
    found = problem(HEADER + "1,A,goal,high\n1,B,goal,low\n", numeric=["goal"])

    assert (found.row, found.column) == (2, "value")
    assert "'high' is not a number, and question 'goal' is numeric" in found.message


@pytest.mark.parametrize("text", ["3,5", "nan", "inf", "1e", "--1", "1_000", "1e400"])
def test_only_plain_finite_decimal_numbers_are_numbers(text):
    assert parse_number(text) is None


# Numbers that are not finite: too large for a float (1e400 reads as infinity), or spelled inf / nan.

NOT_FINITE = ["1e400", "1e999", "-1e999", "inf", "-inf", "+Infinity", "nan", "NaN"]


@pytest.mark.parametrize("text", NOT_FINITE)
def test_a_value_that_is_not_finite_is_refused_at_its_row_and_column(text):
    found = problem(HEADER + f"1,A,goal,7\n1,B,goal,{text}\n2,A,goal,3\n")

    assert (found.row, found.column) == (3, "value")
    assert f"'{text}' is not a finite number" in found.message
    assert "leave it blank for no rating" in found.message


@pytest.mark.parametrize("text", ["1e400", "inf", "nan"])
def test_a_value_that_is_not_finite_is_refused_in_a_declared_numeric_question(text):
    found = problem(HEADER + f"1,A,goal,{text}\n1,B,goal,3\n", scales={"goal": (0.0, 10.0)})

    assert (found.row, found.column) == (2, "value")
    assert f"'{text}' is not a finite number" in found.message


def test_a_question_whose_only_values_are_nan_is_refused_with_the_way_out_that_works():
    found = problem(HEADER + "1,A,word,nan\n1,B,word,inf\n")

    assert (found.row, found.column) == (2, "value")
    assert "'nan' is not a finite number" in found.message and "--categorical word" in found.message
    table, _ = read_long_csv(HEADER + "1,A,word,nan\n1,B,word,inf\n", categorical=["word"])
    assert table["value"].tolist() == ["nan", "inf"]


@pytest.mark.parametrize("text", NOT_FINITE)
def test_a_judge_score_that_is_not_finite_is_refused_at_its_row_and_column(text):
    found = problem(f"item,annotator,question,value,judge\n1,A,goal,7,5\n1,B,goal,6,5\n2,A,goal,3,{text}\n")

    assert (found.row, found.column) == (4, "judge")
    assert f"'{text}' is not a finite number" in found.message
    assert "the judge column holds scores" in found.message


@pytest.mark.parametrize("text", ["1e400", "-inf", "nan"])
def test_a_truth_that_is_not_finite_is_refused_at_its_row_and_column(text):
    found = problem(f"item,annotator,question,value,truth\n1,A,goal,7,7\n1,B,goal,6,{text}\n")

    assert (found.row, found.column) == (3, "truth")
    assert f"'{text}' is not a finite number" in found.message


def test_a_scale_end_that_is_not_finite_is_refused():
    with pytest.raises(OptionProblem, match=r"'goal=0:1e400': 1e400 is too large"):
        parse_scale("goal=0:1e400")


def test_duplicate_rating_names_both_rows():
    found = problem(HEADER + "1,A,q,3\n1,B,q,2\n1,A,q,4\n")

    assert found.row == 4
    assert found.message.startswith("annotator 'A' rated item '1' on question 'q' already at row 2")


def test_the_earliest_bad_row_is_reported_whatever_its_problem():
    found = problem(HEADER + "1,A,goal,7\n1,B,goal,x\n1,A,goal,8\n")

    assert (found.row, found.column) == (3, "value")  # the text at row 3 comes before the duplicate at row 4
    assert "'x' is not a number" in found.message


def test_row_with_the_wrong_number_of_cells():
    found = problem(HEADER + "1,A,q,3\n1,B,q\n")

    assert found.row == 3 and found.message == "has 3 cells; the header has 4"


def test_non_numeric_judge_and_truth():
    judge = problem("item,annotator,question,value,judge\n1,A,q,3,good\n")
    assert (judge.row, judge.column) == (2, "judge")

    truth = problem("item,annotator,question,value,truth\n1,A,q,3,three\n")
    assert (truth.row, truth.column) == (2, "truth")


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "row 1: the file is empty"), (HEADER, "has no ratings"), (HEADER + "1,A,q,\n", "has no ratings"),
     ("item,item,annotator,question,value\n", "the header names item more than once")],
)
def test_empty_or_malformed_files(text, message):
    assert message in str(problem(text + "\n" if text else "\n"))


def test_missing_and_undecodable_files(tmp_path):
    with pytest.raises(CsvProblem, match=r"^nowhere\.csv: no such file$"):
        read_long_csv(tmp_path / "nowhere.csv")
    (tmp_path / "latin.csv").write_bytes(HEADER.encode() + "1,A,q,caf\xe9\n".encode("latin-1"))
    with pytest.raises(CsvProblem, match=r"^latin\.csv: is not UTF-8 text"):
        read_long_csv(tmp_path / "latin.csv")


def test_options_must_name_questions_of_the_file():
    with pytest.raises(OptionProblem, match=r"ratings\.csv: the options name question 'goals', which the file"):
        read_long_csv(HEADER + "1,A,goal,3\n", name="ratings.csv", scales={"goals": (1.0, 5.0)})


def test_a_question_cannot_be_both_categorical_and_numeric():
    with pytest.raises(OptionProblem, match="declared both categorical"):
        read_long_csv(HEADER + "1,A,goal,3\n", categorical=["goal"], scales={"goal": (1.0, 5.0)})


@pytest.mark.parametrize(
    ("parse", "text", "expected"),
    [
        (parse_question_list, "goal, barrier", ["goal", "barrier"]),
        (parse_categories, "barrier=none, semantic,emotional", ("barrier", ("none", "semantic", "emotional"))),
        (parse_scale, "goal=0:10", ("goal", (0.0, 10.0))),
        (parse_scale, "shift=-3:3.5", ("shift", (-3.0, 3.5))),
    ],
)
def test_option_formats(parse, text, expected):
    assert parse(text) == expected


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (parse_question_list, "goal,,barrier", r"expected QUESTION\[,QUESTION\.\.\.\]"),
        (parse_categories, "barrier:none,semantic", "expected QUESTION=CATEGORY,CATEGORY"),
        (parse_categories, "barrier=none", "gives one category"),
        (parse_categories, "barrier=none,none,semantic", "repeats the category none"),
        (parse_scale, "goal=0-10", "expected QUESTION=LOW:HIGH"),
        (parse_scale, "goal=5:1", "high end must be above its low end"),
        (parse_scale, "=1:5", "expected QUESTION=LOW:HIGH"),
    ],
)
def test_bad_option_formats(parse, text, message):
    with pytest.raises(OptionProblem, match=message):
        parse(text)


def test_a_question_given_twice_in_an_option():
    with pytest.raises(OptionProblem, match="--scale gives question 'goal' twice"):
        collect([("goal", (0, 1)), ("goal", (0, 2))], "--scale")


def test_the_table_feeds_the_report_with_every_column():
    rows = [HEADER.strip() + ",cluster,truth,condition,judge"]
    for item in range(12):
        barrier = ["none", "semantic", "emotional"][item % 3]
        for annotator, (answer, score) in enumerate([(barrier, 3 + item % 3), ("none", 4 + item % 3), (barrier, 5)]):
            rows.append(f"i{item},a{annotator},barrier,{answer},s{item // 2},{barrier},{barrier},")
            rows.append(f"i{item},a{annotator},goal,{score},s{item // 2},,{barrier},{4 + item % 3}.5")

    table, options = read_long_csv("\n".join(rows) + "\n")
    report = agreement_report(table, **options.as_arguments(), resamples=100, seed=3)

    json.dumps(report, allow_nan=False)
    barrier, goal = report["questions"]["barrier"], report["questions"]["goal"]
    assert barrier["type"] == "categorical" and barrier["accuracy"]["n_clusters"] == 6
    assert goal["type"] == "numeric" and goal["alignment"]["n"] == 12
    assert set(goal["by_condition"]) == {"none", "semantic", "emotional"}
    assert goal["accuracy"] is None
