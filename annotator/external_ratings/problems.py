"""Every problem of a ratings file at once, so a researcher fixes a file in one pass, not one problem per upload.

Problems are gathered while the file is read and checked, and told together at the end
(``RatingsRefused``). The same problem in the same column of many rows (a wide file's misspelt
column, a scale one point too wide for every rater) is one entry naming its first row and how many
other rows have it; at most ``MAX_LISTED`` entries are listed, with the total count, so a file with
thousands of bad rows still gives a page one can read.
"""

from __future__ import annotations

from benchmark.importing import ImportProblem

MAX_LISTED = 50
ROWS_NAMED = 5  # the other rows of one entry named by number; the rest are counted


class RatingsRefused(ImportProblem):
    """A ratings file with one problem or more; ``lines`` tells each (grouped, at most ``MAX_LISTED``)."""

    def __init__(self, file: str, lines: list[str], total: int, *, kinds: int) -> None:
        self.lines = lines
        self.total = total
        listed = f" (the first {len(lines)} of {kinds} kinds are listed)" if kinds > len(lines) else ""
        self.heading = f"{total} problems, so nothing was imported{listed}"
        super().__init__(self.heading, file=file)

    def __str__(self) -> str:
        if self.total == 1:
            return self.lines[0]
        return "\n".join([f"{self.file}: {self.heading}:", *(f"- {line}" for line in self.lines)])


class Problems:
    """The problems found so far, grouped by what they say and where (the column), in the order found."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.total = 0
        self._groups: dict[tuple[str | None, str], list[ImportProblem]] = {}

    def add(self, problem: ImportProblem) -> None:
        self.total += 1
        group = self._groups.setdefault((problem.field, problem.message), [])
        if len(group) <= ROWS_NAMED:  # the rest are only counted
            group.append(problem)
        else:
            group.append(None)  # type: ignore[arg-type]

    def __bool__(self) -> bool:
        return self.total > 0

    def raise_any(self) -> None:
        """Raise ``RatingsRefused`` if any problem was found."""
        if not self:
            return
        lines = [_line(group) for group in list(self._groups.values())[:MAX_LISTED]]
        raise RatingsRefused(self.file, lines, self.total, kinds=len(self._groups))


def _line(group: list[ImportProblem | None]) -> str:
    first, others = group[0], group[1:]
    if not others:
        return str(first)
    named = [problem.place.split()[-1] for problem in others if problem is not None and problem.place]
    kind = first.place.split()[0] + "s" if first.place else "places"
    rest = len(others) - len(named)
    listed = ", ".join(named) + (f" and {rest} more" if rest else "")
    return f"{first} (the same in {len(others)} other {kind if len(others) > 1 else kind[:-1]}: {listed})"
