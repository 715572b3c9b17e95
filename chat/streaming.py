"""Show an agent's reply while it is still being written.

A language agent answers with a JSON action, ``{"action_type": "speak", "argument": "..."}``, and
the participant should see the argument appear word by word, not the JSON around it. The
:class:`ArgumentExtractor` reads the reply as it streams and hands back only the newly decoded
characters of the ``"argument"`` string, whatever comes first: prose or a ```json fence before the
object, ``action_type`` before or after the argument, escapes split across two deltas.

What is streamed is only a preview: when the reply is complete it is parsed properly
(``benchmark.agents.llm.parse_json_object``), repaired if malformed, and the stored turn replaces the
preview on every page.
"""

from __future__ import annotations

_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_WATCHED_KEYS = ("argument", "action_type")


def utf16_length(text: str) -> int:
    """The length of ``text`` as JavaScript counts it, so offsets on the wire match ``String.length``."""
    return len(text.encode("utf-16-le")) // 2


class ArgumentExtractor:
    """Incrementally decode the top-level ``"argument"`` (and ``"action_type"``) of a JSON action.

    Feed it each delta with :meth:`feed`; it returns the argument characters that delta completed.
    ``action_type`` holds the raw action type once its string has closed, else None. Anything the
    reader cannot follow (a nested action, a reply without JSON) simply yields nothing: the final
    parse decides what is stored.
    """

    def __init__(self) -> None:
        self.argument = ""
        self.action_type: str | None = None
        self._started = False  # seen the object's opening brace
        self._finished = False  # seen its closing brace
        self._depth = 0
        self._expect = "key"  # at depth 1: key, colon, value, comma
        self._in_string = False
        self._string_role = ""  # "key", a watched key's name, or "" for a string nobody reads
        self._string = ""  # the key or action type being read
        self._escape: str | None = None  # an escape sequence read so far, without its backslash
        self._high_surrogate: str | None = None
        self._key = ""
        self._taken: set[str] = set()  # watched keys already read: the first occurrence counts
        self._in_scalar = False

    def feed(self, delta: str) -> str:
        """Read one delta of the reply; return the argument text it added (often empty)."""
        before = len(self.argument)
        for char in delta:
            if self._finished:
                break
            self._read(char)
        return self.argument[before:]

    def _read(self, char: str) -> None:
        if not self._started:
            if char == "{":
                self._started = True
                self._depth = 1
            return
        if self._in_string:
            self._read_string(char)
            return
        if self._depth > 1:
            self._read_nested(char)
            return
        self._read_top_level(char)

    def _read_top_level(self, char: str) -> None:
        if self._in_scalar:
            if char not in ",}":
                return
            self._in_scalar = False
            self._expect = "comma"
        if char.isspace():
            return
        if self._expect == "key":
            if char == '"':
                self._open_string("key")
            elif char == "}":
                self._finished = True
        elif self._expect == "colon":
            if char == ":":
                self._expect = "value"
        elif self._expect == "value":
            if char == '"':
                watched = self._key in _WATCHED_KEYS and self._key not in self._taken
                self._open_string(self._key if watched else "")
            elif char in "{[":
                self._depth += 1
            else:
                self._in_scalar = True
        elif self._expect == "comma":
            if char == ",":
                self._expect = "key"
            elif char == "}":
                self._finished = True

    def _read_nested(self, char: str) -> None:
        if char == '"':
            self._open_string("")
        elif char in "{[":
            self._depth += 1
        elif char in "}]":
            self._depth -= 1
            if self._depth == 1:
                self._expect = "comma"

    def _open_string(self, role: str) -> None:
        self._in_string = True
        self._string_role = role
        self._string = ""

    def _read_string(self, char: str) -> None:
        if self._escape is not None:
            self._escape += char
            decoded = self._decode_escape(self._escape)
            if decoded is None:
                return  # a \uXXXX escape still missing digits
            self._escape = None
            self._append(decoded)
            return
        if char == "\\":
            self._escape = ""
        elif char == '"':
            self._close_string()
        else:
            self._append(char)

    def _decode_escape(self, sequence: str) -> str | None:
        """The text an escape stands for, None while incomplete, '' for half a surrogate pair."""
        if not sequence.startswith("u"):
            return _ESCAPES.get(sequence, sequence)
        if len(sequence) < 5:
            return None
        try:
            code = int(sequence[1:5], 16)
        except ValueError:
            return ""
        if 0xD800 <= code <= 0xDBFF:
            self._high_surrogate = chr(code)
            return ""
        if 0xDC00 <= code <= 0xDFFF and self._high_surrogate is not None:
            pair = (self._high_surrogate + chr(code)).encode("utf-16-le", "surrogatepass").decode("utf-16-le")
            self._high_surrogate = None
            return pair
        return chr(code) if not 0xD800 <= code <= 0xDFFF else ""

    def _append(self, text: str) -> None:
        if self._string_role == "argument":
            self.argument += text
        elif self._string_role:
            self._string += text

    def _close_string(self) -> None:
        self._in_string = False
        role = self._string_role
        if role == "key":
            self._key = self._string
            self._expect = "colon"
            return
        if role in _WATCHED_KEYS:
            self._taken.add(role)
            if role == "action_type":
                self.action_type = self._string
        if self._depth == 1:
            self._expect = "comma"
