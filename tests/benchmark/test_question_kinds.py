"""The question kinds registry: every kind found by name and complete; one lacking a part fails `manage.py check`."""

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from benchmark.instruments import kinds, triggers
from benchmark.instruments.kinds.base import ChoiceKind, QuestionKind
from benchmark.instruments.kinds.checks import check_question_kinds, kind_problems
from benchmark.models import Question

SHIPPED = ("categorical", "likert", "slider", "yes_no", "multiple_choice", "multi_label", "span", "text", "pairwise")


def test_every_shipped_kind_is_registered_and_found_by_name():
    assert set(SHIPPED) <= set(kinds.names())
    for name in SHIPPED:
        assert kinds.get_kind(name).name == name


def test_an_unknown_kind_is_named_with_the_known_ones():
    with pytest.raises(kinds.UnknownKind, match="'ranked' is not a question kind; use one of likert, slider, "):
        kinds.get_kind("ranked")
    assert kinds.find_kind("ranked") is None


def test_question_kind_takes_its_choices_from_the_registry():
    field = Question._meta.get_field("kind")
    assert list(field.choices) == kinds.choices()
    assert ("likert", "Likert scale") in kinds.choices()
    assert field.deconstruct()[3]["choices"] is kinds.choices  # the reference, so a new kind needs no migration


def test_every_registered_kind_is_complete():
    assert check_question_kinds() == []
    for kind in kinds.all_kinds():
        assert kind_problems(kind) == [], kind


def test_attributes_say_what_name_lists_said():
    # The nine kinds the name lists covered (kinds added since have their own tests).
    nine = {"likert", "slider", "categorical", "yes_no", "multiple_choice", "multi_label", "span", "text", "pairwise"}

    def names(predicate):
        return [name for name in kinds.names(predicate) if name in nine]

    assert names(lambda k: k.numeric) == ["likert", "slider"]
    assert names(lambda k: k.single_choice) == ["categorical", "yes_no", "multiple_choice", "pairwise"]
    assert names(lambda k: k.multi_valued) == ["multi_label"]
    assert names(lambda k: k.agreement == "categorical") == ["categorical", "pairwise"]


class _Incomplete(ChoiceKind):
    """A kind that forgot its label, its majority is inherited, but its options check and widget are missing."""

    name = "incomplete"
    option_names = ("choices",)
    widget_template = "instruments/kinds/_no_such_widget.html"


class _Bare(QuestionKind):
    name = "bare"


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Register kinds for one test only."""
    monkeypatch.setattr(kinds, "_registry", dict(kinds._registry))

    def register(cls: type) -> None:
        kinds.register(cls)

    return register


def test_a_kind_lacking_parts_is_named_part_by_part(registered):
    registered(_Incomplete)
    registered(_Bare)
    problems = {error.msg for error in check_question_kinds()}
    assert "question kind _Incomplete (incomplete) lacks label" in problems
    assert "question kind _Incomplete (incomplete) lacks option_problems (define the method)" in problems
    assert ("question kind _Incomplete (incomplete) widget template instruments/kinds/_no_such_widget.html "
            "does not exist") in problems
    bare = {message for message in problems if "_Bare" in message}
    for part in ("label", "widget_template", "check_value", "majority", "instruction", "summary", "what_to_answer"):
        assert any(f"lacks {part}" in message for message in bare), part
    assert "question kind _Bare (bare) lacks agreement (say which statistic fits, or None)" in bare
    assert all(error.id == "benchmark.E101" for error in check_question_kinds())


def test_manage_py_check_fails_on_an_incomplete_kind(registered):
    call_command("check", stdout=StringIO())  # complete: passes
    registered(_Bare)
    with pytest.raises(SystemCheckError, match=r"benchmark.E101.*_Bare \(bare\) lacks label"):
        call_command("check", stdout=StringIO(), stderr=StringIO())


def test_two_kinds_of_one_name_are_refused(registered):
    class Likert(_Incomplete):
        name = "likert"

    with pytest.raises(ValueError, match="two question kinds are called 'likert'"):
        registered(Likert)


# What the kinds do, through the registry


def _question(kind: str, options: dict[str, Any], **fields: Any) -> Question:
    return Question(key="q", kind=kind, prompt="A question?", options=options, **fields)


LIKERT = {"anchors": [{"value": v, "label": f"L{v}", "description": f"Level {v}."} for v in range(1, 6)]}
CHOICES = {"choices": [{"value": "a", "label": "Alpha"}, {"value": "b", "label": "Beta"}]}


class _Row:
    def __init__(self, value: str, number: float | None = None) -> None:
        self.value, self.number = value, number


def test_a_model_reply_is_checked_by_the_kind_and_a_problem_is_phrased_for_a_repair():
    likert = _question("likert", LIKERT)
    assert kinds.get_kind("likert").parse_reply(likert, 4).number == 4.0
    assert kinds.get_kind("likert").parse_reply(likert, "4").value == "4"
    problem = kinds.get_kind("likert").parse_reply(likert, 9).problem
    assert problem == "choose a value from 1 to 5."
    assert "was not accepted: choose a value from 1 to 5." in kinds.get_kind("likert").repair_message(likert, problem)
    assert kinds.get_kind("likert").parse_reply(likert, [1, 2]).problem.startswith("give one answer")
    choice = _question("categorical", CHOICES)
    assert kinds.get_kind("categorical").parse_reply(choice, " A. ").value == "a"
    assert "is not one of the choices" in kinds.get_kind("categorical").parse_reply(choice, "c").problem
    assert kinds.get_kind("yes_no").parse_reply(_question("yes_no", {}), "Yes").value == "yes"
    labels = _question("multi_label", {**CHOICES, "max": 1})
    assert kinds.get_kind("multi_label").parse_reply(labels, ["b"]).labels == ("b",)
    assert kinds.get_kind("multi_label").parse_reply(labels, ["a", "b"]).problem == "pick at most 1 of: Alpha, Beta."


def test_the_majority_is_the_kinds():
    assert kinds.get_kind("slider").majority(None, [_Row("2", 2), _Row("4", 4), _Row("9", 9)], 3) == [("4", 4.0)]
    assert kinds.get_kind("categorical").majority(
        _question("categorical", CHOICES), [_Row("b"), _Row("a")], 2
    ) == [("a", None)]  # a tie goes to the choice listed first
    assert kinds.get_kind("multi_label").majority(
        _question("multi_label", CHOICES), [_Row("b"), _Row("a"), _Row("b")], 2
    ) == [("b", None)]
    assert kinds.get_kind("text").majority(None, [_Row("x")], 1) == []


def test_the_triggers_are_written_from_the_kinds_checks():
    checks = dict(triggers._sqlite_checks())
    assert checks["a numeric question's answer needs a number (benchmark_answer.number)"].startswith(
        "q.kind IN ('likert', 'slider') AND"
    )
    assert checks["the answer is not one of the question's choices (options.choices values)"].startswith(
        "q.kind IN ('categorical', 'multiple_choice', 'multi_label', 'pairwise') AND"
    )
    assert list(checks)[1] == "the answer's number lies outside the question's range [low, high]"
    assert "p_kind IN ('yes_no') AND p_value NOT IN ('yes', 'no')" in triggers._postgresql_problem_sql()
    assert triggers._multi_valued_sql() == "('multi_label')"
