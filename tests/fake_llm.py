"""A local OpenAI-compatible HTTP server, so tests drive the real litellm path with no network.

The server speaks just enough of ``POST /v1/chat/completions`` (also ``/chat/completions``) for
litellm's ``openai/`` provider: plain JSON replies, and server-sent events when the request asks
for ``"stream": true`` (with a final usage chunk when ``stream_options.include_usage`` is set).

Use it through the ``fake_llm`` fixture, which points the gateway's settings at the server::

    async def test_judge_scores_goal(fake_llm):
        fake_llm.reply_when("Evaluate the episode", '{"goal": 7}')
        fake_llm.enqueue(status=429)            # the first request is rate limited
        ...                                     # call code that uses model "openai/fake-model"
        assert len(fake_llm.requests) == 2      # parsed JSON bodies, in arrival order

Replies, in order of precedence:

1. the next scripted response in the queue (``enqueue``), one per request;
2. the text of the first rule whose substring occurs in any message (``reply_when``);
3. a deterministic text derived from a hash of the last user message (``default_reply``).

The server is started once per test session on a random free port of 127.0.0.1; the fixture
clears its queue, rules and request log before each test.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from benchmark.agents import loading

FAKE_MODEL = "openai/fake-model"
FAKE_API_KEY = "test-key"

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    429: "rate_limit_exceeded",
}


@dataclass(frozen=True)
class ScriptedResponse:
    """One queued answer: an HTTP error, a delay, a fixed text, or a stream that breaks off."""

    status: int = 200
    text: str | None = None
    delay: float = 0.0
    disconnect_after: int | None = None


def default_reply(messages: list[dict[str, Any]]) -> str:
    """The reply used when no rule matches: stable for a prompt, different across prompts."""
    last_user = next(
        (_content_text(m) for m in reversed(messages) if m.get("role") == "user"), ""
    )
    digest = hashlib.sha256(last_user.encode()).hexdigest()[:12]
    return f"Fake reply {digest}: the model heard you."


def count_tokens(text: str) -> int:
    """A whitespace word count stands in for a tokenizer; tests only need it to be stable."""
    return len(text.split())


def _content_text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):  # OpenAI "content parts"
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def _split_deltas(text: str) -> list[str]:
    """Cut a reply into word-sized deltas that join back to exactly the same text."""
    deltas: list[str] = []
    current = ""
    for char in text:
        current += char
        if char == " ":
            deltas.append(current)
            current = ""
    if current:
        deltas.append(current)
    return deltas


class FakeLLMServer:
    """An OpenAI-compatible chat-completions server in a background thread.

    Attributes tests read:

    - ``api_base``: ``http://127.0.0.1:PORT/v1``, the value for ``PARLEY_LLM_API_BASE``;
    - ``requests``: every request body (parsed JSON), including failed attempts;
    - ``headers``: the matching request headers (lower-cased names), e.g. ``authorization``.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._queue: deque[ScriptedResponse] = deque()
        self._rules: list[tuple[str, str]] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._httpd = _Server(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="fake-llm", daemon=True
        )

    @property
    def api_base(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping on a scripted delay
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def reset(self) -> None:
        """Forget queued responses, rules and recorded requests (done before every test)."""
        with self._lock:
            self._queue.clear()
            self._rules.clear()
            self.requests.clear()
            self.headers.clear()

    def reply_when(self, substring: str, text: str) -> None:
        """Answer ``text`` to any request whose messages contain ``substring``; first rule wins."""
        with self._lock:
            self._rules.append((substring, text))

    def enqueue(
        self,
        *,
        status: int = 200,
        text: str | None = None,
        delay: float = 0.0,
        disconnect_after: int | None = None,
    ) -> None:
        """Script the answer to the next request that has no earlier scripted answer.

        ``status``: an HTTP error status (429, 500, 400...) sent with an OpenAI-style error body.
        ``text``: the reply text instead of the rule/default reply.
        ``delay``: seconds to wait before answering (longer than the client timeout to time out).
        ``disconnect_after``: for streams, drop the connection after this many deltas.
        """
        with self._lock:
            self._queue.append(
                ScriptedResponse(
                    status=status, text=text, delay=delay, disconnect_after=disconnect_after
                )
            )

    @property
    def prompts(self) -> list[str]:
        """Each request's messages joined into one string, for ``in`` assertions."""
        with self._lock:
            return [
                "\n".join(_content_text(m) for m in body.get("messages", []))
                for body in self.requests
            ]

    def _take(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[ScriptedResponse, str]:
        """Record the request and decide the scripted response and reply text for it."""
        messages = body.get("messages", [])
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            scripted = self._queue.popleft() if self._queue else ScriptedResponse()
            prompt = "\n".join(_content_text(m) for m in messages)
            rule_text = next((text for sub, text in self._rules if sub in prompt), None)
        if scripted.text is not None:
            return scripted, scripted.text
        if rule_text is not None:
            return scripted, rule_text
        return scripted, default_reply(messages)

    def _sleep(self, seconds: float) -> bool:
        """Sleep unless the server is stopping; returns False when interrupted."""
        return not self._stopping.wait(seconds)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (timeout, cancelled stream) is expected; anything else is not."""
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError):
            return
        super().handle_error(request, client_address)


def _handler_for(server: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Keep test output clean; the request log is ``server.requests``."""

        def do_POST(self) -> None:  # noqa: N802
            if self.path.rstrip("/") not in {"/v1/chat/completions", "/chat/completions"}:
                self._send_json(404, _error_body(404, f"no route for {self.path}"))
                return
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError as error:
                self._send_json(400, _error_body(400, f"request body is not JSON: {error}"))
                return
            headers = {name.lower(): value for name, value in self.headers.items()}
            scripted, text = server._take(body, headers)
            if scripted.delay and not server._sleep(scripted.delay):
                return
            if scripted.status != 200:
                self._send_json(scripted.status, _error_body(scripted.status, "scripted failure"))
                return
            if body.get("stream"):
                self._send_stream(body, text, scripted.disconnect_after)
            else:
                self._send_json(200, _completion_body(body, text))

        def _send_json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _send_stream(
            self, body: dict[str, Any], text: str, disconnect_after: int | None
        ) -> None:
            # Chunked transfer encoding, as real servers stream: a connection that closes before
            # the terminating empty chunk is then a visible protocol error, not a clean end.
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            ident, created, model = _identity(body)

            def write(data: bytes) -> None:
                self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

            def event(choices: list[dict[str, Any]], **extra: Any) -> None:
                payload = {
                    "id": ident,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "choices": choices,
                    **extra,
                }
                write(f"data: {json.dumps(payload)}\n\n".encode())

            opening = {"role": "assistant", "content": ""}
            event([{"index": 0, "delta": opening, "finish_reason": None}])
            for number, delta in enumerate(_split_deltas(text)):
                if disconnect_after is not None and number >= disconnect_after:
                    # Half an HTTP chunk, then the socket closes, as when an upstream crashes.
                    self.wfile.write(b"40\r\ndata: {")
                    self.wfile.flush()
                    self.close_connection = True
                    return
                event([{"index": 0, "delta": {"content": delta}, "finish_reason": None}])
            event([{"index": 0, "delta": {}, "finish_reason": "stop"}])
            if (body.get("stream_options") or {}).get("include_usage"):
                event([], usage=_usage(body, text))
            write(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    return Handler


def _identity(body: dict[str, Any]) -> tuple[str, int, str]:
    return "chatcmpl-fake", int(time.time()), str(body.get("model", "fake-model"))


def _usage(body: dict[str, Any], text: str) -> dict[str, int]:
    prompt = sum(count_tokens(_content_text(m)) for m in body.get("messages", []))
    completion = count_tokens(text)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _completion_body(body: dict[str, Any], text: str) -> dict[str, Any]:
    ident, created, model = _identity(body)
    return {
        "id": ident,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": _usage(body, text),
    }


def _error_body(status: int, message: str) -> dict[str, Any]:
    return {
        "error": {
            "message": f"{message} (HTTP {status})",
            "type": _ERROR_TYPES.get(status, "server_error"),
            "code": str(status),
        }
    }


@pytest.fixture(scope="session")
def fake_llm_server() -> Iterator[FakeLLMServer]:
    """The one server of the test session; prefer the ``fake_llm`` fixture, which resets it."""
    server = FakeLLMServer().start()
    # A server that may call a model imports litellm when it starts (config.asgi); so does the
    # test session, once, instead of the first test that calls a model paying 10+ s for it.
    loading.preload()
    yield server
    server.stop()


@pytest.fixture
def fake_llm(fake_llm_server: FakeLLMServer, settings: Any) -> Iterator[FakeLLMServer]:
    """A clean fake server, with the gateway's settings pointed at it for this test.

    Sets ``PARLEY_LLM_API_BASE``, ``PARLEY_LLM_API_KEY="test-key"``, a one-second
    ``PARLEY_LLM_TIMEOUT``, ``PARLEY_LLM_MAX_RETRIES=2`` and ``PARLEY_LLM_BACKOFF=0.01`` so
    retries cost milliseconds. ``PARLEY_MODELS`` is left alone: set it (e.g. to
    ``FAKE_MODEL``) in tests that go through ``benchmark.agents.llm.model_for``.
    """
    fake_llm_server.reset()
    settings.PARLEY_LLM_API_BASE = fake_llm_server.api_base
    settings.PARLEY_LLM_API_KEY = FAKE_API_KEY
    settings.PARLEY_LLM_TIMEOUT = 1.0
    settings.PARLEY_LLM_MAX_RETRIES = 2
    settings.PARLEY_LLM_BACKOFF = 0.01
    yield fake_llm_server
    fake_llm_server.reset()
