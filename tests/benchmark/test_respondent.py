"""agents.respondent: the one loop a model answers an instrument through (judge, goal judge, interviews, blind test)."""

import json

import pytest

from benchmark.agents import llm
from benchmark.agents.respondent import Asked, ask_instrument, check_reply
from benchmark.instruments.targets import Target
from benchmark.models import Question
from tests.fake_llm import FAKE_MODEL

MESSAGES = [
    {"role": "system", "content": "Answer with one JSON object."},
    {"role": "user", "content": "Rate the talk."},
]

WARMTH = Asked(("seats", "seat_1", "warmth"), 11, Target.of_seat(0), "slider", low=1, high=5, field="score")
CLARITY = Asked(("episode", "clarity"), 12, Target.episode(), "likert", low=1, high=5, field="score")
REACHED = Asked(("g1",), 13, Target.of_goal(7), "yes_no", choices=(("yes", "yes"), ("no", "no")),
                reasoning_required=False)
PROBE = Asked(("p1",), 14, Target.episode(), "multiple_choice", choices=(("A", "0"), ("B", "1")),
              reasoning_required=False)
ASKED = [WARMTH, CLARITY, REACHED, PROBE]
NAMES = {"seat_1": "seat_1 (Aisha)"}


def reply(**changes) -> dict:
    data = {
        "seats": {"seat_1": {"warmth": {"reasoning": "Kind words.", "score": 4}}},
        "episode": {"clarity": {"reasoning": "Clear.", "score": 5}},
        "g1": {"answer": "Yes.", "reasoning": ""},
        "p1": {"answer": "b", "reasoning": "She said so."},
    }
    data.update(changes)
    return data


def test_every_asked_item_is_answered_with_its_target_and_stored_value():
    answers = check_reply(reply(), ASKED, NAMES)

    assert [(a.asked.question_id, a.asked.target, a.value, a.number, a.reasoning) for a in answers] == [
        (11, Target.of_seat(0), "4", 4.0, "Kind words."),
        (12, Target.episode(), "5", 5.0, "Clear."),
        (13, Target.of_goal(7), "yes", None, ""),  # any case, a closing full stop tolerated
        (14, Target.episode(), "1", None, "She said so."),  # the letter shown, the option's index stored
    ]
    assert answers[0].target_columns == {"seat_position": 0}
    assert answers[2].target_columns == {"goal_id": 7}
    assert answers[1].target_columns == {}


def test_every_problem_is_named_by_its_target_and_question_at_once():
    data = reply(
        seats={"seat_1": {"warmth": {"reasoning": "", "score": 9}}},
        g1={"answer": "perhaps"},
        p1="A",
    )
    del data["episode"]

    with pytest.raises(ValueError) as error:
        check_reply(data, ASKED, NAMES)

    assert str(error.value) == "; ".join([
        "seat_1 (Aisha): 'warmth' needs a non-empty 'reasoning' text",
        "seat_1 (Aisha): 'warmth' score 9 is out of range; it must be between 1 and 5",
        "'episode' is missing",
        "'g1' answer 'perhaps' is not one of 'yes', 'no'",
        "'p1' must be an object with 'reasoning' and 'answer'",
    ])


def test_a_missing_seat_is_named_once_through_its_section():
    with pytest.raises(ValueError, match=r"^'seats' → seat_1 \(Aisha\) is missing$"):
        check_reply(reply(seats={}), [WARMTH], NAMES)


def test_a_number_must_be_a_json_number():
    with pytest.raises(ValueError, match="'warmth' score must be a number, got True"):
        check_reply(reply(seats={"seat_1": {"warmth": {"reasoning": "x", "score": True}}}), [WARMTH])


async def test_a_reply_is_repaired_once_with_its_problems_named(fake_llm):
    fake_llm.enqueue(text=json.dumps(reply(g1={"answer": "maybe"})))
    fake_llm.enqueue(text=json.dumps(reply()))

    answered = await ask_instrument(MESSAGES, ASKED, model=FAKE_MODEL, names=NAMES)

    assert answered.attempts == 1 and len(answered.answers) == 4
    assert [request["temperature"] for request in fake_llm.requests] == [0, 0]
    assert "'g1' answer 'maybe' is not one of 'yes', 'no'" in fake_llm.requests[1]["messages"][-1]["content"]
    assert answered.usage.attempts == 2  # the request and its repair


async def test_a_reply_unusable_after_its_repair_is_asked_afresh_then_fails_saying_how_often(fake_llm, settings):
    settings.PARLEY_JUDGE_RETRIES = 1
    fake_llm.reply_when("Rate the talk.", "I would rather not say.")

    with pytest.raises(llm.LLMOutputError, match=r"\(after 2 attempts\)") as error:
        await ask_instrument(MESSAGES, ASKED, model=FAKE_MODEL)

    assert error.value.attempts == 2
    assert len(fake_llm.requests) == 2 * 2  # each with its repair


async def test_an_unreachable_model_is_not_asked_again_here(fake_llm, settings):
    settings.PARLEY_LLM_MAX_RETRIES = 0
    fake_llm.enqueue(status=500)

    with pytest.raises(llm.LLMUnavailable):
        await ask_instrument(MESSAGES, ASKED, model=FAKE_MODEL, retries=3)

    assert len(fake_llm.requests) == 1


ORDER = Question(key="order", kind="ranking", scope="seat", options={"choices": [
    {"value": "calm", "label": "Calm"}, {"value": "firm", "label": "Firm"}]})
TONE = Question(key="tone", kind="categorical", scope="episode", options={"choices": [
    {"value": "calm", "label": "Calm"}, {"value": "tense", "label": "Tense"}]})
BY_KIND = [Asked(("seats", "seat_1", "order"), 21, Target.of_seat(0), "ranking", question=ORDER),
           Asked(("episode", "tone"), 22, Target.episode(), "categorical", question=TONE)]


def test_an_asked_question_is_read_by_its_kind():
    data = {"seats": {"seat_1": {"order": {"reasoning": "Firm first.", "answer": ["firm", "calm"]}}},
            "episode": {"tone": {"reasoning": "Quiet.", "answer": "Calm."}}}

    answers = check_reply(data, BY_KIND, NAMES)

    assert [(json.loads(a.value) if a.asked.key == "order" else a.value, a.number) for a in answers] == [
        (["firm", "calm"], None), ("calm", None)]


def test_a_value_its_kind_refuses_gets_the_kinds_repair_message_named_by_its_target():
    data = {"seats": {"seat_1": {"order": {"reasoning": "Firm.", "answer": ["firm"]}}},
            "episode": {"tone": {"reasoning": "Quiet.", "answer": "sad"}}}

    with pytest.raises(ValueError) as error:
        check_reply(data, BY_KIND, NAMES)

    problems = str(error.value)
    assert problems.startswith("seat_1 (Aisha): Your answer to 'order' was not accepted:")
    assert "Your answer to 'tone' was not accepted:" in problems
    assert problems.count("Answer again with the same JSON shape.") == 2
