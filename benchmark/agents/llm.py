"""The LLM gateway: every call to a language model in Parley goes through this module.

It wraps ``litellm`` so the rest of the code sees one small async interface with the same
timeouts, retries, JSON handling and token/latency accounting whatever the provider is.

Why it looks the way it does:

- ``litellm`` is imported through ``benchmark.agents.loading`` (offline, quiet, and when a server
  starts rather than on a participant's first message); a machine running only the offline
  scripted model never imports it at all.
- Retries live here and only here. litellm's own retries and those of the OpenAI client inside
  it (two by default) are switched off, so one attempt is exactly one HTTP request and the
  backoff is the one configured in settings.
- Only failures that another attempt could fix are retried: rate limits (429), server errors
  (5xx), timeouts and connection errors. Any other 4xx is our mistake and fails at once.
- The offline ``SCRIPTED`` model never reaches this module: ``benchmark.agents.acting`` dispatches to
  ``benchmark.agents.scripted`` first, so a scripted name arriving here is a programming error.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from django.conf import settings

from . import loading
from .allowed_models import SCRIPTED, ModelNotAllowed, check_callable, describe_failure

if TYPE_CHECKING:
    from litellm import CustomStreamWrapper

logger = logging.getLogger(__name__)

ROLES = ("agent", "partner", "judge", "neutralizer")

T = TypeVar("T")


class LLMError(Exception):
    """A model call failed in a way the caller should report rather than retry."""


class LLMRefused(LLMError):
    """The provider refused the credentials (HTTP 401 or 403): every later call with them fails too."""


class LLMUnavailable(LLMError):
    """The model could not be reached: retries ran out, or a stream broke off midway."""


class LLMOutputError(LLMError):
    """The model replied, but not with usable JSON, even after one repair attempt.

    ``attempts`` counts the whole requests (each with its repair) that were made.
    """

    def __init__(self, message: str, text: str, attempts: int = 1) -> None:
        super().__init__(message)
        self.text = text
        self.attempts = attempts


@dataclass
class Usage:
    """What one gateway call cost: stored on turns and evaluations for the research record.

    ``latency_ms`` is the wall time the caller waited, retries and backoff included;
    ``attempts`` counts HTTP requests. Token counts are what the provider reported (litellm
    substitutes its own estimate when a provider omits them), or None when unknown.
    """

    model: str
    latency_ms: int
    prompt_tokens: int | None
    completion_tokens: int | None
    attempts: int

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            model=self.model,
            latency_ms=self.latency_ms + other.latency_ms,
            prompt_tokens=_add_counts(self.prompt_tokens, other.prompt_tokens),
            completion_tokens=_add_counts(self.completion_tokens, other.completion_tokens),
            attempts=self.attempts + other.attempts,
        )


@dataclass
class Completion:
    text: str
    usage: Usage


def model_for(role: str) -> str:
    """The configured model for an agent/partner/judge/neutralizer, or the offline scripted one."""
    if role not in ROLES:
        raise ValueError(f"unknown model role {role!r}; expected one of {', '.join(ROLES)}")
    return settings.PARLEY_MODELS.get(role) or SCRIPTED


def is_scripted(model: str) -> bool:
    return model == SCRIPTED


async def complete(
    messages: list[dict[str, Any]],
    *,
    model: str,
    temperature: float = 0.7,
    max_tokens: int | None = None,
    timeout: float | None = None,
) -> Completion:
    """One chat completion, retried on transient failures."""
    request = _request(messages, model, temperature, max_tokens, timeout)
    litellm = loading.litellm()
    started = time.monotonic()
    response, attempts = await _with_retries(model, lambda: litellm.acompletion(**request))
    text = response.choices[0].message.content or ""
    reported = getattr(response, "usage", None)
    return Completion(
        text=text,
        usage=Usage(
            model=model,
            latency_ms=_elapsed_ms(started),
            prompt_tokens=getattr(reported, "prompt_tokens", None),
            completion_tokens=getattr(reported, "completion_tokens", None),
            attempts=attempts,
        ),
    )


class Stream:
    """An async iterator of text deltas from one streamed completion.

    Made by :func:`stream`, which has already received the first delta, so a failure that
    reaches the iterator happened mid-reply: it is raised as :class:`LLMUnavailable` rather
    than retried, because the caller may already have shown the first words to a person.
    After iteration ``text`` holds the whole reply and ``usage`` is filled in.
    """

    def __init__(
        self,
        *,
        model: str,
        response: CustomStreamWrapper,
        received: list[Any],
        finished: bool,
        started: float,
        attempts: int,
    ) -> None:
        self.model = model
        self.text = ""
        self.usage: Usage | None = None
        self._response = response
        self._received = received
        self._finished = finished
        self._started = started
        self._attempts = attempts
        self._reported: Any = None
        self._iterated = False

    def __aiter__(self) -> AsyncIterator[str]:
        if self._iterated:
            raise RuntimeError("a Stream can be iterated only once")
        self._iterated = True
        return self._deltas()

    async def aclose(self) -> None:
        """Close the connection early, e.g. when the participant leaves mid-reply."""
        await self._response.aclose()

    async def _deltas(self) -> AsyncIterator[str]:
        import openai

        for chunk in self._received:
            if delta := self._take(chunk):
                yield delta
        self._received = []
        try:
            while not self._finished:
                try:
                    chunk = await anext(self._response)
                except StopAsyncIteration:
                    self._finished = True
                    break
                if delta := self._take(chunk):
                    yield delta
        except openai.APIError as error:
            raise LLMUnavailable(
                f"{self.model} stream broke off after {len(self.text)} characters: {describe_failure(error)}"
            ) from error
        self.usage = Usage(
            model=self.model,
            latency_ms=_elapsed_ms(self._started),
            prompt_tokens=getattr(self._reported, "prompt_tokens", None),
            completion_tokens=getattr(self._reported, "completion_tokens", None),
            attempts=self._attempts,
        )

    def _take(self, chunk: Any) -> str:
        """Record a chunk's usage (the final chunk carries it) and return its text delta."""
        if getattr(chunk, "usage", None) is not None:
            self._reported = chunk.usage
        delta = _chunk_delta(chunk)
        self.text += delta
        return delta


