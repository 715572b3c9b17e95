"""The layering of benchmark's packages (docs/architecture.md), read from the source with ``ast``.

Every import counts here, those inside functions too (only ``if TYPE_CHECKING`` blocks are left out,
as they run under a type checker alone): a lower package never reaches up, however late it imports.

- ``agents`` (the language agents and the model gateway) imports nothing of ``runs``: the turn-taking
  policy both use lives with the scenario (``scenarios/turn_taking.py``);
- ``instruments`` (what every user of an instrument shares) imports nothing of ``evaluation``: the
  judge's rubric presets are instrument data (``instruments/rubrics.py``), and evaluation imports them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.test_layout import ROOT, module_name, python_files

RULES = [
    ("benchmark.agents", "benchmark.runs"),
    ("benchmark.instruments", "benchmark.evaluation"),
]


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def all_imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in ``path``, at any depth, outside ``TYPE_CHECKING`` blocks."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    return imports_in(path.read_text(encoding="utf-8"), package)


def imports_in(source: str, package: str) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in ``source``, a module of ``package``."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            found.extend((node.lineno, f"{base}.{alias.name}") for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return found


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


@pytest.mark.parametrize(("lower", "upper"), RULES)
def test_a_lower_package_never_imports_an_upper_one(lower, upper):
    reaching = [
        f"{path.relative_to(ROOT)}:{line} imports {target}"
        for path in python_files("benchmark") if _within(module_name(path), lower)
        for line, target in all_imports(path) if _within(target, upper)
    ]
    assert reaching == [], f"{lower} must not import {upper}:\n" + "\n".join(reaching)


def test_an_import_inside_a_function_counts_and_a_type_checking_one_does_not():
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ..runs import planning\n"
        "def late():\n    from ..runs import simulation\n"
    )
    targets = {target for _, target in imports_in(source, "benchmark.agents")}
    assert "benchmark.runs.simulation" in targets
    assert "benchmark.runs.planning" not in targets
