"""One answer checked against its question: the same rule for a form, a judge's output and an import."""

import pytest

from benchmark.instruments.values import check_labels, check_value, format_number, what_to_answer
from benchmark.models import Question

CHOICES = {"choices": [{"value": "semantic", "label": "Semantic"}, {"value": "none", "label": "No barrier"}]}
LABELS = {"choices": [{"value": v, "label": v.title()} for v in ("warm", "curt", "vague")]}


def question(kind, options=None, **fields):
    return Question(key="q", kind=kind, prompt="?", options=options or {}, **fields)


@pytest.mark.parametrize(("kind", "options", "value", "stored", "number", "problem"), [
    ("categorical", CHOICES, "none", "none", None, ""),
    ("categorical", CHOICES, "None", "None", None, "'None' is not one of the choices; choose one of: Semantic, No"),
    ("multiple_choice", {**CHOICES, "correct": "none"}, "semantic", "semantic", None, ""),
    ("yes_no", {}, "yes", "yes", None, ""),
    ("yes_no", {}, "maybe", "maybe", None, "'maybe' is not one of the choices; choose one of: Yes, No."),
    ("likert", {"anchors": [{"value": v} for v in range(1, 6)]}, "4", "4", 4.0, ""),
    ("likert", {"anchors": [{"value": v} for v in range(1, 6)]}, "4.5", "4.5", None, "choose a whole number"),
    ("slider", {"min": -5, "max": 5, "step": 0.5}, "-2.5", "-2.5", -2.5, ""),
    ("slider", {"min": -5, "max": 5, "step": 0.5}, "6", "6", None, "choose a value from -5 to 5."),
    ("text", {"max_length": 3}, "abcd", "abcd", None, "keep the answer to 3 characters (it has 4)."),
])
def test_check_value(kind, options, value, stored, number, problem):
    result = check_value(question(kind, options), value)

    assert result[:2] == (stored, number)
    assert (problem in result[2]) if problem else result[2] == ""


def test_labels_are_kept_once_each_in_the_order_of_the_choices():
    assert check_labels(question("multi_label", LABELS), ["vague", "warm"]) == (["warm", "vague"], "")


def test_a_label_that_is_not_a_choice_is_refused():
    assert check_labels(question("multi_label", LABELS), ["warm", "rude"])[1] == (
        "'rude' is not one of the choices; pick any of: Warm, Curt, Vague."
    )


def test_the_number_of_labels_stays_within_min_and_max():
    limited = question("multi_label", {**LABELS, "min": 1, "max": 2})

    assert check_labels(limited, [])[1] == "pick at least 1 of: Warm, Curt, Vague."
    assert check_labels(limited, ["warm", "curt", "vague"])[1] == "pick at most 2 of: Warm, Curt, Vague."
    assert check_labels(limited, ["curt"]) == (["curt"], "")


def test_what_to_answer_names_the_range_or_the_choices():
    assert what_to_answer(question("slider", {"min": 0, "max": 10, "step": 1})) == "choose a value from 0 to 10."
    assert what_to_answer(question("multi_label", LABELS)) == "pick any of: Warm, Curt, Vague."


def test_numbers_are_written_back_in_their_shortest_exact_form():
    assert (format_number(7.0), format_number(-2.5), format_number(0.1)) == ("7", "-2.5", "0.1")
