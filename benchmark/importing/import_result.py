"""What one imported file did (:class:`ImportResult`), counted as the savers go and summed up for people."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class ImportResult:
    """What one file did, for the command's summary and the import page.

    ``created`` rows made; ``unchanged`` objects already present and left as they were; ``changed``
    objects already present that the file added to (an episode that got new scores); ``checked``
    records validated but with no place in Parley (Sotopia relationship profiles); ``skipped`` what
    a file holds but no one can read (an AgentSense reply that picks no option); ``ignored`` fields
    read but not kept, by field name, counted in records (never dropped silently); ``notes`` anything
    else a researcher must know (ids the file names that Parley does not have, values read as
    missing), one sentence each; ``details`` the long lists behind them (every id not in Parley), shown
    on request. Counter keys are singular nouns (``episode``, ``scenario``, ...).
    """

    file: str
    format: str
    dry_run: bool = False
    created: Counter[str] = field(default_factory=Counter)
    unchanged: Counter[str] = field(default_factory=Counter)
    changed: Counter[str] = field(default_factory=Counter)
    checked: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)  # read from the file but not storable, by kind
    ignored: Counter[str] = field(default_factory=Counter)  # field name -> records in which it was not kept
    notes: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)  # long lists behind the notes (--verbosity 2)
    episodes: list[int] = field(default_factory=list)  # pks of the episodes created or added to, to link to them
    scenarios: list[int] = field(default_factory=list)  # pks of the scenarios created, to link to them

    def note(self, sentence: str) -> None:
        if sentence not in self.notes:
            self.notes.append(sentence)

    def summary(self) -> str:
        """One line, e.g. ``x.jsonl (sotopia): created 5 episodes, 56 turns; unchanged 5 scenarios``,
        then the notes, one per line."""
        parts = [f"{label} {what}" for label, what in self.parts()]
        line = f"{self.file} ({self.format}): {'; '.join(parts) or 'nothing to import'}"
        return "\n".join([line, *(f"  note: {note}" for note in self.notes)])

    def parts(self) -> list[tuple[str, str]]:
        """The summary's parts as (label, what), e.g. ``("would create", "5 episodes, 56 turns")``; the
        import page shows them as a list, the command joins them into one line."""
        parts = []
        for label, counts in (
            ("would create" if self.dry_run else "created", self.created),
            ("would add to" if self.dry_run else "added to", self.changed),
            ("unchanged", self.unchanged),
        ):
            listed = [_count(counts[kind], kind) for kind in _ordered(counts) if counts[kind]]
            if listed:
                parts.append((label, ", ".join(listed)))
        if self.checked:
            listed = [_count(number, f"{kind} profile") for kind, number in sorted(self.checked.items())]
            parts.append(("checked, not stored:", ", ".join(listed)))
        if self.skipped:
            parts.append(("skipped", ", ".join(_count(number, kind) for kind, number in sorted(self.skipped.items()))))
        if self.ignored:
            listed = [f"{name} (in {_count(number, 'record')})" for name, number in sorted(self.ignored.items())]
            parts.append(("ignored:", ", ".join(listed)))
        return parts


_KINDS = ("episode", "scenario", "character", "turn", "answer")


def _ordered(counts: Counter[str]) -> list[str]:
    """The usual kinds in their usual order, then any other kind in alphabetical order."""
    return [kind for kind in _KINDS if kind in counts] + sorted(set(counts) - set(_KINDS))


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


# Told how far a file has got: ``progress("parsed", records, records)`` once the file is read, then
# ``progress("saved", done, records)`` as records are saved (done may repeat; the listener throttles).
Progress = Callable[[str, int, int], None]

_SHOWN = 5  # differing records named in a note, per kind


def note_differing(result: ImportResult, kind: str, differing: list[tuple[str, list[str]]]) -> None:
    if not differing:
        return
    shown = "; ".join(f"{name!r} ({', '.join(fields)})" for name, fields in differing[:_SHOWN])
    more = f"; and {len(differing) - _SHOWN} more" if len(differing) > _SHOWN else ""
    noun = f"{kind} of the file differs" if len(differing) == 1 else f"{kind}s of the file differ"
    result.note(
        f"{len(differing)} {noun} from the team's under the same id, left as stored (an import never "
        f"overwrites): {shown}{more}"
    )
