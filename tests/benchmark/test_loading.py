"""litellm is set up once for Parley, imported and rehearsed where a process starts rather than on a first call,
and without the per-call work Parley never reads.

Some of that work is patched around (``benchmark.agents.loading``): each patch has a test here that
fails if a litellm upgrade moves what it patches, so the CPU it saved does not quietly come back.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import litellm
import pytest
from litellm.integrations.custom_logger import CustomLogger
from litellm.litellm_core_utils.litellm_logging import Logging

from benchmark.agents import llm, loading
from benchmark.management.commands import run_huey
from tests.fake_llm import FAKE_API_KEY, FAKE_MODEL

ROOT = Path(__file__).resolve().parents[2]

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


def test_a_process_starts_litellm_only_when_a_model_may_be_called(settings, monkeypatch):
    started = []
    monkeypatch.setattr(loading, "preload", lambda: started.append("import"))
    monkeypatch.setattr(loading, "_rehearse", lambda: started.append("rehearsal"))
    settings.PARLEY_MODELS, settings.PARLEY_ALLOWED_MODELS = NO_MODELS, []
    assert loading.start() is False

    settings.PARLEY_ALLOWED_MODELS = ["openai/"]
    assert loading.start() is True
    assert started == ["import", "rehearsal"]


def test_the_url_conf_does_not_import_litellm():
    probe = "import sys, django; django.setup(); import config.urls; print('litellm' in sys.modules)"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "PARLEY_AGENT_MODEL": "openai/gpt-4o-mini"}
    output = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True,
                            check=True).stdout
    assert output.split() == ["False"]


def test_the_rehearsal_calls_litellm_offline_and_leaves_this_threads_event_loop_alone():
    loading.litellm()
    before = asyncio.get_event_loop_policy()._local._loop  # noqa: SLF001  (whatever the caller had, even None)
    loading._rehearse()

    assert asyncio.get_event_loop_policy()._local._loop is before  # noqa: SLF001


async def test_no_success_log_is_built_for_callbacks_nobody_registered(fake_llm, monkeypatch):
    built = []
    original = Logging._build_standard_logging_payload
    monkeypatch.setattr(Logging, "_build_standard_logging_payload",
                        lambda self, *args, **kwargs: built.append(1) or original(self, *args, **kwargs))

    await llm.complete(MESSAGES, model=FAKE_MODEL)
    reply = await llm.stream(MESSAGES, model=FAKE_MODEL)
    [delta async for delta in reply]
    await _let_litellms_tasks_run()

    assert built == []


async def test_a_registered_callback_still_gets_litellms_success_log(fake_llm, monkeypatch):
    """The skip is for nobody's benefit only: anyone who registers a callback gets the log back."""

    class Listener(CustomLogger):
        def __init__(self) -> None:
            super().__init__()
            self.heard = 0

        async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):
            self.heard += 1

    listener = Listener()
    for filed in ("success_callback", "_async_success_callback", "failure_callback", "_async_failure_callback"):
        monkeypatch.setattr(litellm, filed, [])  # litellm files the listener in these too: emptied again after
    monkeypatch.setattr(litellm, "callbacks", [listener])
    await llm.complete(MESSAGES, model=FAKE_MODEL)
    for _ in range(50):
        await _let_litellms_tasks_run()
        if listener.heard:
            break

    assert listener.heard == 1


async def test_a_streams_end_carries_the_reported_usage_without_assembling_the_reply(fake_llm, monkeypatch):
    assembled = _count_assemblies(monkeypatch)

    reply = await llm.stream(MESSAGES, model=FAKE_MODEL)
    text = "".join([delta async for delta in reply])
    await _let_litellms_tasks_run()

    assert assembled == []
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (8, len(text.split()))  # the fake's counts


async def test_a_stream_is_assembled_as_before_for_a_callback_or_without_a_reported_usage(fake_llm, monkeypatch):
    """litellm's own end of a stream comes back when something reads the whole reply, or no usage was reported
    (litellm then estimates it). With a reported usage, the assembled reply's counts are the skip's."""
    assembled = _count_assemblies(monkeypatch)
    for filed in ("success_callback", "_async_success_callback", "failure_callback", "_async_failure_callback"):
        monkeypatch.setattr(litellm, filed, [])
    monkeypatch.setattr(litellm, "callbacks", [CustomLogger()])
    reply = await llm.stream(MESSAGES, model=FAKE_MODEL)
    text = "".join([delta async for delta in reply])
    assert assembled  # at the end, and again for the success log
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (8, len(text.split()))

    for filed in ("callbacks", "success_callback", "_async_success_callback"):
        monkeypatch.setattr(litellm, filed, [])
    assembled.clear()
    response = loading.steady_stream(await litellm.acompletion(
        model=FAKE_MODEL, messages=MESSAGES, stream=True, api_key=FAKE_API_KEY, api_base=fake_llm.api_base,
        max_retries=0,
    ))  # no stream_options: the fake sends no usage chunk, as a provider that ignores them would not
    [chunk async for chunk in response]
    assert assembled == [1]


def _count_assemblies(monkeypatch) -> list[int]:
    """How often litellm assembles a whole reply from its chunks while the test runs."""
    assert not loading._callbacks_registered(), "an earlier test left a litellm callback registered"
    assembled: list[int] = []
    original = litellm.stream_chunk_builder
    monkeypatch.setattr(litellm, "stream_chunk_builder",
                        lambda *args, **kwargs: assembled.append(1) or original(*args, **kwargs))
    return assembled


async def test_a_streamed_reply_reads_its_chunks_through_one_iterator(fake_llm, monkeypatch):
    """litellm's ``async for ... return`` per chunk abandons a generator each time, unless handed one iterator.

    The second half checks litellm still behaves so: when it stops, ``loading.steady_stream`` can go.
    """
    abandoned = await _abandoned_generators(lambda: llm.stream(MESSAGES, model=FAKE_MODEL))
    assert abandoned.count("AsyncStream.__aiter__") == 0

    async def litellm_as_it_comes() -> object:
        return await litellm.acompletion(model=FAKE_MODEL, messages=MESSAGES, stream=True, api_key=FAKE_API_KEY,
                                         api_base=fake_llm.api_base, max_retries=0)

    abandoned = await _abandoned_generators(litellm_as_it_comes)
    assert abandoned.count("AsyncStream.__aiter__") >= 3  # one per text chunk


async def _abandoned_generators(open_stream) -> list[str]:
    """The async generators asyncio had to close for the caller while one stream was read to its end."""
    first_iteration, finalizer = sys.get_asyncgen_hooks()
    abandoned: list[str] = []

    def recording(generator):
        abandoned.append(generator.__qualname__)
        return finalizer(generator)

    sys.set_asyncgen_hooks(first_iteration, recording)
    try:
        reply = await open_stream()
        async for _delta in reply:
            pass
        await _let_litellms_tasks_run()
    finally:
        sys.set_asyncgen_hooks(first_iteration, finalizer)
    return abandoned


async def _let_litellms_tasks_run() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


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
