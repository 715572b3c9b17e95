"""Real Huey consumers in their own processes, against the test session's database and a real queue.

Most tests run tasks inline (``PARLEY_TASKS_IMMEDIATE=true``, Huey's in-memory storage). A test of
the queue itself needs what production has: a consumer started as ``manage.py run_huey`` in another
process, reading a queue in SQLite, PostgreSQL or Redis, and writing to the same database the test
reads. This module gives such tests three things:

- the ``queue`` fixture: a fresh queue of one kind (the test runs once per kind this machine has:
  SQLite always, PostgreSQL when the test database is PostgreSQL, Redis when ``REDIS_URL`` is set),
  under a name no other test uses. While the test runs, the test process's own ``HUEY`` puts tasks
  on that queue instead of running them inline, so ``benchmark.jobs.enqueue`` works as on a page;
- the ``consumers`` fixture: ``consumers.start(workers=2, worker_type="thread", periodic=False)``
  starts a consumer on that queue with its own ``PARLEY_VAR_DIR`` (as on another machine), against
  the test database; ``stop()`` (SIGINT: finish what runs, then exit) or ``kill()`` (SIGKILL to its
  whole process group: a machine that died). Every consumer left is stopped at the end of the test
  and its log printed, which pytest shows when the test failed;
- :func:`wait_for`, which polls a condition (a job row finished, a count reached).

A consumer reads only committed rows, so these tests are transactional::

    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_consumer_runs_a_queued_job(queue, consumers, tmp_path):
        consumers.start()
        job = enqueue(queue_tasks.note, str(tmp_path / "notes.txt"), "hello", team=None, label="a note")
        wait_for(lambda: Job.objects.get(pk=job.pk).done, "the job to finish", consumers)

Tasks that exist only for tests live in ``tests/queue_tasks.py``; a consumer started here imports
that module before it starts, as ``manage.py run_huey`` imports each app's ``tasks`` module.
Run as a module (``python -m tests.consumers MODULE... -- run_huey ARGS``), this file is that
consumer's entry point.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

BASE_DIR = Path(__file__).resolve().parent.parent
TEST_TASK_MODULES = ("tests.queue_tasks",)
START_TIMEOUT = 60  # seconds for a consumer to log that it started (2 shared cores, a cold import)
STOP_TIMEOUT = 30  # seconds for a consumer to finish its tasks and exit after SIGINT
READY_LINE = "The following commands are available"  # Huey logs it as the workers start


def available_kinds() -> list[str]:
    """The queue kinds this test session can reach: SQLite always, PostgreSQL when the test database is
    PostgreSQL (the queue's tables go in it), Redis when ``REDIS_URL`` is set. CI has all three.

    Read from the environment as settings read it, so the fixture's parameters are known at collection.
    """
    kinds = ["sqlite"]
    if os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        kinds.append("postgres")
    if os.environ.get("REDIS_URL"):
        kinds.append("redis")
    return kinds


def database_url() -> str:
    """The test session's database as a ``DATABASE_URL`` (the test database's name, not the main one)."""
    from django.db import connection

    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    credentials = quote(db["USER"] or "", safe="")
    if db.get("PASSWORD"):
        credentials += ":" + quote(db["PASSWORD"], safe="")
    host = db.get("HOST") or "127.0.0.1"
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"postgres://{credentials}@{host}{port}/{db['NAME']}"


@dataclass
class Queue:
    """One real queue for one test: its kind, its name, and where it lives."""

    kind: str
    name: str
    location: str  # the SQLite file, the PostgreSQL DSN or the Redis URL

    @property
    def env(self) -> dict[str, str]:
        """The settings a consumer (or a web process) needs to use this queue."""
        env = {"PARLEY_TASKS": self.kind, "PARLEY_TASKS_NAME": self.name, "PARLEY_TASKS_IMMEDIATE": "false"}
        env["PARLEY_TASKS_FILE" if self.kind == "sqlite" else "PARLEY_TASKS_URL"] = self.location
        return env

    def storage(self) -> Any:
        from huey.storage import PostgresStorage, PriorityRedisStorage, SqliteStorage

        if self.kind == "sqlite":
            return SqliteStorage(self.name, filename=self.location, timeout=20)
        if self.kind == "postgres":
            return PostgresStorage(self.name, dsn=self.location, create_tables=True)
        return PriorityRedisStorage(self.name, url=self.location)


def make_queue(kind: str, directory: Path) -> Queue:
    """A queue of ``kind`` named for this test alone (its SQLite file under ``directory``)."""
    name = f"parley-test-{uuid.uuid4().hex[:10]}"
    if kind == "sqlite":
        location = str(directory / "tasks.sqlite3")
    elif kind == "postgres":
        location = database_url()
    elif kind == "redis":
        location = os.environ["REDIS_URL"]
    else:
        raise ValueError(f"unknown queue kind {kind!r}")
    return Queue(kind=kind, name=name, location=location)


@contextmanager
def real_queue(queue: Queue) -> Iterator[Any]:
    """Make the test process's ``HUEY`` put tasks on ``queue`` (not run them inline) while inside.

    Yields the storage, e.g. to count what waits (``storage.queue_size()``). On leaving, the queue is
    emptied and the inline, in-memory mode the other tests use comes back.
    """
    from huey.contrib.djhuey import HUEY

    saved = HUEY._immediate, HUEY.storage
    storage = queue.storage()
    HUEY._immediate = False  # the attribute, not the property: its setter would build the settings' storage
    HUEY.storage = storage
    try:
        yield storage
    finally:
        HUEY._immediate, HUEY.storage = saved
        try:
            storage.flush_all()
        finally:
            storage.close()


@dataclass
class Consumer:
    """One ``run_huey`` process (with its workers) started by :class:`Consumers`."""

    process: subprocess.Popen
    log_path: Path
    var_dir: Path
    name: str
    started_at: float = field(default_factory=time.monotonic)

    @property
    def pid(self) -> int:
        return self.process.pid

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def running(self) -> bool:
        return self.process.poll() is None

    def wait_ready(self, timeout: float = START_TIMEOUT) -> float:
        """Wait until the consumer has started its workers and handles signals (Huey's ``start()`` is
        done: its last step installs the handlers of SIGTERM, SIGINT and SIGHUP, in that order); returns the
        seconds since it was spawned. A SIGINT before its handler would interrupt the start itself, not stop a
        consumer; every Python process catches SIGINT from the start, so the last one, SIGHUP's, tells."""
        deadline = time.monotonic() + timeout
        while READY_LINE not in self.log() or not catches(self.pid, signal.SIGHUP):
            if not self.running():
                raise AssertionError(f"consumer {self.name} exited with {self.process.returncode}:\n{self.log()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"consumer {self.name} not started after {timeout} s:\n{self.log()}")
            time.sleep(0.02)
        return time.monotonic() - self.started_at

    def stop(self, timeout: float = STOP_TIMEOUT) -> int:
        """Stop as an operator's Ctrl-C does (SIGINT: running tasks finish first); returns the exit status."""
        if self.running():
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired as error:
                self.kill()
                message = f"consumer {self.name} still running {timeout} s after SIGINT:\n{self.log()}"
                raise AssertionError(message) from error
        return self.process.returncode

    def kill(self) -> None:
        """SIGKILL the consumer and its workers at once, as when its machine dies."""
        if self.running():
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait(STOP_TIMEOUT)


def catches(pid: int, signum: int) -> bool:
    """Whether process ``pid`` has a handler for ``signum`` (Linux: the SigCgt mask in /proc)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next((int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigCgt:")), 0)
    return bool(mask & (1 << (signum - 1)))


class Consumers:
    """Starts consumers on one queue against the test database; stops them all at the end of the test."""

    def __init__(self, queue: Queue, directory: Path) -> None:
        self.queue = queue
        self.directory = directory
        self.started: list[Consumer] = []

    def env(self, var_dir: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
        """The environment of a consumer: the test's database and queue, its own var directory."""
        from django.conf import settings

        env = dict(os.environ)
        env.update(
            DJANGO_SETTINGS_MODULE="config.settings",
            DATABASE_URL=database_url(),
            PARLEY_VAR_DIR=str(var_dir),
            SECRET_KEY=settings.SECRET_KEY,
            DEBUG="true",
            PYTHONUNBUFFERED="1",
            **self.queue.env,
        )
        env.update(extra or {})
        return env

    def start(
        self,
        workers: int = 2,
        worker_type: str = "thread",
        periodic: bool = False,
        env: dict[str, str] | None = None,
        wait: bool = True,
    ) -> Consumer:
        """Start ``manage.py run_huey`` with ``workers`` workers of ``worker_type`` (thread or process).

        Only one consumer of a deployment runs periodic tasks, so they are off unless asked for.
        """
        number = len(self.started) + 1
        name = f"consumer-{number}"
        var_dir = self.directory / name
        var_dir.mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable, "-m", "tests.consumers", *TEST_TASK_MODULES, "--",
            "run_huey", "--workers", str(workers), "--worker-type", worker_type,
        ]
        if not periodic:
            command.append("--no-periodic")
        extra = {"PARLEY_TASK_WORKERS": str(workers), "PARLEY_TASK_WORKER_TYPE": worker_type, **(env or {})}
        log_path = self.directory / f"{name}.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                command, cwd=BASE_DIR, env=self.env(var_dir, extra), stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
        consumer = Consumer(process=process, log_path=log_path, var_dir=var_dir, name=name)
        self.started.append(consumer)
        if wait:
            consumer.wait_ready()
        return consumer

    def logs(self) -> str:
        return "\n".join(f"----- {c.name} (pid {c.pid}) -----\n{c.log()}" for c in self.started)

    def close(self) -> None:
        for consumer in self.started:
            try:
                consumer.stop()
            except AssertionError as error:
                print(error)
        print(self.logs())  # shown by pytest when the test failed


