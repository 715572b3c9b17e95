"""A fast OpenAI-compatible chat-completions server for benchmarks, with a fixed latency.

Benchmarks need a model that answers in a known time, thousands of times a second, without a
network: this is it. It is a bare asyncio HTTP/1.1 server (keep-alive, no framework), so one
process answers thousands of concurrent requests and the latency a client sees is the configured
``--latency`` plus a fraction of a millisecond. The test suite's fixture (``tests/fake_llm.py``)
is the scripted, inspectable server for tests; this one is for throughput.

Routes:

- ``POST /v1/chat/completions`` (also ``/chat/completions``): waits ``latency`` seconds, then
  answers. With ``"stream": true`` it sends server-sent events, one word-sized delta every
  ``--delta-interval`` seconds, and a usage chunk when ``stream_options.include_usage`` is set.
- ``GET /stats``: ``{"requests": N, "streams": M, "in_flight": K, "max_in_flight": L}``.
- ``GET /health``: ``ok``.

The reply is deterministic per prompt (a hash of the last user message): when the messages ask
for a JSON action (they mention ``"action_type"``, as Parley's agent prompt does) it is a
``speak`` action, otherwise plain text, so the same server drives agent simulations and chats.

    .venv/bin/python perf/fake_openai.py --port 8765 --latency 0.2
    # prints "fake OpenAI server on http://127.0.0.1:8765/v1", then serves until interrupted

In Python, ``FakeOpenAI(latency=0.2).start_in_thread()`` serves from a daemon thread and
returns the server with ``api_base`` set.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

ACTION_MARKER = '"action_type"'
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 413: "Payload Too Large"}
MAX_BODY = 16 * 1024 * 1024


def reply_for(messages: list[dict[str, Any]]) -> str:
    """The reply to a conversation: stable for a prompt, different across prompts."""
    last_user = next((_text(m) for m in reversed(messages) if m.get("role") == "user"), "")
    digest = hashlib.blake2b(last_user.encode(), digest_size=6).hexdigest()
    if any(ACTION_MARKER in _text(m) for m in messages):
        return json.dumps({"action_type": "speak", "argument": f"I hear you; let us settle this ({digest})."})
    return f"Fake reply {digest}: the model heard you."


def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def _tokens(text: str) -> int:
    return len(text.split())


@dataclass
class Counters:
    requests: int = 0
    streams: int = 0
    in_flight: int = 0
    max_in_flight: int = 0


@dataclass
class FakeOpenAI:
    """The server: ``latency`` seconds before each answer, ``delta_interval`` between streamed deltas."""

    latency: float = 0.2
    delta_interval: float = 0.0
    host: str = "127.0.0.1"
    port: int = 0
    counters: Counters = field(default_factory=Counters)
    reply: Callable[[list[dict[str, Any]]], str] = reply_for  # a benchmark may answer its own prompts' shapes
    _server: asyncio.Server | None = field(default=None, init=False, repr=False)
    _loop: asyncio.AbstractEventLoop | None = field(default=None, init=False, repr=False)

    @property
    def api_base(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    async def start(self) -> FakeOpenAI:
        """Listen; ``port`` 0 takes a free port, read back into ``port``."""
        self._loop = asyncio.get_running_loop()
        self._server = await asyncio.start_server(self._connection, self.host, self.port, backlog=8192)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def serve_forever(self) -> None:
        assert self._server is not None
        async with self._server:
            await self._server.serve_forever()

    def start_in_thread(self) -> FakeOpenAI:
        """Serve from a daemon thread with its own event loop; returns once the port is bound."""
        ready = threading.Event()

        def run() -> None:
            async def main() -> None:
                await self.start()
                ready.set()
                await self.serve_forever()

            try:
                asyncio.run(main())
            except asyncio.CancelledError:
                pass

        threading.Thread(target=run, name="fake-openai", daemon=True).start()
        if not ready.wait(10):
            raise RuntimeError("the fake OpenAI server did not start within 10 s")
        return self

    def stop(self) -> None:
        """Stop a server started with ``start_in_thread``."""
        if self._server is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(self._server.close)

    # --- HTTP ------------------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                method, path, headers, body = request
                keep_alive = headers.get("connection", "").lower() != "close"
                await self._dispatch(method, path, body, writer)
                if not keep_alive:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            writer.close()

    async def _dispatch(self, method: str, path: str, body: bytes, writer: asyncio.StreamWriter) -> None:
        route = path.split("?", 1)[0].rstrip("/")
        if route == "/health":
            _respond(writer, 200, b"ok", "text/plain")
            return
        if route == "/stats":
            _respond_json(writer, 200, self.counters.__dict__)
            return
        if route not in {"/v1/chat/completions", "/chat/completions"}:
            _respond_json(writer, 404, _error(f"no route for {path}"))
            return
        if method != "POST":
            _respond_json(writer, 405, _error("use POST"))
            return
        try:
            payload = json.loads(body or b"{}")
        except json.JSONDecodeError as error:
            _respond_json(writer, 400, _error(f"request body is not JSON: {error}"))
            return
        counters = self.counters
        counters.requests += 1
        counters.in_flight += 1
        counters.max_in_flight = max(counters.max_in_flight, counters.in_flight)
        try:
            text = self.reply(payload.get("messages", []))
            if self.latency:
                await asyncio.sleep(self.latency)
            if payload.get("stream"):
                counters.streams += 1
                await self._stream(payload, text, writer)
            else:
                _respond_json(writer, 200, _completion(payload, text))
                await writer.drain()
        finally:
            counters.in_flight -= 1

    async def _stream(self, payload: dict[str, Any], text: str, writer: asyncio.StreamWriter) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        ident, created, model = "chatcmpl-bench", int(time.time()), str(payload.get("model", "fake-model"))

        def event(choices: list[dict[str, Any]], **extra: Any) -> None:
            data = json.dumps(
                {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model,
                 "choices": choices, **extra}
            )
            _chunk(writer, f"data: {data}\n\n".encode())

        event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
        for delta in _deltas(text):
            event([{"index": 0, "delta": {"content": delta}, "finish_reason": None}])
            if self.delta_interval:
                await writer.drain()
                await asyncio.sleep(self.delta_interval)
        event([{"index": 0, "delta": {}, "finish_reason": "stop"}])
        if (payload.get("stream_options") or {}).get("include_usage"):
            event([], usage=_usage(payload, text))
        _chunk(writer, b"data: [DONE]\n\n")
        writer.write(b"0\r\n\r\n")
        await writer.drain()


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str], bytes] | None:
    """One request off a keep-alive connection, or None when the client closed it."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _version = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length") or 0)
    if length > MAX_BODY:
        raise ValueError("body too large")
    body = await reader.readexactly(length) if length else b""
    return method, path, headers, body


