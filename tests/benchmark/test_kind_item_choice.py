"""Per-item multiple choice: each item's choices come from the item (its scenario's probe), the correct one hidden."""

import pytest
from django.db import IntegrityError, transaction

from benchmark.instruments.kinds import get_kind
from benchmark.instruments.kinds.item_choice import ItemChoice
from benchmark.models import Answer, Instrument, Probe, Question, Respondent, Response
from tests.builders import make_episode, make_scenario

OPTIONS = {"source": "scenario.probe", "position": 0}


def question(**options) -> Question:
    return Question(key="secret", kind="item_choice", prompt="What is hidden?", options={**OPTIONS, **options})


def add_probe(scenario, options, correct, position=0) -> Probe:
    return Probe.objects.create(
        scenario=scenario, about=scenario.roles.first(), position=position, topic=Probe.Topic.PRIVATE_INFO,
        text="What does the neighbour hide?", options=options, correct=correct,
    )


@pytest.fixture
def kind() -> ItemChoice:
    return get_kind("item_choice")


@pytest.fixture
def two_items(db):
    """Two episodes of two scenarios whose probe 0 has different options and a different right answer."""
    first, second = make_scenario(), make_scenario()
    add_probe(first, ["a cat", "a debt", "a new job"], correct=1)
    add_probe(second, ["nothing", "a plan to move"], correct=1)
    return make_episode(scenario=first), make_episode(scenario=second)


def test_options_name_a_source_and_what_it_needs(kind):
    assert kind.option_problems(OPTIONS) == []
    assert "is not a source" in kind.option_problems({"source": "episode.truth"})[0]
    assert kind.option_problems({"source": "scenario.probe", "position": -1}) == [
        "options.position: give the probe's position, a whole number from 0"
    ]
    assert kind.option_problems({"source": "scenario.probe", "position": 0, "choices": []}) == [
        "options.choices: not a field here (use source, position)"
    ]


def test_it_is_asked_once_per_item(kind):
    assert kind.question_problems(question()) == []
    seat = question()
    seat.scope = "seat"
    assert "once per episode" in kind.question_problems(seat)[0]


def test_each_item_brings_its_own_choices(kind, two_items):
    first, second = two_items
    bound = kind.for_item(question(), first)
    assert [c["label"] for c in kind.choices(bound)] == ["a cat", "a debt", "a new job"]
    assert [c["label"] for c in kind.choices(kind.for_item(question(), second))] == ["nothing", "a plan to move"]
    assert kind.check_value(bound, "2")[2] == ""
    # "2" is a choice of the first item only.
    assert "is not one of the choices" in kind.check_value(kind.for_item(question(), second), "2")[2]


def test_the_correct_choice_never_reaches_what_a_respondent_is_given(kind, two_items):
    first, _ = two_items
    bound = kind.for_item(question(), first)
    assert "correct" not in str(bound.options)
    assert all(set(choice) == {"value", "label"} for choice in bound.options["choices"])
    for shown in (kind.instruction(bound), kind.what_to_answer(bound), str(kind.summary(bound))):
        assert "correct" not in shown
    # ... and is read only through correct_for, for accuracy.
    assert kind.correct_for(question(), first) == "1"


def test_an_unbound_question_or_an_item_without_the_probe_has_no_choices(kind, two_items):
    first, _ = two_items
    assert "is not one of the choices" in kind.check_value(question(), "0")[2]
    assert kind.for_item(question(position=5), first) is None
    assert kind.correct_for(question(position=5), first) is None
    assert kind.summary(question()) == ("one of the item's own choices", [])


def test_a_models_reply_is_checked_against_the_items_choices(kind, two_items):
    bound = kind.for_item(question(), two_items[0])
    assert "'0', '1', '2'" in kind.instruction(bound)
    assert kind.parse_reply(bound, 2).value == "2"
    assert kind.parse_reply(bound, "1").problem == ""
    assert "not one of the choices" in kind.parse_reply(bound, "7").problem


def test_the_majority_is_the_most_common_choice(kind, two_items):
    bound = kind.for_item(question(), two_items[0])
    rows = [Answer(value=v) for v in ("2", "1", "2")]
    assert kind.majority(bound, rows, 3) == [("2", None)]


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize(("value", "refused"), [("1", False), ("12", False), ("x", True), ("", True), ("-1", True)])
def test_the_database_refuses_a_value_that_is_not_a_choice_index(value, refused):
    scenario = make_scenario()
    add_probe(scenario, ["a", "b"], correct=0)
    instrument = Instrument.objects.create(name="Item choice test")
    saved = Question.objects.create(instrument=instrument, position=0, key="secret", kind="item_choice",
                                    prompt="What is hidden?", options=OPTIONS)
    respondent = Respondent.objects.create(kind=Respondent.Kind.JUDGE, model="test-model")
    response = Response.objects.create(
        instrument=instrument, episode=make_episode(scenario=scenario), respondent=respondent
    )
    if refused:
        with pytest.raises(IntegrityError, match="is not a choice index"), transaction.atomic():
            Answer.objects.create(response=response, question=saved, value=value)
    else:
        Answer.objects.create(response=response, question=saved, value=value)


def test_offline_the_choice_sharing_most_words_with_the_transcript_is_picked(kind, two_items):
    bound = kind.for_item(question(), two_items[0])  # a cat, a debt, a new job

    value, reasoning = kind.scripted_answer(bound, "I lost the new job last week, and the debt grows.")

    assert value == "2"  # "new job" (2 words) beats "debt" (1)
    assert "Scripted heuristic" in reasoning
    assert kind.scripted_answer(bound, "Nothing in common.")[0] == "0"  # a tie goes to the first choice
    assert kind.scripted_answer(question(), "anything") is None  # not bound to an item: no choices


# ----- the task_item source: a SHREC task item's own options (the human baseline)


def test_a_task_items_options_are_the_choices_in_stored_order_and_its_correct_one_stays_hidden(kind):
    from benchmark.models import TaskItem

    asked = Question(key="rationale", kind="item_choice", prompt="Why?", options={"source": "task_item"})
    item = TaskItem(task="rationale", options=["talked over", "forgot a name", "ignored a no"], correct=[2], gold=3)
    episode = object()  # the source reads the task item alone

    assert kind.option_problems({"source": "task_item"}) == []
    bound = kind.for_item(asked, episode, item)
    assert kind.choices(bound) == [{"value": "0", "label": "talked over"}, {"value": "1", "label": "forgot a name"},
                                   {"value": "2", "label": "ignored a no"}]
    assert "correct" not in repr(bound.options)
    assert kind.correct_for(asked, episode, item) == "2"
    # Without a task item (an episode's question, a chat's) there is nothing to ask; several correct
    # positions (the attribute task) give no single correct choice.
    assert kind.for_item(asked, episode) is None
    assert kind.correct_for(asked, episode, TaskItem(task="attributes", options=["a", "b"], correct=[0, 1])) is None
