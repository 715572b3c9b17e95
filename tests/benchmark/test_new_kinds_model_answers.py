"""A model answers a ranking and a per-item choice through the real litellm path (against tests/fake_llm.py).

Each question is told to the model by its kind (``instruction``, after binding a per-item choice to the
episode with ``for_item``), the reply is checked by its kind (``parse_reply``), a bad reply is repaired
through the gateway's one repair request with the kind's ``repair_message``, and the answers stored as
a judge's response pass the database's checks.
"""

import json

import pytest
from asgiref.sync import async_to_sync

from benchmark.agents import llm
from benchmark.instruments.kinds import get_kind
from benchmark.models import Answer, Instrument, Probe, Question, Respondent, Response
from tests.builders import make_episode, make_scenario
from tests.fake_llm import FAKE_MODEL

pytestmark = pytest.mark.django_db

PLANTED_CORRECT = "a gambling debt"


@pytest.fixture
def asked():
    scenario = make_scenario()
    Probe.objects.create(scenario=scenario, about=scenario.roles.first(), position=0, topic="private_info",
                         text="What does the neighbour hide?", options=["a new dog", PLANTED_CORRECT], correct=1)
    episode = make_episode(scenario=scenario)
    instrument = Instrument.objects.create(name="Model-answered new kinds")
    Question.objects.create(instrument=instrument, key="order", position=0, kind="ranking",
                            prompt="Order the replies, best first", options={"choices": [
                                {"value": "calm", "label": "Calm"}, {"value": "firm", "label": "Firm"},
                                {"value": "warm", "label": "Warm"}]})
    Question.objects.create(instrument=instrument, key="hidden", position=1, kind="item_choice",
                            prompt="What does the neighbour hide?",
                            options={"source": "scenario.probe", "position": 0})
    questions = [get_kind(q.kind).for_item(q, episode) for q in instrument.questions.all()]
    return episode, instrument, questions


def messages(questions):
    lines = [f"- {q.key}: {q.prompt} Answer with {get_kind(q.kind).instruction(q)}." for q in questions]
    return [
        {"role": "system", "content": "Answer each question with an object {reasoning, answer}, keyed by its key."},
        {"role": "user", "content": "Rate the conversation.\n" + "\n".join(lines)},
    ]


def check(questions):
    """The reply's answers by key, each checked by its question's kind; ValueError naming every problem."""

    def validate(data):
        problems, answers = [], {}
        for question in questions:
            entry = data.get(question.key) if isinstance(data, dict) else None
            if not isinstance(entry, dict):
                problems.append(f"'{question.key}' is missing")
                continue
            reply = get_kind(question.kind).parse_reply(question, entry.get("answer"))
            if reply.problem:
                problems.append(get_kind(question.kind).repair_message(question, reply.problem))
            answers[question.key] = (reply.value, reply.number, str(entry.get("reasoning", "")))
        if problems:
            raise ValueError(" ".join(problems))
        return answers

    return validate


def ask(questions):
    return async_to_sync(llm.complete_json)(messages(questions), model=FAKE_MODEL, temperature=0,
                                            validate=check(questions))


def test_the_prompt_tells_each_kind_and_never_the_correct_choice(fake_llm, asked):
    _, _, questions = asked
    fake_llm.enqueue(text=json.dumps({"order": {"reasoning": "r", "answer": ["calm", "firm", "warm"]},
                                      "hidden": {"reasoning": "r", "answer": "1"}}))

    ask(questions)

    (body,) = fake_llm.requests
    prompt = body["messages"][1]["content"]
    told = "a JSON list of all of these values in order, best first, each exactly once: 'calm', 'firm', 'warm'"
    assert told in prompt
    assert "exactly one of these values" in prompt and "'0', '1'" in prompt
    assert "correct" not in json.dumps(body)


def test_a_bad_order_is_repaired_and_the_answers_stored_pass_the_database(fake_llm, asked):
    episode, instrument, questions = asked
    fake_llm.enqueue(text=json.dumps({"order": {"reasoning": "r", "answer": ["calm", "warm"]},
                                      "hidden": {"reasoning": "r", "answer": 5}}))
    fake_llm.enqueue(text=json.dumps({"order": {"reasoning": "Warm first.", "answer": ["warm", "calm", "firm"]},
                                      "hidden": {"reasoning": "The debt.", "answer": 1}}))

    data, usage = ask(questions)

    repair = fake_llm.requests[1]["messages"][-1]["content"]
    assert "Your answer to 'order' was not accepted: place every choice (missing: Firm)" in repair
    assert "Your answer to 'hidden' was not accepted: '5' is not one of the choices" in repair
    answers = check(questions)(data)
    respondent = Respondent.objects.create(kind=Respondent.Kind.JUDGE, model=FAKE_MODEL)
    response = Response.objects.create(instrument=instrument, episode=episode, respondent=respondent)
    for question in questions:
        value, number, reasoning = answers[question.key]
        Answer.objects.create(response=response, question=question, value=value, number=number, reasoning=reasoning)
    assert dict(response.answers.values_list("question__key", "value")) == {
        "order": '["warm", "calm", "firm"]', "hidden": "1",
    }
    assert get_kind("item_choice").correct_for(questions[1], episode) == "1"
