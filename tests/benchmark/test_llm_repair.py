"""llm.repair_json: one request to fix a streamed reply that was not usable JSON."""

import pytest

from benchmark.agents import llm
from tests.fake_llm import FAKE_MODEL

MESSAGES = [
    {"role": "system", "content": "Answer with a JSON object."},
    {"role": "user", "content": "Score the bike offer."},
]


def reject_negative_score(value: dict) -> None:
    if value["score"] < 0:
        raise ValueError("score must be between 0 and 10")


async def test_repair_json_returns_the_fixed_object_and_its_usage(fake_llm):
    fake_llm.enqueue(text='{"score": 7}')

    value, usage = await llm.repair_json(MESSAGES, "score: seven", "no JSON object found", model=FAKE_MODEL)

    assert value == {"score": 7}
    assert usage.model == FAKE_MODEL
    assert usage.attempts == 1
    assert usage.completion_tokens == 2


async def test_repair_json_shows_the_model_its_reply_and_the_problem(fake_llm):
    fake_llm.enqueue(text='{"score": 7}')

    await llm.repair_json(MESSAGES, "score: seven", "no JSON object found", model=FAKE_MODEL, temperature=0.3)

    (body,) = fake_llm.requests
    assert body["messages"][:2] == MESSAGES
    repair = body["messages"][2]["content"]
    assert "score: seven" in repair
    assert "Problem: no JSON object found" in repair
    assert body["temperature"] == 0.3
    assert body.get("stream") is not True


async def test_repair_json_raises_output_error_when_the_fix_fails_validation(fake_llm):
    fake_llm.enqueue(text='{"score": -2}')

    with pytest.raises(llm.LLMOutputError, match="score must be between 0 and 10") as raised:
        await llm.repair_json(MESSAGES, "{}", "missing score", model=FAKE_MODEL, validate=reject_negative_score)

    assert raised.value.text == '{"score": -2}'


async def test_repair_json_retries_transient_failures_like_any_call(fake_llm):
    fake_llm.enqueue(status=503)
    fake_llm.enqueue(text='{"score": 1}')

    value, usage = await llm.repair_json(MESSAGES, "oops", "not JSON", model=FAKE_MODEL)

    assert value == {"score": 1}
    assert usage.attempts == 2
