"""The one CSV writer: text a spreadsheet would run as a formula is quoted, numbers are not, and it reverses."""

import csv
import io
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmark.csv_output import CsvWriter, csv_lines, csv_text, neutral_cell, restore_cell

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("text", [
    '=HYPERLINK("http://evil.example","click")', "+1+1", "-2+3+cmd|' /C calc'!A0", "@SUM(A1:A2)", "\t=1", "\r=1",
    "-", "+", "=", "-inf", "--1", "- a bullet point",
])
def test_text_that_begins_with_a_trigger_gets_a_leading_quote(text):
    assert neutral_cell(text) == "'" + text


@pytest.mark.parametrize("text", ["hello", "", " =1+1", "a=1", "1+1", "café", "'quoted", "0.5"])
def test_other_text_is_written_as_is(text):
    assert neutral_cell(text) == text


@pytest.mark.parametrize("value", [-0.5, -3, 0.0, -1e-300, True, None])
def test_numbers_written_as_numbers_stay_numbers(value):
    assert neutral_cell(value) is value


@pytest.mark.parametrize("text", ["-0.5", "-3", "+3", "-1e-3", "-.5", "+2E+10"])
def test_text_that_is_a_plain_decimal_number_stays_a_number(text):
    assert neutral_cell(text) == text


@pytest.mark.parametrize(("text", "written"), [("'=literal quote", "''=literal quote"), ("''-x", "'''-x")])
def test_text_that_already_looks_quoted_gets_one_more_quote(text, written):
    assert neutral_cell(text) == written
    assert restore_cell(written) == text


def test_a_document_has_the_header_then_neutral_rows_with_unix_line_ends():
    text = csv_text(["name", "score"], [["=1+1", -0.5], ["Ann, \"Bo\"", None]])

    assert text == "name,score\n'=1+1,-0.5\n\"Ann, \"\"Bo\"\"\",\n"


def test_a_carriage_return_inside_a_cell_is_quoted_so_the_row_survives_reading():
    text = csv_text(["a", "b"], [["one\rtwo", "x"]])

    assert text == 'a,b\n"one\rtwo",x\n'
    assert list(csv.reader(io.StringIO(text, newline=""))) == [["a", "b"], ["one\rtwo", "x"]]


def test_lines_stream_one_row_at_a_time():
    lines = csv_lines(["a"], iter([["@x"], ["y"]]))

    assert next(lines) == "a\n"
    assert next(lines) == "'@x\n"
    assert list(lines) == ["y\n"]


def test_the_writer_neutralises_every_row_it_writes():
    out = io.StringIO()
    writer = CsvWriter(out)
    writer.writerow(["-x", 1.5])
    writer.writerow(["+y", -2])

    assert out.getvalue() == "'-x,1.5\n'+y,-2\n"


@given(st.lists(st.text(), min_size=1, max_size=4))
def test_writing_then_reading_and_restoring_gives_back_the_text(cells):
    written = csv_text(["c"] * len(cells), [cells])

    rows = list(csv.reader(io.StringIO(written, newline="")))

    assert [restore_cell(cell) for cell in rows[1]] == cells


def test_no_module_writes_csv_by_itself():
    """Every CSV output goes through benchmark.csv_output; reading CSV (csv.reader) is allowed anywhere."""
    offenders = []
    for app in ("benchmark", "annotator", "chat", "config"):
        for path in (ROOT / app).rglob("*.py"):
            if path.name == "csv_output.py":
                continue
            source = path.read_text(encoding="utf-8")
            if any(call in source for call in ("csv.writer", "csv.DictWriter", ".to_csv(")):
                offenders.append(str(path.relative_to(ROOT)))

    assert offenders == []
