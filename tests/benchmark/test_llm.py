"""The LLM gateway against a local OpenAI-compatible server (tests/fake_llm.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmark.agents import llm
from tests.fake_llm import FAKE_MODEL, default_reply

MESSAGES = [
    {"role": "system", "content": "You are a careful negotiator."},
    {"role": "user", "content": "Offer me a fair price for the bike."},
]


def reject_negative_score(value: dict) -> None:
    if value["score"] < 0:
        raise ValueError("score must be between 0 and 10")


async def test_complete_returns_text_and_usage(fake_llm):
    fake_llm.reply_when("fair price", "Forty pounds, and I will throw in the lock.")

    completion = await llm.complete(MESSAGES, model=FAKE_MODEL)

    assert completion.text == "Forty pounds, and I will throw in the lock."
    assert completion.usage.model == FAKE_MODEL
    assert completion.usage.prompt_tokens == 13  # the fake counts words
    assert completion.usage.completion_tokens == 9
    assert completion.usage.attempts == 1
    assert completion.usage.latency_ms >= 0


async def test_complete_sends_configured_key_and_options(fake_llm):
    await llm.complete(MESSAGES, model=FAKE_MODEL, temperature=0.2, max_tokens=50)

    (body,) = fake_llm.requests
    assert fake_llm.headers[0]["authorization"] == "Bearer test-key"
    assert body["model"] == "fake-model"
    assert body["temperature"] == 0.2
    assert body["max_tokens"] == 50
    assert body["messages"] == MESSAGES


async def test_stream_deltas_join_to_full_text_and_record_usage(fake_llm):
    fake_llm.reply_when("fair price", "Forty pounds, and I will throw in the lock.")

    reply = await llm.stream(MESSAGES, model=FAKE_MODEL)
    deltas = [delta async for delta in reply]

    assert len(deltas) == 9
    assert "".join(deltas) == reply.text == "Forty pounds, and I will throw in the lock."
    assert reply.usage is not None
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (13, 9)
    assert reply.usage.attempts == 1
    assert fake_llm.requests[0]["stream_options"] == {"include_usage": True}


async def test_stream_retries_failure_before_first_delta(fake_llm):
    fake_llm.enqueue(status=503)

    reply = await llm.stream(MESSAGES, model=FAKE_MODEL)
    text = "".join([delta async for delta in reply])

    assert text == default_reply(MESSAGES)
    assert len(fake_llm.requests) == 2
    assert reply.usage is not None and reply.usage.attempts == 2


async def test_stream_breaking_mid_reply_raises_unavailable_without_retry(fake_llm):
    fake_llm.enqueue(disconnect_after=2)
    reply = await llm.stream(MESSAGES, model=FAKE_MODEL)
    received = []

    with pytest.raises(llm.LLMUnavailable, match="broke off"):
        async for delta in reply:
            received.append(delta)

    assert "".join(received) == reply.text == "Fake reply "
    assert len(fake_llm.requests) == 1


async def test_rate_limit_is_retried_then_succeeds(fake_llm):
    fake_llm.enqueue(status=429)

    completion = await llm.complete(MESSAGES, model=FAKE_MODEL)

    assert completion.text == default_reply(MESSAGES)
    assert completion.usage.attempts == 2
    assert len(fake_llm.requests) == 2


async def test_retry_is_logged_with_the_attempt_and_error(fake_llm, caplog):
    fake_llm.enqueue(status=429)

    with caplog.at_level("WARNING", logger="benchmark.agents.llm"):
        await llm.complete(MESSAGES, model=FAKE_MODEL)

    (record,) = caplog.records
    assert "attempt 1 of 3 failed" in record.getMessage()
    assert "RateLimitError" in record.getMessage()


async def test_server_errors_until_retries_run_out_raise_unavailable(fake_llm, settings):
    settings.PARLEY_LLM_MAX_RETRIES = 3
    for _ in range(4):
        fake_llm.enqueue(status=500)

    with pytest.raises(llm.LLMUnavailable, match="after 4 attempts"):
        await llm.complete(MESSAGES, model=FAKE_MODEL)

    assert len(fake_llm.requests) == 4


async def test_timeout_is_retried_then_raises_unavailable(fake_llm):
    for _ in range(3):  # max_retries=2 in the fixture: three attempts
        fake_llm.enqueue(delay=2.0)

    with pytest.raises(llm.LLMUnavailable, match="Timeout"):
        await llm.complete(MESSAGES, model=FAKE_MODEL, timeout=0.2)

    assert len(fake_llm.requests) == 3


async def test_bad_request_fails_at_once(fake_llm):
    fake_llm.enqueue(status=400)

    with pytest.raises(llm.LLMError) as caught:
        await llm.complete(MESSAGES, model=FAKE_MODEL)

    assert not isinstance(caught.value, llm.LLMUnavailable)
    assert len(fake_llm.requests) == 1


async def test_malformed_json_is_repaired_on_second_call(fake_llm):
    fake_llm.enqueue(text='{"score": 7, "reasoning": "kept the deal"')
    fake_llm.enqueue(text='{"score": 7, "reasoning": "kept the deal"}')

    value, usage = await llm.complete_json(MESSAGES, model=FAKE_MODEL)

    assert value == {"score": 7, "reasoning": "kept the deal"}
    assert len(fake_llm.requests) == 2
    repair_prompt = fake_llm.requests[1]["messages"][-1]["content"]
    assert '{"score": 7, "reasoning": "kept the deal"' in repair_prompt
    assert "JSON object only" in repair_prompt
    assert fake_llm.requests[1]["messages"][:2] == MESSAGES


async def test_repaired_json_usage_sums_both_calls(fake_llm):
    fake_llm.enqueue(text="not json {")
    fake_llm.enqueue(text='{"score": 7}')

    _, usage = await llm.complete_json(MESSAGES, model=FAKE_MODEL)

    assert usage.attempts == 2
    assert usage.completion_tokens == 3 + 2
    assert usage.prompt_tokens is not None and usage.prompt_tokens > 2 * 13


async def test_json_still_broken_after_repair_raises_output_error(fake_llm):
    fake_llm.enqueue(text="not json {")
    fake_llm.enqueue(text="still not json {")

    with pytest.raises(llm.LLMOutputError) as caught:
        await llm.complete_json(MESSAGES, model=FAKE_MODEL)

    assert caught.value.text == "still not json {"
    assert len(fake_llm.requests) == 2


async def test_validate_rejecting_a_value_triggers_the_repair(fake_llm):
    fake_llm.enqueue(text='{"score": -3}')
    fake_llm.enqueue(text='{"score": 3}')

    value, _ = await llm.complete_json(MESSAGES, model=FAKE_MODEL, validate=reject_negative_score)

    assert value == {"score": 3}
    assert "score must be between 0 and 10" in fake_llm.requests[1]["messages"][-1]["content"]


@pytest.mark.parametrize(
    "text",
    [
        '{"score": 4}',
        '```json\n{"score": 4}\n```',
        '```\n{"score": 4}\n```',
        'Here is my rating:\n```json\n{"score": 4}\n```\nThanks!',
        'Sure. {"score": 4} That is my answer.',
        'I think {so} but: {"score": 4}',
    ],
)
def test_parse_json_object_finds_the_object(text):
    assert llm.parse_json_object(text) == {"score": 4}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[1, 2, 3]", "got a JSON array"),
        ('```json\n[{"score": 4}]\n```', "got a JSON array"),
        ('Scores: [{"score": 4}]', "got a JSON array"),
        ("no json here", "no JSON object found"),
        ('{"score": 4', "no JSON object found"),
        ("", "empty"),
        ('"just a string"', "got a JSON string"),
    ],
)
def test_parse_json_object_rejects_what_is_not_one_object(text, problem):
    with pytest.raises(ValueError, match=problem):
        llm.parse_json_object(text)


def test_model_for_falls_back_to_scripted_when_unset(settings):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}

    assert llm.model_for("judge") == llm.SCRIPTED
    assert llm.is_scripted(llm.model_for("judge"))


def test_model_for_returns_the_configured_model(settings):
    settings.PARLEY_MODELS = {"agent": FAKE_MODEL, "partner": "", "judge": "", "neutralizer": ""}

    assert llm.model_for("agent") == FAKE_MODEL
    assert not llm.is_scripted(FAKE_MODEL)


def test_model_for_rejects_an_unknown_role():
    with pytest.raises(ValueError, match="unknown model role"):
        llm.model_for("mediator")


@pytest.mark.parametrize("call", [llm.complete, llm.stream, llm.complete_json])
async def test_scripted_model_is_refused_by_the_gateway(fake_llm, call):
    with pytest.raises(llm.LLMError, match="scripted model is offline"):
        await call(MESSAGES, model=llm.SCRIPTED)

    assert fake_llm.requests == []


def test_importing_the_gateway_does_not_import_litellm():
    root = Path(__file__).resolve().parents[2]
    code = (
        "import json, sys, benchmark.agents.llm; "
        "print(json.dumps([m for m in sys.modules if m.split('.')[0] in {'litellm', 'openai'}]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True,
        text=True,
        check=True,
    )

    assert json.loads(result.stdout) == []


def _start_server_process(**environment: str) -> bool:
    """Load the ASGI application in a fresh process, as daphne does before it listens: is litellm imported?"""
    root = Path(__file__).resolve().parents[2]
    code = "import sys, config.asgi; print('litellm' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "true", **environment},
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.split()[-1] == "True"


def test_a_server_that_may_call_a_model_imports_litellm_before_it_serves():
    assert _start_server_process(PARLEY_AGENT_MODEL="openai/gpt-4o-mini")


def test_a_server_with_only_the_scripted_model_never_imports_litellm():
    assert not _start_server_process(
        PARLEY_AGENT_MODEL="", PARLEY_PARTNER_MODEL="", PARLEY_JUDGE_MODEL="", PARLEY_NEUTRALIZER_MODEL=""
    )


def test_a_server_whose_researchers_may_pick_a_model_imports_litellm_before_it_serves():
    assert _start_server_process(PARLEY_ALLOWED_MODELS="openai/")
