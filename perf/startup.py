"""How long Parley's processes take to start: ``manage.py help``, a task consumer, the web application.

The goal (issue 23) is under 1.5 s for ``manage.py help`` and for a consumer to be ready when no
model is configured: scipy, pandas, matplotlib and litellm are imported only where they are used.
A consumer of a deployment that may call a model imports litellm before it starts its workers
(``benchmark/management/commands/run_huey.py``), and a web server before it listens
(``config.asgi``), each rehearsing one call (``benchmark.agents.loading.start``); those starts are
timed too (``--with-model``), and so is the goal of issue 27: a fresh server process's first model
call returns within 1 s of the model's own time. A fresh process imports the web application as
daphne does, then makes a streamed call through the gateway to a fake model (``perf/fake_openai.py``)
that answers after ``--model-latency`` seconds; the figure is that call's time beyond the latency,
next to the process's second call.

"Ready" for a consumer is the moment its workers are started and it handles signals (Huey logs the
task list, then installs its SIGTERM handler last, which /proc shows), measured from the spawn.
Each figure is the median of ``--repeat`` runs (default 5), with the fastest and slowest::

    .venv/bin/python perf/startup.py [--repeat 5] [--with-model]

Every consumer gets a scratch ``PARLEY_VAR_DIR`` and its own SQLite queue there; the application
database is the one the environment names (``DATABASE_URL``, or the embedded default), which a
consumer does not touch before its first task.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
READY_LINE = "The following commands are available"
GOAL = 1.5


def catches(pid: int, signum: int) -> bool:
    """Whether process ``pid`` has a handler for ``signum`` (Linux: the SigCgt mask in /proc)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next((int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigCgt:")), 0)
    return bool(mask & (1 << (signum - 1)))


def base_env(var_dir: Path, extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DEBUG=env.get("DEBUG", "true"),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        PARLEY_VAR_DIR=str(var_dir),
        PARLEY_TASKS="sqlite",
        PARLEY_TASKS_IMMEDIATE="false",
        PARLEY_TASKS_FILE=str(var_dir / "tasks.sqlite3"),
        PARLEY_AGENT_MODEL="",
        PARLEY_PARTNER_MODEL="",
        PARLEY_JUDGE_MODEL="",
        PARLEY_NEUTRALIZER_MODEL="",
        PARLEY_ALLOWED_MODELS="",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def time_command(arguments: list[str], env: dict[str, str]) -> float:
    started = time.monotonic()
    subprocess.run(arguments, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - started


def time_consumer(env: dict[str, str], workers: int, worker_type: str, log_path: Path) -> float:
    """Seconds from spawning ``manage.py run_huey`` to its being ready; then stops it with SIGINT."""
    arguments = [PYTHON, "manage.py", "run_huey", "--workers", str(workers), "--worker-type", worker_type]
    with log_path.open("wb") as log:
        started = time.monotonic()
        process = subprocess.Popen(arguments, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        while READY_LINE not in log_path.read_text(errors="replace") or not catches(process.pid, signal.SIGTERM):
            if process.poll() is not None:
                raise SystemExit(f"the consumer exited with {process.returncode}:\n{log_path.read_text()}")
            if time.monotonic() - started > 120:
                raise SystemExit(f"the consumer was not ready after 120 s:\n{log_path.read_text()}")
            time.sleep(0.005)
        return time.monotonic() - started
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(60)


def first_call_child() -> None:
    """In a fresh process: start as the web server does, then time its first two streamed model calls."""
    sys.path.insert(0, str(ROOT))
    started = time.monotonic()
    import config.asgi  # noqa: F401  (what daphne imports before it listens)

    ready = time.monotonic() - started
    from benchmark.agents import llm

    async def call() -> float:
        began = time.monotonic()
        reply = await llm.stream([{"role": "user", "content": "Who pays for the broken dishwasher?"}],
                                 model="openai/fake-model")
        async for _delta in reply:
            pass
        return time.monotonic() - began

    async def calls() -> list[float]:
        return [await call(), await call()]

    first, second = asyncio.run(calls())
    print(json.dumps({"ready": ready, "first": first, "second": second}))


def time_first_call(env: dict[str, str], latency: float) -> dict[str, float]:
    """A fresh web-server process's start and first two model calls against a fake model of ``latency`` s."""
    model = subprocess.Popen([PYTHON, str(ROOT / "perf" / "fake_openai.py"), "--latency", str(latency)],
                             cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        api_base = model.stdout.readline().rsplit(" ", 1)[-1].strip()
        child_env = {**env, "PARLEY_AGENT_MODEL": "openai/fake-model", "PARLEY_LLM_API_BASE": api_base,
                     "PARLEY_LLM_API_KEY": "k"}
        output = subprocess.run([PYTHON, __file__, "--first-call"], cwd=ROOT, env=child_env, check=True,
                                capture_output=True, text=True).stdout
        return json.loads(output.strip().splitlines()[-1])
    finally:
        model.terminate()
        model.wait()


def summary(label: str, times: list[float], goal: float | None = GOAL) -> str:
    met = "met" if statistics.median(times) < (goal or 0) else "MISSED"
    verdict = "" if goal is None else f"  (goal < {goal:.1f} s: {met})"
    return f"{label:<52} median {statistics.median(times):5.2f} s  [{min(times):.2f}–{max(times):.2f}]{verdict}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="Runs of each measurement (default: 5).")
    parser.add_argument("--with-model", action="store_true",
                        help="Also time the processes of a deployment that may call a model (imports litellm), "
                             "and a fresh web server's first model call.")
    parser.add_argument("--model-latency", type=float, default=0.5,
                        help="The fake model's own time for --with-model's first call, in s (default: 0.5).")
    parser.add_argument("--first-call", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.first_call:
        first_call_child()
        return

    with tempfile.TemporaryDirectory(prefix="parley-startup-") as scratch:
        var_dir = Path(scratch)
        env = base_env(var_dir, {})
        time_command([PYTHON, "manage.py", "help"], env)  # a first run writes the dev key and warms the disk cache
        lines = [f"Start-up of Parley's processes on {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, "
                 f"{options.repeat} runs each"]
        lines.append(summary("manage.py help", [time_command([PYTHON, "manage.py", "help"], env)
                                                for _ in range(options.repeat)]))
        lines.append(summary("web application (import config.asgi)",
                             [time_command([PYTHON, "-c", "import config.asgi"], env) for _ in range(options.repeat)],
                             goal=None))
        for workers, kind in ((2, "thread"), (2, "process")):
            times = [time_consumer(env, workers, kind, var_dir / "consumer.log") for _ in range(options.repeat)]
            lines.append(summary(f"consumer ready, {workers} {kind} workers, no model", times))
        if options.with_model:
            model_env = base_env(var_dir, {"PARLEY_AGENT_MODEL": "openai/gpt-4o-mini"})
            times = [time_consumer(model_env, 2, "process", var_dir / "consumer.log") for _ in range(options.repeat)]
            lines.append(summary("consumer ready, 2 process workers, a model (litellm)", times, goal=None))
            times = [time_command([PYTHON, "-c", "import config.asgi"], model_env) for _ in range(options.repeat)]
            lines.append(summary("web application, a model (litellm, a rehearsed call)", times, goal=None))
            runs = [time_first_call(base_env(var_dir, {}), options.model_latency) for _ in range(options.repeat)]
            beyond = [run["first"] - options.model_latency for run in runs]
            lines.append(summary(f"web server's first model call beyond the model's {options.model_latency} s",
                                 beyond, goal=1.0))
            lines.append(summary("  its second call, for comparison",
                                 [run["second"] - options.model_latency for run in runs], goal=None))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
