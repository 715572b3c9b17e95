"""What an import format is (:class:`ImportFormat`), and the usual one (:class:`FileFormat`).

A format is one module of this package that ends with ``FORMAT = FileFormat(...)`` (or an instance
of a subclass that says more) and one line in ``registry.FORMATS``. ``import_file`` asks only what
the protocol names, so no format is looked at with ``hasattr``:

- ``name``: the key (``--format NAME``, the import page's value); ``label``: how the page names it;
  ``shape``: a few words naming what its first record holds, listed when no format recognises a file;
- ``reads_directory``: whether a directory may be imported as this format (a run's folders);
- ``binary_suffixes``: file name endings (``.parquet``) read by the format itself, not as text, and known
  to be this format without looking inside;
- ``claims_directory(path)``: whether a directory holds this format's outputs (how ``auto`` picks among the
  formats that read directories);
- ``recognises(first)``: the file's first record (``registry.first_record``), or a CSV's header;
- ``parse_file(path, text)``: the file's drafts (``text`` is the file read as text, "" for a directory);
- ``resolve(drafts, team)``: look up in the team's data what the drafts name by content (inside the
  transaction, before the drafts are checked and saved);
- ``save(drafts, result, team, progress)``: write the drafts (``saving.save`` unless the format saves
  more, as the library saves its barriers first).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from ..models import Team
from . import saving
from .import_result import ImportResult

Saved = Callable[[int, int], None]  # told (done, total) as records are saved


@runtime_checkable
class ImportFormat(Protocol):
    name: str
    label: str
    shape: str
    reads_directory: bool
    binary_suffixes: tuple[str, ...]

    def recognises(self, first: object) -> bool: ...

    def claims_directory(self, path: Path) -> bool: ...

    def parse_file(self, path: Path, text: str) -> list[Any]: ...

    def resolve(self, drafts: list[Any], team: Team) -> None: ...

    def save(self, drafts: Sequence[Any], result: ImportResult, team: Team, progress: Saved | None) -> None: ...


@dataclass(frozen=True)
class FileFormat:
    """A format read from one file's text by ``parse(text, file)`` and saved by ``saving.save``; nothing to resolve."""

    name: str
    label: str
    shape: str
    recognise: Callable[[object], bool]
    parse: Callable[[str, str], list[Any]]
    reads_directory = False
    binary_suffixes: ClassVar[tuple[str, ...]] = ()  # formats that read bytes override it

    def recognises(self, first: object) -> bool:
        return self.recognise(first)

    def claims_directory(self, path: Path) -> bool:
        return False

    def parse_file(self, path: Path, text: str) -> list[Any]:
        return self.parse(text, path.name)

    def resolve(self, drafts: list[Any], team: Team) -> None:
        return None

    def save(self, drafts: Sequence[Any], result: ImportResult, team: Team, progress: Saved | None) -> None:
        saving.save(list(drafts), result, team, progress=progress)
