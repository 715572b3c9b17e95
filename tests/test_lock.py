"""The installed packages are exactly the locked ones, and the lock files cover pyproject.toml.

`make test` and `make demo` install from requirements-dev.lock and requirements.lock, so a fresh
clone gets the versions these files pin; `make lock` rewrites them (README, "Dependencies").
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)", re.MULTILINE)


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(lock: str) -> dict[str, str]:
    return {canonical(name): version for name, version in PIN.findall((ROOT / lock).read_text())}


def declared(extra: str | None = None) -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = project["optional-dependencies"][extra] if extra else project["dependencies"]
    return {canonical(re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", line).group()) for line in requirements}


def test_every_declared_dependency_is_pinned():
    runtime, dev = pins("requirements.lock"), pins("requirements-dev.lock")
    assert declared() <= runtime.keys(), "run `make lock`: requirements.lock misses " + ", ".join(
        sorted(declared() - runtime.keys())
    )
    assert declared() | declared("dev") <= dev.keys(), "run `make lock`: requirements-dev.lock misses " + ", ".join(
        sorted(declared() | declared("dev") - dev.keys())
    )


def test_the_two_locks_agree_on_shared_packages():
    runtime, dev = pins("requirements.lock"), pins("requirements-dev.lock")
    assert {name: (version, dev[name]) for name, version in runtime.items() if dev.get(name) != version} == {}


def test_the_installed_versions_are_the_locked_ones():
    wrong = {}
    for name, version in pins("requirements-dev.lock").items():
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed = None
        if installed != version:
            wrong[name] = (installed, version)
    assert wrong == {}, "installed vs locked (run `make test`, which installs the lock): " + repr(wrong)
