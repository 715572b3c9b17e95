"""The question kinds: one class per kind, found by name (``get_kind``), modelled on Django's password hashers.

Every module of this package other than ``base`` and ``checks`` holds one kind: a subclass of
``base.QuestionKind`` (or of a family there, ``NumericKind``, ``ChoiceKind``) decorated with
``@register``. The package's modules are imported the first time a kind is looked up, so adding a
kind is one new module (and its tests; and its widget partial ``templates/instruments/kinds/``):
nothing else names it. ``Question.kind`` takes its choices from ``choices`` (a callable, so a new
kind needs no migration), and the system check (``checks``) fails ``manage.py check`` when a
registered kind lacks a part.

- ``get_kind(name)``: the kind called ``name`` (``UnknownKind``, a ``LookupError``, if none);
- ``find_kind(name)``: the same, or None;
- ``all_kinds()``: every registered kind, in ``order``;
- ``choices()``: ``[(name, label), ...]`` for ``Question.kind``;
- ``names(predicate)``: the names of the kinds that satisfy ``predicate`` (e.g. ``lambda k: k.numeric``),
  for a query or an SQL list.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from .base import QuestionKind

NOT_KIND_MODULES = frozenset({"base", "checks"})

_registry: dict[str, QuestionKind] = {}
_discovered = False

K = TypeVar("K", bound=type)


class UnknownKind(LookupError):
    """No registered kind has this name."""


def register(cls: K) -> K:
    """Class decorator: register one instance of the kind under its ``name`` (a second name clash is refused)."""
    kind = cls()
    existing = _registry.get(kind.name)
    if existing is not None and type(existing).__qualname__ != cls.__qualname__:
        raise ValueError(f"two question kinds are called {kind.name!r}: {type(existing).__name__} and {cls.__name__}")
    _registry[kind.name] = kind
    return cls


def _discover() -> None:
    global _discovered
    if _discovered:
        return
    for module in pkgutil.iter_modules(__path__):
        if module.name not in NOT_KIND_MODULES and not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")
    _discovered = True


def all_kinds() -> list[QuestionKind]:
    """Every registered kind, in ``order`` (then name)."""
    _discover()
    return sorted(_registry.values(), key=lambda kind: (kind.order, kind.name))


def get_kind(name: str) -> QuestionKind:
    """The kind called ``name``; ``UnknownKind`` naming the known ones if there is none."""
    kind = find_kind(name)
    if kind is None:
        raise UnknownKind(f"{name!r} is not a question kind; use one of {', '.join(k.name for k in all_kinds())}")
    return kind


def find_kind(name: str) -> QuestionKind | None:
    """The kind called ``name``, or None."""
    _discover()
    return _registry.get(name)


def choices() -> list[tuple[str, str]]:
    """``Question.kind``'s choices: (name, label) of every registered kind."""
    return [(kind.name, kind.label) for kind in all_kinds()]


def names(predicate: Callable[[QuestionKind], bool] = lambda kind: True) -> list[str]:
    """The names of the registered kinds that satisfy ``predicate``, in order."""
    return [kind.name for kind in all_kinds() if predicate(kind)]
