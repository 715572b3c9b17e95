"""litellm is set up once for Parley, and imported where a process starts rather than on a first call."""

from __future__ import annotations

import signal

import litellm
import pytest

from benchmark.agents import llm, loading
from benchmark.management.commands import run_huey
from tests.fake_llm import FAKE_MODEL

MESSAGES = [{"role": "user", "content": "Offer me a fair price for the bike."}]
NO_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}


def test_litellm_is_set_up_once_without_cost_calculation_or_callbacks():
    module = loading.litellm()

    assert module is litellm and loading.litellm() is module
    assert module.response_cost_calculator is loading._no_cost
    assert module.success_callback == module.failure_callback == module.callbacks == []
    assert module.disable_streaming_logging is True


async def test_a_call_still_records_its_tokens(fake_llm):
    completion = await llm.complete(MESSAGES, model=FAKE_MODEL)

    assert completion.usage.prompt_tokens == 8  # the fake counts words
    assert completion.usage.completion_tokens == len(completion.text.split())


async def test_a_stream_still_records_its_tokens(fake_llm):
    reply = await llm.stream(MESSAGES, model=FAKE_MODEL)
    text = "".join([delta async for delta in reply])

    assert text and reply.usage.completion_tokens == len(text.split())


def test_a_consumer_imports_litellm_only_when_a_model_may_be_called(settings, monkeypatch):
    imported = []
    monkeypatch.setattr(loading, "preload", lambda: imported.append(True))
    settings.PARLEY_MODELS, settings.PARLEY_ALLOWED_MODELS = NO_MODELS, []
    assert loading.preload_if_used() is False

    settings.PARLEY_ALLOWED_MODELS = ["openai/"]
    assert loading.preload_if_used() is True
    assert imported == [True]


def test_the_consumer_command_is_parleys_and_starts_without_the_system_checks():
    from django.core.management import get_commands

    assert get_commands()["run_huey"] == "benchmark"
    assert run_huey.Command.requires_system_checks == []


@pytest.mark.django_db
def test_a_consumer_started_with_ctrl_c_ignored_takes_it_back(monkeypatch, settings):
    started = []
    monkeypatch.setattr(run_huey.HueyCommand, "handle", lambda self, *args, **options: started.append(
        signal.getsignal(signal.SIGINT)))
    settings.PARLEY_MODELS, settings.PARLEY_ALLOWED_MODELS = NO_MODELS, []
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a shell's background job starts
    try:
        run_huey.Command().handle()
    finally:
        signal.signal(signal.SIGINT, previous)

    assert started == [signal.default_int_handler]
