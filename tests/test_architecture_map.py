"""The map in docs/architecture.md stays current: it names every package and module of the apps.

A module is named on the map when one line of the map (a table row) names its package, written
``pkg/`` in backticks, and the module, written ``module`` or ``module.py`` in backticks; a module at
the top of an app is named in that app's section as ``module.py``. Migrations, management commands
(listed by the commands row), ``__init__`` files and the modules every Django app has (``apps.py``,
``admin.py``, ``urls.py``, ``wsgi.py``) are left out.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAP = ROOT / "docs" / "architecture.md"
APPS = ("benchmark", "annotator", "chat", "config")
DJANGO_NAMES = {"apps.py", "admin.py", "urls.py", "wsgi.py"}  # what every Django app has, named by Django's docs


def sections() -> dict[str, list[str]]:
    """The map's lines by the app whose section (``## `app/` ``) or table row holds them."""
    found: dict[str, list[str]] = {app: [] for app in APPS}
    current = None
    for line in MAP.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"^##+ .*`(\w+)/`", line)
        if heading:
            current = heading.group(1) if heading.group(1) in APPS else None
            continue
        if line.startswith("## "):
            current = None
        row = re.match(r"^\| `(\w+)/` \|", line)
        if row and row.group(1) in APPS:
            found[row.group(1)].append(line)
        if current:
            found[current].append(line)
    return found


def modules() -> list[Path]:
    paths = []
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            parts = path.relative_to(ROOT / app).parts
            if "migrations" in parts or "commands" in parts or path.name == "__init__.py" or path.name in DJANGO_NAMES:
                continue
            paths.append(path)
    return paths


def named(path: Path, lines: list[str]) -> bool:
    parts = path.relative_to(ROOT).parts
    stem = path.stem
    names = (f"`{stem}`", f"`{stem}.py`", f"`{'/'.join(parts[1:])}`")
    if len(parts) == 2:  # a module at the top of its app
        return any(f"`{stem}.py`" in line for line in lines)
    package = f"`{parts[-2]}/`"
    return any(package in line and any(name in line for name in names) for line in lines) or any(
        f"`{'/'.join(parts[1:])}`" in line for line in lines
    )


def test_the_map_names_every_module_of_every_app():
    by_app = sections()
    missing = [str(path.relative_to(ROOT)) for path in modules()
               if not named(path, by_app[path.relative_to(ROOT).parts[0]])]
    assert not missing, "docs/architecture.md does not name: " + ", ".join(missing)
