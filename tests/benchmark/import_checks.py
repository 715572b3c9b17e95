"""Checks shared by the importer tests: a refused file names the problem and writes nothing."""

from pathlib import Path

import pytest
from django.apps import apps

from benchmark import importing
from benchmark.importing import ImportProblem, ImportResult
from benchmark.models import Team
from tests.builders import default_team


def import_file(path: Path | str, *, team: Team | None = None, **options) -> ImportResult:
    """``benchmark.importing.import_file`` into ``team``, the default team unless given."""
    return importing.import_file(path, team=team or default_team(), **options)


def row_counts() -> dict[str, int]:
    """Rows in every table of every installed app: what an import left behind, wherever it wrote."""
    return {model._meta.label: model.objects.count() for model in apps.get_models() if model._meta.managed}


def assert_rejected(path: Path, message: str) -> None:
    """Importing ``path`` fails with ``message`` in the error, and no row is written."""
    before = row_counts()
    with pytest.raises(ImportProblem) as problem:
        import_file(path)
    assert message in str(problem.value)
    assert row_counts() == before
