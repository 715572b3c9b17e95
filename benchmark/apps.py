from typing import Any

from django.apps import AppConfig
from django.core import checks
from django.db import connections
from django.db.models.signals import post_migrate, pre_migrate

from .instruments.kinds.checks import check_question_kinds


class BenchmarkConfig(AppConfig):
    name = "benchmark"
    verbose_name = "Benchmark: scenarios, episodes and evaluations"

    def ready(self) -> None:
        # A registered question kind that lacks a part fails `manage.py check`.
        checks.register(check_question_kinds)
        # The answer triggers are out of the way while SQLite copies tables, and back afterwards
        # (see benchmark.instruments.triggers).
        pre_migrate.connect(_drop_answer_triggers, sender=self, dispatch_uid="benchmark_drop_answer_triggers")
        post_migrate.connect(_install_answer_triggers, sender=self, dispatch_uid="benchmark_install_answer_triggers")
        post_migrate.connect(_create_queue_tables, sender=self, dispatch_uid="benchmark_create_queue_tables")
        # The queue's signals keep job rows current wherever a task runs; the tasks are known to every
        # process that may queue or run them.
        from .jobs import signals, tasks  # noqa: F401


def _drop_answer_triggers(sender: AppConfig, using: str = "default", **kwargs: Any) -> None:
    from .instruments import triggers

    connection = connections[using]
    if connection.vendor == "sqlite" and triggers.tables_ready(connection):  # before that, migrations manage them
        triggers.uninstall(connection)


def _install_answer_triggers(sender: AppConfig, using: str = "default", **kwargs: Any) -> None:
    from .instruments import triggers

    connection = connections[using]
    if triggers.tables_ready(connection):
        triggers.install(connection)


def _create_queue_tables(sender: AppConfig, **kwargs: Any) -> None:
    """A PostgreSQL task queue's tables, made once by ``migrate`` (idempotent) rather than by every process."""
    from .jobs.queue import HUEY

    if not HUEY.immediate and hasattr(HUEY.storage, "initialize_schema"):
        HUEY.storage.initialize_schema()
