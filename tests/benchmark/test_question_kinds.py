"""The question kinds registry: every kind found by name and complete; one lacking a part fails `manage.py check`."""

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from benchmark.instruments import kinds
from benchmark.instruments.kinds.base import ChoiceKind, QuestionKind
from benchmark.instruments.kinds.checks import check_question_kinds, kind_problems
from benchmark.models import Question

SHIPPED = ("categorical", "likert", "slider", "yes_no", "multiple_choice", "multi_label", "span", "text", "pairwise")


def test_every_shipped_kind_is_registered_and_found_by_name():
    assert set(SHIPPED) <= set(kinds.names())
    for name in SHIPPED:
        assert kinds.get_kind(name).name == name


def test_an_unknown_kind_is_named_with_the_known_ones():
    with pytest.raises(kinds.UnknownKind, match="'ranked' is not a question kind; use one of likert, slider, categorical"):
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
    assert kinds.names(lambda k: k.numeric) == ["likert", "slider"]
    assert kinds.names(lambda k: k.single_choice) == ["categorical", "yes_no", "multiple_choice", "pairwise"]
    assert kinds.names(lambda k: k.multi_valued) == ["multi_label"]
    assert kinds.names(lambda k: k.agreement == "categorical") == ["categorical", "pairwise"]


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
