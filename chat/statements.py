"""The chat's hottest statements, compiled to SQL once per process and then only run with new values.

Django builds and compiles a queryset's SQL anew every time one runs, and for the few small statements a
chat message costs, that was most of a database call's CPU (under load, 60 % of the time in the chat's
database calls went to building and compiling queries, 12 % to psycopg sending them and reading rows).
A statement here is written as an ordinary queryset whose varying values are :class:`Param` slots:

    TRANSCRIPT = Select(lambda: Turn.objects.filter(episode_id=Param("episode")).order_by("index"))
    turns = TRANSCRIPT.fetch(episode=episode_pk)          # Turn instances, as iterating the queryset gives

    SEEN = Update(lambda: Participant.objects.filter(pk=Param("participant")), last_seen_at=Param("now", DATETIME))
    SEEN.run(participant=pk, now=now)                     # rows updated, as ``QuerySet.update`` returns

The first run on a database compiles the queryset as Django would run it; later runs fill the slots and send
the same SQL. The builder runs only to compile, so everything that varies between runs must be a slot: a
``timezone.now()`` written into it would stay the first run's. A slot's value is prepared for the database by
its field (a :class:`DateTimeField` slot turns an aware datetime into what SQLite stores), as Django prepares
a value compared with or assigned to that field. Rows come back as the queryset's own iteration makes them
(model instances, with ``select_related`` objects and annotations, or ``values()`` dicts), so a statement
can replace a queryset where it stands; the tests check that both give the same rows and SQL.

An :class:`Insert` stores one row as ``Model.objects.create`` does (without its signals). What is not
supported is refused when the statement is compiled: ``prefetch_related`` (fetch the related rows with a
statement of their own and hand them to :func:`prefetched`) and ``values_list``. Statements go through
Django's cursors, so query counting, ``execute_wrappers`` and transactions see them as any other statement.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import connections, router, transaction
from django.db.models import DateTimeField, Expression, Field, Model, QuerySet
from django.db.models.query import ModelIterable, ValuesIterable, get_related_populators
from django.db.models.sql import InsertQuery, UpdateQuery

DATETIME = DateTimeField()


class Param(Expression):
    """A value each run of a statement passes by ``name``; ``output_field`` prepares it for the database
    (none needed for integers and text)."""

    def __init__(self, name: str, output_field: Field | None = None) -> None:
        super().__init__(output_field=output_field or Field())
        self.name = name

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        return "%s", [_Slot(self.name, self.output_field)]


@dataclass(frozen=True)
class _Slot:
    """Where a :class:`Param`'s value goes in a compiled statement's parameters."""

    name: str
    field: Field

    def value(self, values: dict[str, Any], connection: Any) -> Any:
        return self.field.get_db_prep_value(values[self.name], connection, prepared=False)


@dataclass(frozen=True)
class _Compiled:
    sql: str
    params: tuple[Any, ...]  # values, and a :class:`_Slot` where a run's value goes
    result: Callable[[Any], Any]  # the cursor, once the statement ran → what the run returns

    @property
    def names(self) -> frozenset[str]:
        return frozenset(p.name for p in self.params if type(p) is _Slot)


class _Statement:
    def __init__(self, build: Callable[[], QuerySet]) -> None:
        self.build = build
        self._alias: str | None = None
        self._compiled: dict[tuple[str, str], tuple[_Compiled, frozenset[str]]] = {}  # by (database alias, vendor)

    @property
    def alias(self) -> str:
        """The database the queryset would run on (for writing, when it locks or updates)."""
        if self._alias is None:
            self._alias = self.build().db
        return self._alias

    def _run(self, values: dict[str, Any]) -> Any:
        connection = connections[self.alias]
        key = (connection.alias, connection.vendor)
        if key not in self._compiled:
            compiled = self._compile(connection)
            self._compiled[key] = compiled, compiled.names
        compiled, names = self._compiled[key]
        if values.keys() != names:
            raise TypeError(f"This statement takes {sorted(names)}, not {sorted(values)}.")
        params = [p.value(values, connection) if type(p) is _Slot else p for p in compiled.params]
        with connection.cursor() as cursor:
            cursor.execute(compiled.sql, params)
            return compiled.result(cursor)

    def _compile(self, connection: Any) -> _Compiled:
        raise NotImplementedError


class Select(_Statement):
    """A SELECT: :meth:`fetch` returns its rows as iterating the queryset would."""

    def fetch(self, **values: Any) -> list[Any]:
        return self._run(values)

    def _compile(self, connection: Any) -> _Compiled:
        queryset = self.build()
        if queryset._prefetch_related_lookups:
            raise ValueError("A compiled statement cannot prefetch: fetch the related rows and use prefetched().")
        query = queryset.query
        compiler = query.get_compiler(connection=connection)
        sql, params = compiler.as_sql()
        if queryset._iterable_class is ModelIterable:
            result = _model_rows(compiler, connection.alias)
        elif queryset._iterable_class is ValuesIterable:
            names = list(query.selected) if query.selected else [
                *query.extra_select, *query.values_select, *query.annotation_select
            ]
            result = _values_rows(compiler, names)
        else:
            raise ValueError("A compiled statement gives model instances or values() dicts only.")
        return _Compiled(sql, tuple(params), result)


def _model_rows(compiler: Any, alias: str) -> Callable[[Any], list[Any]]:
    """Model instances from rows, as ``ModelIterable`` makes them (``select_related`` and annotations too)."""
    select, klass_info, annotation_col_map = compiler.select, compiler.klass_info, compiler.annotation_col_map
    model = klass_info["model"]
    start, end = klass_info["select_fields"][0], klass_info["select_fields"][-1] + 1
    init_list = [column[0].target.attname for column in select[start:end]]
    populators = get_related_populators(klass_info, select, alias)

    def rows(cursor: Any) -> list[Any]:
        objects = []
        for row in compiler.results_iter([cursor.fetchall()]):
            obj = model.from_db(alias, init_list, row[start:end])
            for populator in populators:
                populator.populate(row, obj)
            for name, position in annotation_col_map.items():
                setattr(obj, name, row[position])
            objects.append(obj)
        return objects

    return rows


def _values_rows(compiler: Any, names: list[str]) -> Callable[[Any], list[Any]]:
    def rows(cursor: Any) -> list[Any]:
        return [dict(zip(names, row, strict=False)) for row in compiler.results_iter([cursor.fetchall()])]

    return rows


class Update(_Statement):
    """An UPDATE of the queryset's rows, setting ``assignments`` (values or :class:`Param` slots): :meth:`run`
    returns the number of rows updated, as ``QuerySet.update`` does."""

    def __init__(self, build: Callable[[], QuerySet], **assignments: Any) -> None:
        super().__init__(build)
        self.assignments = assignments

    def run(self, **values: Any) -> int:
        with transaction.mark_for_rollback_on_error(using=self.alias):
            return self._run(values)

    def _compile(self, connection: Any) -> _Compiled:
        query = self.build().query.chain(UpdateQuery)
        query.add_update_values(self.assignments)
        query.annotations = {}
        sql, params = query.get_compiler(connection=connection).as_sql()
        return _Compiled(sql, tuple(params), lambda cursor: cursor.rowcount)


class Insert(_Statement):
    """An INSERT of one ``model`` row: :meth:`create` takes the fields' values by attribute name (``seat_id``;
    a field not given takes its default) and returns the stored instance with its primary key, as
    ``Model.objects.create`` does, but sends no ``pre_save`` or ``post_save`` signal: use it for models no
    receiver listens to."""

    def __init__(self, model: type[Model]) -> None:
        super().__init__(model._default_manager.all)
        self.model = model
        self.fields = [field for field in model._meta.concrete_fields if field is not model._meta.auto_field]

    @property
    def alias(self) -> str:
        return router.db_for_write(self.model)

    def create(self, **values: Any) -> Any:
        row = {field.attname: values.pop(field.attname) if field.attname in values else field.get_default()
               for field in self.fields}
        if values:
            raise TypeError(f"{self.model.__name__} has no field {sorted(values)}.")
        with transaction.mark_for_rollback_on_error(using=self.alias):
            pk = self._run(row)
        return self.model.from_db(self.alias, [self.model._meta.pk.attname, *row], [pk, *row.values()])

    def _compile(self, connection: Any) -> _Compiled:
        query = InsertQuery(self.model)
        query.insert_values(self.fields, [self.model(**{f.attname: Param(f.attname, f) for f in self.fields})])
        compiler = query.get_compiler(connection=connection)
        table, pk = self.model._meta.db_table, self.model._meta.pk
        if connection.features.can_return_columns_from_insert:
            compiler.returning_fields = [pk]
        ((sql, params),) = compiler.as_sql()

        def primary_key(cursor: Any) -> Any:
            if compiler.returning_fields:
                return connection.ops.fetch_returned_insert_columns(cursor, compiler.returning_params)[0]
            return connection.ops.last_insert_id(cursor, table, pk.column)

        return _Compiled(sql, tuple(params), primary_key)


def prefetched(instances: list[Model], name: str, rows: list[Model]) -> None:
    """Give each of ``instances`` its ``rows`` through the reverse foreign key ``name`` as ``prefetch_related``
    would: ``instance.<name>.all()`` then returns them, in the order of ``rows``, without a query.

    This fills the cache Django's own prefetching fills (the instance's ``_prefetched_objects_cache``, under
    the accessor's name; each row's foreign key keeps its instance), so related rows read by a statement of
    their own are used wherever the ORM's prefetched ones would be (``tests/chat/test_statements.py``).
    """
    if not instances:
        return
    relation = getattr(type(instances[0]), name).rel
    by_owner: dict[Any, list[Model]] = {}
    for row in rows:
        by_owner.setdefault(getattr(row, relation.field.attname), []).append(row)
    for instance in instances:
        own = by_owner.get(instance.pk, [])
        for row in own:
            relation.field.set_cached_value(row, instance)
        queryset = relation.related_model._default_manager.all()
        queryset._result_cache, queryset._prefetch_done = own, True
        instance.__dict__.setdefault("_prefetched_objects_cache", {})[name] = queryset
