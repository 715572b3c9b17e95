"""Shared worlds: the demo built once per test session, then laid into the test database per module.

Building the demo (``load_demo`` and the commands after it) costs seconds per run; the tests that read
it do not need their own. A world is built once, in a transaction that is rolled back, and what it
added is kept as rows in memory (PostgreSQL's ``COPY`` text, SQLite's tuples). A module that needs it
asks for a fixture that opens a transaction, inserts those rows (same primary keys, so the same world
each time) and rolls it back after the module's last test; each test runs in a savepoint inside it, as
pytest-django's ``django_db`` always does, so whatever a test changes is gone before the next one.

A test that needs ``transaction=True`` (a live server, threads) cannot see a world this way: its
commits would escape the module's transaction. It builds its own.

The stages and what they run (the recorded output of each command is kept with the rows):

- ``demo-episodes``: ``load_demo --skip-accounts``, the episodes with no accounts;
- ``demo``: ``load_demo --base-url https://parley.example.org/``, with the demo accounts;
- ``demo-studies``: ``demo`` then ``load_demo_studies --base-url http://parley.test/``, the studies with
  their generated ratings;
- ``make-demo``: ``demo-studies`` then ``load_demo_chat --base-url http://127.0.0.1:8000``, all that
  ``make demo`` loads before serving (the base URL changes what is printed, not what is stored).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from io import StringIO

import pytest
from django.apps import apps
from django.core.management import call_command
from django.core.management.color import no_style
from django.db import connection, transaction

BASE_URL = "http://127.0.0.1:8000"

STAGES: dict[str, tuple[str | None, list[tuple[str, ...]]]] = {
    # name: (the stage it starts from, the commands it runs)
    "demo-episodes": (None, [("load_demo", "--skip-accounts")]),
    "demo": (None, [("load_demo", "--base-url", "https://parley.example.org/")]),
    "demo-studies": ("demo", [("load_demo_studies", "--base-url", "http://parley.test/")]),
    "make-demo": ("demo-studies", [("load_demo_chat", "--base-url", BASE_URL)]),
}


@dataclass
class World:
    """The rows a stage added (or changed), table by table in an order that inserts what rows point at
    first, and what its commands printed, by command."""

    name: str
    rows: dict[str, list] = field(default_factory=dict)
    output: dict[str, str] = field(default_factory=dict)
    gone: dict[str, list] = field(default_factory=dict)  # primary keys of rows the build changed or deleted
    sequences: dict[str, tuple] = field(default_factory=dict)  # where the id sequences stood after the build


def tables() -> list[tuple[str, str, type]]:
    """(table, primary key column, model) of every model, each table after the tables it refers to."""
    models = {model._meta.db_table: model for model in apps.get_models(include_auto_created=True)
              if model._meta.managed and not model._meta.proxy}
    ordered: list[str] = []
    visiting: set[str] = set()

    def visit(table: str) -> None:
        if table in ordered or table in visiting:
            return
        visiting.add(table)
        for field_ in models[table]._meta.concrete_fields:
            target = field_.related_model
            if field_.is_relation and target is not None and target._meta.db_table in models:
                visit(target._meta.db_table)
        visiting.discard(table)
        ordered.append(table)

    for table in sorted(models):
        visit(table)
    return [(table, models[table]._meta.pk.column, models[table]) for table in ordered]


def read_rows(table: str) -> list:
    """Every row of ``table`` as the database gives it back unchanged: COPY text lines or tuples."""
    quoted = connection.ops.quote_name(table)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {quoted} TO STDOUT") as copy:
                text = b"".join(bytes(chunk) for chunk in copy)
            return text.splitlines(keepends=True)
        cursor.execute(f"SELECT * FROM {quoted}")
        return cursor.fetchall()


def snapshot() -> dict[str, list]:
    return {table: read_rows(table) for table, _, _ in tables()}


def difference(before: dict[str, list], after: dict[str, list]) -> tuple[dict[str, list], dict[str, list]]:
    """What building a world did to the tables: the rows ``after`` has that ``before`` lacked (new rows
    and the new versions of changed ones), and the primary keys of the rows ``before`` had that
    ``after`` lacks (changed or deleted: laying the world deletes them first)."""
    rows, gone = {}, {}
    for table, pk, _ in tables():
        old, new = before[table], after[table]
        if old == new:
            continue
        present, kept = set(old), set(new)
        if fresh := [row for row in new if row not in present]:
            rows[table] = fresh
        if stale := [row for row in old if row not in kept]:
            index = columns(table).index(pk)
            gone[table] = [row.rstrip(b"\n").split(b"\t")[index].decode() if isinstance(row, bytes) else row[index]
                           for row in stale]
    return rows, gone


def columns(table: str) -> list[str]:
    """The table's columns in the order ``SELECT *`` and ``COPY`` give them."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)} WHERE 1 = 0")
        return [column[0] for column in cursor.description]


def restart_sequences() -> None:
    """Move each table's id sequence back to just past its highest row, as on a fresh database, so a
    world gets the primary keys ``make demo`` gives on one, whatever ran before it (the demo studies'
    claim orders hash the primary keys). PostgreSQL's sequences ignore rollbacks; SQLite's follow them."""
    with connection.cursor() as cursor:
        for statement in connection.ops.sequence_reset_sql(no_style(), [model for _, _, model in tables()]):
            cursor.execute(statement)