async def stream(
    messages: list[dict[str, Any]],
    *,
    model: str,
    temperature: float = 0.7,
    max_tokens: int | None = None,
    timeout: float | None = None,
) -> Stream:
    """Start a streamed completion; retries cover everything up to the first text delta."""
    request = _request(messages, model, temperature, max_tokens, timeout)
    litellm = loading.litellm()
    request["stream"] = True
    request["stream_options"] = {"include_usage": True}
    started = time.monotonic()

    async def open_until_first_delta() -> tuple[CustomStreamWrapper, list[Any], bool]:
        """Open the stream and read up to its first text delta (or its end, if it has none)."""
        response = loading.steady_stream(await litellm.acompletion(**request))
        received: list[Any] = []
        try:
            async for chunk in response:
                received.append(chunk)
                if _chunk_delta(chunk):
                    return response, received, False
        except BaseException:
            await response.aclose()
            raise
        return response, received, True

    (response, received, finished), attempts = await _with_retries(model, open_until_first_delta)
    return Stream(
        model=model,
        response=response,
        received=received,
        finished=finished,
        started=started,
        attempts=attempts,
    )


async def complete_json(
    messages: list[dict[str, Any]],
    *,
    model: str,
    temperature: float = 0.7,
    max_tokens: int | None = None,
    timeout: float | None = None,
    validate: Callable[[dict[str, Any]], object] | None = None,
) -> tuple[dict[str, Any], Usage]:
    """A completion whose reply must be one JSON object, with one chance to repair it.

    Models often wrap JSON in fences or prose, or get a field wrong; showing the model its
    own output and the exact problem fixes most of that in one more call. ``validate`` raises
    ``ValueError`` with a message meant for the model (its return value is ignored). The
    returned usage covers both calls.
    """
    options: dict[str, Any] = {
        "model": model,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "timeout": timeout,
    }
    first = await complete(messages, **options)
    try:
        return _checked_json(first.text, validate), first.usage
    except ValueError as error:
        problem = str(error)
    logger.info("%s returned unusable JSON (%s); asking it to repair", model, problem)
    repair = await complete([*messages, _repair_request(first.text, problem)], **options)
    usage = first.usage + repair.usage
    try:
        return _checked_json(repair.text, validate), usage
    except ValueError as error:
        raise LLMOutputError(
            f"{model} did not return usable JSON after one repair attempt: {error}", repair.text
        ) from error


async def repair_json(
    messages: list[dict[str, Any]],
    text: str,
    problem: str,
    *,
    model: str,
    temperature: float = 0.7,
    max_tokens: int | None = None,
    timeout: float | None = None,
    validate: Callable[[dict[str, Any]], object] | None = None,
) -> tuple[dict[str, Any], Usage]:
    """Ask the model once to fix a reply that was not usable JSON, and return the fixed object.

    :func:`complete_json` repairs its own replies; a streamed reply (:func:`stream`) can only be
    checked once it is complete, so its caller repairs it here, with the same request: the
    original messages, the unusable ``text`` and the ``problem`` found in it. The returned usage
    covers the repair call only. Raises :class:`LLMOutputError` when the fix is unusable too.
    """
    repair = await complete(
        [*messages, _repair_request(text, problem)],
        model=model,
        temperature=temperature,
        max_tokens=max_tokens,
        timeout=timeout,
    )
    try:
        return _checked_json(repair.text, validate), repair.usage
    except ValueError as error:
        raise LLMOutputError(
            f"{model} did not return usable JSON after one repair attempt: {error}", repair.text
        ) from error


