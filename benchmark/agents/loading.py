"""Loading litellm: once, offline and quiet, when a process starts, and without the per-call work Parley never reads.

``litellm`` fetches a cost map from the network at import unless ``LITELLM_LOCAL_MODEL_COST_MAP``
is set, and its import takes 10+ s of CPU on a small machine; its first call then builds, lazily,
another quarter of a second of schemas, provider modules and clients. So a process that may call a
model (a web server, ``config.asgi``; a task consumer, ``run_huey``) imports it and rehearses one
call before it serves anything (:func:`start`): the first participant's agent reply costs the
model's own time, not the import. A machine running only the offline scripted model never imports
it at all.

Per call, litellm does work whose result Parley throws away: pricing the reply, building a logging
payload for callbacks nobody registered, per streamed chunk, starting and abandoning an async
generator over the provider's stream, and at a stream's end, assembling the whole reply again in a
worker thread for its token counts. :func:`_configure` turns off what a setting turns off;
the rest is patched here and only here, each patch checked by ``tests/benchmark/test_loading.py``
so that a litellm upgrade that moves it fails a test rather than quietly costing CPU again.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import threading
from typing import Any

from django.conf import settings

from .allowed_models import SCRIPTED, configured_models


@functools.cache
def litellm() -> Any:
    """The litellm module, imported on first use and set up once for Parley (:func:`_configure`)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    _configure(litellm)
    return litellm


def _configure(litellm: Any) -> None:
    """Offline, quiet, and without the per-call work whose result Parley never reads.

    Parley records each call's tokens and latency (``llm.Usage``), never its price, so litellm's cost
    calculation, which runs on every reply and again on a stream's last chunk, is replaced by one
    that prices nothing: a cost of None is litellm's own "unknown". No callbacks are registered, so
    the success log litellm builds after every reply for them (its "standard logging payload", the
    model's price looked up again, a task per call) has no reader and is not built
    (:func:`_skip_success_logging`). A streamed call does not hand each chunk to the (sync) logging
    thread, and its end is not assembled into a whole reply nobody reads (:func:`_skip_unread_stream_assembly`).
    One client per provider, key and event loop is reused from litellm's client cache;
    Parley's own retries replace litellm's (``llm._request``). Token counts still come from the
    provider's usage chunk, and litellm's estimate stays on for providers that report none.
    """
    litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banners on errors
    litellm.telemetry = False  # read by older releases only; current ones send nothing
    litellm.response_cost_calculator = _no_cost
    litellm.disable_streaming_logging = True
    litellm.success_callback = []
    litellm.failure_callback = []
    litellm.callbacks = []
    _skip_success_logging()
    _skip_unread_stream_assembly()


def _no_cost(**_details: Any) -> None:
    """What a call cost, as Parley asks litellm: unknown (None), without working it out."""
    return None


def _skip_success_logging() -> None:
    """Make litellm's success log a no-op while no callback is registered to read it.

    litellm has no setting for this: with no callbacks at all it still builds the whole logging
    payload after every reply (a tenth of a streamed call's CPU). Its two entry points are wrapped,
    so registering a callback (a researcher debugging with litellm's own tools) brings the log back.
    """
    from litellm.litellm_core_utils.litellm_logging import Logging

    if getattr(Logging.async_success_handler, "parley_skips_unread", False):
        return
    async_handler, sync_handler = Logging.async_success_handler, Logging.success_handler

    @functools.wraps(async_handler)
    async def async_success_handler(self: Any, *args: Any, **kwargs: Any) -> None:
        if _callbacks_registered():
            await async_handler(self, *args, **kwargs)

    @functools.wraps(sync_handler)
    def success_handler(self: Any, *args: Any, **kwargs: Any) -> None:
        if _callbacks_registered():
            sync_handler(self, *args, **kwargs)

    async_success_handler.parley_skips_unread = True  # type: ignore[attr-defined]
    Logging.async_success_handler = async_success_handler
    Logging.success_handler = success_handler


def _skip_unread_stream_assembly() -> None:
    """At the end of a streamed reply, give its usage as the provider reported it, without assembling the reply.

    litellm rebuilds the whole reply from its chunks (``stream_chunk_builder``) when a stream ends, only to
    take its token counts for the last chunk and hand it to the success log and the response cache. It does
    so in a worker thread, through anyio, which first looks for its root task by walking every task of the
    event loop: under daphne, with a few hundred chats open, the hop and the assembly were a tenth of a
    server's CPU (a fifth of the model client's). Parley reads nothing of it but the usage, so while no
    callback and no cache would read the assembled reply, and the provider sent its usage chunk
    (``stream_options.include_usage``), the reply's end is a chunk with that usage: what litellm itself
    falls back to when the assembly fails. Without a reported usage (a provider that sends none), litellm
    assembles the reply and estimates the counts as before.
    """
    from litellm.litellm_core_utils import streaming_handler

    wrapper = streaming_handler.CustomStreamWrapper
    if getattr(wrapper._async_build_complete_streaming_response, "parley_skips_unread", False):
        return
    assemble = wrapper._async_build_complete_streaming_response

    @functools.wraps(assemble)
    async def _async_build_complete_streaming_response(self: Any) -> Any:
        if not _callbacks_registered() and litellm().cache is None:
            usage = streaming_handler._reported_total_usage(chunks=self.chunks)
            if usage is not None:
                return self.model_response_creator(chunk={"usage": usage})
        return await assemble(self)

    _async_build_complete_streaming_response.parley_skips_unread = True  # type: ignore[attr-defined]
    wrapper._async_build_complete_streaming_response = _async_build_complete_streaming_response


