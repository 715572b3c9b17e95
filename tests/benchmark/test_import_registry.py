"""The import formats' registry: every format module is registered once, satisfies ``ImportFormat``, and
names itself for people; the package imports its formats when it is imported, not at call time."""

import ast
import pkgutil
from importlib import import_module
from pathlib import Path

import pytest

from benchmark import importing
from benchmark.importing import registry
from benchmark.importing.format import ImportFormat
from benchmark.importing.problems import ImportProblem

PACKAGE = Path(importing.__file__).parent


def format_modules() -> list[str]:
    """The package's modules that define a ``FORMAT`` at their top level, read from the source."""
    found = []
    for info in pkgutil.iter_modules([str(PACKAGE)]):
        tree = ast.parse((PACKAGE / f"{info.name}.py").read_text(encoding="utf-8"))
        if any(
            isinstance(node, ast.Assign) and any(getattr(target, "id", None) == "FORMAT" for target in node.targets)
            for node in tree.body
        ):
            found.append(info.name)
    return found


def test_every_format_module_is_in_the_registry_once():
    modules = format_modules()
    assert len(modules) == 13
    registered = [import_module(f"benchmark.importing.{name}").FORMAT for name in modules]
    assert sorted(id(found) for found in registered) == sorted(id(found) for found in registry.REGISTRY)
    assert len(set(registry.FORMATS)) == len(registry.REGISTRY) == 13


@pytest.mark.parametrize("found", registry.REGISTRY, ids=lambda found: found.name)
def test_each_format_satisfies_the_protocol_and_names_itself_for_people(found):
    assert isinstance(found, ImportFormat)
    assert found.label[0].isupper() and found.label != found.name
    assert found.shape and found.shape in registry.KNOWN_SHAPES
    assert registry.get_format(found.name) is found


def test_only_the_run_formats_read_a_directory():
    assert [found.name for found in registry.REGISTRY if found.reads_directory] == list(registry.DIRECTORY_FORMATS)
    assert registry.DIRECTORY_FORMATS == ("socialveil-run", "promediate-run")


def test_a_directory_given_another_format_is_refused_naming_the_ones_that_read_it(tmp_path):
    with pytest.raises(ImportProblem, match="is a directory; only socialveil-run or promediate-run read one"):
        importing.import_file(tmp_path, team=None, format="parley")


def test_a_directory_is_read_by_the_run_format_whose_outputs_it_holds(tmp_path):
    (tmp_path / "veil" / "mode_baseline" / "scenario_1").mkdir(parents=True)
    (tmp_path / "veil" / "mode_baseline" / "scenario_1" / "conversation_log.json").write_text("{}")
    (tmp_path / "pm" / "hmo" / "Social" / "gpt-4.1_separate_competing_less_1").mkdir(parents=True)
    (tmp_path / "pm" / "hmo" / "Social" / "gpt-4.1_separate_competing_less_1" / "conversation.txt").write_text("")

    assert registry.detect_directory_format(tmp_path / "veil") == "socialveil-run"
    assert registry.detect_directory_format(tmp_path / "pm") == "promediate-run"
    with pytest.raises(ImportProblem, match="holds no run outputs Parley reads"):
        registry.detect_directory_format(tmp_path / "pm" / "hmo" / "Social" / "missing")


def test_the_package_imports_its_formats_at_import_time_not_in_a_function():
    source = (PACKAGE / "__init__.py").read_text(encoding="utf-8")
    inside = [
        node for function in ast.walk(ast.parse(source)) if isinstance(function, ast.FunctionDef)
        for node in ast.walk(function) if isinstance(node, ast.Import | ast.ImportFrom)
    ]
    assert inside == [] and "import_module" not in source and "hasattr" not in source