def parse_json_object(text: str) -> dict[str, Any]:
    """The one JSON object in a model's reply, tolerating ```json fences and prose around it."""
    fenced = _FENCE.search(text)
    candidate = (fenced.group(1) if fenced else text).strip()
    if not candidate:
        raise ValueError("the reply is empty; expected a JSON object")
    try:
        value = json.loads(candidate)
    except json.JSONDecodeError:
        value = _first_embedded_json(candidate)
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, got a JSON {_json_type(value)}")
    return value


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)

_REPAIR_INSTRUCTIONS = """\
Your previous reply could not be used.

Previous reply:
<<<
{text}
>>>

Problem: {problem}

Reply again with the corrected JSON object only: no explanation, no code fences."""


def _repair_request(text: str, problem: str) -> dict[str, str]:
    return {"role": "user", "content": _REPAIR_INSTRUCTIONS.format(text=text, problem=problem)}


def _checked_json(
    text: str, validate: Callable[[dict[str, Any]], object] | None
) -> dict[str, Any]:
    value = parse_json_object(text)
    if validate is not None:
        validate(value)
    return value


def _first_embedded_json(text: str) -> Any:
    """Decode the first JSON object or array that starts at a bracket inside prose."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[{\[]", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        return value
    raise ValueError("no JSON object found in the reply")


def _json_type(value: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )


def _add_counts(first: int | None, second: int | None) -> int | None:
    """A sum is only reported when both parts are known; a partial count would mislead."""
    if first is None or second is None:
        return None
    return first + second


def _chunk_delta(chunk: Any) -> str:
    choices = getattr(chunk, "choices", None)
    if not choices:
        return ""
    return getattr(choices[0].delta, "content", None) or ""


def _elapsed_ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


def _request(
    messages: list[dict[str, Any]],
    model: str,
    temperature: float,
    max_tokens: int | None,
    timeout: float | None,
) -> dict[str, Any]:
    if is_scripted(model):
        raise LLMError("the scripted model is offline; call benchmark.agents.scripted instead")
    try:
        check_callable(model)
    except ModelNotAllowed as problem:
        raise LLMError(str(problem)) from None
    request: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "temperature": temperature,
        "timeout": timeout if timeout is not None else settings.PARLEY_LLM_TIMEOUT,
        # One attempt must be one HTTP request: _with_retries owns retrying.
        "num_retries": 0,
        "max_retries": 0,
    }
    if max_tokens is not None:
        request["max_tokens"] = max_tokens
    if settings.PARLEY_LLM_API_BASE:
        # The key belongs to that server: without it, each provider's own variable (OPENAI_API_KEY, …)
        # as litellm reads it, so no provider is ever sent another's key.
        request["api_base"] = settings.PARLEY_LLM_API_BASE
        if settings.PARLEY_LLM_API_KEY:
            request["api_key"] = settings.PARLEY_LLM_API_KEY
    return request


def _is_transient(error: Exception) -> bool:
    """Rate limits, server errors, timeouts and dropped connections may pass on a later try."""
    import litellm

    if isinstance(error, (litellm.Timeout, litellm.APIConnectionError)):
        return True
    status = getattr(error, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


async def _with_retries(model: str, attempt: Callable[[], Awaitable[T]]) -> tuple[T, int]:
    """Run ``attempt`` until it succeeds, backing off exponentially on transient failures.

    Returns the result and the number of attempts made.
    """
    import openai

    retries: int = settings.PARLEY_LLM_MAX_RETRIES
    backoff: float = settings.PARLEY_LLM_BACKOFF
    for number in range(retries + 1):
        try:
            return await attempt(), number + 1
        except openai.APIError as error:
            if not _is_transient(error):
                refused = getattr(error, "status_code", None) in (401, 403)
                raise (LLMRefused if refused else LLMError)(
                    f"{model} rejected the request: {describe_failure(error)}"
                ) from error
            if number == retries:
                raise LLMUnavailable(
                    f"{model} unavailable after {number + 1} attempts; last error: {describe_failure(error)}"
                ) from error
            delay = backoff * 2**number + random.uniform(0, backoff / 10)
            logger.warning(
                "%s attempt %d of %d failed (%s); retrying in %.2fs",
                model,
                number + 1,
                retries + 1,
                describe_failure(error),
                delay,
            )
            await asyncio.sleep(delay)
    raise AssertionError("unreachable: the loop returns or raises")