def _callbacks_registered() -> bool:
    module = litellm()
    return any(
        getattr(module, name, None)
        for name in ("callbacks", "success_callback", "_async_success_callback")
    )


def steady_stream(response: Any) -> Any:
    """The streamed reply ``response`` (litellm's ``CustomStreamWrapper``), reading its provider stream
    through one iterator instead of a new async generator per chunk.

    litellm reads each chunk with ``async for chunk in stream: ... return``; on an ``openai``
    stream every such loop starts an async generator and abandons it, which asyncio then closes
    from a task it schedules through the event loop's self-pipe: a system call and a task per chunk.
    Handed an object that is its own iterator, the same loop resumes where it stopped.
    """
    import openai

    stream = getattr(response, "completion_stream", None)
    if isinstance(stream, openai.AsyncStream):
        response.completion_stream = _OneIterator(stream)
    return response


class _OneIterator:
    """An ``openai`` stream as a single async iterator (see :func:`steady_stream`)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def __aiter__(self) -> _OneIterator:
        return self

    async def __anext__(self) -> Any:
        return await self._stream.__anext__()

    async def aclose(self) -> None:
        await self._stream.close()


def preload() -> None:
    """Import litellm now rather than on the first call (e.g. before an event loop starts)."""
    litellm()


def start() -> bool:
    """Import litellm and rehearse one call now, before this process serves, if it may call a model;
    whether it did.

    Called where a server or consumer starts (``config.asgi``, ``run_huey``), in the main thread:
    the server listens only once this is done (a few seconds, once), and a consumer's process
    workers inherit it when they fork.
    """
    if not may_call_models():
        return False
    preload()
    _rehearse()
    return True


def may_call_models() -> bool:
    """Whether this deployment may call a model other than the scripted one: one is configured for
    a role, or PARLEY_ALLOWED_MODELS lets researchers pick one."""
    return bool(settings.PARLEY_ALLOWED_MODELS) or any(name != SCRIPTED for name in configured_models())


def _rehearse() -> None:
    """One streamed and one plain call through litellm against a loopback server, then gone.

    What litellm builds on its first call (pydantic schemas completed on first use, provider modules
    imported lazily, the HTTP client and its transport) is built here instead of during a
    participant's first agent turn. The server is this process's own, on 127.0.0.1, answering canned
    replies: nothing leaves the machine and no provider is billed. It runs on its own event loop in
    a thread of its own, so the server's loop (daphne's, twisted's) is left as it was. The providers
    of the configured models are looked up too, so their modules are loaded as well.
    """
    for model in configured_models():
        if model != SCRIPTED:
            try:
                litellm().get_llm_provider(model)
            except Exception:  # noqa: BLE001  (a misconfigured model is reported on its first call, as before)
                pass
    failure: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(_rehearse_calls())
        except BaseException as error:  # noqa: BLE001  (re-raised in the caller's thread)
            failure.append(error)

    thread = threading.Thread(target=run, name="litellm-rehearsal")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]


async def _rehearse_calls() -> None:
    server = await asyncio.start_server(_answer_rehearsal, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    request = {
        "model": "openai/parley-rehearsal",
        "messages": [{"role": "user", "content": "rehearsal"}],
        "api_base": f"http://127.0.0.1:{port}/v1",
        "api_key": "rehearsal",
        "num_retries": 0,
        "max_retries": 0,
        "timeout": 30,
    }
    async with server:
        module = litellm()
        await module.acompletion(**request)
        reply = steady_stream(
            await module.acompletion(**request, stream=True, stream_options={"include_usage": True})
        )
        async for _chunk in reply:
            pass
        await reply.aclose()


async def _answer_rehearsal(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answer one chat-completion request the way an OpenAI-compatible server does, then hang up."""
    try:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").lower()
        length = next((int(line[15:]) for line in head.split("\r\n") if line.startswith("content-length:")), 0)
        writer.write(_rehearsal_response(json.loads(await reader.readexactly(length) or b"{}")))
        await writer.drain()
    finally:
        writer.close()


def _rehearsal_response(body: dict[str, Any]) -> bytes:
    """A one-word reply, plain or streamed (with its usage chunk, as ``llm.stream`` asks for)."""
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    common = {"id": "rehearsal", "created": 0, "model": body.get("model", "")}
    if body.get("stream"):
        kind = "text/event-stream"
        events = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "ready"}, "finish_reason": None}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {"choices": [], "usage": usage},
        ]
        chunks = [json.dumps({**common, "object": "chat.completion.chunk", **event}) for event in events]
        content = "".join(f"data: {chunk}\n\n" for chunk in [*chunks, "[DONE]"]).encode()
    else:
        kind = "application/json"
        choice = {"index": 0, "message": {"role": "assistant", "content": "ready"}, "finish_reason": "stop"}
        content = json.dumps({**common, "object": "chat.completion", "usage": usage, "choices": [choice]}).encode()
    head = f"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: {kind}\r\nContent-Length: {len(content)}\r\n\r\n"
    return head.encode() + content
