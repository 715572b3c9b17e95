"""Load stored rows into an old schema, migrate, and compare what survived with what was stored.

The database is the one the test runner made, migrated *backwards* to the old nodes and forwards
again (``MigrationExecutor``), as ``tests/benchmark/test_team_migration.py`` already did before this
harness; it works the same on SQLite and PostgreSQL. That needs every migration to have a reverse:
``migrations.RunPython(forwards, migrations.RunPython.noop)`` is enough, since the test database
holds only what the migrations seeded when it is migrated backwards. A test using this harness is
``@pytest.mark.django_db(transaction=True, serialized_rollback=True)`` and calls
``migrate_to_latest()`` in a ``finally``, so the tests after it find the schema and seed rows they
expect.

The fixture is ``dumpdata`` JSON (see ``make_fixture.py``). It is inserted with the *historical*
models of the old state (``executor.loader.project_state(nodes).apps``), never the current ones,
which describe a schema the old database does not have: foreign keys by ``<field>_id``,
many-to-many links after every row exists, ``auto_now`` fields keeping the stored times.
"""

from __future__ import annotations

import functools
import gzip
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from django.apps.registry import Apps
from django.core.exceptions import FieldDoesNotExist
from django.core.management.color import no_style
from django.db import connection, models, transaction
from django.db.migrations.executor import MigrationExecutor

Node = tuple[str, str]

FIXTURE = Path(__file__).parent / "data" / "demo_before_issue_13.json.gz"
# The latest migrations of Parley's apps at commit df40544, the code the fixture was made with.
BEFORE_ISSUE_13: list[Node] = [
    ("benchmark", "0009_episode_external_ids"),
    ("annotator", "0007_annotation_generated_by"),
    ("chat", "0005_participant_binding_and_screen_out"),
]
SHOWN_DIFFERENCES = 5  # examples a failed comparison quotes of each kind


# --- migrating ------------------------------------------------------------------------------------


def migrate(targets: list[Node]) -> Apps:
    """Migrate the database to ``targets`` (backwards or forwards) and return that state's models."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def migrate_to_latest() -> Apps:
    """Leave the database as every other test expects it: fully migrated."""
    executor = MigrationExecutor(connection)
    leaves = executor.loader.graph.leaf_nodes()
    executor.migrate(leaves)
    return executor.loader.project_state(leaves).apps


def nodes_with_other_apps(ours: list[Node]) -> list[Node]:
    """``ours`` plus the latest node of every other app (Django's, axes): those did not change."""
    named = {app for app, _ in ours}
    graph = MigrationExecutor(connection).loader.graph
    return ours + [(app, name) for app, name in graph.leaf_nodes() if app not in named]


# --- the fixture as plain data ----------------------------------------------------------------------


@functools.cache
def _fixture() -> tuple[dict[str, Any], ...]:
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as stream:
        return tuple(json.load(stream))


def fixture_labels() -> list[str]:
    """The models the fixture holds rows of (``app_label.modelname``), in file order."""
    return list(dict.fromkeys(row["model"] for row in _fixture()))


def fixture_rows(label: str) -> list[dict[str, Any]]:
    """The stored rows of one model, e.g. ``fixture_rows("benchmark.evaluation")``: ``{"pk": ..., field: value}``.

    Values are as ``dumpdata`` wrote them: a foreign key is the related row's pk (under the field's
    name, ``episode``, not ``episode_id``), a many-to-many field the list of related pks, a time an
    ISO 8601 string to the millisecond. Fresh dicts each call: change them freely.
    """
    return [{"pk": row["pk"], **row["fields"]} for row in _fixture() if row["model"] == label]


def fixture_by_pk(label: str) -> dict[Any, dict[str, Any]]:
    """``fixture_rows(label)`` keyed by pk, for following the foreign keys of other rows."""
    return {row["pk"]: row for row in fixture_rows(label)}


# --- loading into the old schema --------------------------------------------------------------------


def load_fixture(apps: Apps) -> None:
    """Replace the rows of every model in the fixture with the fixture's, using ``apps`` (the old state).

    The migrations seeded some of these tables (built-in barriers, social attributes, the default
    team); the fixture holds those rows as the old code left them, so they are deleted first.
    """
    in_order = _by_dependency([apps.get_model(label) for label in fixture_labels()])
    with transaction.atomic():
        for model in reversed(in_order):
            model._base_manager.all().delete()
        for model in in_order:
            rows = fixture_rows(model._meta.label_lower)
            with _stored_times_kept(model):
                model._base_manager.bulk_create([_instance(model, row) for row in rows])
            _link_many_to_many(model, rows)
        # On PostgreSQL new rows' ids would start at 1 again; they go on after the fixture's.
        statements = connection.ops.sequence_reset_sql(no_style(), in_order)
        with connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)


def _by_dependency(models_: list[type[models.Model]]) -> list[type[models.Model]]:
    """``models_`` ordered so that every model comes after the models its foreign keys point to."""
    ordered: list[type[models.Model]] = []
    pending = list(models_)
    while pending:
        ready = [
            model for model in pending
            if all(
                field.related_model is model or field.related_model not in pending
                for field in model._meta.concrete_fields if field.is_relation
            )
        ]
        if not ready:
            raise ValueError(f"foreign keys go round in a circle among {[m._meta.label for m in pending]}")
        ordered += ready
        pending = [model for model in pending if model not in ready]
    return ordered


