"""The one error of importing: bad input, located in the file (file, place, field).

Every module of the package raises it (through ``records.Origin.problem`` mostly), and the package's
callers (the command, the import page, the annotator's ratings import) catch it; it lives in a module
of its own so that the format modules and the package ``__init__`` both import it without a circle.
"""

from __future__ import annotations


class ImportProblem(Exception):
    """Bad input, told as ``FILE, PLACE, field FIELD: what is wrong``.

    ``place`` is ``line 3`` (JSON Lines), ``record 2`` (a JSON file) or ``row 5`` (CSV, the header is
    row 1); ``field`` is a path into the record such as ``turns[2].action_type``.
    """

    def __init__(self, message: str, *, file: str, place: str | None = None, field: str | None = None) -> None:
        self.message = message
        self.file = file
        self.place = place
        self.field = field
        super().__init__(str(self))

    def __str__(self) -> str:
        where = [self.file]
        if self.place:
            where.append(self.place)
        if self.field:
            where.append(f"field {self.field}")
        return f"{', '.join(where)}: {self.message}"
