"""The columnar reading of a ratings CSV (benchmark.stats.csv_columns) and the coded report (coded.py).

pyarrow reads regular files; the csv module reads the rest. Both must give the same table and the
same messages, and a report computed on codes must equal the one computed from the table.
"""

import json

import numpy as np
import pandas as pd
import pytest

from benchmark.stats import csv_columns
from benchmark.stats.coded import from_frame
from benchmark.stats.csv_columns import CsvProblem, read_columns
from benchmark.stats.csv_input import read_coded_csv, read_long_csv
from benchmark.stats.report import agreement_report, question_report

CSV_MODULE = csv_columns._by_rows  # kept before any test replaces it
HEADER = "item,annotator,question,value,cluster,truth,condition,judge\n"
ROWS = (
    "e1,a,barrier,semantic,s1,semantic,semantic,\n"
    "e1,b,barrier,none,s1,semantic,semantic,\n"
    "e2,a,barrier,none,s1,none,none,\n"
    "e2,b,barrier,none,s1,none,none,\n"
    "e3,a,barrier,emotional,s2,emotional,emotional,\n"
    "e3,b,barrier,emotional,s2,emotional,emotional,\n"
    "e1,a,goal,3,s1,,semantic,2.5\n"
    "e1,b,goal,4,s1,,semantic,2.5\n"
    "e2,a,goal,5,s1,,none,4\n"
    "e2,b,goal,5,s1,,none,4\n"
    "e3,a,goal,1,s2,,emotional,1\n"
    "e3,b,goal,2,s2,,emotional,1\n"
    "e4,a,goal,2,s2,,none,2\n"
)


@pytest.fixture
def no_fallback(monkeypatch):
    """Fail if the csv module's reading is used: the file must go through pyarrow."""

    def refuse(*args, **kwargs):
        raise AssertionError("read by the csv module, not by pyarrow")

    monkeypatch.setattr(csv_columns, "_by_rows", refuse)


def by_rows(text: str):
    columns, rows = CSV_MODULE(text, "ratings.csv")
    return {name: column.labels[column.codes].tolist() for name, column in columns.items()}, rows.tolist()


def by_arrow(text: str):
    columns, rows, _ = read_columns(text, "ratings.csv")
    return {name: column.labels[column.codes].tolist() for name, column in columns.items()}, rows.tolist()


@pytest.mark.parametrize(
    "text",
    [
        HEADER + ROWS,
        (HEADER + ROWS).replace("\n", "\r\n"),  # Windows line ends
        HEADER + ROWS + "\n\n",  # blank lines at the end
        HEADER + ROWS.replace("e2,b,", " e2 , b ,") + ",,,,,,,\n",  # spaces around cells; a row of empty cells
        "notes," + HEADER.replace("\n", ",extra\n") + "".join(f"x,{row},y\n" for row in ROWS.splitlines()),
        HEADER + '"e1",a,barrier,"semantic, or not",s1,,,\n',  # a quoted comma
    ],
)
def test_pyarrow_reads_regular_files_as_the_csv_module_does(text, no_fallback):
    assert by_arrow(text) == by_rows(text)


def test_a_row_blank_in_the_needed_columns_but_not_in_an_ignored_one_is_kept(no_fallback):
    text = "item,annotator,question,value,notes\n1,A,q,3,\n,,,,see below\n1,B,q,4,\n"

    with pytest.raises(CsvProblem) as caught:
        read_long_csv(text, name="ratings.csv")

    assert (caught.value.row, caught.value.column) == (3, "item")


@pytest.mark.parametrize(
    "text",
    [
        HEADER + '"e1\nline 2",a,barrier,none,,,,\n"e1\nline 2",b,barrier,none,,,,\n',  # records of two lines
        HEADER + ROWS.replace("\n", "\r"),  # lone carriage returns
        HEADER + ROWS + "   \n",  # a line of spaces (one cell)
        HEADER + ROWS + "e9,a,goal\n",  # a short row
    ],
)
def test_irregular_files_are_read_by_the_csv_module_with_the_same_result(text, monkeypatch):
    used = []
    monkeypatch.setattr(csv_columns, "_by_rows", lambda *args: used.append(True) or CSV_MODULE(*args))
    try:
        outcome = by_arrow(text)
    except CsvProblem as problem:
        outcome = str(problem)
    monkeypatch.undo()
    try:
        expected = by_rows(text)
    except CsvProblem as problem:
        expected = str(problem)
    assert used and outcome == expected


def test_a_file_with_a_byte_order_mark_is_read_by_pyarrow(tmp_path, no_fallback):
    path = tmp_path / "ratings.csv"
    path.write_bytes(b"\xef\xbb\xbf" + (HEADER + ROWS).encode())

    table, options = read_long_csv(path)

    assert len(table) == 13 and options.categorical == ("barrier",) and options.numeric == ("goal",)


def test_the_coded_report_equals_the_report_of_the_table():
    coded, options = read_coded_csv(HEADER + ROWS)
    table, _ = read_long_csv(HEADER + ROWS)

    from_codes = agreement_report(coded, **options.as_arguments(), resamples=50, seed=1)
    from_table = agreement_report(table, **options.as_arguments(), resamples=50, seed=1)

    assert json.dumps(from_codes) == json.dumps(from_table)
    barrier = from_codes["questions"]["barrier"]
    assert barrier["accuracy"]["confusion"]["labels"] == ["emotional", "none", "semantic"]
    assert list(from_codes["questions"]["goal"]["by_condition"]) == ["emotional", "none", "semantic"]


def test_question_report_takes_a_table_or_its_codes():
    table = pd.DataFrame({
        "item": ["x", "x", "y", "y", "z"], "annotator": ["A", "B", "A", "B", "A"],
        "value": ["b", "a", "a", "a", "c"],
    })

    coded = question_report(from_frame(table), kind="categorical", resamples=0)

    assert coded == question_report(table, kind="categorical", resamples=0)
    assert coded["n_items"] == 2 and coded["excluded_items"] == 1 and coded["n_annotators"] == 2
    assert coded["cohen_kappa"] == 0.0


def test_codes_keep_first_appearance_and_blanks_are_minus_one():
    coded = from_frame(pd.DataFrame({
        "item": ["b", "a", "b", ""], "question": ["q"] * 4, "value": ["2", "1", None, "3"],
        "condition": ["z", None, "y", "z"],
    }))

    assert coded.item.tolist() == [0, 1, 0, -1] and coded.labels["item"].tolist() == ["b", "a", ""]
    assert coded.value.tolist() == [0, 1, -1, 2]
    np.testing.assert_array_equal(coded.number, [2.0, 1.0, np.nan, 3.0])
    assert coded.labels["condition"].tolist() == ["y", "z"] and coded.condition.tolist() == [1, -1, 0, 1]