def _instance(model: type[models.Model], row: dict[str, Any]) -> models.Model:
    values = {}
    for field in model._meta.concrete_fields:
        if field.primary_key:
            continue
        if field.name not in row:
            raise KeyError(f"{model._meta.label} row {row['pk']} has no {field.name!r} in the fixture")
        value = row[field.name]
        values[field.attname] = value if field.is_relation else field.to_python(value)
    return model(pk=row["pk"], **values)


class _stored_times_kept:
    """Switch off ``auto_now``/``auto_now_add`` on ``model``'s fields for a while, so inserts keep stored times."""

    def __init__(self, model: type[models.Model]) -> None:
        self.fields = [field for field in model._meta.concrete_fields
                       if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False)]
        self.saved = [(field.auto_now, field.auto_now_add) for field in self.fields]

    def __enter__(self) -> None:
        for field in self.fields:
            field.auto_now = field.auto_now_add = False

    def __exit__(self, *exc: object) -> None:
        for field, (auto_now, auto_now_add) in zip(self.fields, self.saved, strict=True):
            field.auto_now, field.auto_now_add = auto_now, auto_now_add


def _link_many_to_many(model: type[models.Model], rows: list[dict[str, Any]]) -> None:
    for field in model._meta.many_to_many:
        through = field.remote_field.through
        if not through._meta.auto_created:
            continue  # an explicit through model has rows of its own in the fixture
        source, target = f"{field.m2m_field_name()}_id", f"{field.m2m_reverse_field_name()}_id"
        through._base_manager.bulk_create(
            through(**{source: row["pk"], target: other}) for row in rows for other in row.get(field.name, [])
        )


# --- comparing ----------------------------------------------------------------------------------------


def assert_same(expected: Mapping[Any, Any], found: Mapping[Any, Any] | Iterable[tuple[Any, Any]], what: str) -> None:
    """Fail unless ``found`` has every key of ``expected`` with an equal value, and no other key.

    ``found`` may be (key, value) pairs read from the database; a key found twice fails too, so a
    key that is not unique cannot hide a row. The message counts what is missing, changed,
    unexpected and doubled and quotes a few of each, so one failure tells what happened to all rows.
    """
    doubled = []
    if not isinstance(found, Mapping):
        pairs, found = found, {}
        for key, value in pairs:
            if key in found:
                doubled.append(key)
            found[key] = value
    missing = [key for key in expected if key not in found]
    changed = [key for key in expected if key in found and found[key] != expected[key]]
    unexpected = [key for key in found if key not in expected]
    if not (missing or changed or unexpected or doubled):
        return
    lines = [f"{what}: {len(expected)} stored, {len(missing)} missing, {len(changed)} changed, "
             f"{len(unexpected)} unexpected" + (f", {len(doubled)} found twice" if doubled else "")]
    lines += [f"  missing {key!r}: {expected[key]!r}" for key in missing[:SHOWN_DIFFERENCES]]
    lines += [f"  changed {key!r}: {_difference(expected[key], found[key])}" for key in changed[:SHOWN_DIFFERENCES]]
    lines += [f"  unexpected {key!r}: {found[key]!r}" for key in unexpected[:SHOWN_DIFFERENCES]]
    lines += [f"  found twice {key!r}" for key in doubled[:SHOWN_DIFFERENCES]]
    raise AssertionError("\n".join(lines))


def _difference(stored: Any, now: Any) -> str:
    """What changed: only the differing entries when both are dicts (a row's fields, a participant's answers)."""
    if isinstance(stored, dict) and isinstance(now, dict):
        keys = [key for key in {**stored, **now} if stored.get(key, _ABSENT) != now.get(key, _ABSENT)]
        return ", ".join(f"{key}: stored {stored.get(key, _ABSENT)!r}, now {now.get(key, _ABSENT)!r}" for key in keys)
    return f"stored {stored!r}, now {now!r}"


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


_ABSENT = _Absent()


def assert_rows_unchanged(
    apps: Apps, label: str, *, ignore: Iterable[str] = (), added: Callable[[models.Model], bool] | None = None
) -> None:
    """Every stored row of ``label`` is still there under its pk with every stored field's value, and no
    other row is (but rows a migration adds on purpose, those ``added`` accepts). Fields the migration
    added are not compared; a stored field the model lost fails (the check then belongs to whoever moved it)."""
    model = apps.get_model(label)
    ignored = set(ignore)
    expected = {row["pk"]: _comparable(model, row, ignored) for row in fixture_rows(label)}
    names = sorted({name for row in expected.values() for name in row})
    many = {field.name for field in model._meta.many_to_many}
    rows = model._base_manager.all()
    if many & set(names):
        rows = rows.prefetch_related(*(many & set(names)))
    found = {}
    for instance in rows:
        if added is not None and instance.pk not in expected and added(instance):
            continue
        found[instance.pk] = {
            name: sorted(item.pk for item in getattr(instance, name).all()) if name in many
            else getattr(instance, model._meta.get_field(name).attname)
            for name in names
        }
    assert_same(expected, found, label)


def _comparable(model: type[models.Model], row: dict[str, Any], ignored: set[str]) -> dict[str, Any]:
    values = {}
    for name, value in row.items():
        if name == "pk" or name in ignored:
            continue
        try:
            field = model._meta.get_field(name)
        except FieldDoesNotExist as error:
            raise AssertionError(f"{model._meta.label} has no field {name!r} any more: check it another way") from error
        if field.many_to_many:
            values[name] = sorted(value)
        else:
            values[name] = value if field.is_relation else field.to_python(value)
    return values