def sequences() -> dict[str, tuple]:
    """Where each table's id sequence stands (rows a build made and deleted leave gaps past its highest
    row), to carry on from exactly there when a world is built on a laid one."""
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            cursor.execute("SELECT name, seq FROM sqlite_sequence")
            return {name: (seq,) for name, seq in cursor.fetchall()}
        found = {}
        for table, pk, model in tables():
            if model._meta.pk.get_internal_type() not in ("AutoField", "BigAutoField", "SmallAutoField"):
                continue
            cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [connection.ops.quote_name(table), pk])
            if name := cursor.fetchone()[0]:
                cursor.execute(f"SELECT last_value, is_called FROM {name}")
                found[name] = cursor.fetchone()
        return found


def set_sequences(positions: dict[str, tuple]) -> None:
    with connection.cursor() as cursor:
        for name, position in positions.items():
            if connection.vendor == "postgresql":
                cursor.execute("SELECT setval(%s, %s, %s)", [name, *position])
            else:
                cursor.execute("DELETE FROM sqlite_sequence WHERE name = %s", [name])
                cursor.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (%s, %s)", [name, *position])


def lay(world: World) -> None:
    """Insert the world's rows (in an open transaction) and move the sequences past them; the rows its
    build changed or deleted go first."""
    pks = {table: pk for table, pk, _ in tables()}
    with connection.cursor() as cursor:
        for table, gone in reversed(world.gone.items()):
            cursor.execute(f"DELETE FROM {connection.ops.quote_name(table)} "
                           f"WHERE {connection.ops.quote_name(pks[table])} IN ({', '.join(['%s'] * len(gone))})", gone)
        for table, rows in world.rows.items():
            quoted = connection.ops.quote_name(table)
            if connection.vendor == "postgresql":
                with cursor.cursor.copy(f"COPY {quoted} FROM STDIN") as copy:
                    copy.write(b"".join(rows))
            else:
                marks = ", ".join(["%s"] * len(rows[0]))
                cursor.executemany(f"INSERT INTO {quoted} VALUES ({marks})", rows)
        models = [model for table, _, model in tables() if table in world.rows]
        for statement in connection.ops.sequence_reset_sql(no_style(), models):
            cursor.execute(statement)


class Worlds:
    """The session's worlds, each built the first time a module asks for it."""

    def __init__(self, blocker) -> None:
        self.blocker = blocker
        self.built: dict[str, World] = {}
        self.seconds: dict[str, float] = {}  # building each world, and laying them all

    def get(self, name: str) -> World:
        if name not in self.built:
            started = time.perf_counter()
            self.build(name)
            self.seconds[f"build {name}"] = time.perf_counter() - started
        return self.built[name]

    def lay(self, name: str) -> World:
        """Lay the world ``name`` inside the test's own transaction (a test in a module that needs no
        world otherwise); call it first, before the test makes rows of its own."""
        world = self.get(name)
        started = time.perf_counter()
        lay(world)
        self.seconds["lay"] = self.seconds.get("lay", 0.0) + time.perf_counter() - started
        return world

    def build(self, name: str) -> None:
        chain = []  # the stages to run, from the nearest one already built (laid first) on
        stage: str | None = name
        while stage is not None and stage not in self.built:
            chain.insert(0, stage)
            stage = STAGES[stage][0]
        with self.blocker.unblock(), transaction.atomic():
            restart_sequences()
            empty = snapshot()
            output: dict[str, str] = {}
            if stage is not None:  # as if its build had just run: the same rows, the sequences where it left them
                lay(self.built[stage])
                set_sequences(self.built[stage].sequences)
                output.update(self.built[stage].output)
            for stage in chain:
                for command, *args in STAGES[stage][1]:
                    out = StringIO()
                    call_command(command, *args, stdout=out)
                    output[command] = out.getvalue()
                if stage not in self.built:
                    rows, gone = difference(empty, snapshot())
                    self.built[stage] = World(stage, rows, dict(output), gone, sequences())
            transaction.set_rollback(True)


SESSION: list[Worlds] = []


@pytest.fixture(scope="session")
def worlds(django_db_setup, django_db_blocker) -> Worlds:
    SESSION.append(Worlds(django_db_blocker))
    return SESSION[0]


def pytest_terminal_summary(terminalreporter) -> None:
    """How long the shared worlds took to build and lay, so a slow world shows."""
    if SESSION and SESSION[0].seconds:
        times = ", ".join(f"{what} {seconds:.1f}s" for what, seconds in SESSION[0].seconds.items())
        terminalreporter.write_line(f"shared worlds: {times}")


@contextmanager
def laid(world: World, blocker) -> Iterator[World]:
    """The world in the test database until the block ends, in a transaction then rolled back."""
    with blocker.unblock():
        atomic = transaction.atomic()
        atomic.__enter__()
        try:
            lay(world)
        except BaseException:
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)
            raise
    try:
        yield world
    finally:
        with blocker.unblock():
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)


def world_fixture(name: str):
    """A module-scoped fixture that lays the world ``name`` for a module's tests."""

    @pytest.fixture(scope="module")
    def fixture(worlds, django_db_blocker) -> Iterator[World]:
        world = worlds.get(name)
        started = time.perf_counter()
        with laid(world, django_db_blocker):
            worlds.seconds["lay"] = worlds.seconds.get("lay", 0.0) + time.perf_counter() - started
            yield world

    fixture.__doc__ = f"The {name!r} world, laid once for the module; each test's changes roll back."
    return fixture


demo_episodes_world = world_fixture("demo-episodes")
demo_world = world_fixture("demo")
demo_studies_world = world_fixture("demo-studies")
make_demo_world = world_fixture("make-demo")
