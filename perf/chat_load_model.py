"""The chat load benchmark's fake model: ``fake_openai.py`` plus how long each reply took, per message.

The platform overhead of a chat message is the time from sending it to seeing the agent's reply,
minus the time the model itself took. Measuring the model's part on the server's side, for the
very request that answered that message, subtracts exactly what the model spent (its fixed
latency, its streaming, and any moment its own process was kept waiting), so nothing the model
did is charged to the platform.

Each participant message carries a tag (``bench-0042-03``); the agent's prompt quotes the
conversation so far, so the last tag in a request body names the message it answers. The server
keeps, per tag, the seconds from having read the request to having written its last byte, and
serves them at ``GET /timings`` as ``{"tags": {tag: [seconds, ...]}, "untagged": [seconds, ...]}``
(an agent's opening turn answers no message, so it is untagged); ``GET /timings?clear=1`` also
forgets them, so the next run (which reuses the same tags) starts from none.

    .venv/bin/python perf/chat_load_model.py --latency 0.3 --delta-interval 0.02
    # prints "fake OpenAI server on http://127.0.0.1:<port>/v1", then serves until interrupted
"""

from __future__ import annotations

import asyncio
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fake_openai  # noqa: E402
from fake_openai import FakeOpenAI, _deltas, _respond_json, reply_for  # noqa: E402

TAG = re.compile(rb"bench-\d{4}-\d{2}")
COMPLETION_ROUTES = frozenset({"/v1/chat/completions", "/chat/completions"})


def nominal_model_seconds(latency: float, delta_interval: float) -> float:
    """What one agent reply costs by the server's settings: the latency, then one pause per delta.

    The server sleeps ``delta_interval`` after every streamed delta (the last one included) before
    closing the stream; agent replies all have the same number of words (the reply is a fixed
    sentence around a hash), so this is the same for every message.
    """
    sample = reply_for([{"role": "user", "content": '{"action_type": "speak"}'}])
    return latency + len(_deltas(sample)) * delta_interval


@dataclass
class TimedFakeOpenAI(FakeOpenAI):
    """The fast fake server, timing every chat completion under the participant message it answers."""

    tagged: dict[str, list[float]] = field(default_factory=dict)
    untagged: list[float] = field(default_factory=list)

    async def _dispatch(self, method: str, path: str, body: bytes, writer: asyncio.StreamWriter) -> None:
        route = path.split("?", 1)[0].rstrip("/")
        if route == "/timings":
            _respond_json(writer, 200, {"tags": self.tagged, "untagged": self.untagged})
            if "clear=1" in path:
                self.tagged, self.untagged = {}, []
            return
        if method != "POST" or route not in COMPLETION_ROUTES:
            await super()._dispatch(method, path, body, writer)
            return
        started = time.monotonic()
        await super()._dispatch(method, path, body, writer)
        elapsed = time.monotonic() - started
        tags = TAG.findall(body)
        if tags:
            self.tagged.setdefault(tags[-1].decode(), []).append(elapsed)
        else:
            self.untagged.append(elapsed)


if __name__ == "__main__":
    fake_openai.main(TimedFakeOpenAI, latency=0.3, delta_interval=0.02, description=__doc__)