def _respond(writer: asyncio.StreamWriter, status: int, data: bytes, content_type: str) -> None:
    writer.write(
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(data)}\r\n\r\n".encode()
        + data
    )


def _respond_json(writer: asyncio.StreamWriter, status: int, payload: dict[str, Any]) -> None:
    _respond(writer, status, json.dumps(payload).encode(), "application/json")


def _chunk(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")


def _deltas(text: str) -> list[str]:
    """Word-sized pieces that join back to exactly ``text``."""
    pieces: list[str] = []
    current = ""
    for char in text:
        current += char
        if char == " ":
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    return pieces


def _usage(payload: dict[str, Any], text: str) -> dict[str, int]:
    prompt = sum(_tokens(_text(m)) for m in payload.get("messages", []))
    completion = _tokens(text)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _completion(payload: dict[str, Any], text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(payload.get("model", "fake-model")),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": _usage(payload, text),
    }


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": None}}


def main(
    server_class: type[FakeOpenAI] | None = None,
    *,
    latency: float = 0.2,
    delta_interval: float = 0.0,
    description: str | None = __doc__,
) -> None:
    """Serve from the command line until interrupted; a subclass's script passes its class and defaults."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1", help="Address to listen on (default: %(default)s).")
    parser.add_argument("--port", type=int, default=0, help="Port; 0 takes a free one (default: %(default)s).")
    parser.add_argument(
        "--latency", type=float, default=latency, help="Seconds before each answer (default: %(default)s)."
    )
    parser.add_argument(
        "--delta-interval", type=float, default=delta_interval,
        help="Seconds between streamed deltas (default: %(default)s).",
    )
    args = parser.parse_args()
    server_class = server_class or FakeOpenAI

    async def serve() -> None:
        server = await server_class(args.latency, args.delta_interval, args.host, args.port).start()
        print(f"fake OpenAI server on {server.api_base}", flush=True)
        await server.serve_forever()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
