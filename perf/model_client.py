"""CPU per model call: Parley's gateway (``benchmark/agents/llm.py``, litellm inside) against a plain client.

Every simulated turn, judge question and chat reply is one call through the gateway; on a machine
playing thousands of episodes, what the client spends per call (building the request, parsing the
reply, litellm's own bookkeeping) is CPU the episodes do not get. This measures it against the
floor: the same request made with a plain ``httpx`` client and with the ``openai`` client, on the
same fake server (``perf/fake_openai.py``, in its own process, so its CPU is not counted).

Each case runs in a fresh process: a few calls to warm up, then ``--calls`` calls with
``--concurrency`` in flight on one event loop; the figure is the process's CPU time (user +
system) over the measured calls, divided by their number. Streamed calls are measured the same way
and also per chunk the server sent (one per word, then the usage chunk). The gateway is measured twice: with the
settings ``benchmark.agents.loading`` applies (``tuned``) and with litellm's defaults (``untuned``),
so the saving is printed beside the floor. On a machine shared with other work the figures move by
±20 % from one process to the next: ``--rounds`` runs every case that many times, interleaved, and
prints each case's median (with its range)::

    .venv/bin/python perf/model_client.py [--calls 2000] [--concurrency 32] [--latency 0.0] [--rounds 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL = "openai/fake-model"
MESSAGES = [
    {"role": "system", "content": "You are a tenant negotiating who pays for a broken dishwasher."},
    {"role": "user", "content": "The landlord says the dishwasher broke because of misuse. What do you say?"},
]
CASES = ("httpx", "openai", "gateway-untuned", "gateway-tuned")


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def measure(call, calls: int, concurrency: int, warm_up: int = 20) -> dict[str, float]:
    """CPU and wall time of ``calls`` awaited calls of ``call()``, ``concurrency`` at a time."""
    for _ in range(warm_up):
        await call()
    chunks = 0
    queue: asyncio.Queue[int] = asyncio.Queue()
    for number in range(calls):
        queue.put_nowait(number)

    async def slot() -> None:
        nonlocal chunks
        while not queue.empty():
            queue.get_nowait()
            received = await call()
            chunks += received

    cpu, wall = cpu_seconds(), time.monotonic()
    await asyncio.gather(*(slot() for _ in range(concurrency)))
    cpu, wall = cpu_seconds() - cpu, time.monotonic() - wall
    return {"cpu_ms_per_call": cpu * 1000 / calls, "chunks_per_call": chunks / calls, "wall_s": wall}


async def run_case(case: str, api_base: str, stream: bool, calls: int, concurrency: int) -> dict[str, float]:
    body = {"model": MODEL.split("/", 1)[1], "messages": MESSAGES, "temperature": 0.7}
    if case == "httpx":
        import httpx

        async with httpx.AsyncClient(base_url=api_base, headers={"Authorization": "Bearer k"}) as client:
            async def call() -> int:
                if not stream:
                    response = await client.post("/chat/completions", json=body)
                    response.raise_for_status()
                    return 1 if response.json()["choices"][0]["message"]["content"] is not None else 0
                count = 0
                request = {**body, "stream": True, "stream_options": {"include_usage": True}}
                async with client.stream("POST", "/chat/completions", json=request) as response:
                    async for line in response.aiter_lines():
                        if line.startswith("data: ") and line != "data: [DONE]":
                            json.loads(line[6:])
                            count += 1
                return count

            return await measure(call, calls, concurrency)
    if case == "openai":
        import openai

        client = openai.AsyncOpenAI(base_url=api_base, api_key="k", max_retries=0)

        async def call() -> int:
            if not stream:
                response = await client.chat.completions.create(**body)
                return 1 if response.choices[0].message.content is not None else 0
            count = 0
            response = await client.chat.completions.create(**body, stream=True, stream_options={"include_usage": True})
            async for _chunk in response:
                count += 1
            return count

        return await measure(call, calls, concurrency)

    os.environ.update(DJANGO_SETTINGS_MODULE="config.settings", PARLEY_LLM_API_BASE=api_base,
                      PARLEY_LLM_API_KEY="k", PARLEY_ALLOWED_MODELS="openai/")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from benchmark.agents import llm, loading

    litellm = loading.litellm()
    if case == "gateway-untuned":  # undo what loading changed: litellm as it comes, the "before"
        from litellm import cost_calculator
        from litellm.litellm_core_utils.litellm_logging import Logging
        from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper

        litellm.response_cost_calculator = cost_calculator.response_cost_calculator
        litellm.disable_streaming_logging = False
        Logging.async_success_handler = Logging.async_success_handler.__wrapped__
        Logging.success_handler = Logging.success_handler.__wrapped__
        loading.steady_stream = lambda response: response
        assemble = CustomStreamWrapper._async_build_complete_streaming_response
        CustomStreamWrapper._async_build_complete_streaming_response = getattr(assemble, "__wrapped__", assemble)

    async def call() -> int:
        if not stream:
            await llm.complete(MESSAGES, model=MODEL)
            return 1
        count = 0
        reply = await llm.stream(MESSAGES, model=MODEL)
        async for _delta in reply:
            count += 1
        return count

    return await measure(call, calls, concurrency)


def median_run(results: list[dict[str, float]]) -> dict[str, float]:
    """The run with the median CPU per call, with the lowest and highest beside it."""
    ordered = sorted(results, key=lambda result: result["cpu_ms_per_call"])
    cpu = [result["cpu_ms_per_call"] for result in ordered]
    return {**ordered[(len(ordered) - 1) // 2], "lowest": cpu[0], "highest": cpu[-1]}


def child(options: argparse.Namespace) -> None:
    result = asyncio.run(run_case(options.case, options.api_base, options.stream, options.calls, options.concurrency))
    print(json.dumps(result))


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "perf" / "fake_openai.py"), "--latency", str(latency), "--delta-interval", "0"],
        stdout=subprocess.PIPE, text=True,
    )
    line = server.stdout.readline()
    return server, line.rsplit(" ", 1)[-1].strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000, help="Measured calls per case (default: 2000).")
    parser.add_argument("--concurrency", type=int, default=32, help="Calls in flight (default: 32).")
    parser.add_argument("--latency", type=float, default=0.0, help="The fake model's latency in s (default: 0).")
    parser.add_argument("--cases", default=",".join(CASES), help=f"Which of {', '.join(CASES)} (default: all).")
    parser.add_argument("--rounds", type=int, default=1, help="Runs of every case, interleaved (default: 1).")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--api-base", help=argparse.SUPPRESS)
    parser.add_argument("--stream", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.case:
        child(options)
        return

    server, api_base = start_server(options.latency)
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "DEBUG": os.environ.get("DEBUG", "true")}
    runs: dict[tuple[str, bool], list[dict[str, float]]] = {}
    try:
        for _round in range(options.rounds):
            for stream in (False, True):
                for case in options.cases.split(","):
                    arguments = [sys.executable, __file__, "--case", case, "--api-base", api_base,
                                 "--calls", str(options.calls), "--concurrency", str(options.concurrency)]
                    output = subprocess.run(arguments + (["--stream"] if stream else []), env=env, check=True,
                                            capture_output=True, text=True).stdout
                    runs.setdefault((case, stream), []).append(json.loads(output.strip().splitlines()[-1]))
    finally:
        server.terminate()
        server.wait()
    rows = [(case, stream, median_run(results)) for (case, stream), results in runs.items()]

    print(f"CPU per model call on {os.cpu_count()} cores (load {os.getloadavg()[0]:.2f}), {options.calls} calls, "
          f"{options.concurrency} in flight, fake model latency {options.latency} s, median of {options.rounds} "
          f"round{'s' if options.rounds > 1 else ''}")
    # Per chunk: over the chunks the server sent (the plain client sees each one; litellm hands on text only).
    sent = next((r["chunks_per_call"] for c, s, r in rows if c == "httpx" and s), None)
    floor = {stream: min(r["cpu_ms_per_call"] for c, s, r in rows if s == stream and not c.startswith("gateway"))
             for stream in (False, True)}
    plain = {stream: r["cpu_ms_per_call"] for c, stream, r in rows if c == "openai"}
    for case, stream, result in rows:
        kind = "streamed" if stream else "complete"
        per_chunk = f"  {result['cpu_ms_per_call'] * 1000 / sent:6.0f} µs per chunk sent" if stream and sent else ""
        against_openai = f", {result['cpu_ms_per_call'] / plain[stream]:3.1f}× openai" if stream in plain else ""
        spread = f" [{result['lowest']:.2f}–{result['highest']:.2f}]" if options.rounds > 1 else ""
        print(f"  {kind:<9} {case:<16} {result['cpu_ms_per_call']:7.2f} ms/call{spread} "
              f"({result['cpu_ms_per_call'] / floor[stream]:4.1f}× the floor{against_openai}){per_chunk}")
    tuned = next((r["cpu_ms_per_call"] for c, s, r in rows if c == "gateway-tuned" and s), None)
    if tuned is not None and True in plain:
        ratio = tuned / plain[True]
        print(f"goal: the gateway's CPU per streamed reply at most 3× the openai client's: {ratio:.1f}× "
              f"({'met' if ratio <= 3 else 'missed'})")


if __name__ == "__main__":
    main()