def wait_for(
    condition: Callable[[], Any], what: str, consumers: Consumers | None = None, timeout: float = 60
) -> Any:
    """Poll ``condition`` until it returns something true, and return that; fail naming ``what``
    (with the consumers' logs) after ``timeout`` seconds. Database reads in ``condition`` see the
    consumers' commits: these tests are transactional."""
    deadline = time.monotonic() + timeout
    while True:
        if value := condition():
            return value
        if time.monotonic() > deadline:
            logs = f"\n{consumers.logs()}" if consumers is not None else ""
            raise AssertionError(f"timed out after {timeout} s waiting for {what}{logs}")
        if consumers is not None:
            dead = [c for c in consumers.started if not c.running() and c.process.returncode not in (0, -9)]
            if dead:
                raise AssertionError(f"{dead[0].name} exited with {dead[0].process.returncode} while waiting for "
                                     f"{what}\n{consumers.logs()}")
        time.sleep(0.05)


@pytest.fixture(params=available_kinds())
def queue(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Queue]:
    """A fresh real queue of each kind this session can reach; the test process enqueues onto it."""
    made = make_queue(request.param, tmp_path)
    with real_queue(made):
        yield made


@pytest.fixture
def consumers(queue: Queue, tmp_path: Path) -> Iterator[Consumers]:
    """Start consumers on ``queue`` with ``consumers.start(...)``; all are stopped when the test ends."""
    started = Consumers(queue, tmp_path)
    try:
        yield started
    finally:
        started.close()


def main(argv: list[str]) -> None:
    """A consumer that knows the tests' tasks: ``MODULE... -- COMMAND ARGS`` imports the modules, then
    runs ``manage.py COMMAND ARGS``."""
    import importlib

    import django
    from django.core.management import execute_from_command_line

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    at = argv.index("--") if "--" in argv else 0
    modules, command = argv[:at], argv[at + 1 :] if "--" in argv else argv
    django.setup()
    for module in modules:
        importlib.import_module(module)
    execute_from_command_line(["manage.py", *command])


if __name__ == "__main__":
    main(sys.argv[1:])
