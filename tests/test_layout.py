"""The layout rules of docs/architecture.md, read from the source with ``ast`` (nothing is imported).

- no import circle among benchmark's modules, counting imports inside functions too (an import put
  in a function to dodge a circle is still a circle: the two modules still need each other); ``if
  TYPE_CHECKING`` blocks run only under a type checker and are left out;
- the layers: ``benchmark.agents`` imports nothing of ``benchmark.runs`` (runs drive agents), and
  ``benchmark.instruments`` nothing of ``benchmark.evaluation`` (the judges ask instruments, so the two
  never import each other);
- ``benchmark`` imports nothing of Parley's other apps or the project package;
- ``benchmark/stats`` imports no Django, not even through the benchmark modules it imports;
- no module of benchmark, annotator or chat is over ``MAX_LINES`` lines, except the few listed in
  ``LONG_MODULES`` with the reason; the list is meant to shrink, so a listed module that is no
  longer long fails too.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 500
OTHER_APPS = ("annotator", "chat", "config")

LONG_MODULES = {
    "benchmark/agents/scripted.py": "the scripted agent and its barrier stylers; to be split by concept",
    "benchmark/importing/sotopia.py": "the Sotopia importer (logs, profiles, human-evaluation prompts); split by shape",
    "benchmark/demo/content.py": "demo content (13 scenarios with their lines): data written as code",
    "benchmark/stats/results.py": "the results statistics; to be split into the table and its tests",
    "benchmark/agents/prompt.py": "the agent prompt, now with per-scenario barrier prompts and unknown relationships; "
    "to be split: the barrier part into a module of its own",
    "annotator/forms.py": "the annotator's forms, now with the ratings upload; to be split by page",
}


def python_files(app: str) -> list[Path]:
    return sorted(path for path in (ROOT / app).rglob("*.py") if "migrations" not in path.parts)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(nodes: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """Imports that can run: at the top level and inside functions, classes and blocks, except the
    body of an ``if TYPE_CHECKING`` block (its ``else`` runs)."""
    found: list[ast.Import | ast.ImportFrom] = []
    todo: list[ast.AST] = list(nodes)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If) and _is_type_checking(node):
            todo += node.orelse
        else:
            todo += ast.iter_child_nodes(node)
    return sorted(found, key=lambda node: node.lineno)


def imported_modules(path: Path, *, known: set[str]) -> set[str]:
    """The modules ``path`` imports (anywhere but ``if TYPE_CHECKING``), absolute; ``from package import
    module`` names the module."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8")).body):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            base = ".".join(anchor + ([base] if base else []))
        for alias in node.names:
            submodule = f"{base}.{alias.name}"
            targets.add(submodule if submodule in known else base)
    return targets


def import_graph(app: str) -> dict[str, set[str]]:
    files = python_files(app)
    known = {module_name(path) for path in files}
    return {module_name(path): imported_modules(path, known=known) & known for path in files}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as a list of modules (first == last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module)
            if found:
                return found
    return None


def test_benchmark_has_no_import_circle():
    cycle = find_cycle(import_graph("benchmark"))
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


# (lower, upper): no module under the lower package imports one under the upper, not even in a function.
FORBIDDEN_LAYERS = (
    ("benchmark.agents", "benchmark.runs"),
    ("benchmark.instruments", "benchmark.evaluation"),
)


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_layers_hold():
    graph = import_graph("benchmark")
    offenders = sorted(
        f"{module} imports {target}"
        for module, targets in graph.items()
        for target in targets
        for importer, imported in FORBIDDEN_LAYERS
        if _under(module, importer) and _under(target, imported)
    )
    assert offenders == []


def test_an_import_inside_a_function_counts_and_one_for_the_type_checker_does_not(tmp_path):
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import for_types\nelse:\n    import at_run_time\n"
        "def later():\n    from deep import inside\n"
        "class Holder:\n    def method(self):\n        import in_a_method\n"
    )
    names = [
        alias.name if isinstance(node, ast.Import) else node.module
        for node in _runtime_imports(ast.parse(source).body)
        for alias in node.names
    ]
    assert names == ["typing", "at_run_time", "deep", "in_a_method"]


def test_the_circle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_a_relative_import_of_a_sibling_module_is_an_edge_to_that_module():
    path = ROOT / "benchmark" / "agents" / "acting.py"
    known = {module_name(p) for p in python_files("benchmark")}
    assert {"benchmark.agents.llm", "benchmark.agents.scripted", "benchmark.agents.prompt"} <= imported_modules(
        path, known=known
    )


def test_benchmark_imports_nothing_of_the_other_apps():
    """Not even inside a function: ``annotator`` and ``chat`` build on ``benchmark``, never the reverse."""
    offenders = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in python_files("benchmark")
        for line, name in _all_imports(path)
        if name.split(".")[0] in OTHER_APPS
    ]
    assert offenders == []


def _all_imports(path: Path) -> list[tuple[int, str]]:
    """Every absolute import in ``path``, wherever it is, with its line; relative ones are left out."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.append((node.lineno, node.module))
    return found


def test_stats_imports_no_django_even_through_other_modules():
    """``benchmark.stats`` and every benchmark module it reaches run without Django."""
    graph = import_graph("benchmark")
    reached, todo = set(), [name for name in graph if name.startswith("benchmark.stats")]
    while todo:
        module = todo.pop()
        if module not in reached:
            reached.add(module)
            todo += graph[module]
    offenders = []
    for path in python_files("benchmark"):
        if module_name(path) in reached:
            offenders += [
                f"{path.relative_to(ROOT)}:{line} imports {name}"
                for line, name in _all_imports(path)
                if name.split(".")[0] in ("django", *OTHER_APPS)
            ]
    assert offenders == []


def test_no_module_is_longer_than_the_limit_without_a_reason():
    lengths = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for app in ("benchmark", "annotator", "chat")
        for path in python_files(app)
    }
    too_long = sorted(f"{name} ({lines} lines)" for name, lines in lengths.items() if lines > MAX_LINES)
    unexplained = [entry for entry in too_long if entry.split(" ")[0] not in LONG_MODULES]
    assert unexplained == [], f"over {MAX_LINES} lines: split them by concept"
    no_longer_long = sorted(name for name in LONG_MODULES if lengths.get(name, 0) <= MAX_LINES)
    assert no_longer_long == [], "no longer over the limit (or gone): take them off LONG_MODULES"
